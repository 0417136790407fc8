-- Reports over the ledger and the charges (issue 17; docs/reports.md).
--
-- 1. Every journal entry gets an accounting date: the day (America/Mexico_City) of its
--    occurred_at (the tenant's clock: test mode adds the test-clock offset), unless the tenant's
--    books are closed through that month, in which case the entry is carried to the first day of
--    the first open month (carried_from keeps the original day). A trigger decides it, so it holds
--    for every writer.
-- 2. A period close takes the book's lock exclusively; every posting takes it shared (advisory
--    locks, held to the end of the transaction), so a close waits for the postings in flight and a
--    posting that starts during a close waits for it and then sees it.
-- 3. ledger_daily (per account, currency and accounting day) and cash_facts (one row per captured
--    charge or succeeded refund) are written by a trigger on journal_lines in the posting's own
--    transaction: they cannot drift from the lines they summarize.
-- 4. Views savings_facts, fee_facts and cfdi_facts: contracts with the routing and CFDI
--    capabilities, empty until those replace them (create or replace view, same columns).

-- The book of a tenant in a mode: the key of its advisory lock.
create function orq_book_lock_key(t uuid, live boolean) returns bigint immutable language sql as $$
  select hashtextextended('orq-book:' || t::text || case when live then ':live' else ':test' end, 17)
$$;

create table ledger_period_closes (
  tenant_id  uuid not null references tenants(id),
  livemode   boolean not null,
  -- first day of the closed month
  period     date not null check (extract(day from period) = 1),
  closed_at  timestamptz not null default now(),
  -- the tenant's clock when it was closed
  closed_at_tenant timestamptz not null,
  closed_by  text not null,
  -- frozen per-account balances: [{account, currency, opening_minor, debits_minor, credits_minor, closing_minor}]
  balances   jsonb not null,
  primary key (tenant_id, livemode, period)
);

alter table journal_entries add column occurred_at timestamptz;
alter table journal_entries add column accounting_date date;
alter table journal_entries add column carried_from date;

-- Existing entries: dated by their creation (the ledger refuses updates; the backfill is the only one).
alter table journal_entries disable trigger journal_entries_append_only;
update journal_entries set occurred_at = created_at, accounting_date = (created_at at time zone 'America/Mexico_City')::date;
alter table journal_entries enable trigger journal_entries_append_only;
alter table journal_entries alter column occurred_at set not null;
alter table journal_entries alter column accounting_date set not null;
create index journal_entries_accounting on journal_entries (tenant_id, livemode, accounting_date);

create function journal_entry_accounting_date() returns trigger language plpgsql as $$
declare
  off bigint;
  d date;
  last_closed date;
begin
  -- The check below must see a close that committed while this posting waited for the lock.
  if current_setting('transaction_isolation') <> 'read committed' then
    raise exception 'ledger postings must run in READ COMMITTED (this transaction is %): a period close committed after its snapshot would be invisible to it',
      current_setting('transaction_isolation') using errcode = '25001';
  end if;
  if new.occurred_at is null then
    off := 0;
    if not new.livemode then
      select offset_ms into off from test_clocks where tenant_id = new.tenant_id;
    end if;
    new.occurred_at := now() + make_interval(secs => coalesce(off, 0) / 1000.0);
  end if;
  d := (new.occurred_at at time zone 'America/Mexico_City')::date;
  perform pg_advisory_xact_lock_shared(orq_book_lock_key(new.tenant_id, new.livemode));
  select max(period) into last_closed from ledger_period_closes where tenant_id = new.tenant_id and livemode = new.livemode;
  new.carried_from := null;
  if last_closed is not null and d < (last_closed + interval '1 month')::date then
    new.carried_from := d;
    d := (last_closed + interval '1 month')::date;
  end if;
  new.accounting_date := d;
  return new;
end $$;

create trigger journal_entries_accounting_date before insert on journal_entries
  for each row execute function journal_entry_accounting_date();

-- Per account, currency and accounting day. stripe = backend pid mod 16: concurrent postings of one
-- tenant on different connections update different rows (no lock queue on a hot account); readers sum
-- the stripes.
create table ledger_daily (
  tenant_id    uuid not null,
  livemode     boolean not null,
  currency     text not null,
  day          date not null,
  account      text not null,
  stripe       smallint not null,
  debit_minor  bigint not null,
  credit_minor bigint not null,
  line_count   bigint not null,
  primary key (tenant_id, livemode, currency, day, account, stripe)
);

-- One row per captured charge (kind charge, source = attempt) and per succeeded refund (kind refund,
-- source = refund), dated by its ledger entry: what the cash cut and the anomalies read.
create table cash_facts (
  kind              text not null check (kind in ('charge', 'refund')),
  source_id         uuid not null,
  entry_id          uuid not null,
  tenant_id         uuid not null,
  livemode          boolean not null,
  occurred_at       timestamptz not null,
  currency          text not null,
  method            text not null,
  connector_key     text not null,
  branch            text,
  register          text,
  payment_intent_id uuid not null,
  attempt_id        uuid not null,
  amount_minor      bigint not null,
  tip_minor         bigint not null,
  card_fingerprint  text,
  primary key (kind, source_id)
);
create index cash_facts_period on cash_facts (tenant_id, livemode, currency, occurred_at)
  include (kind, method, connector_key, branch, register, amount_minor, tip_minor);
create index cash_facts_branch on cash_facts (tenant_id, livemode, currency, branch, occurred_at)
  include (kind, method, connector_key, register, amount_minor, tip_minor);

-- Card identity for the duplicate-charge rule: a tenant-salted hash of the token the charge used (a
-- saved method's reference, or a test token), kept after the token itself is cleared.
alter table attempts add column card_fingerprint text;
create function attempts_card_fingerprint() returns trigger language plpgsql as $$
begin
  if new.method = 'card' and new.payment_token is not null and new.card_fingerprint is null then
    new.card_fingerprint := encode(sha256(convert_to(new.tenant_id::text || ':' || new.payment_token, 'UTF8')), 'hex');
  end if;
  return new;
end $$;
create trigger attempts_card_fingerprint before insert on attempts
  for each row execute function attempts_card_fingerprint();

create function journal_lines_summarize() returns trigger language plpgsql as $$
declare
  ids uuid[];
  b record;
  last_closed date;
begin
  -- The entries of these lines, joined by primary key: a posting never scans journal_entries.
  select array_agg(distinct entry_id) into ids from new_lines;

  -- Lines join the book's lock (a close waits for them) and never land in a closed month, whatever
  -- entry they belong to.
  for b in select distinct e.tenant_id, e.livemode from unnest(ids) x(id) join journal_entries e on e.id = x.id loop
    perform pg_advisory_xact_lock_shared(orq_book_lock_key(b.tenant_id, b.livemode));
    select max(period) into last_closed from ledger_period_closes where tenant_id = b.tenant_id and livemode = b.livemode;
    if last_closed is not null and exists (
      select 1 from unnest(ids) x(id) join journal_entries e on e.id = x.id where e.tenant_id = b.tenant_id and e.livemode = b.livemode and e.accounting_date < (last_closed + interval '1 month')::date) then
      raise exception 'journal lines refused: their entry is dated in a closed period (closed through %); post a new entry instead', last_closed
        using errcode = '23514';
    end if;
  end loop;
  if exists (select 1 from new_lines l join journal_entries e on e.id = l.entry_id where l.tenant_id <> e.tenant_id or l.livemode <> e.livemode) then
    raise exception 'journal lines refused: they name another tenant or mode than their entry' using errcode = '23514';
  end if;

  insert into ledger_daily as d (tenant_id, livemode, currency, day, account, stripe, debit_minor, credit_minor, line_count)
  select e.tenant_id, e.livemode, l.currency, e.accounting_date, l.account, (pg_backend_pid() % 16)::smallint,
         sum(greatest(l.amount_minor, 0)), sum(greatest(-l.amount_minor, 0)), count(*)
    from new_lines l join journal_entries e on e.id = l.entry_id
   group by e.tenant_id, e.livemode, l.currency, e.accounting_date, l.account
   order by 1, 2, 3, 4, 5
  on conflict (tenant_id, livemode, currency, day, account, stripe) do update
     set debit_minor = d.debit_minor + excluded.debit_minor,
         credit_minor = d.credit_minor + excluded.credit_minor,
         line_count = d.line_count + excluded.line_count;

  insert into cash_facts (kind, source_id, entry_id, tenant_id, livemode, occurred_at, currency, method, connector_key, branch, register,
                          payment_intent_id, attempt_id, amount_minor, tip_minor, card_fingerprint)
  select 'charge', a.id, e.id, e.tenant_id, e.livemode, e.occurred_at, pi.currency, a.method, a.connector_key,
         pi.metadata->>'branch', pi.metadata->>'register', pi.id, a.id, pi.amount_minor, pi.tip_minor, a.card_fingerprint
    from unnest(ids) x(id)
    join journal_entries e on e.id = x.id
    join attempts a on a.id = e.ref_id
    join payment_intents pi on pi.id = a.payment_intent_id
   where e.kind = 'charge.captured' and e.ref_type = 'attempt'
  on conflict do nothing;

  insert into cash_facts (kind, source_id, entry_id, tenant_id, livemode, occurred_at, currency, method, connector_key, branch, register,
                          payment_intent_id, attempt_id, amount_minor, tip_minor, card_fingerprint)
  select 'refund', r.id, e.id, e.tenant_id, e.livemode, e.occurred_at, r.currency, a.method, a.connector_key,
         pi.metadata->>'branch', pi.metadata->>'register', pi.id, a.id, r.amount_minor, 0, a.card_fingerprint
    from unnest(ids) x(id)
    join journal_entries e on e.id = x.id
    join refunds r on r.id = e.ref_id
    join attempts a on a.id = r.attempt_id
    join payment_intents pi on pi.id = a.payment_intent_id
   where e.kind = 'refund.succeeded' and e.ref_type = 'refund'
  on conflict do nothing;
  return null;
end $$;

create trigger journal_lines_summarize after insert on journal_lines
  referencing new table as new_lines for each statement execute function journal_lines_summarize();

-- Backfill from the lines already posted.
insert into ledger_daily (tenant_id, livemode, currency, day, account, stripe, debit_minor, credit_minor, line_count)
select e.tenant_id, e.livemode, l.currency, e.accounting_date, l.account, 0,
       sum(greatest(l.amount_minor, 0)), sum(greatest(-l.amount_minor, 0)), count(*)
  from journal_lines l join journal_entries e on e.id = l.entry_id
 group by e.tenant_id, e.livemode, l.currency, e.accounting_date, l.account;

insert into cash_facts (kind, source_id, entry_id, tenant_id, livemode, occurred_at, currency, method, connector_key, branch, register,
                        payment_intent_id, attempt_id, amount_minor, tip_minor)
select 'charge', a.id, e.id, e.tenant_id, e.livemode, e.occurred_at, pi.currency, a.method, a.connector_key,
       pi.metadata->>'branch', pi.metadata->>'register', pi.id, a.id, pi.amount_minor, pi.tip_minor
  from journal_entries e join attempts a on a.id = e.ref_id join payment_intents pi on pi.id = a.payment_intent_id
 where e.kind = 'charge.captured' and e.ref_type = 'attempt'
union all
select 'refund', r.id, e.id, e.tenant_id, e.livemode, e.occurred_at, r.currency, a.method, a.connector_key,
       pi.metadata->>'branch', pi.metadata->>'register', pi.id, a.id, r.amount_minor, 0
  from journal_entries e join refunds r on r.id = e.ref_id join attempts a on a.id = r.attempt_id join payment_intents pi on pi.id = a.payment_intent_id
 where e.kind = 'refund.succeeded' and e.ref_type = 'refund';

-- The anomalies read a tenant's attempts by day.
create index attempts_tenant_created on attempts (tenant_id, livemode, created_at);

-- The payments report pages by (created_at, id), newest first.
create index payment_intents_report on payment_intents (tenant_id, livemode, created_at desc, id desc);

-- The tenant's chart mapping: ledger account (or a `prefix:*` pattern) -> the tenant's accounting code.
create table report_account_mappings (
  tenant_id  uuid not null references tenants(id),
  livemode   boolean not null,
  account    text not null,
  code       text not null,
  updated_at timestamptz not null default now(),
  primary key (tenant_id, livemode, account)
);

create table report_settings (
  tenant_id            uuid not null references tenants(id),
  livemode             boolean not null,
  contpaqi_poliza_type integer not null default 3,
  aspel_poliza_type    text not null default 'Dr',
  folio_offset         integer not null default 0,
  updated_at           timestamptz not null default now(),
  primary key (tenant_id, livemode)
);

-- The key that signs report cursors (the same for every process; never leaves the database).
create table report_cursor_keys (
  id         smallint primary key,
  secret     text not null,
  created_at timestamptz not null default now()
);
insert into report_cursor_keys (id, secret) values (1, replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''));

-- Contracts with other capabilities (docs/reports.md): empty, so every figure is a true zero until
-- the owning capability replaces the view with real rows (same columns, same order, same types).
create view savings_facts as
select null::uuid as tenant_id, null::boolean as livemode, null::uuid as payment_intent_id, null::text as connector_key,
       null::timestamptz as occurred_at, null::text as currency, null::bigint as routing_saved_minor,
       null::bigint as retry_recovered_minor, null::bigint as dunning_recovered_minor
 where false;

create view fee_facts as
select null::uuid as tenant_id, null::boolean as livemode, null::uuid as attempt_id, null::text as connector_key,
       null::timestamptz as occurred_at, null::text as currency, null::bigint as expected_fee_minor, null::bigint as charged_fee_minor
 where false;

create view cfdi_facts as
select null::uuid as tenant_id, null::boolean as livemode, null::uuid as payment_intent_id, null::text as uuid_fiscal,
       null::timestamptz as issued_at, null::text as serie, null::text as folio, null::text as rfc_emisor,
       null::text as rfc_receptor, null::bigint as total_minor, null::text as currency
 where false;
