// Issue 27, defect 2: every stamped CFDI (invoice, global, REP, credit note) is listed with
// filters and a cursor, and each one's XML and PDF downloads by its own id; a cancelled one is marked.
import t from 'tap';
import { startTestApp, type TestApp, until } from './helpers/app.js';
import { xsdValidate } from './helpers/sat.js';

let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const receptor = { rfc: 'EKU9003173C9', nombre: 'Escuela Kemper Urgate', uso_cfdi: 'G03', regimen_fiscal: '601', cp: '26015' };
const publico = { rfc: 'XAXX010101000', nombre: 'PUBLICO EN GENERAL', uso_cfdi: 'S01', regimen_fiscal: '616', cp: '06600' };
const post = (path: string, body: unknown) => a.call('POST', path, { key: ten.testKey, body, headers: idem() });
const get = (path: string) => a.call('GET', path, { key: ten.testKey });

async function charge(amount: number, customer?: string) {
  const pi = await post('/v1/payment_intents', { amount_minor: amount, currency: 'MXN', ...(customer ? { customer_id: customer } : {}) });
  await post(`/v1/payment_intents/${pi.body.id}/confirm`, { payment_token: 'tok_sim_ok', payment_method: 'card' });
  return (await until(() => get(`/v1/payment_intents/${pi.body.id}`), (r) => ['succeeded', 'failed'].includes(r.body.status))).body;
}

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000' });
  ten = await a.newTenant('Lista de CFDI');
  const r = await a.call('PUT', '/v1/fiscal_profile', { key: ten.testKey, body: { rfc: 'AAA010101AAA', nombre: 'ACCEM SERVICIOS EMPRESARIALES SC', regimen_fiscal: '601', cp: '06600', serie: 'F', pac_provider: 'sim' } });
  if (r.status !== 200) throw new Error(r.text);
});
t.teardown(() => a.stop());

t.test('every stamped CFDI is listed and downloadable by its own id', async (t) => {
  const cust = await post('/v1/customers', { name: 'Escuela', email: `esc-${Date.now()}@example.com` });
  t.equal(cust.status, 201, cust.text);
  const ppd = await post('/v1/invoices/ppd', { total_minor: 20000, receptor });
  t.equal(ppd.status, 201, ppd.text);
  const rep1 = await post(`/v1/invoices/${ppd.body.id}/payments`, { payment_intent_id: (await charge(8000, cust.body.id)).id });
  const rep2 = await post(`/v1/invoices/${ppd.body.id}/payments`, { payment_intent_id: (await charge(12000)).id });
  t.equal(rep1.status, 201, rep1.text);
  t.equal(rep2.status, 201, rep2.text);
  const pi = await charge(11600, cust.body.id);
  const pue = await post('/v1/invoices', { payment_intent_id: pi.id, receptor });
  const nc = await post(`/v1/invoices/${pue.body.id}/credit-notes`, { total_minor: 1160, motivo: 'Descuento' });
  t.equal(nc.status, 200, nc.text);
  const glob = await post('/v1/invoices', { payment_intent_id: (await charge(5800)).id, receptor: publico });
  t.equal(glob.status, 201, glob.text);
  const gone = await post('/v1/invoices', { payment_intent_id: (await charge(2320)).id, receptor });
  t.equal((await post(`/v1/invoices/${gone.body.id}/cancel`, { motivo: '03' })).status, 200);

  const all = await get('/v1/invoices?limit=100');
  t.equal(all.status, 200, all.text);
  const byId = new Map(all.body.data.map((d: any) => [d.id, d]));
  t.match(byId.get(ppd.body.id), { object: 'cfdi_document', kind: 'invoice', metodo_pago: 'PPD', tipo_de_comprobante: 'I', status: 'stamped', cancelled: false, uuid_fiscal: ppd.body.uuid_fiscal });
  t.match(byId.get(rep1.body.id), { kind: 'payment', tipo_de_comprobante: 'P', invoice_id: ppd.body.id, uuid_fiscal: rep1.body.rep_uuid, total_minor: 8000, customer_id: cust.body.id });
  t.match(byId.get(rep2.body.id), { kind: 'payment', total_minor: 12000 });
  t.match(byId.get(nc.body.id), { kind: 'credit_note', tipo_de_comprobante: 'E', invoice_id: pue.body.id, total_minor: 1160, customer_id: cust.body.id });
  t.match(byId.get(glob.body.id), { kind: 'global' });
  t.match(byId.get(gone.body.id), { kind: 'invoice', status: 'cancelled', cancelled: true });
  t.equal(all.body.data.length, 7);

  for (const d of all.body.data) {
    const x = await get(`/v1/invoices/${d.id}/xml`);
    t.equal(x.status, 200, `${d.kind} ${d.id}: XML`);
    t.ok(xsdValidate(x.text).ok, `${d.kind}: valid against SAT's XSDs`);
    t.match(x.text, d.uuid_fiscal);
    t.equal(x.headers.get('orquesta-cfdi-status'), d.status);
    const pdf = await get(`/v1/invoices/${d.id}/pdf`);
    t.equal(pdf.status, 200, `${d.kind}: PDF`);
    t.equal(pdf.headers.get('content-type'), 'application/pdf');
  }

  t.same((await get('/v1/invoices?kind=payment')).body.data.map((d: any) => d.id).sort(), [rep1.body.id, rep2.body.id].sort(), 'kind filter');
  t.same((await get('/v1/invoices?status=cancelled')).body.data.map((d: any) => d.id), [gone.body.id], 'status filter');
  t.same((await get(`/v1/invoices?customer=${cust.body.id}`)).body.data.map((d: any) => d.kind).sort(), ['credit_note', 'invoice', 'payment'], 'customer filter');
  t.equal((await get('/v1/invoices?receptor_rfc=xaxx010101000')).body.data.length, 1, 'receptor filter');
  const month = all.body.data[0].fecha.slice(0, 7);
  t.equal((await get(`/v1/invoices?period=${month}`)).body.data.length, 7, 'period filter: this month');
  t.equal((await get('/v1/invoices?period=2001-01')).body.data.length, 0, 'period filter: another month');
  t.equal((await get('/v1/invoices?period=2001-13')).body.error?.code, 'invoice.invalid_body');

  const seen: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await get(`/v1/invoices?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
    seen.push(...page.body.data.map((d: any) => d.id));
    if (!page.body.has_more) break;
    cursor = page.body.next_cursor;
  }
  t.same(seen, all.body.data.map((d: any) => d.id), 'the cursor walks the same list');
  t.equal((await get(`/v1/invoices?cursor=${cursor ?? 'x'}AAAA`)).body.error?.code, 'reports.invalid_cursor');
  const other = await a.newTenant('otro');
  t.equal((await a.call('GET', `/v1/invoices/${rep1.body.id}/xml`, { key: other.testKey })).body.error?.code, 'invoice.not_found', 'another tenant cannot read it');
});
