// What the portal added to /v1 (issue 29; docs/portal.md), against the running service: the payment
// search filters, a payment's activity (history, events, deliveries), an endpoint's delivery log and
// a resend that a real receiver gets again with the same event id; and through the portal session
// the same routes, with a viewer refused the resend and another tenant seeing none of it.
import t from 'tap';
import { startTestApp, until, type TestApp } from './helpers/app.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { PortalClient, inviteMember, signUpOwner } from './helpers/portal.js';

// The file's own budget (the runner's per-file timeout is 120 s; a loaded machine needs more): told to tap's runner through the root test.
t.setTimeout(600_000);
let a: TestApp;
let rx: Receiver;
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
t.before(async () => {
  a = await startTestApp({ ROLE: 'all', WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1', SWEEP_INTERVAL_MS: '200', RELAY_INTERVAL_MS: '50', RECONCILE_INTERVAL_MS: '500', RATE_LIMIT_V1_PER_MIN: '100000' });
  rx = await startReceiver();
});
t.teardown(async () => {
  await rx.close();
  await a.stop();
});

async function charge(key: string, amount: number, body: object = {}) {
  const pi = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: amount, currency: 'MXN', ...body }, headers: idem() });
  await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key, body: { payment_token: 'tok_sim_ok', payment_method: 'card' }, headers: idem() });
  return (await until(() => a.call('GET', `/v1/payment_intents/${pi.body.id}?expand=attempts`, { key }), (r) => r.body.status === 'succeeded')).body;
}

t.test('search filters: receipt code, amount, method, customer email', async (t) => {
  const ten = await a.newTenant();
  const cu = await a.call('POST', '/v1/customers', { key: ten.testKey, body: { name: 'Ana', email: 'Ana@Example.mx' } });
  const p1 = await charge(ten.testKey, 12_345, { customer_id: cu.body.id });
  const p2 = await charge(ten.testKey, 50_000);
  const q = (s: string) => a.call('GET', `/v1/payment_intents?${s}`, { key: ten.testKey });
  t.same((await q(`receipt_code=${p1.receipt_code.toLowerCase()}`)).body.data.map((x: any) => x.id), [p1.id], 'receipt code, any case');
  t.same((await q('amount_minor=50000')).body.data.map((x: any) => x.id), [p2.id]);
  t.same((await q('customer_email=ana@example.mx')).body.data.map((x: any) => x.id), [p1.id], 'customer email, any case');
  t.equal((await q('method=card')).body.data.length, 2);
  t.equal((await q('method=spei')).body.data.length, 0);
  t.equal((await q('method=bitcoin')).status, 400);
  const other = await a.newTenant();
  t.equal((await a.call('GET', `/v1/payment_intents?receipt_code=${p1.receipt_code}`, { key: other.testKey })).body.data.length, 0, 'another tenant finds nothing');
});

t.test('activity, delivery log and resend: the receiver gets the same event again', async (t) => {
  const ten = await a.newTenant();
  const ep = await a.call('POST', '/v1/webhook_endpoints', { key: ten.testKey, body: { url: `${rx.url}/portal-${ten.id}` } });
  t.equal(ep.status, 201, ep.text);
  const pi = await charge(ten.testKey, 30_000);
  await rx.waitFor((r) => r.some((x) => x.path === `/portal-${ten.id}` && x.json?.event_type === 'payment_intent.succeeded'));

  const act = await until(() => a.call('GET', `/v1/payment_intents/${pi.id}/activity`, { key: ten.testKey }), (r) => r.body.events?.[0]?.deliveries?.[0]?.status === 'succeeded');
  t.equal(act.body.object, 'payment_intent_activity');
  t.ok(act.body.history.some((h: any) => h.kind === 'payment_intent' && h.to_status === 'succeeded'), 'the timeline has the success');
  const ev = act.body.events.find((e: any) => e.event_type === 'payment_intent.succeeded');
  t.ok(ev, 'the event');
  t.equal(ev.deliveries[0].attempts, 1);

  const log = await a.call('GET', `/v1/webhook_endpoints/${ep.body.id}/deliveries`, { key: ten.testKey });
  t.equal(log.status, 200);
  const d = log.body.data.find((x: any) => x.event_type === 'payment_intent.succeeded');
  t.equal(d.status, 'succeeded');
  t.equal(d.event_id, ev.id);
  const before = rx.received.filter((x) => x.path === `/portal-${ten.id}` && x.json?.event_id === ev.id).length;
  const re = await a.call('POST', `/v1/webhook_deliveries/${d.id}/resend`, { key: ten.testKey });
  t.equal(re.status, 200, re.text);
  t.equal(re.body.status, 'pending');
  t.equal(re.body.attempts, 0);
  await rx.waitFor((r) => r.filter((x) => x.path === `/portal-${ten.id}` && x.json?.event_id === ev.id).length === before + 1);
  t.pass('the receiver got the event again, with the same event_id');
  const after = await until(() => a.call('GET', `/v1/webhook_endpoints/${ep.body.id}/deliveries`, { key: ten.testKey }), (r) => r.body.data.find((x: any) => x.id === d.id)?.status === 'succeeded');
  t.equal(after.body.data.find((x: any) => x.id === d.id).attempts, 1);

  const other = await a.newTenant();
  t.equal((await a.call('POST', `/v1/webhook_deliveries/${d.id}/resend`, { key: other.testKey })).status, 404, 'another tenant cannot resend it');
  t.equal((await a.call('GET', `/v1/payment_intents/${pi.id}/activity`, { key: other.testKey })).status, 404);
  t.equal((await a.call('POST', '/v1/webhook_deliveries/abc/resend', { key: ten.testKey })).status, 404);
});

t.test('through the portal: the owner resends, a viewer cannot; both read the activity', async (t) => {
  const o = await signUpOwner(a);
  const c = new PortalClient(a);
  await c.signIn(o.email, o.password);
  const ep = await c.call('POST', '/portal/api/v1/webhook_endpoints', { url: `${rx.url}/p-${o.tenantId}` });
  t.equal(ep.status, 201, ep.text);
  const pi = await charge(o.testKey, 10_000);
  const log = await until(() => c.call('GET', `/portal/api/v1/webhook_endpoints/${ep.body.id}/deliveries`), (r) => r.body.data?.some((x: any) => x.status === 'succeeded'));
  const d = log.body.data.find((x: any) => x.status === 'succeeded');
  const viewer = await inviteMember(c, 'viewer');
  t.equal((await viewer.client.call('GET', `/portal/api/v1/payment_intents/${pi.id}/activity`)).status, 200, 'a viewer reads the activity');
  t.equal((await viewer.client.call('POST', `/portal/api/v1/webhook_deliveries/${d.id}/resend`)).status, 403, 'a viewer cannot resend');
  const re = await c.call('POST', `/portal/api/v1/webhook_deliveries/${d.id}/resend`);
  t.equal(re.status, 200, re.text);
  const audit = await c.call('GET', '/portal/api/audit');
  t.ok(audit.body.data.some((e: any) => e.action === 'POST /v1/webhook_deliveries/{delivery}/resend' && e.target === d.id), 'the resend is in the audit log');
});

t.test('four eyes on payouts through the portal: the requester cannot approve, another member can', async (t) => {
  const o = await signUpOwner(a);
  await a.admin('PATCH', `/admin/tenants/${o.tenantId}/payout_settings`, { payout_approval_threshold_minor: 1_000_000 });
  const c = new PortalClient(a);
  await c.signIn(o.email, o.password);
  const req = await c.call('POST', '/portal/api/v1/payouts', { clabe: '072691004495711499', beneficiary_name: 'Proveedora <b>del Norte</b>', amount_minor: 2_500_000, currency: 'MXN', concepto: 'Pago factura 123', connector_key: 'sim' });
  t.equal(req.status, 202, req.text);
  t.equal(req.body.object, 'payout_approval');
  const list = await c.call('GET', '/portal/api/payout_approvals?status=pending');
  const ap = list.body.data.find((x: any) => x.id === req.body.id);
  t.match(ap, { requested_by_email: o.email, clabe_masked: '072***********1499', beneficiary_name: 'Proveedora <b>del Norte</b>' });
  t.notMatch(list.text, '072691004495711499', 'no full CLABE in the list');
  const self = await c.call('POST', `/portal/api/payout_approvals/${req.body.id}/approve`);
  t.equal(self.status, 409, 'the requester cannot approve');
  t.equal(self.body.error.code, 'payout_approval.approver_conflict');
  const viewer = await inviteMember(c, 'viewer');
  t.equal((await viewer.client.call('POST', `/portal/api/payout_approvals/${req.body.id}/approve`)).status, 403, 'a viewer cannot');
  const admin = await inviteMember(c, 'admin');
  const ok = await admin.client.call('POST', `/portal/api/payout_approvals/${req.body.id}/approve`);
  t.equal(ok.status, 200, ok.text);
  t.equal(ok.body.object, 'payout');
  const audit = await c.call('GET', '/portal/api/audit?limit=100');
  t.ok(audit.body.data.some((e: any) => e.action === 'payout_approval.approved' && e.actor_email === admin.email));
  const other = await signUpOwner(a);
  const oc = new PortalClient(a);
  await oc.signIn(other.email, other.password);
  t.equal((await oc.call('GET', '/portal/api/payout_approvals')).body.data.length, 0, 'another tenant sees none');
});
