-- Bank statements and reconciliation (issue 16; docs/bank-statements.md). A statement is an
-- imported file (idempotent by its SHA-256 per tenant and mode); its credit lines are matched to
-- succeeded SPEI charges (decisions.md §6). Every table has (tenant_id, livemode).
create table bank_statements (
  id             uuid primary key,
  tenant_id      uuid not null references tenants(id),
  livemode       boolean not null,
  bank           text not null,
  period_start   date not null,
  period_end     date not null,
  tolerance_days integer not null check (tolerance_days >= 0),
  preset         text check (preset in ('bbva', 'banorte', 'santander')),
  -- the columns used (preset or explicit), the delimiter, the header row and the encoding found
  mapping        jsonb not null,
  filename       text,
  file_sha256    text not null,
  file_bytes     integer not null,
  lines_total    integer not null,
  debit_rows     integer not null,
  created_at     timestamptz not null default now(),
  check (period_end >= period_start),
  unique (tenant_id, livemode, file_sha256)
);
create index bank_statements_tenant on bank_statements (tenant_id, livemode, created_at desc);

create table bank_statement_lines (
  id                bigserial primary key,
  -- no foreign key: lines are written only by the transaction that writes their statement, and a
  -- key check per line (on insert and again on each update of a row of this transaction) was a
  -- measurable share of an import of 50,000 lines (bench/reconciliation)
  statement_id      uuid not null,
  tenant_id         uuid not null,
  livemode          boolean not null,
  -- the file's line number (parse errors name the same numbers)
  row_number        integer not null,
  value_date        date not null,
  description       text not null,
  reference         text,
  credit_minor      bigint not null check (credit_minor > 0),
  currency          text not null default 'MXN',
  match_status      text not null default 'unmatched' check (match_status in ('matched', 'unmatched', 'partial')),
  -- the charge a matched or partial line points at; no foreign keys either: set only from a join
  -- with the rows they name.
  payment_intent_id uuid,
  attempt_id        uuid,
  matched_at        timestamptz,
  -- the bank.deposit journal entry a match posted (set in the match's transaction)
  deposit_entry_id  uuid,
  matched_by        text check (matched_by in ('import', 'charge_succeeded', 'rematch')),
  check ((match_status = 'unmatched') = (attempt_id is null)),
  check (deposit_entry_id is null or match_status = 'matched')
);
create index bank_statement_lines_statement on bank_statement_lines (statement_id, id);
create index bank_statement_lines_status on bank_statement_lines (statement_id, match_status, id);
-- late evidence: a charge that succeeds looks for its still-open lines by reference
create index bank_statement_lines_open_ref on bank_statement_lines (tenant_id, livemode, reference)
  where match_status <> 'matched' and reference is not null;
-- one charge matches at most one line, across statements
create unique index bank_statement_lines_one_per_charge on bank_statement_lines (attempt_id) where match_status = 'matched';
create index bank_statement_lines_intent on bank_statement_lines (payment_intent_id) where payment_intent_id is not null;

-- Matching of a tenant's book is serialized (imports, re-matches and charges that succeed): the key
-- of that advisory lock.
create function orq_bank_recon_lock_key(t uuid, live boolean) returns bigint immutable language sql as $$
  select hashtextextended('orq-bank-recon:' || t::text || case when live then ':live' else ':test' end, 23)
$$;
