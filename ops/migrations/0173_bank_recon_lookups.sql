-- Bank statement matching without per-line scans (bench/reconciliation, 2026-11-27: a 5 MiB import took
-- 692 s against 8.4 s the day before; bench/RESULTS.md has the EXPLAIN). actors/bank-statements.ts
-- matchStatement looks every candidate up per line, by index, whatever the planner's estimates (the
-- lines are inserted in the import's own transaction: no statistics); two of those lookups had no
-- index that answered them by equality:
-- 1. The amount-and-date rule (a line nothing identifies whose amount only one SPEI charge in the
--    window has): cash_facts_period (tenant_id, livemode, currency, occurred_at) gave every charge
--    of the window for each line, filtered by amount (25,000 rows per line in the probe). This index
--    answers amount and window with one range: SPEI charges only (the rule's predicate), so a card
--    capture writes no entry in it.
create index cash_facts_spei_amount on cash_facts (tenant_id, livemode, currency, (amount_minor + tip_minor), occurred_at)
  where kind = 'charge' and method = 'spei';
-- 2. "Is this charge already held by a line (matched or partial)?": bank_statement_lines_one_per_charge
--    holds matched lines only, so the check read the tenant's lines through another index (9,954 rows
--    per line in the probe). Every line that holds a charge (matched or partial) has attempt_id set,
--    so `attempt_id = $1` uses this index.
create index bank_statement_lines_charge on bank_statement_lines (attempt_id, tenant_id) where attempt_id is not null;
