-- The portal's search by amount (issue 29; bench/portal): at 10^6 payments of a tenant, finding the
-- few with one amount walked the whole tenant newest-first (p50 1.5 s). This index answers it from
-- the amount's own rows, newest first. One more b-tree per payment insert: bench/RESULTS.md.
create index if not exists payment_intents_amount on payment_intents (tenant_id, livemode, amount_minor, created_at desc, id desc);
