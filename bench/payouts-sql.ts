// The SQL of bench/payouts' pgbench variants, as the app sends it: one source for pgbench's scripts
// and for the bare stack (bench/skeleton-app with SKELETON_CHAIN=payouts), which sends the create's
// statement through uWebSockets.js and postgres.js with no app code (bench/confirm-sql.ts
// skeletonSteps reads a script; `:n` and `:amount` become `$1` and `$2`).
export const TENANT = '7e4a0c1e-0000-4000-8000-0000000b0075';

// ---- pgbench: the same SQL as the code sends, one payout per script run ---------------------------
// The create's one statement as the API sends it (captured with pg_stat_statements, bench/cost's
// payout create phase): data-modifying CTEs (its own implicit transaction: payout row, history,
// idempotency record; the idempotency key is looked up only if this insert meets it, since
// 4a4496c) and the four-eyes guard on the tenant's settings (a payout under the threshold). The app makes the ids
// in Node and sends them as parameters; here they derive from pgbench's :n (no extra round trip).
const PID = `cast(md5('p' || :n) as uuid)`;
const RECORD = `{"id": "x", "object": "payout", "clabe": {"$sealed": "v1.h06XUHXJBmPgIETbIzL4sm4H/xXBtkV9E1qx3D0nQHcj7DvMzajoUo12m8CAPw==", "context": "payout.51e38c64-6075-45df-88b0-7417d5d4f8c6.clabe"}, "beneficiary_name": "Proveedora del Norte", "amount_minor": 15000, "currency": "MXN", "concepto": "Pago de factura", "reference": "3502666", "status": "processing", "connector_key": "stp", "livemode": false, "created_at": "2026-01-01T00.00.00.000Z"}`; // no colon after a quote-free word: pgbench would read :name as a variable
const VIEW = RECORD.replace(/"clabe": \{[^}]*\}/, '"clabe_masked": "072***********1499"');
export const CREATE = [
  `\\set amount random(100, 1000000)`,
  `\\set n random(1, 1000000000000000)`,
  `with entity as (insert into payouts (id, tenant_id, livemode, status, version, clabe_sealed, clabe_masked, beneficiary_name, beneficiary_rfc, amount_minor, currency, concepto, reference, connector_key, rail_key, order_key, tracking_key, send_started_at, operation_date, sent_at, provider_ref, failure_code, failure_reason, requested_by, approval_id, connect_account_id, paid_at, returned_at, created_at, updated_at) values (${PID}, '${TENANT}', false, 'processing', 0, 'v1.h06XUHXJBmPgIETbIzL4sm4H/xXBtkV9E1qx3D0nQHcj7DvMzajoUo12m8CAPw==', '072***********1499', 'Proveedora del Norte', null, :amount, 'MXN', 'Pago de factura', '3502666', 'stp', 'sim', 'orq_po_' || cast(${PID} as text), 'ORQ' || upper(substr(md5('t' || :n), 1, 25)), null, null, null, null, null, null, 'db56b960-2b2e-4ca4-8003-e51888525e0a', null, null, null, null, now(), now())), ` +
    `history as (insert into entity_history (entity_id, tenant_id, livemode, event, from_status, to_status, data, trace_id, entity_kind) values (${PID}, '${TENANT}', false, 'create', null, 'processing', '{"rail": "sim", "amount_minor": 15000}', null, 'payout')), ` +
    `idempotency_record as (insert into idempotency_keys (tenant_id, livemode, key, request_hash, method, path, status_code, response_body) values ('${TENANT}', false, cast(md5('k' || :n) as uuid), md5('h' || :n) || md5('i' || :n), 'POST', '/v1/payouts', 201, '${RECORD}')), ` +
    `guard as (select orq_expect_rows(count(*), 'payout approval threshold') from tenants where id = '${TENANT}' and not coalesce(jsonb_typeof(settings->'payout_approval_threshold_minor') = 'number' and cast(:amount as numeric) > cast(settings->>'payout_approval_threshold_minor' as numeric), false)) select * from guard;`,
];
export const EXECUTE = [
  `select p.*, coalesce(tc.offset_ms, 0) as clock_offset_ms from payouts p left join test_clocks tc on tc.tenant_id = p.tenant_id where p.id = ${PID};`,
  'begin;',
  `with u as (update payouts set updated_at = now(), send_started_at = now(), operation_date = '20260101', version = 1 where id = ${PID} and version = 0 returning 1) select orq_expect_rows(count(*), 'payout') from u;`,
  `insert into entity_history (entity_id, tenant_id, livemode, event, from_status, to_status, data, entity_kind) values (${PID}, '${TENANT}', false, 'send_started', 'processing', 'processing', null, 'payout');`,
  'commit;',
  `insert into sim_payout_orders (key, tenant_id, livemode, tracking_key, provider_ref, amount_minor, currency, clabe_masked, beneficiary_name, state, failure_code, failure_reason) values ('orq_po_' || cast(${PID} as text), '${TENANT}', false, 'ORQ' || md5(cast(${PID} as text)), 'sim_po_' || md5(random()::text), :amount, 'MXN', '072***********1499', 'Proveedora', 'paid', null, null) on conflict (key, tenant_id) do update set sends = sim_payout_orders.sends + 1, updated_at = now() returning *, (xmax = 0) as inserted;`,
  `select gen_random_uuid() as eid \\gset`,
  'begin;',
  `with u as (update payouts set updated_at = now(), provider_ref = 'sim_po_1', sent_at = now(), status = 'paid', paid_at = now(), version = 2 where id = ${PID} and version = 1 returning 1) select orq_expect_rows(count(*), 'payout') from u;`,
  `insert into entity_history (entity_id, tenant_id, livemode, event, from_status, to_status, data, entity_kind) values (${PID}, '${TENANT}', false, 'rail.paid', 'processing', 'paid', '{"provider_ref": "sim_po_1"}', 'payout');`,
  `update timers set fired_at = now() where kind = 'payout.poll' and entity_id = ${PID} and fired_at is null;`,
  `insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id, memo) values (:eid, '${TENANT}', false, 'payout.sent', 'payout', ${PID}, 'payout to 072***********1499');`,
  `insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (cast(:eid as uuid), '${TENANT}', false, 'payouts', 'MXN', cast(:amount as bigint)), (cast(:eid as uuid), '${TENANT}', false, 'payout_source' || chr(58) || 'stp', 'MXN', 0 - cast(:amount as bigint));`,
  `insert into outbox_events (event_id, tenant_id, livemode, event_type, entity_id, data, traceparent) values (gen_random_uuid(), '${TENANT}', false, 'payout.paid', ${PID}, '${VIEW.replace('processing', 'paid')}', null);`,
  'commit;',
];
