// Issue 27, defect 5: the tax model per concept (IVA 16/8/0/exento, ObjetoImp 01/02/03,
// retenciones of ISR and IVA including RESICO's 1.25 %, Descuento, Cantidad × ValorUnitario) in
// documents SAT accepts (XSD, the cadena of SAT's XSLT, the Sello; and the shared check-cfdi.sh when
// present), payment complements and credit notes of such invoices; through the API: the tip is not
// invoiced, a debit card is FormaPago 28, a RESICO issuer invoicing a persona moral withholds 1.25 %.
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cadenaOriginal } from '../formats/cfdi/cadena.js';
import { construirEgreso, construirIngreso, construirPago, sellarComprobante, type Emisor, type Receptor } from '../formats/cfdi/comprobante.js';
import { loadCsd, verificarSello, type Csd } from '../formats/cfdi/csd.js';
import { calcular, lineasParaTotal, type ConceptoFiscal } from '../formats/cfdi/impuestos.js';
import { NS, attr, kid, kids, parseXml } from '../formats/cfdi/xml.js';
import { SimPac } from '../connectors/pac/sim.js';
import { testCsd } from '../connectors/pac/test-csd.js';
import { xsdValidate, xsltCadena } from './helpers/sat.js';
import { makeCsd } from './helpers/csd-gen.js';
import { startTestApp, type TestApp, until } from './helpers/app.js';

const csd = testCsd(false);
const emisor: Emisor = { rfc: 'AAA010101AAA', nombre: 'ACCEM SERVICIOS EMPRESARIALES SC', regimenFiscal: '601' };
const receptor: Receptor = { rfc: 'EKU9003173C9', nombre: 'ESCUELA KEMPER URGATE', cp: '26015', regimenFiscal: '601', usoCfdi: 'G03' };
const fecha = new Date('2026-11-02T18:04:05Z');
const pac = new SimPac();
const SHARED_CHECK = '/work/shared/sat/offline/check-cfdi.sh';
const gen = makeCsd('XIQB891116QE4', 'BERENICE XIMO QUEZADA');
const resicoCsd: Csd = loadCsd(gen);
const resico: Emisor = { rfc: 'XIQB891116QE4', nombre: 'BERENICE XIMO QUEZADA', regimenFiscal: '626' };

async function check(t: Test, doc: ReturnType<typeof construirIngreso>['doc'], label: string, key: Csd = csd) {
  const sealed = sellarComprobante(doc, key);
  t.equal(xsltCadena(sealed.xml), sealed.cadena, `${label}: cadena equals SAT's XSLT`);
  const out = await pac.stamp({ xml: sealed.xml, livemode: false, credentials: {}, now: new Date(fecha.getTime() + 4000) });
  if (out.kind !== 'stamped') throw new Error(`${label}: ${out.code} ${out.message}`);
  const v = xsdValidate(out.xml);
  t.ok(v.ok, `${label}: valid against SAT's XSDs`, { output: v.output });
  const parsed = parseXml(out.xml);
  t.ok(verificarSello(cadenaOriginal(parsed), attr(parsed, 'Sello')!, attr(parsed, 'Certificado')!), `${label}: Sello verifies`);
  if (existsSync(SHARED_CHECK)) {
    const dir = mkdtempSync(join(tmpdir(), 'orq-chk-'));
    try {
      writeFileSync(join(dir, 'd.xml'), out.xml);
      const cad = execFileSync('bash', [SHARED_CHECK, join(dir, 'd.xml')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      t.equal(cad, sealed.cadena, `${label}: check-cfdi.sh passes (XSD + cadena)`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return parsed;
}

const mixed: ConceptoFiscal[] = [
  { descripcion: 'Servicio', cantidad: '3', valorUnitarioMinor: 10000, descuentoMinor: 3000 },
  { descripcion: 'Alimento', importeMinor: 5000, iva: '0' },
  { descripcion: 'Libro', valorUnitarioMinor: 12345, iva: 'exento' },
  { descripcion: 'Venta en frontera', importeMinor: 10800, iva: '8' },
  { descripcion: 'Cuota', valorUnitarioMinor: 2000, objetoImp: '01' },
];

t.test('mixed IVA 16/0/exento/8, ObjetoImp 01, Cantidad and Descuento: SAT accepts it, sums to the cent', async (t) => {
  const c = calcular(mixed);
  t.match(c, { subtotalMinor: 59345, descuentoMinor: 3000, totalTrasladosMinor: 5120, totalRetencionesMinor: 0, totalMinor: 61465 });
  t.match(c.lineas[0], { cantidad: '3', valorUnitario: '100.00', importeMinor: 30000, descuentoMinor: 3000, baseMinor: 27000, traslado: { tasa: '0.160000', importeMinor: 4320 } });
  const b = construirIngreso({ serie: 'F', folio: '101', fecha, lugarExpedicion: '06600', emisor, receptor, metodoPago: 'PUE', formaPago: '03', conceptos: mixed });
  const doc = await check(t, b.doc, 'mixed');
  t.match(Object.fromEntries(doc.attrs), { SubTotal: '593.45', Descuento: '30.00', Total: '614.65' });
  const tras = kids(kid(kid(doc, NS.cfdi, 'Impuestos')!, NS.cfdi, 'Traslados')!, NS.cfdi, 'Traslado').map((x) => Object.fromEntries(x.attrs));
  t.same(tras, [
    { Base: '270.00', Impuesto: '002', TipoFactor: 'Tasa', TasaOCuota: '0.160000', Importe: '43.20' },
    { Base: '100.00', Impuesto: '002', TipoFactor: 'Tasa', TasaOCuota: '0.080000', Importe: '8.00' },
    { Base: '50.00', Impuesto: '002', TipoFactor: 'Tasa', TasaOCuota: '0.000000', Importe: '0.00' },
    { Base: '123.45', Impuesto: '002', TipoFactor: 'Exento' },
  ]);
  t.equal(attr(kid(doc, NS.cfdi, 'Impuestos')!, 'TotalImpuestosTrasladados'), '51.20');
  const conceptos = kids(kid(doc, NS.cfdi, 'Conceptos')!, NS.cfdi, 'Concepto');
  t.equal(attr(conceptos[4]!, 'ObjetoImp'), '01');
  t.notOk(kid(conceptos[4]!, NS.cfdi, 'Impuestos'), 'ObjetoImp 01 carries no taxes');

  const nota = construirEgreso({ serie: 'NC', folio: '7', fecha, lugarExpedicion: '06600', emisor, receptor, formaPago: '03', relacionados: ['0A1B2C3D-0000-4000-8000-000000000001'], totalMinor: 6146, descripcion: 'Bonificación', impuestos: b.impuestos });
  t.equal(nota.totalMinor, 6146, 'the credit note totals what was asked');
  await check(t, nota.doc, 'credit note of the mixed invoice (one line per tax group)');
});

t.test('retenciones (honorarios: ISR 10 %, IVA 2/3) and a REP of such a PPD invoice', async (t) => {
  const lines: ConceptoFiscal[] = [{ descripcion: 'Honorarios', valorUnitarioMinor: 1_000_000, retencionIsr: '0.100000', retencionIva: '0.106667' }];
  const c = calcular(lines);
  t.match(c, { subtotalMinor: 1_000_000, totalTrasladosMinor: 160_000, totalRetencionesMinor: 206_667, totalMinor: 953_333 });
  t.same(c.retenciones, [{ impuesto: '001', importeMinor: 100_000 }, { impuesto: '002', importeMinor: 106_667 }]);
  const b = construirIngreso({ serie: 'P', folio: '5', fecha, lugarExpedicion: '06600', emisor, receptor, metodoPago: 'PPD', formaPago: '99', conceptos: lines });
  const doc = await check(t, b.doc, 'PPD with retenciones');
  t.equal(attr(kid(doc, NS.cfdi, 'Impuestos')!, 'TotalImpuestosRetenidos'), '2066.67');
  const rep = construirPago({ serie: 'RP', folio: '1', fecha, lugarExpedicion: '06600', emisor, receptor, fechaPago: fecha, formaDePagoP: '03', montoMinor: 476_667, docto: { uuid: '0A1B2C3D-0000-4000-8000-000000000002', serie: 'P', folio: '5', numParcialidad: 1, saldoAnteriorMinor: 953_333, impuestos: b.impuestos } });
  const r = await check(t, rep.doc, 'REP of the PPD with retenciones');
  const totales = kid(kid(kid(r, NS.cfdi, 'Complemento')!, NS.pago20, 'Pagos')!, NS.pago20, 'Totales')!;
  t.match(Object.fromEntries(totales.attrs), { TotalRetencionesISR: '500.00', TotalRetencionesIVA: '533.34', TotalTrasladosBaseIVA16: '5000.01', TotalTrasladosImpuestoIVA16: '800.00', MontoTotalPagos: '4766.67' });
});

t.test('RESICO: a persona física in 626 invoicing a persona moral; the Total is what was paid', async (t) => {
  for (const paid of [11600, 11601, 11602, 11603, 99999, 100]) {
    const lines = lineasParaTotal(paid, { descripcion: 'Venta', retencionIsr: '0.012500' });
    t.equal(calcular(lines).totalMinor, paid, `${paid}: exact Total`);
  }
  const lines = lineasParaTotal(11600, { descripcion: 'Venta', retencionIsr: '0.012500' });
  const b = construirIngreso({ serie: 'R', folio: '1', fecha, lugarExpedicion: '06600', emisor: resico, receptor, metodoPago: 'PUE', formaPago: '04', conceptos: lines });
  const doc = await check(t, b.doc, 'RESICO ISR 1.25 %', resicoCsd);
  const ret = kids(kid(kid(doc, NS.cfdi, 'Impuestos')!, NS.cfdi, 'Retenciones')!, NS.cfdi, 'Retencion').map((x) => Object.fromEntries(x.attrs));
  t.equal(ret[0]!.Impuesto, '001');
  t.equal(attr(doc, 'Total'), '116.00');
});

t.test('through the API: no tip in the CFDI, FormaPago 28 for a debit card, RESICO withholding, tax lines', async (t) => {
  const a: TestApp = await startTestApp({ ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000' });
  t.teardown(() => a.stop());
  const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
  const ten = await a.newTenant('Impuestos');
  const prof = { rfc: 'AAA010101AAA', nombre: 'ACCEM SERVICIOS EMPRESARIALES SC', regimen_fiscal: '601', cp: '06600', serie: 'F', pac_provider: 'sim' };
  t.equal((await a.call('PUT', '/v1/fiscal_profile', { key: ten.testKey, body: prof })).status, 200);
  const rec = { rfc: 'EKU9003173C9', nombre: 'Escuela Kemper Urgate', uso_cfdi: 'G03', regimen_fiscal: '601', cp: '26015' };
  const charge = async (key: string, amount: number, tip = 0, token = 'tok_sim_ok') => {
    const pi = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: amount, currency: 'MXN', tip_minor: tip }, headers: idem() });
    await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key, body: { payment_token: token, payment_method: 'card' }, headers: idem() });
    return (await until(() => a.call('GET', `/v1/payment_intents/${pi.body.id}`, { key }), (r) => ['succeeded', 'failed'].includes(r.body.status))).body;
  };
  const xmlOf = async (key: string, id: string) => parseXml((await a.call('GET', `/v1/invoices/${id}/xml`, { key })).text);

  const withTip = await charge(ten.testKey, 11600, 1500);
  t.equal(withTip.status, 'succeeded');
  const inv = await a.call('POST', '/v1/invoices', { key: ten.testKey, body: { payment_intent_id: withTip.id, receptor: rec }, headers: idem() });
  t.equal(inv.status, 201, inv.text);
  t.match(inv.body, { total_minor: 11600, base_minor: 10000, iva_minor: 1600 }, 'the tip (15.00) is not part of the sale');
  t.equal(attr(await xmlOf(ten.testKey, inv.body.id), 'FormaPago'), '04', 'a credit card');

  const debit = await charge(ten.testKey, 5800, 0, 'tok_sim_debit');
  const invD = await a.call('POST', '/v1/invoices', { key: ten.testKey, body: { payment_intent_id: debit.id, receptor: rec }, headers: idem() });
  t.equal(attr(await xmlOf(ten.testKey, invD.body.id), 'FormaPago'), '28', 'a debit card is Tarjeta de débito');

  const lines = await charge(ten.testKey, 61465);
  const invL = await a.call('POST', '/v1/invoices', {
    key: ten.testKey,
    headers: idem(),
    body: {
      payment_intent_id: lines.id,
      receptor: rec,
      conceptos: [
        { descripcion: 'Servicio', cantidad: '3', valor_unitario_minor: 10000, descuento_minor: 3000 },
        { descripcion: 'Alimento', importe_minor: 5000, iva: '0' },
        { descripcion: 'Libro', valor_unitario_minor: 12345, iva: 'exento' },
        { descripcion: 'Venta en frontera', importe_minor: 10800, iva: '8' },
        { descripcion: 'Cuota', valor_unitario_minor: 2000, objeto_imp: '01' },
      ],
    },
  });
  t.equal(invL.status, 201, invL.text);
  t.match(invL.body, { total_minor: 61465, iva_minor: 5120 });
  t.ok(xsdValidate((await a.call('GET', `/v1/invoices/${invL.body.id}/xml`, { key: ten.testKey })).text).ok);
  const bad = await a.call('POST', '/v1/invoices', { key: ten.testKey, headers: idem(), body: { payment_intent_id: (await charge(ten.testKey, 1000)).id, receptor: rec, conceptos: [{ descripcion: 'x', valor_unitario_minor: 1000 }] } });
  t.equal(bad.body.error?.code, 'invoice.conceptos_sum_mismatch', '1000 before IVA makes 1160, not the 1000 paid');

  const rt = await a.newTenant('RESICO');
  const put = await a.call('PUT', '/v1/fiscal_profile', { key: rt.testKey, body: { rfc: 'XIQB891116QE4', nombre: 'BERENICE XIMO QUEZADA', regimen_fiscal: '626', cp: '06600', serie: 'R', pac_provider: 'sim', csd: { cer_base64: gen.cer.toString('base64'), key_base64: gen.key.toString('base64'), password: gen.password } } });
  t.equal(put.status, 200, put.text);
  const pr = await charge(rt.testKey, 11600);
  const ir = await a.call('POST', '/v1/invoices', { key: rt.testKey, body: { payment_intent_id: pr.id, receptor: rec }, headers: idem() });
  t.equal(ir.status, 201, ir.text);
  const doc = await xmlOf(rt.testKey, ir.body.id);
  t.equal(attr(doc, 'Total'), '116.00', 'the Total is what the persona moral paid');
  const ret = kids(kid(kid(doc, NS.cfdi, 'Impuestos')!, NS.cfdi, 'Retenciones')!, NS.cfdi, 'Retencion').map((x) => Object.fromEntries(x.attrs));
  t.match(ret, [{ Impuesto: '001' }], 'ISR withheld');
  const conc = kids(kid(doc, NS.cfdi, 'Conceptos')!, NS.cfdi, 'Concepto');
  t.equal(attr(kid(kid(kid(conc[0]!, NS.cfdi, 'Impuestos')!, NS.cfdi, 'Retenciones')!, NS.cfdi, 'Retencion')!, 'TasaOCuota'), '0.012500', 'RESICO 1.25 %');
});
