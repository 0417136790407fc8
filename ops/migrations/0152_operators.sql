-- Named operators (issue 30; docs/operator.md). No second account system: an operator is a member
-- of the platform's own tenant in the merchant portal's tables (portal_members: password, TOTP,
-- sessions, resets; migration 0140) with an operator role here. The platform tenant is made once
-- (no API keys) and requires a second factor of every member; the operator routes refuse a member
-- without one besides.
create table operator_platform (
  singleton   boolean primary key default true check (singleton),
  tenant_id   uuid not null unique references tenants(id),
  created_at  timestamptz not null default now()
);

create table operators (
  member_id   uuid primary key references portal_members(id),
  role        text not null check (role in ('admin', 'reviewer', 'support', 'viewer')),
  created_by  text not null,
  created_at  timestamptz not null default now(),
  updated_at  timestamptz not null default now()
);

-- Decisions that need a second operator (four-eyes): the first operator asks, another decides.
create table operator_decisions (
  id            uuid primary key,
  tenant_id     uuid not null references tenants(id),
  livemode      boolean not null,
  status        text not null check (status in ('pending', 'approved', 'rejected', 'failed')),
  version       integer not null default 0,
  -- what is decided: 'onboarding_application.approve', 'payout_approval.approve', 'tenant.release'
  action        text not null,
  target_kind   text not null,
  target_id     text not null,
  reason        text,
  -- the operation to run once approved: {route, params, body} of the operator route asked for
  command       jsonb not null,
  -- what the target looked like when asked (shown to the second operator)
  snapshot      jsonb,
  -- the answer of the operation, or its error, once run
  outcome       jsonb,
  requested_by  uuid not null references portal_members(id),
  decided_by    uuid references portal_members(id),
  decision_note text,
  created_at    timestamptz not null default now(),
  decided_at    timestamptz,
  updated_at    timestamptz not null default now()
);
-- one open request per action and target
create unique index operator_decisions_open on operator_decisions (action, target_id) where status = 'pending';
create index operator_decisions_pending on operator_decisions (status, created_at);

-- A suspended tenant's API keys answer 401 and its members cannot sign in to the portal until an
-- operator releases it (a release needs a second operator).
alter table tenants add column suspended_at timestamptz;
alter table tenants add column suspended_reason text;
