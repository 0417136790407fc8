-- Issue 27, defect 8 (rest): SPEI payment instructions carry a referencia numérica (SPEI's numeric
-- reference, 1..9,999,999, ≤ 7 digits: ../shared/formats/stp.md §2 field 28 [C], §6b; the payer types
-- it in and the payee's bank prints it: ../shared/formats/bank-statements.md §4) that identifies the
-- payment, so a bank line carrying only that number matches its charge (docs/bank-statements.md).
-- Drawn from one sequence of 9,000,000 values and spread by a fixed bijection (payment-intents actor):
-- always 7 digits, and no two SPEI instructions share one until 9,000,000 more have been issued.
create sequence if not exists spei_referencia_seq minvalue 0 maxvalue 8999999 start 0 cycle;
alter table attempts add column if not exists referencia_numerica integer check (referencia_numerica between 1000000 and 9999999);
create index if not exists attempts_referencia_numerica on attempts (tenant_id, referencia_numerica) where referencia_numerica is not null;
