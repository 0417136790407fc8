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
  // The resend is queued on the tenant's clock (test mode): a day ahead once the test clock moved a day.
  t.equal((await a.call('POST', '/v1/test/clock/advance', { key: ten.testKey, body: { seconds: 24 * 3600 } })).status, 200);
  const re = await a.call('POST', `/v1/webhook_deliveries/${d.id}/resend`, { key: ten.testKey });
  t.equal(re.status, 200, re.text);
  t.equal(re.body.status, 'pending');
  t.equal(re.body.attempts, 0);
  t.ok(Date.parse(re.body.queued_at) > Date.now() + 23 * 3600_000, `queued on the tenant's test clock (${re.body.queued_at})`);
  await rx.waitFor((r) => r.filter((x) => x.path === `/portal-${ten.id}` && x.json?.event_id === ev.id).length === before + 1);
  t.pass('the receiver got the event again, with the same event_id');
  const after = await until(() => a.call('GET', `/v1/webhook_endpoints/${ep.body.id}/deliveries`, { key: ten.testKey }), (r) => r.body.data.find((x: any) => x.id === d.id)?.status === 'succeeded');
  t.equal(after.body.data.find((x: any) => x.id === d.id).attempts, 1);
  // has_more says whether more deliveries exist, not whether the page is full.
  const all = after.body.data.length;
  t.equal((await a.call('GET', `/v1/webhook_endpoints/${ep.body.id}/deliveries?limit=${all}`, { key: ten.testKey })).body.has_more, false, 'a page holding every delivery has no more');
  if (all > 1) t.equal((await a.call('GET', `/v1/webhook_endpoints/${ep.body.id}/deliveries?limit=${all - 1}`, { key: ten.testKey })).body.has_more, true, 'a shorter page has more');

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

t.test('reconciliation by hand: match by receipt code or id, conflicts, two matches of one charge at once, undo; another tenant reaches none of it', async (t) => {
  const ten = await a.newTenant();
  const pi = await charge(ten.testKey, 41_700);
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Mexico_City' }).format(new Date());
  const csv = `Fecha,Concepto,Referencia,Abono,Cargo\n${today},Deposito A,SIN-REF-A-${ten.id.slice(0, 6)},417.00,\n${today},Deposito B,SIN-REF-B-${ten.id.slice(0, 6)},417.00,\n`;
  const fields = new URLSearchParams({ bank: 'BBVA 0123', period_start: today, period_end: today, date_column: '0', description_column: '1', reference_column: '2', credit_column: '3', debit_column: '4' });
  const st = await a.call('POST', `/v1/bank_statements?${fields}`, { key: ten.testKey, raw: csv, headers: { 'content-type': 'text/csv' } });
  t.equal(st.status, 201, st.text);
  const lines = (await a.call('GET', `/v1/bank_statements/${st.body.id}/lines`, { key: ten.testKey })).body.data;
  t.equal(lines.length, 2);
  const match = (line: string, body: object, key = ten.testKey) => a.call('POST', `/v1/bank_statements/${st.body.id}/lines/${line}/match`, { key, body });
  const unmatch = (line: string, key = ten.testKey) => a.call('POST', `/v1/bank_statements/${st.body.id}/lines/${line}/unmatch`, { key });

  const both = await match(lines[0].id, { payment_intent_id: pi.id, receipt_code: pi.receipt_code });
  t.equal(both.body.error?.code, 'bank_statement.invalid_manual_match', 'one of the two, not both');
  t.equal((await match(lines[0].id, { receipt_code: 'W-NOPE1' })).body.error?.code, 'bank_statement.charge_not_found');
  t.equal((await match('999999', { receipt_code: pi.receipt_code })).body.error?.code, 'bank_statement.line_not_found');

  // Another tenant: its key finds neither the statement's lines nor this charge.
  const other = await a.newTenant();
  t.equal((await match(lines[0].id, { receipt_code: pi.receipt_code }, other.testKey)).status, 404, 'another tenant cannot match this tenant\'s line');
  t.equal((await unmatch(lines[0].id, other.testKey)).status, 404);

  // Two lines matched to the same charge at the same time: the book's lock lets one win.
  const [r1, r2] = await Promise.all([match(lines[0].id, { receipt_code: pi.receipt_code.toLowerCase() }), match(lines[1].id, { payment_intent_id: pi.id })]);
  t.same([r1.status, r2.status].sort(), [200, 409], 'one match, one line_match_conflict');
  const won = r1.status === 200 ? r1 : r2;
  t.match(won.body, { match_status: 'matched', matched_by: 'manual', payment_intent_id: pi.id });
  t.equal((await match(won.body.id, { payment_intent_id: pi.id })).body.error?.code, 'bank_statement.line_match_conflict', 'a matched line is not matched again');
  const [dep] = await a.app.deps.sql`select count(*)::int as n from journal_entries where ref_id = ${pi.id} and kind = 'bank.deposit'`;
  t.equal(dep.n, 1, 'one deposit entry');

  t.equal((await unmatch(won.body.id)).body.match_status, 'unmatched');
  t.equal((await unmatch(won.body.id)).body.error?.code, 'bank_statement.line_match_conflict', 'nothing left to undo');
  const [bank] = await a.app.deps.sql`
    select coalesce(sum(jl.amount_minor), 0)::bigint as s from journal_lines jl join journal_entries e on e.id = jl.entry_id
     where e.ref_id = ${pi.id} and e.kind in ('bank.deposit', 'bank.deposit_reversal') and jl.account like 'bank:%'`;
  t.equal(Number(bank.s), 0, 'the reversal leaves the bank account as before');
});

t.test('another tenant\'s member reaches none of the portal\'s additions: delivery logs, approvals, their decisions', async (t) => {
  const o = await signUpOwner(a);
  await a.admin('PATCH', `/admin/tenants/${o.tenantId}/settings`, { refund_approval_threshold_minor: 5_000 });
  const c = new PortalClient(a);
  await c.signIn(o.email, o.password);
  const ep = await c.call('POST', '/portal/api/v1/webhook_endpoints', { url: `${rx.url}/iso-${o.tenantId}` });
  const pi = await charge(o.testKey, 20_000);
  const asked = await c.call('POST', '/portal/api/v1/refunds', { attempt_id: pi.attempts[0].id, amount_minor: 10_000 });
  t.equal(asked.status, 202, asked.text);

  const o2 = await signUpOwner(a);
  const x = new PortalClient(a);
  await x.signIn(o2.email, o2.password);
  t.equal((await x.call('GET', `/portal/api/v1/webhook_endpoints/${ep.body.id}/deliveries`)).status, 404, 'not its delivery log');
  t.same((await x.call('GET', '/portal/api/refund_approvals')).body.data, [], 'not its approvals');
  const approve = await x.call('POST', `/portal/api/refund_approvals/${asked.body.id}/approve`);
  t.equal(approve.status, 404, 'nor can it approve them');
  t.equal((await x.call('POST', `/portal/api/refund_approvals/${asked.body.id}/reject`)).status, 404);
  t.equal((await c.call('GET', `/portal/api/refund_approvals?status=pending`)).body.data[0].id, asked.body.id, 'the approval still waits for this tenant');
});
