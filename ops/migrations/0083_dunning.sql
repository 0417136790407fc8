-- Dunning (issue 20; docs/routing.md): an off-session charge of a saved card (confirm with
-- `off_session: true` and `payment_method_id`) that soft-declines is retried 1, 3 and 5 days later
-- by the tenant's clock. The first decision of the intent records what dunning needs.
alter table routing_decisions add column off_session boolean not null default false;
alter table routing_decisions add column payment_method_id uuid;
