// Invoices against the running service: PUE, PPD and payment complements (with concurrent
// payments), cancellation, credit notes (with concurrent requests), every invoice.* code of the
// spec and the ones Orquesta adds, the sim PAC's triggers, livemode rules, downloads checked with
// SAT's XSDs/XSLT and the Sello verified.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, type TestApp, until } from './helpers/app.js';
import { xsdValidate, xsltCadena } from './helpers/sat.js';
import { parseXml, attr } from '../formats/cfdi/xml.js';
import { verificarSello } from '../formats/cfdi/csd.js';
import { cadenaOriginal } from '../formats/cfdi/cadena.js';

let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const receptor = { rfc: 'EKU9003173C9', nombre: 'Escuela Kemper Urgate', uso_cfdi: 'G03', regimen_fiscal: '601', cp: '26015' };
export const profile = (extra: object = {}) => ({ rfc: 'AAA010101AAA', nombre: 'ACCEM SERVICIOS EMPRESARIALES SC', regimen_fiscal: '601', cp: '06600', serie: 'F', pac_provider: 'sim', ...extra });


/** A succeeded card charge of `amount` cents (test mode). */
async function charge(amount = 11600, key = ten.testKey, method = 'card', token = 'tok_sim_ok', tenantId = ten.id) {
  const pi = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: amount, currency: 'MXN' }, headers: idem() });
  await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key, body: { payment_token: token, payment_method: method }, headers: idem() });
  if (method !== 'card') {
    // a push payment: the payer pays outside; the operator simulates the incoming transfer
    const ra = (await until(() => a.call('GET', `/v1/payment_intents/${pi.body.id}?expand=attempts`, { key }), (r) => r.body.status === 'requires_action')).body;
    await a.admin('POST', `/admin/tenants/${tenantId}/simulate-inbound`, { provider_ref: ra.attempts[0].provider_ref });
  }
  return (await until(() => a.call('GET', `/v1/payment_intents/${pi.body.id}`, { key }), (r) => ['succeeded', 'failed'].includes(r.body.status))).body;
}
const post = (path: string, body: unknown, key = ten.testKey) => a.call('POST', path, { key, body, headers: idem() });
const invoice = (body: object, key = ten.testKey) => post('/v1/invoices', body, key);
const ppd = (total: number, extra: object = {}, key = ten.testKey) => post('/v1/invoices/ppd', { total_minor: total, receptor, ...extra }, key);

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000', SWEEP_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500' });
  ten = await a.newTenant('Cafetería La Esquina');
  const r = await a.call('PUT', '/v1/fiscal_profile', { key: ten.testKey, body: profile() });
  if (r.status !== 200) throw new Error(r.text);
});
t.teardown(() => a.stop());

t.test('PUE invoice of a charge: stamped, XML valid for SAT, cadena and Sello check, PDF', async (t) => {
  const pi = await charge(11600);
  const r = await invoice({ payment_intent_id: pi.id, receptor });
  t.equal(r.status, 201, r.text);
  const inv = r.body;
  t.match(inv, { object: 'invoice', status: 'stamped', payment_intent_id: pi.id, metodo_pago: 'PUE', pac: 'sim', currency: 'MXN', total_minor: 11600, base_minor: 10000, iva_minor: 1600, parcialidades: 0, livemode: false, serie: 'F' });
  t.match(inv.uuid_fiscal, /^[0-9A-F-]{36}$/);
  t.same(inv.receptor, { ...receptor, nombre: 'ESCUELA KEMPER URGATE' });
  t.equal(inv.saldo_insoluto_minor, undefined, 'PUE has no saldo');
  const got = await a.call('GET', `/v1/invoices/${inv.id}`, { key: ten.testKey });
  t.same(got.body, inv, 'GET answers the same invoice');
  const xml = await a.call('GET', `/v1/invoices/${inv.id}/xml`, { key: ten.testKey });
  t.equal(xml.status, 200);
  t.match(xml.headers.get('content-type'), /application\/xml/);
  const v = xsdValidate(xml.text);
  t.ok(v.ok, 'valid against SAT XSDs', { output: v.output });
  const doc = parseXml(xml.text);
  t.equal(cadenaOriginal(doc), xsltCadena(xml.text), 'cadena = SAT XSLT');
  t.ok(verificarSello(xsltCadena(xml.text), attr(doc, 'Sello')!, attr(doc, 'Certificado')!), 'Sello verifies with the certificate');
  t.match(xml.text, new RegExp(`UUID="${inv.uuid_fiscal}"`), 'TFD carries uuid_fiscal');
  t.match(xml.text, /FormaPago="04"/, 'card = 04');
  const pdf = await a.call('GET', `/v1/invoices/${inv.id}/pdf`, { key: ten.testKey });
  t.equal(pdf.status, 200);
  t.equal(pdf.headers.get('content-type'), 'application/pdf');
  t.equal(pdf.text.slice(0, 5), '%PDF-');
  // the bytes as sent (binary), read back by poppler: what a person sees
  const raw = Buffer.from(await (await fetch(`${a.url}/v1/invoices/${inv.id}/pdf`, { headers: { authorization: `Bearer ${ten.testKey}` } })).arrayBuffer());
  const dir = mkdtempSync(join(tmpdir(), 'orq-inv-'));
  writeFileSync(join(dir, 'f.pdf'), raw);
  const text = execFileSync('pdftotext', ['-layout', join(dir, 'f.pdf'), '-'], { encoding: 'utf8' });
  rmSync(dir, { recursive: true, force: true });
  t.ok(text.includes(inv.uuid_fiscal) && text.includes('CIENTO DIECISÉIS PESOS 00/100 M.N.'), 'the PDF shows the folio fiscal and the total in words');
  const ev = await a.app.deps.sql`select event_type, data from outbox_events where entity_id = ${inv.id}`;
  t.same(ev.map((e) => e.event_type), ['invoice.stamped'], 'invoice.stamped in the outbox');
  const hist = await a.app.deps.sql`select from_status, to_status from entity_history where entity_kind = 'invoice' and entity_id = ${inv.id} order by id`;
  t.same(hist.map((h) => `${h.from_status}->${h.to_status}`), ['null->pending', 'pending->stamped']);
});

t.test('concept lines: sum must equal the total; SAT-coherent split', async (t) => {
  const pi = await charge(20000);
  const bad = await invoice({ payment_intent_id: pi.id, receptor, conceptos: [{ descripcion: 'A', importe_minor: 100 }] });
  t.equal(bad.status, 400);
  t.equal(bad.body.error.code, 'invoice.conceptos_sum_mismatch');
  const ok = await invoice({ payment_intent_id: pi.id, receptor, conceptos: [{ descripcion: 'Café', importe_minor: 9999, clave_prod_serv: '50201706', clave_unidad: 'H87' }, { descripcion: 'Pan', importe_minor: 10001 }] });
  t.equal(ok.status, 201, ok.text);
  t.equal(ok.body.base_minor + ok.body.iva_minor, 20000);
  t.equal(ok.body.base_minor, 8620 + 8622, 'base = sum of per-line bases');
  const xml = (await a.call('GET', `/v1/invoices/${ok.body.id}/xml`, { key: ten.testKey })).text;
  t.ok(xsdValidate(xml).ok);
  t.match(xml, /ClaveProdServ="50201706"/);
});

t.test('invoice codes of the spec', async (t) => {
  const pi = await charge(11600);
  const cases: [string, object, string][] = [
    ['missing payment_intent_id', { receptor }, 'invoice.invalid_body'],
    ['malformed payment_intent_id', { payment_intent_id: 'nope', receptor }, 'invoice.invalid_body'],
    ['missing receptor', { payment_intent_id: pi.id }, 'invoice.invalid_receptor'],
    ['receptor without cp', { payment_intent_id: pi.id, receptor: { ...receptor, cp: undefined } }, 'invoice.invalid_receptor'],
    ['receptor with a malformed RFC', { payment_intent_id: pi.id, receptor: { ...receptor, rfc: 'ABC123' } }, 'invoice.invalid_receptor'],
    ['uso not admitted for the régimen', { payment_intent_id: pi.id, receptor: { ...receptor, uso_cfdi: 'D01' } }, 'invoice.invalid_receptor'],
    ['generic RFC without the triple', { payment_intent_id: pi.id, receptor: { ...receptor, rfc: 'XAXX010101000' } }, 'invoice.receptor_incoherente'],
    ['foreign generic RFC without the triple', { payment_intent_id: pi.id, receptor: { rfc: 'XEXX010101000', nombre: 'ACME INC', uso_cfdi: 'G03', regimen_fiscal: '616', cp: '06600' } }, 'invoice.receptor_incoherente'],
    ['unknown intent', { payment_intent_id: crypto.randomUUID(), receptor }, 'invoice.intent_not_found'],
  ];
  for (const [what, body, code] of cases) {
    const r = await invoice(body);
    t.equal(r.body.error?.code, code, what);
    t.equal(r.status, code.includes('not_found') ? 404 : 400, `${what}: HTTP`);
  }
  const other = await a.newTenant('other');
  const theirs = await charge(11600, other.testKey);
  t.equal((await invoice({ payment_intent_id: theirs.id, receptor })).body.error.code, 'invoice.intent_not_found', "another tenant's intent");
  const unpaid = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 500, currency: 'MXN' }, headers: idem() });
  t.equal((await invoice({ payment_intent_id: unpaid.body.id, receptor })).body.error.code, 'invoice.intent_not_succeeded');
  t.equal((await invoice({ payment_intent_id: theirs.id, receptor }, other.testKey)).body.error.code, 'invoice.fiscal_profile_missing', 'a tenant without profile');
  const noKey = await a.call('POST', '/v1/invoices', { key: ten.testKey, body: { payment_intent_id: pi.id, receptor } });
  t.equal(noKey.body.error.code, 'idempotency_key_required');
  const first = await invoice({ payment_intent_id: pi.id, receptor });
  t.equal(first.status, 201);
  const again = await invoice({ payment_intent_id: pi.id, receptor });
  t.equal(again.body.error.code, 'invoice.already_exists', 'one live invoice per charge');
  t.equal((await a.call('GET', `/v1/invoices/${crypto.randomUUID()}`, { key: ten.testKey })).body.error.code, 'invoice.not_found');
  t.equal((await a.call('GET', `/v1/invoices/${first.body.id}`, { key: other.testKey })).body.error.code, 'invoice.not_found', "another tenant's invoice");
  t.equal((await a.call('GET', `/v1/invoices/${first.body.id}`, { key: ten.liveKey })).body.error.code, 'invoice.not_found', 'the live key does not see test invoices');
});

t.test('the same Idempotency-Key replays the invoice', async (t) => {
  const pi = await charge(5000);
  const h = idem();
  const one = await a.call('POST', '/v1/invoices', { key: ten.testKey, body: { payment_intent_id: pi.id, receptor }, headers: h });
  const two = await a.call('POST', '/v1/invoices', { key: ten.testKey, body: { payment_intent_id: pi.id, receptor }, headers: h });
  t.equal(two.status, 201);
  t.equal(two.headers.get('idempotency-replayed'), 'true');
  t.same(two.body, one.body);
});

t.test('generic RFC with the triple: stamped; CFDI carries the issuer CP and InformacionGlobal', async (t) => {
  const pi = await charge(11600);
  const r = await invoice({ payment_intent_id: pi.id, receptor: { rfc: 'XAXX010101000', nombre: 'PUBLICO EN GENERAL', uso_cfdi: 'S01', regimen_fiscal: '616', cp: '99999' } });
  t.equal(r.status, 201, r.text);
  t.equal(r.body.receptor.cp, '06600', 'DomicilioFiscalReceptor = LugarExpedicion');
  const xml = (await a.call('GET', `/v1/invoices/${r.body.id}/xml`, { key: ten.testKey })).text;
  t.ok(xsdValidate(xml).ok);
  t.match(xml, /<cfdi:InformacionGlobal Periodicidad="01"/);
  t.match(xml, new RegExp(`NoIdentificacion="${pi.receipt_code}"`), 'the receipt code identifies the sale');
});

t.test('sim PAC triggers; a rejected stamp is not live and a corrected request stamps', async (t) => {
  const pi = await charge(11600);
  const rej = await invoice({ payment_intent_id: pi.id, receptor: { ...receptor, nombre: 'PAC ERROR' } });
  t.equal(rej.status, 400);
  t.equal(rej.body.error.code, 'invoice.pac_error');
  const failedId = /invoice ([0-9a-f-]{36})/.exec(rej.body.error.message)?.[1];
  t.ok(failedId, 'the message names the invoice');
  const failed = await a.call('GET', `/v1/invoices/${failedId}`, { key: ten.testKey });
  t.equal(failed.body.status, 'error');
  t.match(failed.body.error_detail, /invoice\.pac_error: SIM-301/);
  t.equal(failed.body.uuid_fiscal, undefined);
  t.equal((await a.call('GET', `/v1/invoices/${failedId}/xml`, { key: ten.testKey })).body.error.code, 'invoice.not_stamped');
  t.equal((await a.call('GET', `/v1/invoices/${failedId}/pdf`, { key: ten.testKey })).body.error.code, 'invoice.not_stamped');
  for (const [nombre, code] of [['PAC UNREACHABLE', 'invoice.pac_unreachable'], ['PAC BAD RESPONSE', 'invoice.pac_bad_response'], ['PAC NO UUID', 'invoice.pac_no_uuid']]) {
    const r = await invoice({ payment_intent_id: pi.id, receptor: { ...receptor, nombre } });
    t.equal(r.body.error?.code, code, nombre);
    const id = /Invoice ([0-9a-f-]{36})/.exec(r.body.error.message)?.[1];
    t.equal((await a.call('GET', `/v1/invoices/${id}`, { key: ten.testKey })).body.status, 'pending', `${nombre}: stays pending (the answer is unknown)`);
  }
  const ok = await invoice({ payment_intent_id: pi.id, receptor });
  t.equal(ok.status, 201, 'a corrected request stamps (the pending one is settled with the PAC first)');
  const rows = await a.app.deps.sql`select status from invoices where payment_intent_id = ${pi.id} order by created_at`;
  t.same(rows.map((r) => r.status), ['error', 'error', 'error', 'error', 'stamped']);
});

t.test('a lost PAC answer is settled by the reconciler (job invoice.resolve) without any request', async (t) => {
  const pi = await charge(11600);
  const r = await invoice({ payment_intent_id: pi.id, receptor: { ...receptor, nombre: 'PAC UNREACHABLE' } });
  t.equal(r.body.error.code, 'invoice.pac_unreachable');
  const id = /Invoice ([0-9a-f-]{36})/.exec(r.body.error.message)![1];
  const settled = await until(() => a.call('GET', `/v1/invoices/${id}`, { key: ten.testKey }), (x) => x.body.status !== 'pending', 20_000);
  t.equal(settled.body.status, 'error', 'the sim never stamped it: error, not live');
  t.match(settled.body.error_detail, /never stamped/);
  const hist = await a.app.deps.sql`select event from entity_history where entity_id = ${id} order by id`;
  t.same(hist.map((h) => h.event), ['created', 'pac.not_stamped']);
});

t.test('livemode rules and PAC credentials', async (t) => {
  const t2 = await a.newTenant('modes');
  await a.call('PUT', '/v1/fiscal_profile', { key: t2.testKey, body: profile({ pac_provider: 'finkok', pac_user: 'u', pac_password: 'p' }) });
  const pi = await charge(11600, t2.testKey);
  t.equal((await invoice({ payment_intent_id: pi.id, receptor }, t2.testKey)).body.error.code, 'invoice.livemode_mismatch', 'test mode with a real PAC');
  await a.call('PUT', '/v1/fiscal_profile', { key: t2.liveKey, body: profile({ pac_provider: 'sim' }) });
  t.equal((await ppd(11600, {}, t2.liveKey)).body.error.code, 'invoice.livemode_mismatch', 'live mode with the sim');
  await a.call('PUT', '/v1/fiscal_profile', { key: t2.liveKey, body: profile({ pac_provider: 'finkok' }) });
  t.equal((await ppd(11600, {}, t2.liveKey)).body.error.code, 'invoice.pac_credentials_missing');
  await a.call('PUT', '/v1/fiscal_profile', { key: t2.liveKey, body: profile({ pac_provider: 'finkok', pac_user: 'someone' }) });
  t.equal((await ppd(11600, {}, t2.liveKey)).body.error.code, 'invoice.pac_credentials_incomplete');
  await a.call('PUT', '/v1/fiscal_profile', { key: t2.liveKey, body: profile({ pac_provider: 'finkok', pac_user: 'someone', pac_password: 'x' }) });
  t.equal((await ppd(11600, {}, t2.liveKey)).body.error.code, 'invoice.csd_missing', 'live mode never seals with the public test CSD');
  t.equal((await ppd(11600, { currency: 'USD' })).body.error.code, 'invoice.invalid_currency');
  t.equal((await ppd(0)).body.error.code, 'invoice.invalid_body');
});

t.test('PPD and payment complements: the chain, the list, over-payment, codes', async (t) => {
  const r = await ppd(100000, { descripcion: 'Proyecto de remodelación' });
  t.equal(r.status, 201, r.text);
  t.match(r.body, { metodo_pago: 'PPD', status: 'stamped', saldo_insoluto_minor: 100000, parcialidades: 0, total_minor: 100000 });
  const ppdXml = (await a.call('GET', `/v1/invoices/${r.body.id}/xml`, { key: ten.testKey })).text;
  t.match(ppdXml, /FormaPago="99"/);
  t.match(ppdXml, /MetodoPago="PPD"/);
  const p1 = await charge(30000, ten.testKey, 'spei');
  const rep1 = await post(`/v1/invoices/${r.body.id}/payments`, { payment_intent_id: p1.id });
  t.equal(rep1.status, 201, rep1.text);
  t.match(rep1.body, { object: 'invoice_payment', invoice_id: r.body.id, payment_intent_id: p1.id, parcialidad: 1, monto_minor: 30000, saldo_anterior_minor: 100000, saldo_insoluto_minor: 70000, status: 'stamped', currency: 'MXN' });
  t.match(rep1.body.rep_uuid, /^[0-9A-F-]{36}$/);
  const again = await post(`/v1/invoices/${r.body.id}/payments`, { payment_intent_id: p1.id });
  t.equal(again.status, 200, 'the same charge again: its complement (idempotent per invoice and charge)');
  t.equal(again.body.id, rep1.body.id);
  const big = await charge(80000);
  const over = await post(`/v1/invoices/${r.body.id}/payments`, { payment_intent_id: big.id });
  t.equal(over.body.error.code, 'invoice.payment_exceeds_balance');
  t.match(over.body.error.message, /saldo_insoluto_minor = 70000/);
  const p2 = await charge(70000);
  const rep2 = await post(`/v1/invoices/${r.body.id}/payments`, { payment_intent_id: p2.id });
  t.match(rep2.body, { parcialidad: 2, saldo_anterior_minor: 70000, saldo_insoluto_minor: 0 });
  const list = await a.call('GET', `/v1/invoices/${r.body.id}/payments`, { key: ten.testKey });
  t.equal(list.body.object, 'list');
  t.same(list.body.data.map((x: any) => x.parcialidad), [1, 2]);
  const inv = await a.call('GET', `/v1/invoices/${r.body.id}`, { key: ten.testKey });
  t.match(inv.body, { saldo_insoluto_minor: 0, parcialidades: 2 });
  const [repXml] = await a.app.deps.sql`select xml from invoice_payments where id = ${rep2.body.id}`;
  const v = xsdValidate(repXml.xml);
  t.ok(v.ok, 'REP valid against SAT XSDs (Pagos 2.0)', { output: v.output });
  t.match(repXml.xml, new RegExp(`IdDocumento="${r.body.uuid_fiscal}"`));
  t.match(repXml.xml, /NumParcialidad="2" ImpSaldoAnt="700.00" ImpPagado="700.00" ImpSaldoInsoluto="0.00"/);
  const nothingLeft = await post(`/v1/invoices/${r.body.id}/payments`, { payment_intent_id: (await charge(100)).id });
  t.equal(nothingLeft.body.error.code, 'invoice.payment_exceeds_balance');
  // codes
  const pue = await invoice({ payment_intent_id: (await charge(1000)).id, receptor });
  t.equal((await post(`/v1/invoices/${pue.body.id}/payments`, { payment_intent_id: (await charge(100)).id })).body.error.code, 'invoice.not_ppd');
  t.equal((await post(`/v1/invoices/${r.body.id}/payments`, {})).body.error.code, 'invoice.invalid_body');
  t.equal((await post(`/v1/invoices/${crypto.randomUUID()}/payments`, { payment_intent_id: p1.id })).body.error.code, 'invoice.not_found');
  const r3 = await ppd(50000);
  t.equal((await post(`/v1/invoices/${r3.body.id}/payments`, { payment_intent_id: crypto.randomUUID() })).body.error.code, 'invoice.intent_not_found');
  t.equal((await post(`/v1/invoices/${r3.body.id}/payments`, { payment_intent_id: p1.id })).body.error.code, 'invoice.payment_already_applied', 'a charge pays once');
  t.equal((await post(`/v1/invoices/${r3.body.id}/payments`, { payment_intent_id: pue.body.payment_intent_id })).body.error.code, 'invoice.payment_already_applied', 'a charge with its own invoice');
  t.equal((await invoice({ payment_intent_id: p2.id, receptor })).body.error.code, 'invoice.payment_already_applied', 'a REP charge is not invoiced again');
});

t.test('concurrent invoices of a tenant take distinct folios (the folio commits asynchronously)', async (t) => {
  const charges = await Promise.all([1, 2, 3, 4, 5, 6].map(() => charge(11600)));
  const res = await Promise.all(charges.map((c) => invoice({ payment_intent_id: c.id, receptor })));
  t.same(res.map((r) => r.status), res.map(() => 201), res.map((r) => r.text).join('\n'));
  const folios = res.map((r) => r.body.folio as string);
  t.equal(new Set(folios).size, folios.length, `no folio twice: ${folios.join(', ')}`);
  const xmls = await Promise.all(res.map((r) => a.call('GET', `/v1/invoices/${r.body.id}/xml`, { key: ten.testKey })));
  t.ok(xmls.every((x, i) => x.text.includes(`Folio="${folios[i]}"`)), 'each CFDI carries its folio');
});

t.test('concurrent payment complements never break the chain', async (t) => {
  const r = await ppd(60000);
  const charges = await Promise.all([10000, 10000, 10000, 10000, 10000, 10000, 10000].map((m) => charge(m)));
  const res = await Promise.all(charges.map((c) => post(`/v1/invoices/${r.body.id}/payments`, { payment_intent_id: c.id })));
  const ok = res.filter((x) => x.status === 201).map((x) => x.body);
  const refused = res.filter((x) => x.status !== 201).map((x) => x.body.error.code);
  t.equal(ok.length, 6, 'six fit the balance');
  t.same(refused, ['invoice.payment_exceeds_balance'], 'the seventh is over the balance');
  ok.sort((x: any, y: any) => x.parcialidad - y.parcialidad);
  t.same(ok.map((x: any) => x.parcialidad), [1, 2, 3, 4, 5, 6], 'parcialidades 1..6, none repeated');
  for (let i = 0; i < ok.length; i++) {
    t.equal(ok[i].saldo_anterior_minor, i === 0 ? 60000 : ok[i - 1].saldo_insoluto_minor, `parcialidad ${i + 1}: saldo anterior = the previous saldo insoluto`);
    t.equal(ok[i].saldo_insoluto_minor, ok[i].saldo_anterior_minor - ok[i].monto_minor);
  }
  t.equal((await a.call('GET', `/v1/invoices/${r.body.id}`, { key: ten.testKey })).body.saldo_insoluto_minor, 0);
});

t.test('cancellation: motives, folio_sustitucion, a cancelled invoice is not stamped', async (t) => {
  const r = await ppd(20000);
  t.equal((await post(`/v1/invoices/${r.body.id}/cancel`, { motivo: '01' })).body.error.code, 'invoice.folio_sustitucion_required');
  t.equal((await post(`/v1/invoices/${r.body.id}/cancel`, { motivo: '05' })).body.error.code, 'invoice.invalid_body');
  t.equal((await post(`/v1/invoices/${r.body.id}/cancel`, { motivo: '02', folio_sustitucion: crypto.randomUUID() })).body.error.code, 'invoice.invalid_body');
  t.equal((await post(`/v1/invoices/${r.body.id}/cancel`, {})).body.error.code, 'invoice.invalid_body');
  // Motivo 01 as SAT orders it (issue 27): the replacement first, relating this invoice (TipoRelacion 04)
  t.equal((await post(`/v1/invoices/${r.body.id}/cancel`, { motivo: '01', folio_sustitucion: (await ppd(20000)).body.uuid_fiscal })).body.error.code, 'invoice.invalid_folio_sustitucion', 'an unrelated CFDI is no replacement');
  const replacement = await ppd(20000, { replaces: r.body.id });
  const c = await post(`/v1/invoices/${r.body.id}/cancel`, { motivo: '01', folio_sustitucion: replacement.body.uuid_fiscal });
  t.equal(c.status, 200, c.text);
  t.match(c.body, { object: 'invoice_cancellation', invoice_id: r.body.id, motivo: '01', status: 'cancelled', folio_sustitucion: replacement.body.uuid_fiscal });
  t.ok(c.body.acuse, 'the SAT acknowledgment');
  const got = await a.call('GET', `/v1/invoices/${r.body.id}`, { key: ten.testKey });
  t.equal(got.body.status, 'cancelled', 'no longer stamped');
  t.equal((await post(`/v1/invoices/${r.body.id}/payments`, { payment_intent_id: (await charge(100)).id })).body.error.code, 'invoice.not_stamped', 'a REP against a cancelled invoice');
  t.equal((await post(`/v1/invoices/${r.body.id}/credit-notes`, { total_minor: 100 })).body.error.code, 'invoice.not_stamped');
  const twice = await post(`/v1/invoices/${r.body.id}/cancel`, { motivo: '02' });
  t.equal(twice.body.id, c.body.id, 'asking again answers the same cancellation');
  t.equal((await a.call('GET', `/v1/invoices/${r.body.id}/xml`, { key: ten.testKey })).status, 200, 'the XML of a cancelled invoice stays downloadable');
  const pi = await charge(11600);
  const pue = await invoice({ payment_intent_id: pi.id, receptor });
  const c2 = await post(`/v1/invoices/${pue.body.id}/cancel`, { motivo: '02' });
  t.equal(c2.body.status, 'cancelled');
  const reissue = await invoice({ payment_intent_id: pi.id, receptor });
  t.equal(reissue.status, 201, 'a cancelled invoice is not live: the charge may be invoiced again');
  const ev = await a.app.deps.sql`select event_type from outbox_events where entity_id = ${pue.body.id} order by id`;
  t.same(ev.map((e) => e.event_type), ['invoice.stamped', 'invoice.cancelled']);
});

t.test('credit notes: egreso related with TipoRelacion 01; the live sum never exceeds the total, also concurrently', async (t) => {
  const pi = await charge(10000);
  const inv = (await invoice({ payment_intent_id: pi.id, receptor })).body;
  const n1 = await post(`/v1/invoices/${inv.id}/credit-notes`, { total_minor: 4000, motivo: 'Descuento por pronto pago' });
  t.equal(n1.status, 200, n1.text);
  t.match(n1.body, { object: 'credit_note', invoice_id: inv.id, total_minor: 4000, status: 'stamped' });
  const [note] = await a.app.deps.sql`select xml from credit_notes where id = ${n1.body.id}`;
  t.ok(xsdValidate(note.xml).ok, 'egreso valid against SAT XSDs');
  t.match(note.xml, new RegExp(`<cfdi:CfdiRelacionados TipoRelacion="01"><cfdi:CfdiRelacionado UUID="${inv.uuid_fiscal}"/>`));
  t.match(note.xml, /TipoDeComprobante="E"/);
  const over = await post(`/v1/invoices/${inv.id}/credit-notes`, { total_minor: 6001 });
  t.equal(over.body.error.code, 'invoice.credit_note_exceeds_total');
  t.match(over.body.error.message, /6000 more cents/);
  t.equal((await post(`/v1/invoices/${inv.id}/credit-notes`, { total_minor: 0 })).body.error.code, 'invoice.invalid_body');
  // concurrently: 5 notes of 2,000 against the 6,000 left: exactly 3 fit
  const res = await Promise.all([1, 2, 3, 4, 5].map(() => post(`/v1/invoices/${inv.id}/credit-notes`, { total_minor: 2000 })));
  t.equal(res.filter((r) => r.status === 200).length, 3, 'three fit');
  t.same(res.filter((r) => r.status !== 200).map((r) => r.body.error.code), ['invoice.credit_note_exceeds_total', 'invoice.credit_note_exceeds_total']);
  const [sum] = await a.app.deps.sql`select sum(total_minor)::int as s from credit_notes where invoice_id = ${inv.id} and status = 'stamped'`;
  t.equal(sum.s, 10000, 'the live credit notes add up to the total, not more');
  t.equal((await a.call('GET', `/v1/invoices/${inv.id}`, { key: ten.testKey })).body.credited_minor, 10000);
});

t.test('internal API for receivables: idempotent per charge and per (invoice, charge)', async (t) => {
  const inv = a.app.deps.invoices;
  const pi = await charge(11600);
  const one = await inv.stampPueForCharge({ tenantId: ten.id, livemode: false, paymentIntentId: pi.id, receptor });
  const two = await inv.stampPueForCharge({ tenantId: ten.id, livemode: false, paymentIntentId: pi.id, receptor });
  t.equal(one.status, 'stamped');
  t.equal(two.id, one.id, 'the same invoice for the same charge');
  await t.rejects(inv.stampPueForCharge({ tenantId: ten.id, livemode: false, paymentIntentId: pi.id, receptor: { ...receptor, rfc: 'CACX7605101P8', regimen_fiscal: '612' } }), { code: 'invoice.already_exists' }, 'another receptor for an invoiced charge');
  const p = await ppd(20000);
  const pay = await charge(5000);
  const r1 = await inv.stampRepForCharge({ tenantId: ten.id, livemode: false, invoiceId: p.body.id, paymentIntentId: pay.id });
  const r2 = await inv.stampRepForCharge({ tenantId: ten.id, livemode: false, invoiceId: p.body.id, paymentIntentId: pay.id });
  t.match(r1, { object: 'invoice_payment', parcialidad: 1, saldo_insoluto_minor: 15000, status: 'stamped' });
  t.equal(r2.id, r1.id, 'the same complement for the same (invoice, charge)');
  t.equal((await a.call('GET', `/v1/invoices/${p.body.id}`, { key: ten.testKey })).body.parcialidades, 1);
});
