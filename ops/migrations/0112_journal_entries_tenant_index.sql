-- The cost of a payment (issue 26): journal_entries_tenant (0002: tenant_id, livemode, created_at)
-- is read by no query: entries are found by id (primary key), by what they record (ref_type,
-- ref_id, kind: unique) or by accounting day (journal_entries_accounting, 0050: tenant_id,
-- livemode, accounting_date — the ledger and polizas reports); the balance reaches them from
-- their lines by id. Every posting (each payment, refund, payout, dispute) still wrote an entry
-- into it: one index insertion less per entry (bench/cost: buffers and WAL per payment).
drop index if exists journal_entries_tenant;
