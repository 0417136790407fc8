-- Issue 31: the webhook relay and the delivery claims work one tenant at a time (actors/webhooks/
-- relay.ts, claims.ts), so that their FOR UPDATE SKIP LOCKED statements name one tenant: under Citus
-- (docs/scaling.md) FOR UPDATE runs only in a single-shard query. Their partial indexes lead with
-- tenant_id: a tenant's unrelayed events in id order, a tenant's pending deliveries by due time. The
-- sweeps that find the tenants (select distinct tenant_id … order by tenant_id) read the same
-- indexes in tenant order. Same names, so nothing else changes.
drop index if exists outbox_events_unrelayed;
create index outbox_events_unrelayed on outbox_events (tenant_id, id) where relayed_at is null;
drop index if exists webhook_deliveries_due;
create index webhook_deliveries_due on webhook_deliveries (tenant_id, next_attempt_at) where status = 'pending';
