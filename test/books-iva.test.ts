// Issue 27, defect 3: books that mirror the CFDI. A capture books the sale net of IVA (401.01) and the
// IVA trasladado cobrado (208.01), the fee's IVA is acreditable (118.01), a refund reverses base and IVA,
// a PPD invoice books IVA no cobrado (209.01) moved to cobrado with each REP, a credit note reverses
// base and IVA; for a month of mixed activity whose sales all have CFDIs, the balanza's IVA accounts
// equal the sum of that month's CFDIs' IVA. Defect 4: the pólizas carry the UUIDs.
import t from 'tap';
import { startTestApp, type TestApp, until } from './helpers/app.js';

let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const receptor = { rfc: 'EKU9003173C9', nombre: 'Escuela Kemper Urgate', uso_cfdi: 'G03', regimen_fiscal: '601', cp: '26015' };
const post = (path: string, body: unknown) => a.call('POST', path, { key: ten.testKey, body, headers: idem() });
const get = (path: string) => a.call('GET', path, { key: ten.testKey });

async function charge(amount: number, tip = 0) {
  const pi = await post('/v1/payment_intents', { amount_minor: amount, currency: 'MXN', tip_minor: tip });
  await post(`/v1/payment_intents/${pi.body.id}/confirm`, { payment_token: 'tok_sim_ok', payment_method: 'card' });
  return (await until(() => get(`/v1/payment_intents/${pi.body.id}`), (r) => ['succeeded', 'failed'].includes(r.body.status))).body;
}
async function entryOf(refId: string) {
  const rows = await a.app.deps.sql`select l.account, l.amount_minor from journal_lines l join journal_entries e on e.id = l.entry_id where e.ref_id = ${refId} order by l.account`;
  const m: Record<string, number> = {};
  for (const r of rows) m[r.account as string] = (m[r.account as string] ?? 0) + Number(r.amount_minor);
  return m;
}

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000' });
  ten = await a.newTenant('Libros con IVA');
  const r = await a.call('PUT', '/v1/fiscal_profile', { key: ten.testKey, body: { rfc: 'AAA010101AAA', nombre: 'ACCEM SERVICIOS EMPRESARIALES SC', regimen_fiscal: '601', cp: '06600', serie: 'F', pac_provider: 'sim' } });
  if (r.status !== 200) throw new Error(r.text);
});
t.teardown(() => a.stop());

t.test('a month of mixed activity: the balanza IVA equals the CFDIs IVA; pólizas carry UUIDs', async (t) => {
  // 1. a 1,160.00 capture: 1,000.00 sale, 160.00 IVA cobrado (not 1,160.00 of sales)
  const c1 = await charge(116000, 5000);
  const [att] = await a.app.deps.sql`select id, fee_minor from attempts where payment_intent_id = ${c1.id} and status in ('captured', 'settled')`;
  const cap = await until(() => a.app.deps.sql`select e.id from journal_entries e where e.kind = 'charge.captured' and e.tenant_id = ${ten.id} and e.ref_id = ${att!.id}`, (r) => r.length > 0);
  const capLines = await a.app.deps.sql`select account, amount_minor from journal_lines where entry_id = ${cap[0]!.id}`;
  const by = (acc: string) => capLines.filter((l) => l.account === acc).reduce((s, l) => s + Number(l.amount_minor), 0);
  t.equal(by('sales'), -100000, 'sales net of IVA');
  t.equal(by('iva_trasladado_cobrado'), -16000, 'IVA trasladado cobrado');
  t.equal(by('tips_payable'), -5000, 'the tip is not a sale');
  const fee = Number(att!.fee_minor ?? 0);
  if (fee > 0) t.equal(by('iva_acreditable') + by('connector_fees:sim'), fee, 'the fee: expense + IVA acreditable');
  t.ok(fee === 0 || by('iva_acreditable') > 0, 'IVA acreditable on the fee');
  const inv1 = await post('/v1/invoices', { payment_intent_id: c1.id, receptor });
  t.equal(inv1.status, 201, inv1.text);
  t.same(await entryOf(inv1.body.id), {}, 'a 16 % invoice of the whole amount posts no adjustment');

  // 2. an exento + 0 % sale invoiced: the capture's default 16 % is corrected by the CFDI
  const c2 = await charge(20000);
  const inv2 = await post('/v1/invoices', { payment_intent_id: c2.id, receptor, conceptos: [{ descripcion: 'Libro', importe_minor: 12000, iva: 'exento' }, { descripcion: 'Tortillas', importe_minor: 8000, iva: '0' }] });
  t.equal(inv2.status, 201, inv2.text);
  t.match(await entryOf(inv2.body.id), { sales: 17241, iva_trasladado_cobrado: 2759, sales_exento: -12000, sales_iva_0: -8000 });

  // 3. a PPD invoice: IVA no cobrado, moved to cobrado by each REP
  const ppd = await post('/v1/invoices/ppd', { total_minor: 23200, receptor });
  t.equal(ppd.status, 201, ppd.text);
  t.match(await entryOf(ppd.body.id), { clientes: 23200, sales: -20000, iva_trasladado_no_cobrado: -3200 });
  const rep = await post(`/v1/invoices/${ppd.body.id}/payments`, { payment_intent_id: (await charge(11600)).id });
  t.equal(rep.status, 201, rep.text);
  t.match(await entryOf(rep.body.id), { clientes: -11600, iva_trasladado_no_cobrado: 1600, sales: 10000 });

  // 4. a credit note on the first invoice, and a refund of another charge that has its CFDI
  const nc = await post(`/v1/invoices/${inv1.body.id}/credit-notes`, { total_minor: 11600, motivo: 'Bonificación' });
  t.equal(nc.status, 200, nc.text);
  t.match(await entryOf(nc.body.id), { discounts: 10000, iva_trasladado_cobrado: 1600, customer_credits: -11600 });
  const c5 = await charge(5800);
  const inv5 = await post('/v1/invoices', { payment_intent_id: c5.id, receptor });
  t.equal(inv5.status, 201);
  const [att5] = await a.app.deps.sql`select id from attempts where payment_intent_id = ${c5.id} and status in ('captured', 'settled')`;
  const refund = await post('/v1/refunds', { attempt_id: att5!.id, amount_minor: 5800 });
  t.ok([200, 201].includes(refund.status), refund.text);
  const rf = await until(() => a.app.deps.sql`select l.account, l.amount_minor from journal_lines l join journal_entries e on e.id = l.entry_id where e.kind = 'refund.succeeded' and e.tenant_id = ${ten.id}`, (r) => r.length > 0);
  t.same(Object.fromEntries(rf.map((l) => [l.account, Number(l.amount_minor)])), { refunds: 5000, iva_trasladado_cobrado: 800, 'connector_receivable:sim': -5800 }, 'the refund reverses base and IVA');
  // the refunded sale's CFDI is cancelled (motivo 03), so its IVA leaves the CFDIs' sum too
  const cx = await post(`/v1/invoices/${inv5.body.id}/cancel`, { motivo: '03' });
  t.equal(cx.status, 200, cx.text);

  // The balanza of the month vs the month's CFDIs
  const docs = (await get('/v1/invoices?limit=100')).body.data as any[];
  const live = docs.filter((d) => d.status !== 'cancelled');
  const ivaOf = (d: any) => (d.kind === 'credit_note' ? -d.iva_minor : d.kind === 'payment' ? 0 : d.iva_minor);
  const cfdiIva = live.reduce((s, d) => s + ivaOf(d), 0);
  t.equal(cfdiIva, 16000 + 0 + 3200 - 1600, 'the CFDIs: 160.00 + 0 + 32.00 − 16.00');
  const bal = await get('/v1/reports/balanza');
  t.equal(bal.status, 200, bal.text);
  const acc = (name: string) => bal.body.accounts.find((x: any) => x.account === name) ?? { closing_balance_minor: 0 };
  const cobrado = -acc('iva_trasladado_cobrado').closing_balance_minor;
  const noCobrado = -acc('iva_trasladado_no_cobrado').closing_balance_minor;
  t.equal(cobrado + noCobrado, cfdiIva, 'balanza 208 + 209 = Σ IVA of the month\'s CFDIs');
  t.equal(noCobrado, 1600, 'what the PPD still has to collect is no cobrado');
  t.match(acc('iva_trasladado_cobrado'), { code: '208.01' });
  t.match(acc('iva_trasladado_no_cobrado'), { code: '209.01' });
  t.equal(bal.body.balanced, true);

  // pólizas: the UUID of every CFDI that has an entry
  const pol = await get('/v1/reports/polizas?format=contpaqi');
  t.equal(pol.status, 200, pol.text);
  for (const d of [inv1.body, inv2.body, ppd.body, nc.body]) t.ok(pol.text.includes(d.uuid_fiscal), `the póliza carries ${d.uuid_fiscal}`);
  t.ok(pol.text.includes(rep.body.rep_uuid), 'and the REP\'s');
});

// Issue 27 (docs/reports.md): a credit note of a PUE invoice and a refund of the same sale are one
// reversal, in either order: the refund pays the customer credit the note created (entry
// cfdi.egreso.reembolso), and a credit note cancelled later undoes that.
t.test('a credit note and a refund of the same sale reverse it once, in either order', async (t) => {
  const own = await a.newTenant('Nota y reembolso');
  const r = await a.call('PUT', '/v1/fiscal_profile', { key: own.testKey, body: { rfc: 'AAA010101AAA', nombre: 'ACCEM SERVICIOS EMPRESARIALES SC', regimen_fiscal: '601', cp: '06600', serie: 'F', pac_provider: 'sim' } });
  t.equal(r.status, 200, r.text);
  const p = (path: string, body: unknown) => a.call('POST', path, { key: own.testKey, body, headers: idem() });
  const g = (path: string) => a.call('GET', path, { key: own.testKey });
  const sale = async () => {
    const pi = await p('/v1/payment_intents', { amount_minor: 11600, currency: 'MXN' });
    await p(`/v1/payment_intents/${pi.body.id}/confirm`, { payment_token: 'tok_sim_ok', payment_method: 'card' });
    await until(() => g(`/v1/payment_intents/${pi.body.id}`), (x) => x.body.status === 'succeeded');
    const [att] = await a.app.deps.sql`select id from attempts where payment_intent_id = ${pi.body.id} and status in ('captured', 'settled')`;
    const inv = await p('/v1/invoices', { payment_intent_id: pi.body.id, receptor });
    t.equal(inv.status, 201, inv.text);
    return { attemptId: att!.id as string, invoiceId: inv.body.id as string };
  };
  const refund = async (attemptId: string) => {
    const rf = await p('/v1/refunds', { attempt_id: attemptId, amount_minor: 11600 });
    t.ok([200, 201].includes(rf.status), rf.text);
    await until(() => a.app.deps.sql`select status from refunds where id = ${rf.body.id}`, (x) => x[0]?.status === 'succeeded');
  };
  const balances = async () => {
    const rows = await a.app.deps.sql`select account, sum(amount_minor)::bigint as b from journal_lines where tenant_id = ${own.id} and livemode = false group by account`;
    const m: Record<string, number> = {};
    for (const x of rows) m[x.account as string] = Number(x.b);
    return m;
  };
  // every sale of the tenant reversed once: its income and IVA cobrado back to zero, no customer credit left
  const reversedOnce = (m: Record<string, number>) =>
    (m.sales ?? 0) + (m.refunds ?? 0) + (m.discounts ?? 0) === 0 && (m.iva_trasladado_cobrado ?? 0) === 0 && (m.customer_credits ?? 0) === 0;

  // refund first, then the credit note that documents it
  const s1 = await sale();
  await refund(s1.attemptId);
  const nc1 = await p(`/v1/invoices/${s1.invoiceId}/credit-notes`, { total_minor: 11600, motivo: 'Devolución' });
  t.equal(nc1.status, 200, nc1.text);
  const b1 = await until(balances, (m) => reversedOnce(m));
  t.ok(reversedOnce(b1), 'sale 1: sales + refunds + discounts = 0, IVA cobrado back once, no customer credit left');

  // credit note first, then the refund that pays it
  const s2 = await sale();
  const nc2 = await p(`/v1/invoices/${s2.invoiceId}/credit-notes`, { total_minor: 11600, motivo: 'Devolución' });
  t.equal(nc2.status, 200, nc2.text);
  await refund(s2.attemptId);
  const b2 = await until(balances, (m) => reversedOnce(m) && (m.sales ?? 0) === -20000);
  t.equal((b2.sales ?? 0) + (b2.refunds ?? 0) + (b2.discounts ?? 0), 0, 'both sales reversed once each');
  t.equal(b2.iva_trasladado_cobrado ?? 0, 0, 'their IVA cobrado back once each');
  t.equal(b2.customer_credits ?? 0, 0, 'no customer credit owed to no one');

  // the second credit note cancelled: the refund stands alone again (refunds, not discounts)
  const cx = await p(`/v1/invoices/${nc2.body.id}/cancel`, { motivo: '02' });
  t.equal(cx.status, 200, cx.text);
  const b3 = await until(balances, (m) => (m.refunds ?? 0) === 10000 && (m.discounts ?? 0) === 10000);
  t.ok(reversedOnce(b3), 'still reversed once each after the cancellation');
  t.equal(b3.refunds ?? 0, 10000, 'the second sale\'s reversal is its refund again');
  const [bal] = await a.app.deps.sql`select sum(amount_minor)::bigint as s from journal_lines where tenant_id = ${own.id}`;
  t.equal(Number(bal!.s), 0, 'the books balance');
});
