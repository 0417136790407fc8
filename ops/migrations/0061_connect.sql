-- Sub-merchant onboarding, Connect accounts and transfers, payouts (docs/connect.md).
-- Full CLABEs are never stored in clear: `*_sealed` columns hold them encrypted (ops/secret-box.ts,
-- AES-256-GCM bound to the row), `*_masked` what responses show. Entities carry `version`, the
-- fencing token of the entity actor (kernel/entity.ts); their steps are in entity_history.

create table onboarding_applications (
  id             uuid primary key,
  tenant_id      uuid not null references tenants(id),
  livemode       boolean not null,
  status         text not null check (status in ('draft', 'needs_info', 'approved', 'rejected')),
  version        integer not null default 0,
  legal_name     text not null,
  person_type    text not null check (person_type in ('fisica', 'moral')),
  contact_email  text not null,
  rfc            text,
  clabe_sealed   text,
  clabe_masked   text,
  -- {<document_type>: {document_type, reference, reference_hash, created_at}}: one per type
  documents      jsonb not null default '{}'::jsonb,
  status_reason  text,
  resolved_by    text,
  submitted_at   timestamptz,
  resolved_at    timestamptz,
  created_at     timestamptz not null default now(),
  updated_at     timestamptz not null default now()
);
create index onboarding_applications_tenant on onboarding_applications (tenant_id, livemode, created_at desc, id);

-- Live-mode sanctions and blocked-taxpayer lists (SAT 69-B EFOS, …), loaded by the operator.
create table blocked_taxpayers (
  rfc         text not null,
  list        text not null,
  reason      text not null,
  created_at  timestamptz not null default now(),
  primary key (rfc, list)
);

create table connect_accounts (
  id                         uuid primary key,
  tenant_id                  uuid not null references tenants(id),
  livemode                   boolean not null,
  status                     text not null check (status in ('active', 'suspended')),
  version                    integer not null default 0,
  -- one account per application (connect.account_conflict)
  onboarding_application_id  uuid not null unique references onboarding_applications(id),
  sub_merchant_name          text not null,
  rfc                        text,
  settlement_clabe_sealed    text not null,
  settlement_clabe_masked    text not null,
  connector_key              text not null,
  created_at                 timestamptz not null default now(),
  updated_at                 timestamptz not null default now()
);
create index connect_accounts_tenant on connect_accounts (tenant_id, livemode, created_at desc, id);

create table payouts (
  id                  uuid primary key,
  tenant_id           uuid not null references tenants(id),
  livemode            boolean not null,
  status              text not null check (status in ('processing', 'paid', 'failed', 'returned')),
  version             integer not null default 0,
  clabe_sealed        text not null,
  clabe_masked        text not null,
  beneficiary_name    text not null,
  beneficiary_rfc     text,
  amount_minor        bigint not null check (amount_minor > 0),
  currency            text not null check (currency = 'MXN'),
  concepto            text not null,
  reference           text not null,
  -- what the client asked for (`stp`, `sim`) and the rail that executes it (`sim` in test mode)
  connector_key       text not null,
  rail_key            text not null,
  -- derived from the id, never random: the rail's idempotency key and the clave de rastreo
  order_key           text not null unique,
  tracking_key        text not null unique,
  -- set before the first call to the rail: a payout with it set may have been sent (ask first)
  send_started_at     timestamptz,
  operation_date      text,
  sent_at             timestamptz,
  provider_ref        text,
  failure_code        text,
  failure_reason      text,
  requested_by        text not null,
  approval_id         uuid,
  connect_account_id  uuid references connect_accounts(id),
  paid_at             timestamptz,
  returned_at         timestamptz,
  created_at          timestamptz not null default now(),
  updated_at          timestamptz not null default now()
);
create index payouts_tenant on payouts (tenant_id, livemode, created_at desc, id);
create index payouts_processing on payouts (updated_at) where status = 'processing';
create index payouts_provider_ref on payouts (tenant_id, rail_key, provider_ref) where provider_ref is not null;

create table payout_approvals (
  id                uuid primary key,
  tenant_id         uuid not null references tenants(id),
  livemode          boolean not null,
  status            text not null check (status in ('pending', 'approved', 'rejected')),
  -- the payout as requested (no CLABE in it) and its CLABE sealed for this approval
  request           jsonb not null,
  clabe_sealed      text not null,
  clabe_masked      text not null,
  amount_minor      bigint not null check (amount_minor > 0),
  currency          text not null,
  requested_by      text not null,
  approver          text,
  payout_id         uuid,
  created_at        timestamptz not null default now(),
  resolved_at       timestamptz
);

create table connect_transfers (
  id                     uuid primary key,
  tenant_id              uuid not null references tenants(id),
  livemode               boolean not null,
  status                 text not null check (status = 'split'),
  version                integer not null default 0,
  payment_intent_id      uuid not null references payment_intents(id),
  charge_amount_minor    bigint not null check (charge_amount_minor > 0),
  application_fee_minor  bigint not null check (application_fee_minor >= 0 and application_fee_minor <= charge_amount_minor),
  currency               text not null,
  requested_by           text not null,
  created_at             timestamptz not null default now(),
  updated_at             timestamptz not null default now()
);
create index connect_transfers_tenant on connect_transfers (tenant_id, livemode, created_at desc, id);
create index connect_transfers_intent on connect_transfers (payment_intent_id);

create table connect_splits (
  id                  uuid primary key,
  tenant_id           uuid not null references tenants(id),
  livemode            boolean not null,
  transfer_id         uuid not null references connect_transfers(id),
  position            integer not null,
  connect_account_id  uuid not null references connect_accounts(id),
  amount_minor        bigint not null check (amount_minor > 0),
  payout_id           uuid not null unique references payouts(id),
  created_at          timestamptz not null default now(),
  unique (transfer_id, position)
);

-- A charge is never split for more than it captured, whoever writes the transfer and however many
-- at once: the intent is locked (a transaction-scoped advisory lock on its id) so that concurrent
-- transfers of one charge are checked one after the other, each seeing what committed before it.
-- Captured = captured attempts of the intent, less live refunds (requested or succeeded).
create function connect_transfers_within_captured() returns trigger language plpgsql as $$
declare
  captured bigint;
  refunded bigint;
  split bigint;
begin
  perform pg_advisory_xact_lock(hashtextextended('connect_transfer:' || new.payment_intent_id::text, 0));
  select coalesce(sum(amount_minor), 0) into captured from attempts
   where payment_intent_id = new.payment_intent_id and status in ('captured', 'settled', 'partially_refunded', 'refunded');
  select coalesce(sum(r.amount_minor), 0) into refunded from refunds r join attempts a on a.id = r.attempt_id
   where a.payment_intent_id = new.payment_intent_id and r.status in ('requested', 'succeeded');
  select coalesce(sum(charge_amount_minor), 0) into split from connect_transfers
   where payment_intent_id = new.payment_intent_id and id <> new.id;
  if split + new.charge_amount_minor > captured - refunded then
    raise exception 'transfers of payment intent % would exceed what it captured: % already split, % requested, % captured less refunds',
      new.payment_intent_id, split, new.charge_amount_minor, captured - refunded using errcode = 'OQ461';
  end if;
  return new;
end $$;

create trigger connect_transfers_within_captured before insert on connect_transfers
  for each row execute function connect_transfers_within_captured();

-- A tenant's credentials for a payout rail (STP): what identifies the company in clear, the
-- secrets (private key, passphrase, paying account) sealed; never readable back through the API.
create table payout_credentials (
  tenant_id         uuid not null references tenants(id),
  livemode          boolean not null,
  connector_key     text not null,
  empresa           text not null,
  cuenta_masked     text not null,
  key_fingerprint   text not null,
  sealed            text not null,
  updated_at        timestamptz not null default now(),
  primary key (tenant_id, livemode, connector_key)
);
