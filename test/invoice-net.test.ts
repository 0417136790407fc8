// Issue 27, defect 6: no invoice, REP or saldo ignores refunds and credit notes. A fully refunded
// charge is not invoiced; a partly refunded one is invoiced for what was kept; a REP declares the
// charge net of its refunds; a credit note on a PPD invoice lowers its saldo, so 1,160.00 with a
// 160.00 credit note accepts 1,000.00 and the first REP says ImpSaldoAnt 1000.00.
import t from 'tap';
import { startTestApp, type TestApp, until } from './helpers/app.js';
import { NS, attr, kid, parseXml } from '../formats/cfdi/xml.js';

let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const receptor = { rfc: 'EKU9003173C9', nombre: 'Escuela Kemper Urgate', uso_cfdi: 'G03', regimen_fiscal: '601', cp: '26015' };
const post = (path: string, body: unknown) => a.call('POST', path, { key: ten.testKey, body, headers: idem() });
const get = (path: string) => a.call('GET', path, { key: ten.testKey });

async function charge(amount: number) {
  const pi = await post('/v1/payment_intents', { amount_minor: amount, currency: 'MXN' });
  await post(`/v1/payment_intents/${pi.body.id}/confirm`, { payment_token: 'tok_sim_ok', payment_method: 'card' });
  return (await until(() => get(`/v1/payment_intents/${pi.body.id}`), (r) => ['succeeded', 'failed'].includes(r.body.status))).body;
}
async function refund(piId: string, amount: number) {
  const [att] = await a.app.deps.sql`select id from attempts where payment_intent_id = ${piId} and status in ('captured', 'settled', 'partially_refunded')`;
  const r = await post('/v1/refunds', { attempt_id: att!.id, amount_minor: amount });
  if (![200, 201].includes(r.status)) throw new Error(r.text);
  await until(() => get(`/v1/refunds/${r.body.id}`), (x) => x.body.status === 'succeeded');
}
const doctoOf = (xml: string) => kid(kid(kid(kid(parseXml(xml), NS.cfdi, 'Complemento')!, NS.pago20, 'Pagos')!, NS.pago20, 'Pago')!, NS.pago20, 'DoctoRelacionado')!;

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000' });
  ten = await a.newTenant('Netos');
  const r = await a.call('PUT', '/v1/fiscal_profile', { key: ten.testKey, body: { rfc: 'AAA010101AAA', nombre: 'ACCEM SERVICIOS EMPRESARIALES SC', regimen_fiscal: '601', cp: '06600', serie: 'F', pac_provider: 'sim' } });
  if (r.status !== 200) throw new Error(r.text);
});
t.teardown(() => a.stop());

t.test('a fully refunded charge is not invoiced; a partly refunded one for what was kept', async (t) => {
  const full = await charge(11600);
  await refund(full.id, 11600);
  const r = await post('/v1/invoices', { payment_intent_id: full.id, receptor });
  t.equal(r.body.error?.code, 'invoice.intent_fully_refunded', r.text);
  const part = await charge(11600);
  await refund(part.id, 5800);
  const p = await post('/v1/invoices', { payment_intent_id: part.id, receptor });
  t.equal(p.status, 201, p.text);
  t.match(p.body, { total_minor: 5800, base_minor: 5000, iva_minor: 800 });
});

t.test('a REP declares the charge net of its refunds', async (t) => {
  const inv = await post('/v1/invoices/ppd', { total_minor: 23200, receptor });
  const c = await charge(11600);
  await refund(c.id, 1600);
  const rep = await post(`/v1/invoices/${inv.body.id}/payments`, { payment_intent_id: c.id });
  t.equal(rep.status, 201, rep.text);
  t.equal(rep.body.monto_minor, 10000);
  const d = doctoOf((await get(`/v1/invoices/${rep.body.id}/xml`)).text);
  t.equal(attr(d, 'ImpPagado'), '100.00', 'ImpPagado net of the refund');
  t.equal(attr(d, 'ImpSaldoInsoluto'), '132.00');
});

t.test('a credit note on a PPD invoice lowers the saldo: no over-collection', async (t) => {
  const inv = await post('/v1/invoices/ppd', { total_minor: 116000, receptor });
  const nc = await post(`/v1/invoices/${inv.body.id}/credit-notes`, { total_minor: 16000 });
  t.equal(nc.status, 200, nc.text);
  t.equal((await get(`/v1/invoices/${inv.body.id}`)).body.saldo_insoluto_minor, 100000, 'saldo after the credit note');
  const r1 = await post(`/v1/invoices/${inv.body.id}/payments`, { payment_intent_id: (await charge(58000)).id });
  t.equal(r1.status, 201, r1.text);
  const d = doctoOf((await get(`/v1/invoices/${r1.body.id}/xml`)).text);
  t.equal(attr(d, 'ImpSaldoAnt'), '1000.00', 'ImpSaldoAnt after the credit note, not 1160.00');
  const r2 = await post(`/v1/invoices/${inv.body.id}/payments`, { payment_intent_id: (await charge(58000)).id });
  t.equal(r2.body.error?.code, 'invoice.payment_exceeds_balance', 'the second 580.00 would over-collect');
  t.equal((await post(`/v1/invoices/${inv.body.id}/credit-notes`, { total_minor: 50000 })).body.error?.code, 'invoice.credit_note_exceeds_total', 'a credit note beyond what is owed');
});
