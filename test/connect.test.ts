// Connect against the running service: accounts from approved applications (one per application,
// suspended accounts refuse transfers), transfers whose splits are paid out to the sub-merchants'
// CLABEs, every connect.* code, a concurrent double split refused, the ledger balanced.
import t from 'tap';
import { startTestApp, type TestApp, until } from './helpers/app.js';

let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const DOCS = ['ine', 'comprobante_domicilio', 'constancia_fiscal', 'caratula_estado_cuenta'].map((document_type, i) => ({ document_type, reference: `ref-${i}`, reference_hash: `${i}`.repeat(64) }));


/** An approved application (moral, valid RFC and CLABE). */
async function approved(name: string, clabe = '646180110400000007', key = ten.testKey) {
  const c = await a.call('POST', '/v1/onboarding/applications', { key, body: { legal_name: name, person_type: 'moral', contact_email: 'kyc@x.mx', rfc: 'EKU9003173C9', clabe } });
  await a.call('PATCH', `/v1/onboarding/applications/${c.body.id}`, { key, body: { documents: DOCS } });
  const s = await a.call('POST', `/v1/onboarding/applications/${c.body.id}/submit`, { key });
  if (s.body.status !== 'approved') throw new Error(s.text);
  return c.body.id as string;
}
const account = (applicationId: string, key = ten.testKey, extra: object = {}) => a.call('POST', '/v1/connect/accounts', { key, body: { onboarding_application_id: applicationId, ...extra } });
const transfer = (body: object, key = ten.testKey, headers: Record<string, string> = idem()) => a.call('POST', '/v1/connect/transfers', { key, body, headers });

/** A succeeded card charge of `amount`. */
async function charge(amount: number, token = 'tok_sim_ok', key = ten.testKey) {
  const pi = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: amount, currency: 'MXN' }, headers: idem() });
  await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key, body: { payment_token: token, payment_method: 'card' }, headers: idem() });
  const done = await until(() => a.call('GET', `/v1/payment_intents/${pi.body.id}`, { key }), (r) => r.body.status === 'succeeded' || r.body.status === 'failed');
  return done.body;
}

let acc1: string;
let acc2: string;

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000', SWEEP_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500' });
  ten = await a.newTenant();
});
t.teardown(() => a.stop());

t.test('accounts: from an approved application, one per application, settlement CLABE masked', async (t) => {
  const app1 = await approved('Taquería Uno SA de CV');
  const r = await account(app1);
  t.equal(r.status, 201);
  t.match(r.body, { object: 'connect_account', onboarding_application_id: app1, settlement_clabe_masked: '646***********0007', sub_merchant_name: 'Taquería Uno SA de CV', status: 'active', connector_key: 'stp', livemode: false, created_at: String });
  t.notMatch(r.text, /646180110400000007/);
  acc1 = r.body.id;
  const dup = await account(app1);
  t.equal(dup.status, 409);
  t.equal(dup.body.error.code, 'connect.account_conflict');
  const app2 = await approved('Panadería Dos', '072691004495711499');
  const [x, y] = await Promise.all([account(app2), account(app2)]);
  t.same([x.status, y.status].sort(), [201, 409], 'two racing creates: one account');
  acc2 = (x.status === 201 ? x : y).body.id;
  const draft = await a.call('POST', '/v1/onboarding/applications', { key: ten.testKey, body: { legal_name: 'Borrador', person_type: 'fisica', contact_email: 'b@x.mx' } });
  t.equal((await account(draft.body.id)).body.error.code, 'connect.application_not_approved');
  t.equal((await account(crypto.randomUUID())).body.error.code, 'connect.application_not_found');
  t.equal((await account('not-a-uuid')).body.error.code, 'connect.invalid_application_id');
  t.equal((await a.call('POST', '/v1/connect/accounts', { key: ten.testKey, body: {} })).body.error.code, 'connect.invalid_application_id');
  const other = await a.newTenant();
  t.equal((await account(app1, other.testKey)).body.error.code, 'connect.application_not_found', "another tenant's application");
  const l = await a.call('GET', '/v1/connect/accounts?limit=9999', { key: ten.testKey });
  t.equal(l.body.object, 'list');
  t.equal(l.body.data.length, 2);
  t.equal((await a.call('GET', `/v1/connect/accounts/${acc1}`, { key: ten.testKey })).body.id, acc1);
  t.equal((await a.call('GET', `/v1/connect/accounts/${acc1}`, { key: other.testKey })).body.error.code, 'connect.account_not_found');
  t.equal((await a.call('GET', `/v1/connect/accounts/${acc1}`, { key: ten.liveKey })).body.error.code, 'connect.account_not_found');
});

t.test('a transfer: fee + splits = charge; each split paid out to the sub-merchant; ledger', async (t) => {
  const pi = await charge(10_000);
  const r = await transfer({ payment_intent_id: pi.id, charge_amount_minor: 10_000, application_fee_minor: 1_500, currency: 'MXN', splits: [{ connect_account_id: acc1, amount_minor: 6_000 }, { connect_account_id: acc2, amount_minor: 2_500 }] });
  t.equal(r.status, 201);
  t.match(r.body, { object: 'connect_transfer', payment_intent_id: pi.id, charge_amount_minor: 10_000, application_fee_minor: 1_500, currency: 'MXN', status: 'split' });
  t.equal(r.body.splits.length, 2);
  t.match(r.body.splits[0], { connect_account_id: acc1, amount_minor: 6_000, status: 'dispersing', payout_id: String });
  const done = await until(() => a.call('GET', `/v1/connect/transfers/${r.body.id}`, { key: ten.testKey }), (x) => x.body.splits.every((s: { status: string }) => s.status !== 'dispersing'));
  t.same(done.body.splits.map((s: { status: string }) => s.status), ['paid', 'paid'], 'the splits took their payouts outcome');
  const p1 = await a.call('GET', `/v1/payouts/${done.body.splits[0].payout_id}`, { key: ten.testKey });
  t.match(p1.body, { status: 'paid', amount_minor: 6_000, clabe: '646***********0007', beneficiary_name: 'Taquería Uno SA de CV', beneficiary_rfc: 'EKU9003173C9', connector_key: 'stp' });
  const p2 = await a.call('GET', `/v1/payouts/${done.body.splits[1].payout_id}`, { key: ten.testKey });
  t.match(p2.body, { status: 'paid', amount_minor: 2_500, clabe: '072***********1499' });
  const entry = await a.app.deps.sql`select l.account, l.amount_minor from journal_lines l join journal_entries e on e.id = l.entry_id where e.ref_id = ${r.body.id} order by l.id`;
  // The capture credited sales 8,621 + IVA 1,379 (kernel/ledger.ts captureLines); the fee 1,500 is 1,293 + IVA 207.
  t.same(entry.map((l) => [l.account, l.amount_minor]), [['sales', 8_621], ['iva_trasladado_cobrado', 1_379], ['platform_fee_income', -1_293], ['iva_trasladado_cobrado', -207], [`connect_payable:${acc1}`, -6_000], [`connect_payable:${acc2}`, -2_500]]);
  const payable = await a.app.deps.sql`
    select l.account, sum(l.amount_minor)::bigint as bal from journal_lines l
     where l.tenant_id = ${ten.id} and l.account like 'connect_payable:%' group by 1 order by 1`;
  t.ok(payable.every((x) => x.bal === 0), 'each sub-merchant payable is settled by its payout');
  const list = await a.call('GET', '/v1/connect/transfers', { key: ten.testKey });
  t.equal(list.body.data[0].id, r.body.id);
  t.equal(list.body.data[0].splits.length, 2);
});

/** Balances per account of one charge's own entries: its capture(s), refunds and transfers. */
async function chargeBooks(piId: string): Promise<Record<string, number>> {
  const rows = await a.app.deps.sql`
    select l.account, sum(l.amount_minor)::bigint as bal from journal_lines l join journal_entries e on e.id = l.entry_id
     where e.tenant_id = ${ten.id} and (
           (e.ref_type = 'attempt' and e.ref_id in (select id from attempts where payment_intent_id = ${piId}))
        or (e.ref_type = 'refund' and e.ref_id in (select r.id from refunds r join attempts x on x.id = r.attempt_id where x.payment_intent_id = ${piId}))
        or (e.ref_type = 'connect_transfer' and e.ref_id in (select id from connect_transfers where payment_intent_id = ${piId})))
     group by 1`;
  return Object.fromEntries(rows.map((r) => [r.account as string, Number(r.bal)]));
}
const sumOf = (b: Record<string, number>) => Object.values(b).reduce((s, x) => s + x, 0);

// Issue 27 (docs/connect.md "Ledger", docs/reports.md "IVA in the books"): the transfer takes back
// what the capture credited (sale net of IVA and its IVA trasladado), not the gross charge from `sales`.
t.test('a split of 1,160.00 (fee 116.00): sales back to zero, 208.01 holds only the fee\'s IVA, the payable 1,044.00', async (t) => {
  const pi = await charge(116_000);
  const r = await transfer({ payment_intent_id: pi.id, charge_amount_minor: 116_000, application_fee_minor: 11_600, currency: 'MXN', splits: [{ connect_account_id: acc1, amount_minor: 104_400 }] });
  t.equal(r.status, 201, r.text);
  const b = await chargeBooks(pi.id);
  t.equal(b.sales ?? 0, 0, 'the sale is the sub-merchant\'s, not the platform\'s');
  t.equal(b.iva_trasladado_cobrado, -1_600, 'IVA trasladado: the fee\'s 16.00 only');
  t.equal(b.iva_trasladado_no_cobrado ?? 0, 0);
  t.equal(b.platform_fee_income, -10_000, 'fee income net of IVA');
  t.ok(b[`connect_payable:${acc1}`] === -104_400 || b[`connect_payable:${acc1}`] === 0, 'payable 1,044.00 (settled once its payout is paid)');
  const [tr] = await a.app.deps.sql`select l.account, l.amount_minor from journal_lines l join journal_entries e on e.id = l.entry_id where e.ref_id = ${r.body.id} and e.kind = 'connect_transfer.split' and l.account = ${'connect_payable:' + acc1}`;
  t.equal(Number(tr!.amount_minor), -104_400);
  t.equal(sumOf(b), 0, 'the charge\'s books balance');
});

t.test('a split after a partial refund: takes back the captured share of what is left', async (t) => {
  const pi = await charge(116_000);
  const [att] = await a.app.deps.sql`select id from attempts where payment_intent_id = ${pi.id} and status in ('captured', 'settled')`;
  const rf = await a.call('POST', '/v1/refunds', { key: ten.testKey, body: { attempt_id: att!.id, amount_minor: 11_600 }, headers: idem() });
  t.ok([200, 201].includes(rf.status), rf.text);
  await until(() => a.app.deps.sql`select 1 from journal_entries e join refunds r on r.id = e.ref_id where e.kind = 'refund.succeeded' and r.attempt_id = ${att!.id}`, (x) => x.length > 0);
  const over = await transfer({ payment_intent_id: pi.id, charge_amount_minor: 116_000, application_fee_minor: 11_600, currency: 'MXN', splits: [{ connect_account_id: acc1, amount_minor: 104_400 }] });
  t.equal(over.body.error?.code, 'connect.invalid_charge', 'the refunded part cannot be split');
  const r = await transfer({ payment_intent_id: pi.id, charge_amount_minor: 104_400, application_fee_minor: 10_440, currency: 'MXN', splits: [{ connect_account_id: acc1, amount_minor: 93_960 }] });
  t.equal(r.status, 201, r.text);
  const b = await chargeBooks(pi.id);
  t.equal(b.refunds, 10_000, 'the refund: base 100.00');
  t.equal((b.sales ?? 0) + b.refunds!, 0, 'sales net of refunds: zero');
  t.equal(b.iva_trasladado_cobrado, -1_440, 'IVA trasladado: the fee\'s 14.40 only');
  t.equal(b.platform_fee_income, -9_000);
  t.equal(sumOf(b), 0);
});

t.test('a split whose payout fails: the split is failed, the payable stays owed', async (t) => {
  const appF = await approved('FAIL', '002010077777777771');
  const accF = (await account(appF)).body.id;
  const pi = await charge(3_000);
  const r = await transfer({ payment_intent_id: pi.id, charge_amount_minor: 3_000, application_fee_minor: 0, currency: 'MXN', splits: [{ connect_account_id: accF, amount_minor: 3_000 }] });
  t.equal(r.status, 201);
  const done = await until(() => a.call('GET', `/v1/connect/transfers/${r.body.id}`, { key: ten.testKey }), (x) => x.body.splits[0].status !== 'dispersing');
  t.equal(done.body.splits[0].status, 'failed');
  const p = await a.call('GET', `/v1/payouts/${done.body.splits[0].payout_id}`, { key: ten.testKey });
  t.match(p.body, { status: 'failed', failure_reason: /rejected/ });
  const [bal] = await a.app.deps.sql`select coalesce(sum(amount_minor), 0)::bigint as b from journal_lines where tenant_id = ${ten.id} and account = ${'connect_payable:' + accF}`;
  t.equal(bal.b, -3_000, 'still owed to the sub-merchant');
});

t.test('every connect.* code of transfers', async (t) => {
  const pi = await charge(5_000);
  const ok = { payment_intent_id: pi.id, charge_amount_minor: 5_000, application_fee_minor: 500, currency: 'MXN', splits: [{ connect_account_id: acc1, amount_minor: 4_500 }] };
  const cases: Array<[object, string, RegExp?]> = [
    [{ ...ok, application_fee_minor: 400 }, 'connect.split_mismatch', /400 \+ splits 4500 = 4900, but charge_amount_minor is 5000/],
    [{ ...ok, payment_intent_id: 'x' }, 'connect.invalid_payment_intent'],
    [{ ...ok, payment_intent_id: crypto.randomUUID() }, 'connect.invalid_payment_intent'],
    [{ ...ok, charge_amount_minor: 0 }, 'connect.invalid_charge'],
    [{ ...ok, charge_amount_minor: -1 }, 'connect.invalid_charge'],
    [{ ...ok, application_fee_minor: -1 }, 'connect.invalid_charge'],
    [{ ...ok, currency: 'pesos' }, 'connect.invalid_currency'],
    [{ ...ok, currency: 'USD' }, 'connect.invalid_currency', /MXN/],
    [{ ...ok, splits: [] }, 'connect.missing_allocations'],
    [{ ...ok, splits: undefined }, 'connect.missing_allocations'],
    [{ ...ok, splits: [{ connect_account_id: 'nope', amount_minor: 4_500 }] }, 'connect.invalid_allocation'],
    [{ ...ok, splits: [{ connect_account_id: acc1, amount_minor: 0 }] }, 'connect.invalid_allocation'],
    [{ ...ok, splits: [{ connect_account_id: acc1 }] }, 'connect.invalid_allocation'],
    [{ ...ok, splits: [{ connect_account_id: crypto.randomUUID(), amount_minor: 4_500 }] }, 'connect.account_not_found'],
    [{ ...ok, charge_amount_minor: 6_000, splits: [{ connect_account_id: acc1, amount_minor: 5_500 }] }, 'connect.invalid_charge', /exceeds the 5000/],
  ];
  for (const [b, code, msg] of cases) {
    const r = await transfer(b);
    t.equal(r.body.error?.code, code, `${code}: ${JSON.stringify(b).slice(0, 120)}`);
    if (msg) t.match(r.body.error.message, msg);
  }
  const declined = await charge(5_000, 'tok_sim_insufficient');
  t.equal(declined.status, 'failed');
  t.equal((await transfer({ ...ok, payment_intent_id: declined.id })).body.error.code, 'connect.invalid_payment_intent', 'a failed charge');
  const other = await a.newTenant();
  t.equal((await transfer(ok, other.testKey)).body.error.code, 'connect.invalid_payment_intent', "another tenant's charge");
  t.equal((await a.call('POST', '/v1/connect/transfers', { key: ten.testKey, body: ok })).body.error.code, 'idempotency_key_required');
  // Suspended accounts refuse transfers.
  t.equal((await a.admin('POST', `/admin/tenants/${ten.id}/connect/accounts/${acc1}/suspend`)).body.status, 'suspended');
  t.equal((await a.admin('POST', `/admin/tenants/${ten.id}/connect/accounts/${acc1}/suspend`)).body.status, 'suspended', 'idempotent');
  t.equal((await transfer(ok)).body.error.code, 'connect.account_suspended');
  t.equal((await a.admin('POST', `/admin/tenants/${ten.id}/connect/accounts/${acc1}/reactivate`)).body.status, 'active');
  const fine = await transfer(ok);
  t.equal(fine.status, 201);
  t.equal((await transfer(ok)).body.error.code, 'connect.invalid_charge', 'the same charge cannot be split again');
  t.equal((await a.call('GET', `/v1/connect/transfers/${fine.body.id}`, { key: other.testKey })).body.error.code, 'connect.transfer_not_found');
  t.equal((await a.call('GET', `/v1/connect/transfers/${crypto.randomUUID()}`, { key: ten.testKey })).body.error.code, 'connect.transfer_not_found');
  const [n] = await a.app.deps.sql`select count(*)::int as n from connect_transfers where payment_intent_id = ${pi.id}`;
  t.equal(n.n, 1, 'refused requests wrote nothing');
});

t.test('a concurrent double split of one charge: one transfer, the other refused', async (t) => {
  const pi = await charge(8_000);
  const b = { payment_intent_id: pi.id, charge_amount_minor: 8_000, application_fee_minor: 0, currency: 'MXN', splits: [{ connect_account_id: acc2, amount_minor: 8_000 }] };
  const results = await Promise.all(Array.from({ length: 6 }, () => transfer(b)));
  const statuses = results.map((r) => r.status).sort();
  t.same(statuses, [201, 400, 400, 400, 400, 400]);
  t.ok(results.filter((r) => r.status === 400).every((r) => r.body.error.code === 'connect.invalid_charge'));
  const [sum] = await a.app.deps.sql`select count(*)::int as n, coalesce(sum(charge_amount_minor), 0)::bigint as total from connect_transfers where payment_intent_id = ${pi.id}`;
  t.same([sum.n, sum.total], [1, 8_000], 'never split for more than it captured');
  const [payouts] = await a.app.deps.sql`select count(*)::int as n from connect_splits s join connect_transfers tr on tr.id = s.transfer_id where tr.payment_intent_id = ${pi.id}`;
  t.equal(payouts.n, 1, 'one payout');
});

t.test('idempotent transfer: the same key answers the same transfer', async (t) => {
  const pi = await charge(2_000);
  const h = idem();
  const b = { payment_intent_id: pi.id, charge_amount_minor: 2_000, application_fee_minor: 200, currency: 'MXN', splits: [{ connect_account_id: acc2, amount_minor: 1_800 }] };
  const r1 = await transfer(b, ten.testKey, h);
  const r2 = await transfer(b, ten.testKey, h);
  t.equal(r1.status, 201);
  t.equal(r2.status, 201);
  t.equal(r2.body.id, r1.body.id);
});

t.test('the ledger of the tenant balances', async (t) => {
  const rows = await a.app.deps.sql`
    select e.id, sum(l.amount_minor)::bigint as s from journal_entries e join journal_lines l on l.entry_id = e.id where e.tenant_id = ${ten.id} group by e.id`;
  t.ok(rows.length > 5);
  t.ok(rows.every((r) => r.s === 0), 'every entry sums to zero');
  const [all] = await a.app.deps.sql`select coalesce(sum(amount_minor), 0)::bigint as s from journal_lines where tenant_id = ${ten.id}`;
  t.equal(all.s, 0);
});
