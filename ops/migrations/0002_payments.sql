-- Payment intents, attempts, history, outbox, timers, test clocks, risk, ledger, sim provider.

create table payment_intents (
  id            uuid primary key,
  tenant_id     uuid not null references tenants(id),
  livemode      boolean not null,
  amount_minor  bigint not null check (amount_minor > 0),
  tip_minor     bigint not null default 0 check (tip_minor >= 0),
  currency      text not null,
  status        text not null,
  client_secret text not null unique,
  metadata      jsonb,
  receipt_code  text not null,
  next_action   jsonb,
  last_error    jsonb,
  -- fencing token: every write is "where version = <seen>" and bumps it.
  version       integer not null default 0,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now(),
  unique (tenant_id, receipt_code)
);
create index payment_intents_tenant on payment_intents (tenant_id, livemode, created_at desc);

create table attempts (
  id               uuid primary key,
  tenant_id        uuid not null references tenants(id),
  livemode         boolean not null,
  payment_intent_id uuid not null references payment_intents(id),
  status           text not null,
  connector_key    text not null,
  method           text not null,
  amount_minor     bigint not null check (amount_minor > 0),
  currency         text not null,
  -- the single-use token as the connector needs it; never returned by the API
  payment_token    text,
  provider_ref     text,
  provider_key     text not null unique,
  failure_code     text,
  failure_message  text,
  decline          text,
  capture_requested_at timestamptz,
  fee_minor        bigint,
  created_at       timestamptz not null default now(),
  updated_at       timestamptz not null default now()
);
create index attempts_intent on attempts (payment_intent_id, created_at);
create index attempts_provider_ref on attempts (provider_ref) where provider_ref is not null;
create index attempts_pending on attempts (status, updated_at) where status in ('pending', 'authorized');
-- Never two open attempts on one intent (no double charge), whatever the application does.
create unique index attempts_one_open on attempts (payment_intent_id) where status in ('pending', 'authorized', 'requires_action');

create table payment_intent_history (
  id                bigserial primary key,
  payment_intent_id uuid not null references payment_intents(id),
  tenant_id         uuid not null,
  livemode          boolean not null,
  event             text not null,
  from_status       text,
  to_status         text not null,
  data              jsonb,
  created_at        timestamptz not null default now()
);
create index payment_intent_history_intent on payment_intent_history (payment_intent_id, id);

-- Committed events. id is the /v1/events cursor; event_id the receivers' dedupe key.
create table outbox_events (
  id          bigserial primary key,
  event_id    uuid not null unique,
  tenant_id   uuid not null references tenants(id),
  livemode    boolean not null,
  event_type  text not null,
  entity_id   uuid,
  data        jsonb not null,
  created_at  timestamptz not null default now(),
  relayed_at  timestamptz
);
create index outbox_events_tenant on outbox_events (tenant_id, livemode, id);
create index outbox_events_unrelayed on outbox_events (id) where relayed_at is null;

-- Durable timers: due_at is in the tenant's clock (test mode: real time + offset).
create table timers (
  id         uuid primary key,
  tenant_id  uuid not null references tenants(id),
  livemode   boolean not null,
  kind       text not null,
  entity_id  uuid not null,
  due_at     timestamptz not null,
  fired_at   timestamptz,
  created_at timestamptz not null default now(),
  unique (kind, entity_id)
);
create index timers_due on timers (due_at) where fired_at is null;

create table test_clocks (
  tenant_id  uuid primary key references tenants(id),
  offset_ms  bigint not null default 0 check (offset_ms >= 0),
  updated_at timestamptz not null default now()
);

create table risk_rules (
  id         uuid primary key,
  tenant_id  uuid not null references tenants(id),
  field      text not null,
  operator   text not null,
  value      jsonb not null,
  action     text not null check (action in ('block', 'review')),
  active     boolean not null default true,
  created_at timestamptz not null default now()
);
create index risk_rules_tenant on risk_rules (tenant_id) where active;

create table risk_reviews (
  id                uuid primary key,
  tenant_id         uuid not null references tenants(id),
  livemode          boolean not null,
  payment_intent_id uuid not null references payment_intents(id),
  rule_id           uuid not null references risk_rules(id),
  status            text not null check (status in ('pending', 'approved', 'rejected')),
  -- the confirm request waiting for the decision (token kept only until then)
  request           jsonb,
  created_at        timestamptz not null default now(),
  resolved_at       timestamptz
);
create unique index risk_reviews_one_pending on risk_reviews (payment_intent_id) where status = 'pending';

-- Double-entry ledger. Amounts: debit positive, credit negative; each entry's lines sum to zero
-- per currency (checked at commit by a deferred constraint trigger); rows are never updated or
-- deleted (a correction is a new entry).
create table journal_entries (
  id          uuid primary key,
  tenant_id   uuid not null references tenants(id),
  livemode    boolean not null,
  kind        text not null,
  ref_type    text not null,
  ref_id      uuid not null,
  memo        text,
  created_at  timestamptz not null default now(),
  unique (ref_type, ref_id, kind)
);
create index journal_entries_tenant on journal_entries (tenant_id, livemode, created_at);

create table journal_lines (
  id           bigserial primary key,
  entry_id     uuid not null references journal_entries(id),
  tenant_id    uuid not null,
  livemode     boolean not null,
  account      text not null,
  currency     text not null,
  amount_minor bigint not null check (amount_minor <> 0)
);
create index journal_lines_entry on journal_lines (entry_id);
create index journal_lines_account on journal_lines (tenant_id, livemode, account);

create function journal_entry_balanced() returns trigger language plpgsql as $$
declare bad record;
begin
  select currency, sum(amount_minor) as total into bad
    from journal_lines where entry_id = new.entry_id
    group by currency having sum(amount_minor) <> 0 limit 1;
  if found then
    raise exception 'journal entry % does not balance in %: lines sum to %', new.entry_id, bad.currency, bad.total
      using errcode = '23514';
  end if;
  return null;
end $$;

create constraint trigger journal_lines_balanced after insert on journal_lines
  deferrable initially deferred for each row execute function journal_entry_balanced();

create function ledger_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'the ledger is append-only: % on % refused (post a correcting entry instead)', tg_op, tg_table_name
    using errcode = '42501';
end $$;

create trigger journal_entries_append_only before update or delete on journal_entries
  for each row execute function ledger_append_only();
create trigger journal_lines_append_only before update or delete on journal_lines
  for each row execute function ledger_append_only();

-- The sim connector's own book of calls, as an outside provider keeps it: one row per
-- idempotency key; `charges` counts how many times money moved for it (must never exceed 1).
create table sim_provider_calls (
  idempotency_key text primary key,
  kind            text not null,
  provider_ref    text not null unique,
  tenant_id       uuid not null,
  livemode        boolean not null,
  method          text not null,
  amount_minor    bigint not null,
  currency        text not null,
  token           text,
  outcome         jsonb not null,
  calls           integer not null default 1,
  -- times the caller asked what became of the key (settling an unknown outcome)
  retrievals      integer not null default 0,
  charges         integer not null default 0,
  paid_at         timestamptz,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now()
);
