-- Issue 26: the tables written on every payment (create + confirm + execution) no longer carry a
-- foreign key to tenants. Each such key made Postgres run
--   SELECT 1 FROM ONLY tenants x WHERE id = $1 FOR KEY SHARE OF x
-- per inserted row (about 7 per payment: ~0.25 ms of Postgres CPU and ~525 WAL bytes per payment,
-- bench/RESULTS.md), and under concurrency every transaction of one tenant share-locked the same
-- tenants row, which made it a MultiXact hot spot.
--
-- Integrity without them (docs/architecture.md, "Tenant integrity"):
--  * tenant_id on these rows never comes from a client: it is the authenticated principal's tenant
--    (api keys, portal sessions) or the parent row's tenant_id (the intent's, the entry's);
--  * tenants are never deleted: the triggers below refuse DELETE and TRUNCATE on tenants, so no row
--    can be orphaned by a deletion (a tenant is suspended, never removed);
--  * the composite keys to the parent entity stay: attempts and routing_decisions ->
--    payment_intents (id, tenant_id), payment_intent_history -> payment_intents (id, tenant_id),
--    journal_lines -> journal_entries (id, tenant_id); payment_intents keeps its own key to
--    tenants (one check per payment, on the create), so an attempt, a routing decision or a
--    history row is still tied to an existing tenant through its intent.
alter table attempts drop constraint if exists attempts_tenant_id_fkey;
alter table routing_decisions drop constraint if exists routing_decisions_tenant_id_fkey;
alter table outbox_events drop constraint if exists outbox_events_tenant_id_fkey;
alter table idempotency_keys drop constraint if exists idempotency_keys_tenant_id_fkey;
alter table journal_entries drop constraint if exists journal_entries_tenant_id_fkey;

create or replace function tenants_never_deleted() returns trigger language plpgsql as $$
begin
  raise exception 'tenants are never deleted (% on tenants refused): rows of the payment path carry tenant_id without a foreign key to tenants (migration 0177); suspend the tenant instead (suspended_at)', tg_op
    using errcode = 'restrict_violation';
end $$;
drop trigger if exists tenants_never_deleted on tenants;
create trigger tenants_never_deleted before delete on tenants for each statement execute function tenants_never_deleted();
drop trigger if exists tenants_never_truncated on tenants;
create trigger tenants_never_truncated before truncate on tenants for each statement execute function tenants_never_deleted();
