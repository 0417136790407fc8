-- Webhook endpoints, their signing secrets, and deliveries of outbox events.

create table webhook_endpoints (
  id              uuid primary key,
  tenant_id       uuid not null references tenants(id),
  livemode        boolean not null,
  url             text not null,
  -- allow-list of event types; null = the whole catalog
  events          text[],
  active          boolean not null default true,
  disabled_reason text,
  disabled_at     timestamptz,
  deleted_at      timestamptz,
  created_at      timestamptz not null default now()
);
create index webhook_endpoints_tenant on webhook_endpoints (tenant_id, livemode) where active;

-- Kept apart from the endpoint row so that no read path of the API selects it: only the signer reads it.
create table webhook_secrets (
  endpoint_id      uuid primary key references webhook_endpoints(id),
  secret           text not null,
  previous_secret  text,
  previous_until   timestamptz
);

-- One row per (event, endpoint). endpoint_key is the endpoint id, or 'sink:events' for the
-- internal sink that always accepts. Times (queued_at, next_attempt_at) are on the tenant's clock.
create table webhook_deliveries (
  id              bigserial primary key,
  event_id        bigint not null references outbox_events(id),
  endpoint_key    text not null,
  endpoint_id     uuid references webhook_endpoints(id),
  tenant_id       uuid not null,
  livemode        boolean not null,
  status          text not null check (status in ('pending', 'succeeded', 'discarded')),
  attempts        integer not null default 0,
  queued_at       timestamptz not null,
  next_attempt_at timestamptz not null,
  last_status     integer,
  last_error      text,
  delivered_at    timestamptz,
  unique (event_id, endpoint_key)
);
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_endpoint on webhook_deliveries (endpoint_id) where status = 'pending';
