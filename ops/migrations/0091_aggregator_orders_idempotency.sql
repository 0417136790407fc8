-- issue 24 parts 1 and 3: service payments and recharges are aggregator orders on the outbound
-- protocol (actors/aggregator-orders.ts) and keep their Idempotency-Key in the kernel's
-- idempotency record (idempotency_keys), written in the transaction that creates the order, instead
-- of a private column. Service payments gain the protocol's mark (send_started_at), as recharges had.
alter table service_payments add column send_started_at timestamptz;
-- Keys of orders created before this migration keep answering replays: a record per order, naming
-- it. Service payments keep their request hash (same fields, same canonical form); a recharge's was
-- never stored (its phone is sealed), so a replay of an older recharge key with the same data answers
-- recharge.idempotency_conflict (test mode only: recharges have no live mode). Records are pruned
-- after the retention window as every other (ops: pruneIdempotency).
insert into idempotency_keys (tenant_id, livemode, key, request_hash, method, path, status_code, response_body, created_at)
select tenant_id, livemode, idempotency_key::uuid, request_hash, 'POST', '/v1/service_payments', 200, json_build_object('id', id, 'object', 'service_payment')::text, created_at
  from service_payments where idempotency_key ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
on conflict do nothing;
insert into idempotency_keys (tenant_id, livemode, key, request_hash, method, path, status_code, response_body, created_at)
select tenant_id, livemode, idempotency_key::uuid, 'legacy', 'POST', '/v1/recharges', 200, json_build_object('id', id, 'object', 'recharge')::text, created_at
  from recharges where idempotency_key ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
on conflict do nothing;
alter table service_payments drop column idempotency_key, drop column request_hash;
alter table recharges drop column idempotency_key;
