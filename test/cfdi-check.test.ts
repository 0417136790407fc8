// Issue 27, "done means": every kind of CFDI the service stamps, issued through the API as a tenant
// would and downloaded from GET /v1/invoices/{id}/xml, passes SAT's own checks: the shared
// ../shared/sat/offline/check-cfdi.sh (XSD of CFDI 4.0, Pagos 2.0 and TFD 1.1, and the cadena by SAT's
// cadenaoriginal_4_0.xslt; the repository's copies of the same files in test/sat where the shared
// one is absent), the Sello over SAT's cadena with the document's own certificate, and the
// TimbreFiscalDigital's SelloSAT over the cadena of SAT's cadenaoriginal_TFD_1_1.xslt. Kinds: PUE at
// 16 % with a tip, PUE with IVA 0 %, exento, 8 %, ObjetoImp 01, Cantidad and Descuento, a global
// invoice, a replacement (CfdiRelacionados 04), a PPD with retenciones of ISR and IVA, its REP, a
// credit note on it and the REP after the credit note (ImpSaldoAnt net of it), a credit note of the
// mixed invoice.
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verificarSello } from '../formats/cfdi/csd.js';
import { buscarTimbre } from '../formats/cfdi/tfd.js';
import { NS, attr, kid, kids, parseXml, serialize } from '../formats/cfdi/xml.js';
import { testCsd } from '../connectors/pac/test-csd.js';
import { xsdValidate, xsltCadena, xsltCadenaTfd } from './helpers/sat.js';
import { startTestApp, type TestApp, until } from './helpers/app.js';

const SHARED_CHECK = '/work/shared/sat/offline/check-cfdi.sh';
const pacCert = testCsd(false).certificado;

let a: TestApp;
let key: string;
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const post = (path: string, body: unknown) => a.call('POST', path, { key, body, headers: idem() });
const get = (path: string) => a.call('GET', path, { key });
const receptor = { rfc: 'EKU9003173C9', nombre: 'Escuela Kemper Urgate', uso_cfdi: 'G03', regimen_fiscal: '601', cp: '26015' };
const publico = { rfc: 'XAXX010101000', nombre: 'PUBLICO EN GENERAL', uso_cfdi: 'S01', regimen_fiscal: '616', cp: '06600' };

async function charge(amount: number, tip = 0) {
  const pi = await post('/v1/payment_intents', { amount_minor: amount, currency: 'MXN', tip_minor: tip });
  await post(`/v1/payment_intents/${pi.body.id}/confirm`, { payment_token: 'tok_sim_ok', payment_method: 'card' });
  const done = (await until(() => get(`/v1/payment_intents/${pi.body.id}`), (r) => ['succeeded', 'failed'].includes(r.body.status))).body;
  if (done.status !== 'succeeded') throw new Error(`charge ${pi.body.id} ${done.status}`);
  return done.id as string;
}

/** SAT's checks of one downloaded CFDI; returns the parsed document. */
async function satAccepts(t: Test, id: string, label: string) {
  const res = await get(`/v1/invoices/${id}/xml`);
  t.equal(res.status, 200, `${label}: downloadable (${res.text.slice(0, 120)})`);
  const xml = res.text;
  let cadena: string;
  if (existsSync(SHARED_CHECK)) {
    const dir = mkdtempSync(join(tmpdir(), 'orq-cfdi-check-'));
    try {
      writeFileSync(join(dir, 'cfdi.xml'), xml);
      const r = (() => {
        try {
          return { ok: true, out: execFileSync('bash', [SHARED_CHECK, join(dir, 'cfdi.xml')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
        } catch (e) {
          return { ok: false, out: String((e as { stderr?: string }).stderr ?? e) };
        }
      })();
      t.ok(r.ok, `${label}: check-cfdi.sh passes (SAT's XSDs and cadena XSLT)`, { output: r.out });
      cadena = r.ok ? r.out : '';
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  } else {
    const v = xsdValidate(xml);
    t.ok(v.ok, `${label}: valid against SAT's XSDs (test/sat)`, { output: v.output });
    cadena = xsltCadena(xml);
  }
  const doc = parseXml(xml);
  t.ok(cadena.startsWith('||4.0|'), `${label}: SAT's cadena original`);
  t.ok(verificarSello(cadena, attr(doc, 'Sello')!, attr(doc, 'Certificado')!), `${label}: the Sello verifies over SAT's cadena with the document's certificate`);
  const tfd = buscarTimbre(doc);
  t.ok(tfd, `${label}: stamped (TimbreFiscalDigital)`);
  if (tfd) t.ok(verificarSello(xsltCadenaTfd(serialize(tfd)), attr(tfd, 'SelloSAT')!, pacCert), `${label}: SelloSAT verifies over SAT's TFD cadena`);
  return doc;
}

const pagoDocto = (doc: ReturnType<typeof parseXml>) => {
  const pagos = kid(kid(doc, NS.cfdi, 'Complemento')!, NS.pago20, 'Pagos')!;
  return kid(kid(pagos, NS.pago20, 'Pago')!, NS.pago20, 'DoctoRelacionado')!;
};

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000' });
  const ten = await a.newTenant('Revisión SAT');
  key = ten.testKey;
  const r = await a.call('PUT', '/v1/fiscal_profile', { key, body: { rfc: 'AAA010101AAA', nombre: 'ACCEM SERVICIOS EMPRESARIALES SC', regimen_fiscal: '601', cp: '06600', serie: 'F', pac_provider: 'sim' } });
  if (r.status !== 200) throw new Error(r.text);
});
t.teardown(() => a.stop());

t.test('ingresos PUE: 16 % with a tip, mixed tax lines, global, replacement (04), and a credit note', async (t) => {
  const pue = await post('/v1/invoices', { payment_intent_id: await charge(11600, 1500), receptor });
  t.equal(pue.status, 201, pue.text);
  const d1 = await satAccepts(t, pue.body.id, 'PUE 16 %');
  t.equal(attr(d1, 'Total'), '116.00', 'the tip is not in the CFDI');

  const mixed = await post('/v1/invoices', {
    payment_intent_id: await charge(61465),
    receptor,
    conceptos: [
      { descripcion: 'Servicio', cantidad: '3', valor_unitario_minor: 10000, descuento_minor: 3000 },
      { descripcion: 'Alimento', importe_minor: 5000, iva: '0' },
      { descripcion: 'Libro', valor_unitario_minor: 12345, iva: 'exento' },
      { descripcion: 'Venta en frontera', importe_minor: 10800, iva: '8' },
      { descripcion: 'Cuota', valor_unitario_minor: 2000, objeto_imp: '01' },
    ],
  });
  t.equal(mixed.status, 201, mixed.text);
  const d2 = await satAccepts(t, mixed.body.id, 'PUE IVA 16/8/0/exento, ObjetoImp 01, Cantidad, Descuento');
  const factores = kids(kid(kid(d2, NS.cfdi, 'Impuestos')!, NS.cfdi, 'Traslados')!, NS.cfdi, 'Traslado').map((x) => `${attr(x, 'TipoFactor')} ${attr(x, 'TasaOCuota') ?? ''}`.trim());
  t.same(factores, ['Tasa 0.160000', 'Tasa 0.080000', 'Tasa 0.000000', 'Exento']);

  const glob = await post('/v1/invoices', { payment_intent_id: await charge(5800), receptor: publico });
  t.equal(glob.status, 201, glob.text);
  const d3 = await satAccepts(t, glob.body.id, 'global (público en general)');
  t.ok(kid(d3, NS.cfdi, 'InformacionGlobal'), 'InformacionGlobal present');

  const repl = await post('/v1/invoices', { payment_intent_id: pue.body.payment_intent_id, receptor, replaces: pue.body.id });
  t.equal(repl.status, 201, repl.text);
  const d4 = await satAccepts(t, repl.body.id, 'replacement (CfdiRelacionados 04)');
  const rel = kid(d4, NS.cfdi, 'CfdiRelacionados')!;
  t.equal(attr(rel, 'TipoRelacion'), '04');
  t.equal(attr(kid(rel, NS.cfdi, 'CfdiRelacionado')!, 'UUID'), pue.body.uuid_fiscal);

  const nc = await post(`/v1/invoices/${mixed.body.id}/credit-notes`, { total_minor: 6146, motivo: 'Bonificación' });
  t.equal(nc.status, 200, nc.text);
  const d5 = await satAccepts(t, nc.body.id, 'credit note of the mixed invoice (egreso, 01)');
  t.equal(attr(d5, 'TipoDeComprobante'), 'E');
});

t.test('PPD with retenciones, its REP, a credit note, and the REP after the credit note', async (t) => {
  // Honorarios of 10,000.00 before taxes: IVA 1,600.00, ISR withheld 1,000.00, IVA withheld 1,066.67.
  const ppd = await post('/v1/invoices/ppd', {
    total_minor: 953_333,
    receptor,
    conceptos: [{ descripcion: 'Honorarios', valor_unitario_minor: 1_000_000, retenciones: [{ impuesto: 'isr', tasa: '0.100000' }, { impuesto: 'iva', tasa: '0.106667' }] }],
  });
  t.equal(ppd.status, 201, ppd.text);
  const d1 = await satAccepts(t, ppd.body.id, 'PPD with retenciones');
  t.equal(attr(kid(d1, NS.cfdi, 'Impuestos')!, 'TotalImpuestosRetenidos'), '2066.67');

  const rep1 = await post(`/v1/invoices/${ppd.body.id}/payments`, { payment_intent_id: await charge(400_000) });
  t.equal(rep1.status, 201, rep1.text);
  const r1 = await satAccepts(t, rep1.body.id, 'REP 1');
  t.match(Object.fromEntries(pagoDocto(r1).attrs), { NumParcialidad: '1', ImpSaldoAnt: '9533.33', ImpPagado: '4000.00', ImpSaldoInsoluto: '5533.33' });

  const nc = await post(`/v1/invoices/${ppd.body.id}/credit-notes`, { total_minor: 53_333, motivo: 'Descuento por pronto pago' });
  t.equal(nc.status, 200, nc.text);
  await satAccepts(t, nc.body.id, 'credit note of the PPD with retenciones');

  const rep2 = await post(`/v1/invoices/${ppd.body.id}/payments`, { payment_intent_id: await charge(500_000) });
  t.equal(rep2.status, 201, rep2.text);
  const r2 = await satAccepts(t, rep2.body.id, 'REP after the credit note');
  t.match(Object.fromEntries(pagoDocto(r2).attrs), { NumParcialidad: '2', ImpSaldoAnt: '5000.00', ImpPagado: '5000.00', ImpSaldoInsoluto: '0.00' }, 'ImpSaldoAnt net of the credit note');
  t.equal((await get(`/v1/invoices/${ppd.body.id}`)).body.saldo_insoluto_minor, 0);
});
