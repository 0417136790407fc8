-- Foundation: tenants, API keys, operator settings, idempotency records, customers.
-- Every tenant-owned table is keyed by (tenant_id, livemode): an id of another tenant or mode is
-- indistinguishable from an unknown id because every query filters on both.

create table tenants (
  id          uuid primary key,
  name        text not null,
  settings    jsonb not null default '{}'::jsonb,
  created_at  timestamptz not null default now()
);

create table api_keys (
  id          uuid primary key,
  tenant_id   uuid not null references tenants(id),
  livemode    boolean not null,
  -- sha256 of the full key; the key itself is never stored.
  key_hash    text not null unique,
  -- first characters, to tell keys apart in listings ("sk_test_4f2a…").
  key_prefix  text not null,
  scopes      text[] not null,
  created_at  timestamptz not null default now(),
  revoked_at  timestamptz
);
create index api_keys_tenant on api_keys (tenant_id);

create table operator_settings (
  name        text primary key,
  value       text not null,
  updated_at  timestamptz not null default now()
);

-- One row per (tenant, mode, Idempotency-Key), written in the same transaction as the effect the
-- request caused: no effect without its record, no record without its effect.
create table idempotency_keys (
  tenant_id      uuid not null references tenants(id),
  livemode       boolean not null,
  key            uuid not null,
  request_hash   text not null,
  method         text not null,
  path           text not null,
  status_code    integer not null,
  response_body  text not null,
  created_at     timestamptz not null default now(),
  primary key (tenant_id, livemode, key)
);
create index idempotency_keys_created on idempotency_keys (created_at);

create table customers (
  id          uuid primary key,
  tenant_id   uuid not null references tenants(id),
  livemode    boolean not null,
  name        text,
  email       text,
  metadata    jsonb,
  created_at  timestamptz not null default now(),
  updated_at  timestamptz not null default now()
);
create index customers_tenant on customers (tenant_id, livemode, created_at desc, id);
