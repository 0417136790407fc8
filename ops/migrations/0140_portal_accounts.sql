-- The merchant portal (issue 29; docs/portal.md): members of a tenant's team with a role, their
-- sessions, invitations, password resets and the audit log of every portal action. The signup's
-- owner becomes the first member with the signup's scrypt record (kernel/passwords.ts).
create table portal_members (
  id                 uuid primary key,
  tenant_id          uuid not null references tenants(id),
  email              text not null,
  name               text not null default '',
  role               text not null check (role in ('owner', 'admin', 'developer', 'accountant', 'viewer')),
  -- scopes given besides the role's (e.g. reports:read to a developer)
  extra_scopes       text[] not null default '{}',
  password_hash      text,
  -- TOTP secret, sealed (kernel/secret-box.ts); enabled once a code from it was confirmed
  totp_secret_sealed text,
  totp_enabled_at    timestamptz,
  -- the last TOTP time step accepted: a code is never accepted twice
  totp_last_step     bigint,
  status             text not null default 'active' check (status in ('active', 'disabled')),
  locale             text not null default 'es' check (locale in ('es', 'en')),
  created_at         timestamptz not null default now(),
  last_sign_in_at    timestamptz
);
-- One person, one account: an email belongs to one tenant's team.
create unique index portal_members_email on portal_members (lower(email));
create index portal_members_tenant on portal_members (tenant_id);

-- Team-wide portal settings of a tenant.
create table portal_settings (
  tenant_id     uuid primary key references tenants(id),
  require_totp  boolean not null default false,
  updated_at    timestamptz not null default now()
);

-- Sessions: only the sha256 of the cookie's token is kept. stage 'totp' is a password checked and a
-- second factor still owed; 'full' is signed in. Idle and absolute expiry (PORTAL_SESSION_IDLE_MINUTES,
-- PORTAL_SESSION_MAX_HOURS) are checked on every request.
create table portal_sessions (
  token_hash    text primary key,
  member_id     uuid not null references portal_members(id),
  tenant_id     uuid not null references tenants(id),
  stage         text not null check (stage in ('totp', 'full')),
  csrf_token    text not null,
  created_at    timestamptz not null default now(),
  last_seen_at  timestamptz not null default now(),
  expires_at    timestamptz not null,
  ended_at      timestamptz
);
create index portal_sessions_member on portal_sessions (member_id) where ended_at is null;

create table portal_invitations (
  id           uuid primary key,
  tenant_id    uuid not null references tenants(id),
  email        text not null,
  role         text not null check (role in ('admin', 'developer', 'accountant', 'viewer')),
  token_hash   text not null unique,
  invited_by   uuid not null references portal_members(id),
  expires_at   timestamptz not null,
  accepted_at  timestamptz,
  revoked_at   timestamptz,
  created_at   timestamptz not null default now()
);
create index portal_invitations_tenant on portal_invitations (tenant_id, created_at desc);

create table portal_password_resets (
  token_hash  text primary key,
  member_id   uuid not null references portal_members(id),
  expires_at  timestamptz not null,
  used_at     timestamptz,
  created_at  timestamptz not null default now()
);

-- Every portal action: who, what, on which object, from where. Append-only.
create table portal_audit (
  id          bigserial primary key,
  tenant_id   uuid not null references tenants(id),
  member_id   uuid references portal_members(id),
  actor_email text not null,
  action      text not null,
  target      text,
  detail      jsonb not null default '{}'::jsonb,
  ip          text,
  created_at  timestamptz not null default now()
);
create index portal_audit_tenant on portal_audit (tenant_id, id desc);

-- The owners of tenants that signed up before the portal existed become members with their signup's password.
insert into portal_members (id, tenant_id, email, name, role, password_hash, created_at)
select gen_random_uuid(), s.tenant_id, s.email, s.legal_name, 'owner', s.password_hash, coalesce(s.verified_at, now())
from signups s where s.status = 'verified' and s.tenant_id is not null
on conflict do nothing;
