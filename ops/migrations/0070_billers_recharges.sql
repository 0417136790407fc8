-- Bill payments (service payments) and mobile recharges, their simulators' books, and the
-- recharge bag reader (docs/billers.md). Entities carry `version`, the fencing token of the entity
-- actor (kernel/entity.ts); their steps are in entity_history. Full phone numbers are never stored
-- in clear: `phone_sealed` holds them encrypted (ops/secret-box.ts, bound to the row).

create table service_payments (
  id                uuid primary key,
  tenant_id         uuid not null references tenants(id),
  livemode          boolean not null,
  -- `pending` is internal: the row exists before the biller is asked, so a crash in between is
  -- resolved by asking (never by paying twice); the API answers `paid` or `failed`.
  status            text not null check (status in ('pending', 'paid', 'failed')),
  version           integer not null default 0,
  biller_code       text not null,
  reference         text not null,
  amount_minor      bigint not null check (amount_minor > 0),
  currency          text not null,
  payment_intent_id uuid,
  idempotency_key   text not null,
  -- sha256 of the request's fields (biller_code, reference, amount_minor sent or not, payment_intent_id)
  request_hash      text not null,
  provider_ref      text,
  failure_reason    text,
  created_at        timestamptz not null default now(),
  updated_at        timestamptz not null default now(),
  unique (tenant_id, livemode, idempotency_key)
);
create index service_payments_tenant on service_payments (tenant_id, livemode, created_at desc, id);
create index service_payments_pending on service_payments (updated_at) where status = 'pending';

-- Carriers a tenant enabled (per mode); the catalog itself is global (connectors/recharge).
create table recharge_carrier_settings (
  tenant_id    uuid not null references tenants(id),
  livemode     boolean not null,
  carrier_code text not null,
  enabled      boolean not null,
  updated_at   timestamptz not null default now(),
  primary key (tenant_id, livemode, carrier_code)
);

create table recharges (
  id                         uuid primary key,
  tenant_id                  uuid not null references tenants(id),
  livemode                   boolean not null,
  status                     text not null check (status in ('pending', 'delivered', 'failed')),
  version                    integer not null default 0,
  carrier_code               text not null,
  product_code               text not null,
  phone_sealed               text not null,
  phone_masked               text not null,
  -- frozen at sale time (spec: recharge ledger entry)
  face_amount_minor          bigint not null check (face_amount_minor > 0),
  merchant_commission_minor  bigint not null check (merchant_commission_minor >= 0),
  currency                   text not null,
  payment_intent_id          uuid,
  idempotency_key            text not null,
  -- the aggregator's order key (derived from the id) and when it was first sent
  order_key                  text not null unique,
  send_started_at            timestamptz,
  provider_ref               text,
  failure_reason             text,
  created_at                 timestamptz not null default now(),
  updated_at                 timestamptz not null default now(),
  unique (tenant_id, livemode, idempotency_key)
);
create index recharges_tenant on recharges (tenant_id, livemode, created_at desc, id);
create index recharges_pending on recharges (updated_at) where status = 'pending';

-- Movements of a tenant's recharge bag, each stored once (the reader's dedupe key is
-- provider + movement id); event_id is the recharge.deposit.detected event of a credit movement.
create table recharge_bag_movements (
  id               uuid primary key,
  tenant_id        uuid not null references tenants(id),
  livemode         boolean not null,
  provider_key     text not null,
  source_id        text not null,
  movement_id      text not null,
  registered_at    timestamptz not null,
  observed_at      timestamptz not null default now(),
  pouch_id         text not null,
  pouch_name       text not null,
  movement_type    text not null,
  is_deposit       boolean not null,
  amount_minor     bigint not null,
  currency         text not null,
  raw_amount       text not null,
  units            integer,
  additional_folio text,
  status           text not null,
  via              text not null,
  event_id         uuid,
  unique (tenant_id, livemode, provider_key, movement_id)
);
create index recharge_bag_movements_tenant on recharge_bag_movements (tenant_id, livemode, registered_at desc, id);

create table recharge_bag_balances (
  tenant_id     uuid not null references tenants(id),
  livemode      boolean not null,
  provider_key  text not null,
  balance_minor bigint not null,
  currency      text not null,
  refreshed_at  timestamptz not null,
  primary key (tenant_id, livemode, provider_key)
);

-- The sim biller aggregator's book of payments, by our key (a repeat pays nothing again).
create table sim_biller_payments (
  key            text primary key,
  tenant_id      uuid not null,
  biller_code    text not null,
  reference      text not null,
  amount_minor   bigint not null,
  state          text not null check (state in ('paid', 'failed')),
  provider_ref   text not null unique,
  failure_reason text,
  pays           integer not null default 1,
  status_queries integer not null default 0,
  created_at     timestamptz not null default now()
);

-- The sim recharge aggregator's book of orders (only masked phones), and its bag deposits.
create table sim_recharge_orders (
  key            text primary key,
  tenant_id      uuid not null,
  livemode       boolean not null,
  carrier_code   text not null,
  product_code   text not null,
  phone_masked   text not null,
  amount_minor   bigint not null,
  state          text not null check (state in ('delivered', 'failed')),
  provider_ref   text not null unique,
  failure_reason text,
  sends          integer not null default 1,
  status_queries integer not null default 0,
  created_at     timestamptz not null default now()
);
create index sim_recharge_orders_tenant on sim_recharge_orders (tenant_id, created_at);
