// Mobile recharges against the running service: carriers (global) and their per-tenant
// enable/disable, products of enabled carriers, POST /v1/recharges with every code of the spec in
// the spec's order (a live key refused before anything is stored), delivered/failed, the ledger
// entry with amounts frozen at sale time, the timeout that stays pending and the replay that
// resolves it delivered exactly once, idempotency conflict and retry conflict, masking, lists.
import t from 'tap';
import { startTestApp, type TestApp, until } from './helpers/app.js';

let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const recharge = (b: object, headers: Record<string, string> = idem(), key = ten.testKey) => a.call('POST', '/v1/recharges', { key, body: b, headers });
const enable = (code: string, body?: object, key = ten.testKey) => a.call('POST', `/v1/recharge-carriers/${code}/enable`, { key, body });
const lines = (refId: string) => a.app.deps.sql`
  select e.kind, l.account, l.amount_minor from journal_lines l join journal_entries e on e.id = l.entry_id where e.ref_id = ${refId} order by l.amount_minor desc`;
const simOrder = async (rechargeId: string) => (await a.app.deps.sql`select * from sim_recharge_orders where key = ${'rc_' + rechargeId.replace(/-/g, '')}`)[0];

async function charge(amount: number, confirm = true) {
  const pi = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: amount, currency: 'MXN' }, headers: idem() });
  if (!confirm) return pi.body;
  await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key: ten.testKey, body: { payment_token: 'tok_sim_ok', payment_method: 'card' }, headers: idem() });
  return (await until(() => a.call('GET', `/v1/payment_intents/${pi.body.id}`, { key: ten.testKey }), (r) => r.body.status === 'succeeded')).body;
}

t.before(async () => {
  // The reconciler is slowed down so that the replay, not the worker, resolves the timed-out recharge here.
  a = await startTestApp({ ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000', RECONCILE_INTERVAL_MS: '600000' });
  ten = await a.newTenant();
});
t.teardown(() => a.stop());

t.test('carriers: global list; enable/disable per tenant; codes', async (t) => {
  const r = await a.call('GET', '/v1/recharge-carriers', { key: ten.testKey });
  t.equal(r.status, 200);
  t.same(r.body.data.map((c: any) => c.code), ['telcel', 'movistar', 'att', 'bait', 'virgin']);
  t.match(r.body.data[0], { object: 'recharge_carrier', code: 'telcel', name: 'Telcel', active: true });
  t.same((await a.call('GET', '/v1/recharge-products', { key: ten.testKey })).body.data, [], 'no carrier enabled, no product');
  const on = await enable('telcel');
  t.equal(on.status, 200);
  t.same(on.body, { object: 'recharge_carrier', code: 'telcel', name: 'Telcel', active: true });
  const prods = (await a.call('GET', '/v1/recharge-products', { key: ten.testKey })).body.data;
  t.ok(prods.length > 0);
  t.ok(prods.every((p: any) => p.carrier_code === 'telcel'), 'only products of enabled carriers');
  t.same(prods.find((p: any) => p.code === 'telcel_50'), { object: 'recharge_product', code: 'telcel_50', carrier_code: 'telcel', kind: 'airtime', name: 'Telcel tiempo aire $50', face_amount_minor: 5000, merchant_commission_minor: 250, currency: 'MXN', active: true });
  t.ok(prods.some((p: any) => p.kind === 'data'));
  t.equal((await enable('movistar')).body.active, true);
  t.ok((await a.call('GET', '/v1/recharge-products', { key: ten.testKey })).body.data.some((p: any) => p.carrier_code === 'movistar'));
  const off = await enable('movistar', { active: false });
  t.same(off.body, { object: 'recharge_carrier', code: 'movistar', name: 'Movistar', active: false });
  t.notOk((await a.call('GET', '/v1/recharge-products', { key: ten.testKey })).body.data.some((p: any) => p.carrier_code === 'movistar'), 'disabled');
  const other = await a.newTenant();
  t.same((await a.call('GET', '/v1/recharge-products', { key: other.testKey })).body.data, [], 'per tenant');
  t.same((await a.call('GET', '/v1/recharge-products', { key: ten.liveKey })).body.data, [], 'per mode');
  for (const [code, status, err] of [['unicel', 404, 'recharge.carrier_not_found'], ['virgin', 404, 'recharge.carrier_not_found'], ['%20', 400, 'recharge.invalid_carrier']] as const) {
    const x = await enable(code);
    t.equal(x.status, status, `${code} -> ${status}`);
    t.equal(x.body.error?.code, err, `${code} -> ${err}`);
  }
});

t.test('validation in the spec order; the live key stores nothing', async (t) => {
  await enable('telcel');
  await enable('att', { active: false });
  const sql = a.app.deps.sql;
  const count = async () => (await sql`
    select (select count(*) from recharges where tenant_id = ${ten.id})::int as r,
           (select count(*) from journal_entries where tenant_id = ${ten.id} and ref_type = 'recharge')::int as j,
           (select count(*) from sim_recharge_orders where tenant_id = ${ten.id})::int as s,
           (select count(*) from idempotency_keys where tenant_id = ${ten.id})::int as k`)[0];
  const before = await count();
  const live = await recharge({ product_code: 'telcel_50', phone_number: '5512345678' }, idem(), ten.liveKey);
  t.equal(live.status, 400);
  t.equal(live.body.error.code, 'recharge.livemode_unsupported');
  t.equal((await recharge({}, {}, ten.liveKey)).body.error.code, 'recharge.livemode_unsupported', 'live first, before fields and key');
  t.same(await count(), before, 'nothing stored or booked by a live key');
  const succeeded = await charge(5000);
  const otherAmount = await charge(3000);
  const unconfirmed = await charge(5000, false);
  const beforeChecks = await count();
  const cases: Array<[string, object, Record<string, string>, number, string]> = [
    ['fields before key', { phone_number: '5512345678' }, {}, 400, 'recharge.missing_fields'],
    ['phone missing', { product_code: 'telcel_50' }, idem(), 400, 'recharge.missing_fields'],
    ['key before product', { product_code: 'nope_1', phone_number: '12' }, {}, 400, 'idempotency_key_required'],
    ['key not a uuid', { product_code: 'telcel_50', phone_number: '5512345678' }, { 'idempotency-key': 'abc' }, 400, 'idempotency_key_required'],
    ['product before phone', { product_code: 'nope_1', phone_number: '12' }, idem(), 404, 'recharge.product_not_found'],
    ['inactive product', { product_code: 'movistar_500', phone_number: '5512345678' }, idem(), 404, 'recharge.product_not_found'],
    ['phone before carrier', { product_code: 'att_50', phone_number: '551234567' }, idem(), 400, 'recharge.invalid_phone'],
    ['phone with letters', { product_code: 'telcel_50', phone_number: '55123456ab' }, idem(), 400, 'recharge.invalid_phone'],
    ['phone as a number', { product_code: 'telcel_50', phone_number: 5512345678 }, idem(), 400, 'recharge.invalid_phone'],
    ['11 digits', { product_code: 'telcel_50', phone_number: '55123456789' }, idem(), 400, 'recharge.invalid_phone'],
    ['carrier before intent', { product_code: 'att_50', phone_number: '5512345678', payment_intent_id: crypto.randomUUID() }, idem(), 400, 'recharge.carrier_not_enabled'],
    ['intent unknown', { product_code: 'telcel_50', phone_number: '5512345678', payment_intent_id: crypto.randomUUID() }, idem(), 404, 'recharge.payment_intent_not_found'],
    ['intent malformed', { product_code: 'telcel_50', phone_number: '5512345678', payment_intent_id: 'pi_1' }, idem(), 404, 'recharge.payment_intent_not_found'],
    ['intent not succeeded', { product_code: 'telcel_50', phone_number: '5512345678', payment_intent_id: unconfirmed.id }, idem(), 400, 'recharge.payment_intent_not_succeeded'],
    ['intent amount', { product_code: 'telcel_50', phone_number: '5512345678', payment_intent_id: otherAmount.id }, idem(), 400, 'recharge.payment_intent_amount_mismatch'],
  ];
  for (const [name, b, h, status, code] of cases) {
    const r = await recharge(b, h);
    t.equal(r.status, status, `${name}: ${status}`);
    t.equal(r.body.error?.code, code, `${name}: ${code}`);
  }
  const other = await a.newTenant();
  await enable('telcel', undefined, other.testKey);
  t.equal((await recharge({ product_code: 'telcel_50', phone_number: '5512345678', payment_intent_id: succeeded.id }, idem(), other.testKey)).body.error.code, 'recharge.payment_intent_not_found', "another tenant's intent");
  t.same(await count(), beforeChecks, 'no refused request stored anything');
  const ok = await recharge({ product_code: 'telcel_50', phone_number: '5512345678', payment_intent_id: succeeded.id });
  t.equal(ok.status, 200);
  t.match(ok.body, { status: 'delivered', payment_intent_id: succeeded.id });
});

t.test('delivered: masked phone, ledger entry with frozen amounts, read, list newest first', async (t) => {
  await enable('bait');
  const r = await recharge({ product_code: 'bait_100', phone_number: '3312345678' });
  t.equal(r.status, 200);
  t.match(r.body, { object: 'recharge', carrier_code: 'bait', product_code: 'bait_100', phone_masked: '33****5678', face_amount_minor: 10_000, merchant_commission_minor: 500, currency: 'MXN', status: 'delivered', provider_ref: /^sim_rc_/, livemode: false });
  t.notMatch(r.text, /3312345678/, 'the full number is never answered');
  t.same((await lines(r.body.id)).map((l) => [l.kind, l.account, Number(l.amount_minor)]), [
    ['recharge.delivered', 'recharge_clearing', 10_000],
    ['recharge.delivered', 'merchant_recharge_income', -500],
    ['recharge.delivered', 'recharge_payable:bait', -9_500],
  ]);
  const got = await a.call('GET', `/v1/recharges/${r.body.id}`, { key: ten.testKey });
  t.same(got.body, r.body);
  const r2 = await recharge({ product_code: 'bait_data_50', phone_number: '3312340001' });
  const list = await a.call('GET', '/v1/recharges', { key: ten.testKey });
  t.equal(list.body.object, 'list');
  t.equal(list.body.data[0].id, r2.body.id, 'newest first');
  t.equal(list.body.data[1].id, r.body.id);
  t.notMatch(list.text, /3312345678|3312340001/);
  t.equal((await a.call('GET', '/v1/recharges?limit=1', { key: ten.testKey })).body.data.length, 1);
  t.equal((await a.call('GET', '/v1/recharges?limit=9999', { key: ten.testKey })).status, 200, 'clamped');
  const hist = await a.app.deps.sql`select event, to_status from entity_history where entity_id = ${r.body.id} order by id`;
  t.same(hist.map((h) => `${h.event}>${h.to_status}`), ['create>pending', 'send_started>pending', 'aggregator.delivered>delivered']);
  for (const [path, key] of [[`/v1/recharges/${crypto.randomUUID()}`, ten.testKey], ['/v1/recharges/nope', ten.testKey], [`/v1/recharges/${r.body.id}`, (await a.newTenant()).testKey], [`/v1/recharges/${r.body.id}`, ten.liveKey]]) {
    const x = await a.call('GET', path, { key });
    t.equal(x.status, 404);
    t.equal(x.body.error.code, 'recharge.not_found');
  }
});

t.test('phone ending 0000: failed with failure_reason; nothing booked', async (t) => {
  const r = await recharge({ product_code: 'telcel_20', phone_number: '5511110000' });
  t.match(r.body, { status: 'failed', failure_reason: /0000/, phone_masked: '55****0000' });
  t.same(await lines(r.body.id), []);
});

t.test('timeout leaves it pending; the replay asks and resolves delivered exactly once', async (t) => {
  const h = idem();
  const b = { product_code: 'telcel_100', phone_number: '5599991111' };
  const first = await recharge(b, h);
  t.equal(first.status, 200);
  t.equal(first.body.status, 'pending', 'a timeout is never failed');
  t.same(await lines(first.body.id), [], 'nothing booked while pending');
  const sent = await simOrder(first.body.id);
  t.match(sent, { sends: 1, status_queries: 0, state: 'delivered' });
  const replay = await recharge(b, h);
  t.equal(replay.status, 200);
  t.equal(replay.headers.get('idempotency-replayed'), 'true');
  t.equal(replay.body.id, first.body.id);
  t.equal(replay.body.status, 'delivered');
  t.equal(replay.body.provider_ref, sent.provider_ref, "the aggregator's evidence");
  const again = await recharge(b, h);
  t.same(again.body, replay.body);
  const after = await simOrder(first.body.id);
  t.equal(after.sends, 1, 'the delivery was never re-executed');
  t.ok(after.status_queries >= 1, 'the replay asked for the real state');
  t.equal((await lines(first.body.id)).length, 3, 'one ledger entry (three lines)');
  const [n] = await a.app.deps.sql`select count(*)::int as n from journal_entries where ref_id = ${first.body.id}`;
  t.equal(n.n, 1);
});

t.test('same key + other data: 409 idempotency_conflict; replay during execution: 409 retry_conflict', async (t) => {
  const h = idem();
  const b = { product_code: 'telcel_30', phone_number: '5512121212' };
  const first = await recharge(b, h);
  t.equal(first.body.status, 'delivered');
  for (const other of [{ ...b, phone_number: '5512121213' }, { ...b, product_code: 'telcel_50' }, { ...b, payment_intent_id: (await charge(3000)).id }]) {
    const r = await recharge(other, h);
    t.equal(r.status, 409);
    t.equal(r.body.error.code, 'recharge.idempotency_conflict');
  }
  // A pending recharge whose execution holds the lock: the replay does not wait or re-run.
  const h2 = idem();
  const b2 = { product_code: 'telcel_30', phone_number: '5512341111' };
  const pending = await recharge(b2, h2);
  t.equal(pending.body.status, 'pending');
  const recharges = a.app.deps.recharges;
  const inFlight = await a.app.deps.runtime.actor.withLock(recharges.def, pending.body.id, 1000, () => recharge(b2, h2));
  t.equal(inFlight.status, 409);
  t.equal(inFlight.body.error.code, 'recharge.retry_conflict');
  t.equal((await recharge(b2, h2)).body.status, 'delivered', 'once the execution ended, the replay resolves');
  // Concurrent twins with a new key: one recharge, one order at the aggregator.
  const h3 = idem();
  const rs = await Promise.all(Array.from({ length: 6 }, () => recharge({ product_code: 'telcel_20', phone_number: '5540404040' }, h3)));
  const ok = rs.filter((r) => r.status === 200);
  t.ok(ok.length >= 1);
  for (const r of rs) if (r.status !== 200) t.equal(r.body.error.code, 'recharge.retry_conflict');
  t.equal(new Set(ok.map((r) => r.body.id)).size, 1);
  t.equal((await simOrder(ok[0].body.id)).sends, 1);
  t.equal((await lines(ok[0].body.id)).length, 3);
});
