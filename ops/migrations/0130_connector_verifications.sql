-- Issue 28: what a provider needs from the tenant, kept where the tenant can read it.
-- Openpay's webhook registration sends a `verification` ping with a code the tenant must type into
-- Openpay's dashboard; the last code received per tenant, mode and connector is kept here and shown
-- in GET /v1/routing/connectors/{connector} (it is not a secret: it only proves the URL is ours).
create table connector_verifications (
  tenant_id     uuid not null references tenants(id),
  livemode      boolean not null,
  connector_key text not null,
  code          text not null,
  received_at   timestamptz not null default now(),
  primary key (tenant_id, livemode, connector_key)
);
