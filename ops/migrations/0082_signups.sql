-- Public signup (decisions.md §4; docs/signup.md): a pending signup with its scrypt password hash and
-- a sealed verification code that expires and locks after repeated wrong guesses; verification
-- creates the tenant. The code reaches the person through the notification outbox.
create table signups (
  id               uuid primary key,
  email            text not null,
  legal_name       text not null,
  password_hash    text not null,
  status           text not null check (status in ('pending_verification', 'verified')),
  code_sealed      text,
  code_expires_at  timestamptz not null,
  failed_attempts  integer not null default 0,
  tenant_id        uuid references tenants(id),
  created_at       timestamptz not null default now(),
  verified_at      timestamptz
);
create unique index signups_email on signups (lower(email));

-- Messages to people who are not yet tenants (a verification code); a mail sender drains it.
create table notification_outbox (
  id           uuid primary key,
  channel      text not null check (channel in ('email')),
  recipient    text not null,
  template     text not null,
  -- sealed (kernel/secret-box.ts): the code is never stored in clear
  payload_sealed text not null,
  created_at   timestamptz not null default now(),
  sent_at      timestamptz
);
create index notification_outbox_unsent on notification_outbox (created_at) where sent_at is null;
