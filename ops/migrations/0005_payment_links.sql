-- Payment links (decisions.md §3): a slug that a customer opens at /pay/{slug} to pay.

create table payment_links (
  id                uuid primary key,
  tenant_id         uuid not null references tenants(id),
  livemode          boolean not null,
  slug              text not null unique,
  amount_minor      bigint not null check (amount_minor > 0),
  currency          text not null,
  concepto          text not null,
  reusable          boolean not null default false,
  active            boolean not null default true,
  metadata          jsonb,
  -- the intent a single-use link reuses while it is unpaid
  current_intent_id uuid references payment_intents(id),
  paid_at           timestamptz,
  created_at        timestamptz not null default now()
);
create index payment_links_tenant on payment_links (tenant_id, livemode, created_at desc);
