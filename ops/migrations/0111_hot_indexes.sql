-- The cost of a payment (issue 26): payment_intents carried three btree indexes for one order.
-- payment_intents_report (0050) is column for column payment_intents_tenant_page (0015:
-- tenant_id, livemode, created_at desc, id desc), and payment_intents_tenant (0002: tenant_id,
-- livemode, created_at desc) is a prefix of it: every create wrote three index entries where one
-- serves the list, the report and the tenant's pages (same leading columns, same order).
drop index if exists payment_intents_report;
drop index if exists payment_intents_tenant;

-- Every payment_intent.succeeded runs the bank statements' late-evidence lookup (the charge's SPEI
-- attempt: payment_intent_id = $1 and method = 'spei', newest first). Without statistics on
-- attempts (autovacuum off, or not yet run) its plan walked all of the tenant's attempts through
-- attempts_tenant_created: 21-195 buffers per payment, growing with the tenant (EXPLAIN (ANALYZE,
-- BUFFERS), generic plan: 400 rows removed by filter, 0.40 ms). This index holds SPEI attempts
-- only (no entry for a card), matches the lookup's predicate, and is the cheapest path whatever the
-- statistics: 2 buffers, 0.04 ms.
create index attempts_spei_intent on attempts (payment_intent_id, created_at) where method = 'spei';
