-- The sim payout rail's own book of orders (connectors/payout/sim.ts): one row per order key, as
-- a real rail keeps it. `sends` counts every send call with the key (the first registers the
-- order; a repeat registers nothing), `status_queries` every status call, so tests can prove that
-- an order was sent exactly once and that a worker asked before resending.
create table sim_payout_orders (
  key              text primary key,
  tenant_id        uuid not null,
  livemode         boolean not null,
  tracking_key     text not null,
  provider_ref     text not null unique,
  amount_minor     bigint not null check (amount_minor > 0),
  currency         text not null,
  clabe_masked     text not null,
  beneficiary_name text not null,
  state            text not null check (state in ('paid', 'failed', 'returned')),
  failure_code     text,
  failure_reason   text,
  sends            integer not null default 1,
  status_queries   integer not null default 0,
  returned_at      timestamptz,
  created_at       timestamptz not null default now(),
  updated_at       timestamptz not null default now()
);
create index sim_payout_orders_tenant on sim_payout_orders (tenant_id, created_at);
