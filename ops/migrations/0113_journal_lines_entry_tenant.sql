-- The cost of a payment (issue 26): the entry's balance check (journal_entry_balanced, a deferred
-- trigger run once per line: four times per payment) reads its lines by entry_id and, since 0162,
-- tenant_id. journal_lines_entry held entry_id alone, so without statistics (this cluster runs
-- with autovacuum = off; any table growing faster than autovacuum analyzes it) the generic plan
-- ANDed it with journal_lines_account (tenant_id, livemode, account): a bitmap of every line of
-- the tenant for each check (EXPLAIN (ANALYZE, BUFFERS): `BitmapAnd` of journal_lines_account,
-- rows=600, and journal_lines_entry, rows=4; bench/cost: 11-19 buffers per check, growing with
-- the tenant's ledger). With both columns in one index the lookup is that index's range whatever
-- the statistics. It also serves the composite foreign key's checks (entry_id, tenant_id) and the
-- balance's join to the entries' lines.
create index journal_lines_entry_tenant on journal_lines (entry_id, tenant_id);
drop index if exists journal_lines_entry;
