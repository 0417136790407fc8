// Refunds (with four-eyes approval), saved payment methods and disputes against the running
// service: every code of the spec's refund and payment-method tables, the concurrent-refund
// guarantee, ledger entries.
import t from 'tap';
import { startTestApp, type TestApp, until } from './helpers/app.js';

let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


/** A succeeded charge; returns the intent and its attempt. */
async function charge(amount = 10000, token = 'tok_sim_ok', key = ten.testKey, extra: object = {}) {
  const pi = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: amount, currency: 'MXN' }, headers: idem() });
  await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key, body: { payment_token: token, payment_method: 'card', ...extra }, headers: idem() });
  const done = await until(
    () => a.call('GET', `/v1/payment_intents/${pi.body.id}?expand=attempts`, { key }),
    (r) => ['succeeded', 'failed', 'requires_payment_method'].includes(r.body.status) && r.body.attempts?.length > 0,
  );
  return { intent: done.body, attempt: done.body.attempts[done.body.attempts.length - 1] };
}
const refund = (body: object, key = ten.testKey) => a.call('POST', '/v1/refunds', { key, body, headers: idem() });
const getRefund = (id: string, key = ten.testKey) => a.call('GET', `/v1/refunds/${id}`, { key });

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', SWEEP_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500', RATE_LIMIT_V1_PER_MIN: '100000' });
  ten = await a.newTenant();
});
t.teardown(() => a.stop());

t.test('a full refund by default; requested then succeeded; attempt partially refunded; ledger', async (t) => {
  const { intent, attempt } = await charge(10000);
  const r = await refund({ attempt_id: attempt.id, reason: 'requested_by_customer' });
  t.equal(r.status, 201);
  t.equal(r.body.object, 'refund');
  t.equal(r.body.status, 'requested');
  t.equal(r.body.amount_minor, 10000, 'omitted = remaining refundable');
  t.equal(r.body.attempt_id, attempt.id);
  t.equal(r.body.currency, 'MXN');
  t.equal(r.body.reason, 'requested_by_customer');
  const done = await until(() => getRefund(r.body.id), (x) => x.body.status !== 'requested');
  t.equal(done.body.status, 'succeeded');
  t.ok(done.body.provider_ref, 'provider_ref after execution');
  // The attempt belongs to the payment intent actor: a job after the refund's commit moves it.
  const att = (await until(() => a.call('GET', `/v1/payment_intents/${intent.id}?expand=attempts`, { key: ten.testKey }), (x) => x.body.attempts[0].status !== 'captured')).body.attempts[0];
  t.equal(att.status, 'refunded', 'fully refunded');
  const ev = await a.app.deps.sql`select event_type, data from outbox_events where entity_id = ${r.body.id}`;
  t.same(ev.map((e) => e.event_type), ['refund.succeeded']);
  t.equal(ev[0].data.amount_minor, 10000);
  t.notMatch(JSON.stringify(ev[0].data), /null/, 'refund event data omits absent fields (documented as refund_event_data)');
  t.same(Object.keys(ev[0].data).sort(), ['amount_minor', 'attempt_id', 'created_at', 'currency', 'id', 'object', 'payment_intent_id', 'provider_ref', 'reason', 'status']);
  const lines = await a.app.deps.sql`select l.account, l.amount_minor from journal_lines l join journal_entries e on e.id = l.entry_id where e.ref_id = ${r.body.id}`;
  // Issue 27 (defect 3): the refund reverses the sale net of IVA and its IVA trasladado cobrado.
  t.same(lines.map((l) => [l.account, Number(l.amount_minor)]).sort(), [['connector_receivable:sim', -10000], ['iva_trasladado_cobrado', 1379], ['refunds', 8621]]);
  const again = await refund({ attempt_id: attempt.id });
  t.equal(again.status, 400);
  t.equal(again.body.error.code, 'refund.nothing_refundable');
});

t.test('partial refunds; exceeds_refundable carries the remaining cents', async (t) => {
  const { attempt } = await charge(5000);
  const r1 = await refund({ attempt_id: attempt.id, amount_minor: 2000 });
  t.equal(r1.status, 201);
  await until(() => getRefund(r1.body.id), (x) => x.body.status === 'succeeded');
  const att = await until(() => a.call('GET', `/v1/payment_intents/${r1.body.payment_intent_id}?expand=attempts`, { key: ten.testKey }), (x) => x.body.attempts[0].status === 'partially_refunded');
  t.equal(att.body.attempts[0].status, 'partially_refunded');
  const over = await refund({ attempt_id: attempt.id, amount_minor: 3001 });
  t.equal(over.status, 400);
  t.equal(over.body.error.code, 'refund.exceeds_refundable');
  t.match(over.body.error.message, /3000/, 'the message carries the remaining cents');
  const rest = await refund({ attempt_id: attempt.id });
  t.equal(rest.body.amount_minor, 3000, 'omitted = charged minus live refunds, not the original charge');
});

t.test('the refund error table', async (t) => {
  const { attempt } = await charge(3000);
  for (const amount_minor of [0, -5, 1.5]) {
    const r = await refund({ attempt_id: attempt.id, amount_minor });
    t.equal(r.status, 400, `amount ${amount_minor}`);
    t.equal(r.body.error.code, 'refund.invalid_amount');
  }
  const cur = await refund({ attempt_id: attempt.id, currency: 'USD' });
  t.equal(cur.status, 400);
  t.equal(cur.body.error.code, 'refund.currency_mismatch');
  const failed = await charge(3000, 'tok_sim_insufficient');
  const nr = await refund({ attempt_id: failed.attempt.id });
  t.equal(nr.status, 409);
  t.equal(nr.body.error.code, 'refund.attempt_not_refundable');
  const unknown = await refund({ attempt_id: crypto.randomUUID() });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error.code, 'attempt.not_found');
  const other = await a.newTenant();
  const foreign = await refund({ attempt_id: attempt.id }, other.testKey);
  t.same([foreign.status, foreign.body.error.code], [404, 'attempt.not_found'], "another tenant's attempt is unknown");
  const nf = await getRefund(crypto.randomUUID());
  t.same([nf.status, nf.body.error.code], [404, 'refund.not_found']);
  const noKey = await a.call('POST', '/v1/refunds', { key: ten.testKey, body: { attempt_id: attempt.id } });
  t.equal(noKey.body.error.code, 'idempotency_key_required');
  const ro = await a.admin('POST', `/admin/tenants/${ten.id}/api_keys`, { livemode: false, scopes: ['payments:write'] });
  const scope = await refund({ attempt_id: attempt.id }, ro.body.key);
  t.same([scope.status, scope.body.error.code], [403, 'insufficient_scope']);
  t.match(scope.body.error.message, /refunds:write/);
});

t.test('a provider-declined refund fails and gives its amount back', async (t) => {
  const { attempt } = await charge(10000);
  const r = await refund({ attempt_id: attempt.id, amount_minor: 1098 });
  const done = await until(() => getRefund(r.body.id), (x) => x.body.status !== 'requested');
  t.equal(done.body.status, 'failed');
  t.equal(done.body.failure_code, 'refund_declined');
  const ev = await a.app.deps.sql`select event_type from outbox_events where entity_id = ${r.body.id}`;
  t.same(ev.map((e) => e.event_type), ['refund.failed']);
  const lines = await a.app.deps.sql`select 1 from journal_entries where ref_id = ${r.body.id}`;
  t.equal(lines.length, 0, 'nothing booked');
  const rest = await refund({ attempt_id: attempt.id });
  t.equal(rest.body.amount_minor, 10000, 'a failed refund is not live');
});

t.test('20 concurrent refunds of 10% never sum past the captured amount', async (t) => {
  for (let round = 0; round < 2; round++) {
    const { attempt } = await charge(10000);
    const rs = await Promise.all(Array.from({ length: 20 }, () => refund({ attempt_id: attempt.id, amount_minor: 1000 })));
    const created = rs.filter((r) => r.status === 201);
    t.equal(created.length, 10, `round ${round}: exactly 10 accepted`);
    for (const r of rs.filter((x) => x.status !== 201)) {
      t.equal(r.status, 400);
      t.ok(['refund.exceeds_refundable', 'refund.nothing_refundable'].includes(r.body.error.code), r.body.error.code);
    }
    const [sum] = await a.app.deps.sql`select coalesce(sum(amount_minor), 0)::bigint as s from refunds where attempt_id = ${attempt.id} and status <> 'failed'`;
    t.equal(Number(sum.s), 10000, 'the sum is exactly the captured amount');
  }
});

t.test('four-eyes approval above the tenant threshold', async (t) => {
  const own = await a.newTenant();
  const set = await a.admin('PATCH', `/admin/tenants/${own.id}/settings`, { refund_approval_threshold_minor: 5000 });
  t.equal(set.status, 200);
  t.equal(set.body.refund_approval_threshold_minor, 5000);
  const { attempt } = await charge(20000, 'tok_sim_ok', own.testKey);
  const small = await refund({ attempt_id: attempt.id, amount_minor: 5000 }, own.testKey);
  t.equal(small.status, 201, 'at the threshold: no approval needed');
  const big = await refund({ attempt_id: attempt.id, amount_minor: 8000 }, own.testKey);
  t.equal(big.status, 202);
  t.equal(big.body.object, 'refund_approval');
  t.equal(big.body.status, 'pending');
  const read = await a.call('GET', `/v1/refund_approvals/${big.body.id}`, { key: own.testKey });
  t.equal(read.body.status, 'pending');
  const [none] = await a.app.deps.sql`select count(*)::int as n from refunds where attempt_id = ${attempt.id} and amount_minor = 8000`;
  t.equal(none.n, 0, 'nothing refunded while pending');
  const self = await a.admin('POST', `/admin/tenants/${own.id}/refund_approvals/${big.body.id}/approve`, { approver: own.testKeyId });
  t.equal(self.status, 409, 'the requester cannot approve its own refund');
  t.equal(self.body.error.code, 'refund_approval.approver_conflict');
  const ok = await a.admin('POST', `/admin/tenants/${own.id}/refund_approvals/${big.body.id}/approve`, { approver: 'ops@merchant.mx' });
  t.equal(ok.status, 200);
  t.equal(ok.body.object, 'refund');
  t.equal(ok.body.status, 'succeeded', 'executed');
  t.equal(ok.body.amount_minor, 8000);
  t.equal((await a.admin('POST', `/admin/tenants/${own.id}/refund_approvals/${big.body.id}/approve`, { approver: 'x' })).status, 409, 'once');

  const second = await refund({ attempt_id: attempt.id, amount_minor: 6000 }, own.testKey);
  t.equal(second.status, 202);
  const rej = await a.admin('POST', `/admin/tenants/${own.id}/refund_approvals/${second.body.id}/reject`, { approver: 'ops@merchant.mx' });
  t.equal(rej.status, 200);
  t.equal(rej.body.status, 'rejected');
  const [sum] = await a.app.deps.sql`select coalesce(sum(amount_minor), 0)::bigint as s from refunds where attempt_id = ${attempt.id}`;
  t.equal(Number(sum.s), 13000, 'rejection leaves nothing refunded');
  const off = await a.admin('PATCH', `/admin/tenants/${own.id}/settings`, { refund_approval_disabled: true });
  t.equal(off.body.refund_approval_threshold_minor, undefined, 'null is omitted');
  t.equal((await refund({ attempt_id: attempt.id, amount_minor: 6000 }, own.testKey)).status, 201);
  t.equal((await a.admin('POST', `/admin/tenants/${own.id}/refund_approvals/${crypto.randomUUID()}/approve`, { approver: 'x' })).status, 404);
});

t.test('customers and saved payment methods', async (t) => {
  const c = await a.call('POST', '/v1/customers', { key: ten.testKey, body: {} });
  t.equal(c.status, 201, 'an empty body is allowed');
  const cid = c.body.id;
  const noTok = await a.call('POST', `/v1/customers/${cid}/payment_methods`, { key: ten.testKey, body: {}, headers: idem() });
  t.same([noTok.status, noTok.body.error.code], [400, 'payment_method.invalid_token']);
  const noRoute = await a.call('POST', `/v1/customers/${cid}/payment_methods`, { key: ten.testKey, body: { payment_token: 'tok_sim_ok', connector: 'nowhere' }, headers: idem() });
  t.same([noRoute.status, noRoute.body.error.code], [400, 'payment_method.no_route']);
  const noCust = await a.call('POST', `/v1/customers/${crypto.randomUUID()}/payment_methods`, { key: ten.testKey, body: { payment_token: 'tok_sim_ok' }, headers: idem() });
  t.same([noCust.status, noCust.body.error.code], [404, 'customer.not_found']);
  const noIdem = await a.call('POST', `/v1/customers/${cid}/payment_methods`, { key: ten.testKey, body: { payment_token: 'tok_sim_ok' } });
  t.equal(noIdem.body.error.code, 'idempotency_key_required');

  const saved = await a.call('POST', `/v1/customers/${cid}/payment_methods`, { key: ten.testKey, body: { payment_token: 'tok_sim_ok' }, headers: idem() });
  t.equal(saved.status, 201);
  t.equal(saved.body.status, 'pending');
  t.notOk('brand' in saved.body, 'brand only once active');
  const active = await until(() => a.call('GET', `/v1/customers/${cid}/payment_methods`, { key: ten.testKey }), (r) => r.body.data[0]?.status === 'active');
  const pm = active.body.data[0];
  t.equal(pm.brand, 'visa');
  t.equal(pm.last4, '4242');
  const stored = await a.app.deps.sql`select pending_token, provider_ref from payment_methods where id = ${pm.id}`;
  t.equal(stored[0].pending_token, null, 'the single-use token is not kept');
  t.notMatch(JSON.stringify(active.body), /tok_sim/);

  // One click: confirm with the saved method.
  const pi = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 4200, currency: 'MXN' }, headers: idem() });
  const conf = await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key: ten.testKey, body: { payment_method_id: pm.id }, headers: idem() });
  t.equal(conf.status, 200);
  t.equal(conf.body.status, 'processing');
  await until(() => a.call('GET', `/v1/payment_intents/${pi.body.id}`, { key: ten.testKey }), (r) => r.body.status === 'succeeded');

  // A method saved from a declining token declines when charged.
  const bad = await a.call('POST', `/v1/customers/${cid}/payment_methods`, { key: ten.testKey, body: { payment_token: 'tok_sim_insufficient' }, headers: idem() });
  await until(() => a.call('GET', `/v1/customers/${cid}/payment_methods`, { key: ten.testKey }), (r) => r.body.data.find((x: { id: string }) => x.id === bad.body.id)?.status === 'active');
  const pi2 = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 4200, currency: 'MXN' }, headers: idem() });
  await a.call('POST', `/v1/payment_intents/${pi2.body.id}/confirm`, { key: ten.testKey, body: { payment_method_id: bad.body.id }, headers: idem() });
  await until(() => a.call('GET', `/v1/payment_intents/${pi2.body.id}`, { key: ten.testKey }), (r) => r.body.status === 'failed');

  // Detach: idempotent; a detached method is listed and cannot be charged.
  const d1 = await a.call('POST', `/v1/customers/${cid}/payment_methods/${pm.id}/detach`, { key: ten.testKey });
  t.equal(d1.status, 200);
  t.equal(d1.body.status, 'detached');
  const d2 = await a.call('POST', `/v1/customers/${cid}/payment_methods/${pm.id}/detach`, { key: ten.testKey });
  t.same([d2.status, d2.body.status], [200, 'detached'], 'detaching again does not fail');
  const list = await a.call('GET', `/v1/customers/${cid}/payment_methods`, { key: ten.testKey });
  t.ok(list.body.data.some((x: { id: string; status: string }) => x.id === pm.id && x.status === 'detached'), 'list includes detached');
  const pi3 = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 100, currency: 'MXN' }, headers: idem() });
  const nc = await a.call('POST', `/v1/payment_intents/${pi3.body.id}/confirm`, { key: ten.testKey, body: { payment_method_id: pm.id }, headers: idem() });
  t.same([nc.status, nc.body.error.code], [409, 'payment_method.not_chargeable']);
  const nf = await a.call('POST', `/v1/payment_intents/${pi3.body.id}/confirm`, { key: ten.testKey, body: { payment_method_id: crypto.randomUUID() }, headers: idem() });
  t.same([nf.status, nf.body.error.code], [404, 'payment_method.not_found']);
  const nfd = await a.call('POST', `/v1/customers/${cid}/payment_methods/${crypto.randomUUID()}/detach`, { key: ten.testKey });
  t.same([nfd.status, nfd.body.error.code], [404, 'payment_method.not_found']);
  // A pending method cannot be charged either.
  const pending = await a.app.deps.sql`
    insert into payment_methods (id, tenant_id, livemode, customer_id, connector, status) values (${crypto.randomUUID()}, ${ten.id}, false, ${cid}, 'sim', 'pending') returning id`;
  const np = await a.call('POST', `/v1/payment_intents/${pi3.body.id}/confirm`, { key: ten.testKey, body: { payment_method_id: pending[0].id }, headers: idem() });
  t.same([np.status, np.body.error.code], [409, 'payment_method.not_chargeable']);
  const other = await a.newTenant();
  t.equal((await a.call('GET', `/v1/customers/${cid}/payment_methods`, { key: other.testKey })).status, 404);
});

t.test('disputes: tok_sim_dispute opens one, with ledger entries', async (t) => {
  const own = await a.newTenant();
  const { intent, attempt } = await charge(7700, 'tok_sim_dispute', own.testKey);
  t.equal(intent.status, 'succeeded');
  const list = await until(() => a.call('GET', '/v1/disputes', { key: own.testKey }), (r) => r.body.data.length === 1);
  const d = list.body.data[0];
  t.equal(list.body.object, 'list');
  t.equal(d.object, 'dispute');
  t.equal(d.payment_intent_id, intent.id);
  t.equal(d.attempt_id, attempt.id);
  t.equal(d.amount_minor, 7700);
  t.equal(d.currency, 'MXN');
  t.equal(d.status, 'needs_response');
  t.ok(Date.parse(d.evidence_due_by) > Date.now());
  const lines = await a.app.deps.sql`select l.account, l.amount_minor from journal_lines l join journal_entries e on e.id = l.entry_id where e.ref_id = ${d.id}`;
  t.same(lines.map((l) => [l.account, Number(l.amount_minor)]).sort(), [['connector_receivable:sim', -7700], ['disputed_funds', 7700]]);
  t.same((await a.call('GET', '/v1/disputes', { key: ten.testKey })).body.data.filter((x: { id: string }) => x.id === d.id), [], 'scoped by tenant');
});
