// Billers and service payments against the running service: the catalog and its filter, the
// inquiry with per-biller reference validation, every biller.* and service_payment.* code, the
// endpoint's own idempotency (replay, 409 conflict, concurrent twins: one payment at the
// aggregator), paid/failed, the ledger entry of a paid bill, lists, reads and tenancy.
import t from 'tap';
import { startTestApp, type TestApp } from './helpers/app.js';
import { simInquiry } from '../connectors/billers/sim.js';

let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const pay = (b: object, headers: Record<string, string> = idem(), key = ten.testKey) => a.call('POST', '/v1/service_payments', { key, body: b, headers });
const inquiry = (code: string, b: object, key = ten.testKey) => a.call('POST', `/v1/billers/${code}/inquiry`, { key, body: b });
const lines = (refId: string) => a.app.deps.sql`
  select e.kind, l.account, l.amount_minor from journal_lines l join journal_entries e on e.id = l.entry_id where e.ref_id = ${refId} order by l.amount_minor desc`;

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000', RECONCILE_INTERVAL_MS: '500' });
  ten = await a.newTenant();
});
t.teardown(() => a.stop());

t.test('catalog: four billers with reference_label; category filter', async (t) => {
  const r = await a.call('GET', '/v1/billers', { key: ten.testKey });
  t.equal(r.status, 200);
  t.same(r.body.data.map((b: any) => b.code), ['cfe', 'telmex', 'izzi', 'agua_cdmx']);
  for (const b of r.body.data) t.match(b, { object: 'biller', name: String, category: String, reference_label: String, active: true });
  const tel = await a.call('GET', '/v1/billers?category=telecom', { key: ten.testKey });
  t.same(tel.body.data.map((b: any) => b.code), ['telmex', 'izzi']);
  t.same((await a.call('GET', '/v1/billers?category=gas', { key: ten.testKey })).body.data, []);
  t.equal((await a.call('GET', '/v1/billers')).status, 401);
});

t.test('inquiry: amount due, holder, due date; every code', async (t) => {
  const r = await inquiry('cfe', { reference: '123456789012' });
  t.equal(r.status, 200);
  const exp = simInquiry('cfe', '123456789012')!;
  t.same(r.body, { object: 'biller_inquiry', biller_code: 'cfe', biller_name: r.body.biller_name, reference: '123456789012', amount_due_minor: exp.amountDueMinor, currency: 'MXN', service_holder_name: exp.holderName, due_date: exp.dueDate });
  t.equal((await inquiry('cfe', { reference: '123456789012' })).body.amount_due_minor, exp.amountDueMinor, 'deterministic');
  const cases: Array<[string, object, number, string]> = [
    ['cfe', {}, 400, 'biller.missing_reference'],
    ['cfe', { reference: '' }, 400, 'biller.missing_reference'],
    ['cfe', { reference: 123456789012 }, 400, 'biller.missing_reference'],
    ['gas_natural', { reference: '123' }, 404, 'biller.not_found'],
    ['cfe', { reference: '12345678901' }, 400, 'biller.invalid_reference'],
    ['cfe', { reference: '12345678901A' }, 400, 'biller.invalid_reference'],
    ['telmex', { reference: '55123456789' }, 400, 'biller.invalid_reference'],
    ['izzi', { reference: '1234567' }, 400, 'biller.invalid_reference'],
    ['agua_cdmx', { reference: '411111111111111' }, 400, 'biller.invalid_reference'],
    ['cfe', { reference: '000000000000' }, 404, 'biller.reference_not_found'],
    ['agua_cdmx', { reference: '0000000000000000' }, 404, 'biller.reference_not_found'],
  ];
  for (const [code, b, status, err] of cases) {
    const x = await inquiry(code, b);
    t.equal(x.status, status, `${code} ${JSON.stringify(b)} -> ${status}`);
    t.equal(x.body.error?.code, err, `${code} ${JSON.stringify(b)} -> ${err}`);
  }
  t.match((await inquiry('agua_cdmx', { reference: '4111111111111111' })).body, { object: 'biller_inquiry', biller_code: 'agua_cdmx' }, '16 digits');
  t.match((await inquiry('agua_cdmx', { reference: '1234567890123456' })).body, { object: 'biller_inquiry', biller_code: 'agua_cdmx' }, '16 digits that fail a Luhn check: decisions §5 has none');
  t.equal((await inquiry('izzi', { reference: '12345678' })).status, 200, 'izzi 8 digits');
  t.equal((await inquiry('izzi', { reference: '1234567890' })).status, 200, 'izzi 10 digits');
  const live = await inquiry('cfe', { reference: '123456789012' }, ten.liveKey);
  t.equal(live.body.error.code, 'biller.livemode_unsupported');
  const [n] = await a.app.deps.sql`select count(*)::int as n from service_payments where tenant_id = ${ten.id}`;
  t.equal(n.n, 0, 'an inquiry moves no money');
});

t.test('service payment: paid with provider_ref; ledger entry; read and list', async (t) => {
  const due = simInquiry('telmex', '5512345678')!.amountDueMinor;
  const r = await pay({ biller_code: 'telmex', reference: '5512345678', amount_minor: due });
  t.equal(r.status, 200);
  t.match(r.body, { object: 'service_payment', biller_code: 'telmex', reference: '5512345678', amount_minor: due, currency: 'MXN', status: 'paid', provider_ref: /^sim_bp_/, livemode: false });
  t.notOk(r.body.failure_reason);
  t.same((await lines(r.body.id)).map((l) => [l.kind, l.account, Number(l.amount_minor)]), [
    ['service_payment.paid', 'service_payment_clearing', due],
    ['service_payment.paid', 'biller_payable:telmex', -due],
  ]);
  const got = await a.call('GET', `/v1/service_payments/${r.body.id}`, { key: ten.testKey });
  t.same(got.body, r.body);
  const list = await a.call('GET', '/v1/service_payments', { key: ten.testKey });
  t.equal(list.body.object, 'list');
  t.ok(list.body.data.some((x: any) => x.id === r.body.id));
  // Without amount_minor the amount due is paid.
  const r2 = await pay({ biller_code: 'cfe', reference: '999988887777' });
  t.match(r2.body, { status: 'paid', amount_minor: simInquiry('cfe', '999988887777')!.amountDueMinor });
});

t.test('reference ending 0000: failed with failure_reason; no ledger entry', async (t) => {
  const r = await pay({ biller_code: 'cfe', reference: '123456780000' });
  t.equal(r.status, 200);
  t.match(r.body, { status: 'failed', failure_reason: /0000/, provider_ref: /^sim_bp_/ });
  t.same(await lines(r.body.id), []);
});

t.test('every service_payment.* code; nothing stored by a refused request', async (t) => {
  const due = simInquiry('cfe', '111122223333')!.amountDueMinor;
  const cases: Array<[object, Record<string, string> | undefined, number, string]> = [
    [{ reference: '111122223333' }, idem(), 400, 'service_payment.missing_fields'],
    [{ biller_code: 'cfe' }, idem(), 400, 'service_payment.missing_fields'],
    [{ biller_code: '  ', reference: '111122223333' }, idem(), 400, 'service_payment.missing_fields'],
    [{ biller_code: 'cfe', reference: '111122223333' }, {}, 400, 'idempotency_key_required'],
    [{ biller_code: 'cfe', reference: '111122223333' }, { 'idempotency-key': 'not-a-uuid' }, 400, 'idempotency_key_required'],
    [{ biller_code: 'nope', reference: '111122223333' }, idem(), 404, 'biller.not_found'],
    [{ biller_code: 'cfe', reference: '1111' }, idem(), 400, 'biller.invalid_reference'],
    [{ biller_code: 'cfe', reference: '000000000000' }, idem(), 404, 'biller.reference_not_found'],
    [{ biller_code: 'cfe', reference: '111122223333', amount_minor: due + 1 }, idem(), 400, 'service_payment.amount_mismatch'],
    [{ biller_code: 'cfe', reference: '111122223333', amount_minor: -5 }, idem(), 400, 'service_payment.amount_mismatch'],
  ];
  for (const [b, h, status, code] of cases) {
    const r = await pay(b, h);
    t.equal(r.status, status, `${JSON.stringify(b)} ${JSON.stringify(h)} -> ${status}`);
    t.equal(r.body.error?.code, code, `-> ${code}`);
  }
  t.equal((await pay({ biller_code: 'cfe', reference: '111122223333' }, idem(), ten.liveKey)).body.error.code, 'biller.livemode_unsupported');
  const [n] = await a.app.deps.sql`select count(*)::int as n from service_payments where tenant_id = ${ten.id} and reference = '111122223333'`;
  t.equal(n.n, 0);
  const nf = await a.call('GET', `/v1/service_payments/${crypto.randomUUID()}`, { key: ten.testKey });
  t.equal(nf.status, 404);
  t.equal(nf.body.error.code, 'service_payment.not_found');
  t.equal((await a.call('GET', '/v1/service_payments/not-a-uuid', { key: ten.testKey })).body.error.code, 'service_payment.not_found');
});

t.test('idempotency: same key + same body replays; other body is 409; twins pay once', async (t) => {
  const h = idem();
  const b = { biller_code: 'izzi', reference: '87654321' };
  const first = await pay(b, h);
  t.equal(first.status, 200);
  const again = await pay(b, h);
  t.equal(again.status, 200);
  t.same(again.body, first.body, 'the same payment');
  t.equal(again.headers.get('idempotency-replayed'), 'true');
  const other = await pay({ ...b, reference: '87654322' }, h);
  t.equal(other.status, 409);
  t.equal(other.body.error.code, 'service_payment.idempotency_conflict');
  const withAmount = await pay({ ...b, amount_minor: first.body.amount_minor }, h);
  t.equal(withAmount.body.error.code, 'service_payment.idempotency_conflict', 'a body with amount_minor is another body');
  // The key is the tenant's and mode's: another tenant may use it.
  const other2 = await a.newTenant();
  t.equal((await pay(b, h, other2.testKey)).status, 200);

  // Concurrent twins: one payment, one call to the aggregator.
  const h2 = idem();
  const b2 = { biller_code: 'cfe', reference: '246813579135' };
  const rs = await Promise.all(Array.from({ length: 6 }, () => pay(b2, h2)));
  const ok = rs.filter((r) => r.status === 200);
  t.ok(ok.length >= 1);
  for (const r of rs) if (r.status !== 200) t.equal(r.body.error.code, 'idempotency_key_in_progress');
  t.equal(new Set(ok.map((r) => r.body.id)).size, 1, 'one payment');
  const [book] = await a.app.deps.sql`select count(*)::int as n, sum(pays)::int as pays from sim_biller_payments where tenant_id = ${ten.id} and reference = ${b2.reference}`;
  t.same(book, { n: 1, pays: 1 }, 'paid once at the aggregator');
  t.equal((await lines(ok[0].body.id)).length, 2, 'one ledger entry');
});

t.test('tenancy: another tenant or mode sees 404', async (t) => {
  const r = await pay({ biller_code: 'cfe', reference: '135792468024' });
  const other = await a.newTenant();
  t.equal((await a.call('GET', `/v1/service_payments/${r.body.id}`, { key: other.testKey })).status, 404);
  t.equal((await a.call('GET', `/v1/service_payments/${r.body.id}`, { key: ten.liveKey })).status, 404);
  t.same((await a.call('GET', '/v1/service_payments', { key: other.testKey })).body.data, []);
  t.equal((await a.call('GET', '/v1/service_payments?limit=1', { key: ten.testKey })).body.data.length, 1);
});
