-- Issue 27 (defect 8): the bank side of the books.
-- Debit lines of a statement (bank commissions, transfers out) are kept and posted; credit lines that
-- repeat a line already imported from the same bank (a re-export of the same movements, e.g. LF
-- instead of CRLF: another file hash) are `duplicate` (neither matched nor posted).
create table if not exists bank_statement_debits (
  id            bigserial,
  statement_id  uuid not null,
  tenant_id     uuid not null,
  livemode      boolean not null,
  row_number    integer not null,
  value_date    date not null,
  description   text not null,
  reference     text,
  debit_minor   bigint not null check (debit_minor > 0),
  fingerprint   text not null,
  duplicate     boolean not null default false,
  -- keys carry tenant_id (issue 31, migration 0160: distributed by tenant under Citus)
  primary key (id, tenant_id)
);
create index if not exists bank_statement_debits_statement on bank_statement_debits (statement_id, id);
create index if not exists bank_statement_debits_fp on bank_statement_debits (tenant_id, livemode, fingerprint);
alter table bank_statement_lines add column if not exists fingerprint text;
alter table bank_statement_lines add column if not exists bank_key text;
-- the statement's unidentified lines were posted to suspense at import (every line not matched then):
-- a line matched later (rematch, a charge succeeding) debits suspense, not the bank. Statements
-- imported before this migration posted nothing for their open lines.
alter table bank_statements add column if not exists suspense_posted boolean not null default false;
alter table bank_statement_lines drop constraint if exists bank_statement_lines_match_status_check;
alter table bank_statement_lines add constraint bank_statement_lines_match_status_check check (match_status in ('matched', 'unmatched', 'partial', 'duplicate'));
alter table bank_statement_lines drop constraint if exists bank_statement_lines_check;
alter table bank_statement_lines add constraint bank_statement_lines_check check ((match_status in ('unmatched', 'duplicate')) = (attempt_id is null));
create index if not exists bank_statement_lines_fp on bank_statement_lines (tenant_id, livemode, bank_key, fingerprint) where match_status <> 'duplicate';
-- how a line was matched: by reference column, clave de rastreo, a reference inside the concept, or only amount and date (partial)
alter table bank_statement_lines add column if not exists match_rule text;
