-- Refunds (with four-eyes approvals), saved payment methods, disputes.

create table refunds (
  id                uuid primary key,
  tenant_id         uuid not null references tenants(id),
  livemode          boolean not null,
  attempt_id        uuid not null references attempts(id),
  payment_intent_id uuid not null references payment_intents(id),
  amount_minor      bigint not null check (amount_minor > 0),
  currency          text not null,
  status            text not null check (status in ('requested', 'succeeded', 'failed')),
  reason            text,
  provider_ref      text,
  failure_code      text,
  failure_message   text,
  requested_by      text not null,
  approval_id       uuid,
  created_at        timestamptz not null default now(),
  updated_at        timestamptz not null default now()
);
create index refunds_attempt on refunds (attempt_id);
create index refunds_tenant on refunds (tenant_id, livemode, created_at desc);

create table refund_approvals (
  id            uuid primary key,
  tenant_id     uuid not null references tenants(id),
  livemode      boolean not null,
  attempt_id    uuid not null references attempts(id),
  amount_minor  bigint not null check (amount_minor > 0),
  currency      text not null,
  reason        text,
  requested_by  text not null,
  status        text not null check (status in ('pending', 'approved', 'rejected')),
  approver      text,
  refund_id     uuid,
  created_at    timestamptz not null default now(),
  resolved_at   timestamptz
);

create table payment_methods (
  id            uuid primary key,
  tenant_id     uuid not null references tenants(id),
  livemode      boolean not null,
  customer_id   uuid not null references customers(id),
  connector     text not null,
  status        text not null check (status in ('pending', 'active', 'detached')),
  brand         text,
  last4         text,
  -- the connector's reusable reference (never card data); the single-use token only until activation
  provider_ref  text,
  pending_token text,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now()
);
create index payment_methods_customer on payment_methods (customer_id, created_at);

create table disputes (
  id                uuid primary key,
  tenant_id         uuid not null references tenants(id),
  livemode          boolean not null,
  payment_intent_id uuid not null references payment_intents(id),
  attempt_id        uuid not null references attempts(id) unique,
  amount_minor      bigint not null check (amount_minor > 0),
  currency          text not null,
  reason            text not null,
  status            text not null check (status in ('needs_response', 'under_review', 'won', 'lost')),
  evidence_due_by   timestamptz not null,
  created_at        timestamptz not null default now()
);
create index disputes_tenant on disputes (tenant_id, livemode, created_at desc);
