// One document of each kind Orquesta emits (PUE with several concepts, PPD, REP, egreso,
// generic-RFC invoice), sealed with SAT's public test CSD and stamped by the sim PAC, checked with
// SAT's own files: `xmllint --schema` (cfdv40.xsd, Pagos20.xsd, TimbreFiscalDigitalv11.xsd),
// `xsltproc` with cadenaoriginal_4_0.xslt (byte-equal to Orquesta's cadena) and
// cadenaoriginal_TFD_1_1.xslt, and the Sello and SelloSAT verified with the certificates.
import t, { type Test } from 'tap';
import { cadenaOriginal, cadenaTimbre } from '../formats/cfdi/cadena.js';
import { construirEgreso, construirIngreso, construirPago, sellarComprobante, type Emisor, type Receptor } from '../formats/cfdi/comprobante.js';
import { verificarSello } from '../formats/cfdi/csd.js';
import { buscarTimbre, leerTimbre, verificarTimbre } from '../formats/cfdi/tfd.js';
import { NS, attr, kid, kids, parseXml, serialize, type XmlElement } from '../formats/cfdi/xml.js';
import { SimPac } from '../connectors/pac/sim.js';
import { testCsd } from '../connectors/pac/test-csd.js';
import { xsdValidate, xsltCadena, xsltCadenaTfd } from './helpers/sat.js';

const csd = testCsd(false);
const emisor: Emisor = { rfc: 'AAA010101AAA', nombre: 'ACCEM SERVICIOS EMPRESARIALES SC', regimenFiscal: '601' };
const receptor: Receptor = { rfc: 'EKU9003173C9', nombre: 'ESCUELA KEMPER URGATE', cp: '26015', regimenFiscal: '601', usoCfdi: 'G03' };
const fecha = new Date('2026-03-02T18:04:05Z');
const pac = new SimPac();

async function stampAndCheck(t: Test, doc: XmlElement, label: string) {
  const sealed = sellarComprobante(doc, csd);
  // unsealed-structure checks before stamping: the cadena of the sealed document as SAT computes it
  t.equal(xsltCadena(sealed.xml), sealed.cadena, `${label}: Orquesta's cadena is byte-equal to SAT's XSLT (sealed, unstamped)`);
  const out = await pac.stamp({ xml: sealed.xml, livemode: false, credentials: {}, now: new Date('2026-03-02T18:04:09Z') });
  if (out.kind !== 'stamped') throw new Error(`${label}: ${out.message}`);
  const v = xsdValidate(out.xml);
  t.ok(v.ok, `${label}: valid against SAT's XSDs`, { output: v.output });
  const parsed = parseXml(out.xml);
  const cadena = xsltCadena(out.xml);
  t.equal(cadenaOriginal(parsed), cadena, `${label}: cadena of the stamped document (read back) equals SAT's XSLT`);
  t.equal(cadena, sealed.cadena, `${label}: the TFD does not change the cadena`);
  t.ok(verificarSello(cadena, attr(parsed, 'Sello')!, attr(parsed, 'Certificado')!), `${label}: Sello verifies with the document's certificate`);
  t.notOk(verificarSello(cadena.replace('|4.0|', '|4.0| '), attr(parsed, 'Sello')!, attr(parsed, 'Certificado')!), `${label}: a changed cadena does not verify`);
  const tfd = buscarTimbre(parsed)!;
  t.ok(tfd, `${label}: carries a TimbreFiscalDigital`);
  const tfdXml = serialize(tfd);
  t.equal(cadenaTimbre(tfd), xsltCadenaTfd(tfdXml), `${label}: TFD cadena equals SAT's cadenaoriginal_TFD_1_1.xslt`);
  t.ok(verificarTimbre(tfd, csd.certificado), `${label}: SelloSAT verifies`);
  const timbre = leerTimbre(parsed)!;
  t.equal(timbre.uuid, out.uuid, `${label}: TFD UUID is the stamp's UUID`);
  t.equal(timbre.selloCfd, attr(parsed, 'Sello'), `${label}: SelloCFD is the issuer's Sello`);
  return { parsed, out, cadena };
}

t.test('PUE with several concepts', async (t) => {
  const b = construirIngreso({
    serie: 'F', folio: '17', fecha, lugarExpedicion: '06600', emisor, receptor, metodoPago: 'PUE', formaPago: '04',
    conceptos: [
      { descripcion: 'Café de olla  "grande" & pan <dulce>', importeMinor: 11600, claveProdServ: '50201706', claveUnidad: 'H87' },
      { descripcion: 'Servicio\tcon   espacios\nraros ', importeMinor: 1 },
      { descripcion: 'Envío', importeMinor: 9999 },
      { descripcion: 'Ñandú', importeMinor: 333 },
    ],
  });
  t.equal(b.totalMinor, 11600 + 1 + 9999 + 333);
  t.equal(b.subtotalMinor + b.ivaMinor, b.totalMinor, 'total = subtotal + IVA');
  const { parsed, cadena } = await stampAndCheck(t, b.doc, 'PUE');
  t.equal(attr(parsed, 'MetodoPago'), 'PUE');
  t.equal(attr(parsed, 'FormaPago'), '04');
  t.equal(attr(parsed, 'Fecha'), '2026-03-02T12:04:05', 'Fecha in Mexico City local time');
  t.match(cadena, /\|Servicio con espacios raros\|/, 'whitespace collapsed as normalize-space does');
  const conceptos = kids(kid(parsed, NS.cfdi, 'Conceptos')!, NS.cfdi, 'Concepto');
  t.equal(conceptos.length, 4);
  t.equal(attr(conceptos[0]!, 'Importe'), '100.00');
  t.equal(attr(conceptos[1]!, 'Importe'), '0.01', 'one cent: base 0.01, IVA 0.00');
});

t.test('PPD', async (t) => {
  const b = construirIngreso({ serie: 'P', folio: '3', fecha, lugarExpedicion: '06600', emisor, receptor, metodoPago: 'PPD', formaPago: '04', conceptos: [{ descripcion: 'Proyecto en parcialidades', importeMinor: 1_000_000 }] });
  const { parsed } = await stampAndCheck(t, b.doc, 'PPD');
  t.equal(attr(parsed, 'MetodoPago'), 'PPD');
  t.equal(attr(parsed, 'FormaPago'), '99', 'PPD is FormaPago 99 (Por definir)');
  t.equal(attr(parsed, 'Total'), '10000.00');
});

t.test('REP (Pagos 2.0)', async (t) => {
  const b = construirPago({
    serie: 'RP', folio: '1', fecha, lugarExpedicion: '06600', emisor, receptor, fechaPago: new Date('2026-03-01T20:00:00Z'), formaDePagoP: '03', montoMinor: 400_000,
    numOperacion: 'pi_123', docto: { uuid: '0A1B2C3D-0000-4000-8000-000000000001', serie: 'P', folio: '3', numParcialidad: 2, saldoAnteriorMinor: 600_000 },
  });
  t.equal(b.saldoInsolutoMinor, 200_000);
  const { parsed, cadena } = await stampAndCheck(t, b.doc, 'REP');
  t.equal(attr(parsed, 'TipoDeComprobante'), 'P');
  t.match(cadena, /\|2\|6000\.00\|4000\.00\|2000\.00\|02\|/, 'NumParcialidad, ImpSaldoAnt, ImpPagado, ImpSaldoInsoluto in the cadena');
});

t.test('egreso (credit note, TipoRelacion 01)', async (t) => {
  const b = construirEgreso({ serie: 'NC', folio: '9', fecha, lugarExpedicion: '06600', emisor, receptor, formaPago: '04', relacionados: ['0A1B2C3D-0000-4000-8000-000000000002'], totalMinor: 5800, descripcion: 'Bonificación' });
  const { parsed, cadena } = await stampAndCheck(t, b.doc, 'egreso');
  t.equal(attr(parsed, 'TipoDeComprobante'), 'E');
  t.equal(attr(kid(parsed, NS.cfdi, 'CfdiRelacionados')!, 'TipoRelacion'), '01');
  t.match(cadena, /\|01\|0A1B2C3D-0000-4000-8000-000000000002\|/);
  t.equal(attr(kid(parsed, NS.cfdi, 'Receptor')!, 'UsoCFDI'), 'G02', 'devoluciones, descuentos o bonificaciones');
});

t.test('generic RFC (público en general)', async (t) => {
  const publico: Receptor = { rfc: 'XAXX010101000', nombre: 'PUBLICO EN GENERAL', cp: '99999', regimenFiscal: '616', usoCfdi: 'S01' };
  const b = construirIngreso({ serie: 'F', folio: '18', fecha, lugarExpedicion: '06600', emisor, receptor: publico, metodoPago: 'PUE', formaPago: '01', conceptos: [{ descripcion: 'Venta', importeMinor: 11600, noIdentificacion: 'W-ABCDE' }] });
  const { parsed } = await stampAndCheck(t, b.doc, 'generic RFC');
  const r = kid(parsed, NS.cfdi, 'Receptor')!;
  t.equal(attr(r, 'DomicilioFiscalReceptor'), '06600', 'generic RFC: DomicilioFiscalReceptor is the LugarExpedicion');
  const ig = kid(parsed, NS.cfdi, 'InformacionGlobal')!;
  t.same([attr(ig, 'Periodicidad'), attr(ig, 'Meses'), attr(ig, 'Año')], ['01', '03', '2026'], 'InformacionGlobal of one day');
  const c = kid(kid(parsed, NS.cfdi, 'Conceptos')!, NS.cfdi, 'Concepto')!;
  t.equal(attr(c, 'ClaveProdServ'), '01010101');
  t.equal(attr(c, 'ClaveUnidad'), 'ACT');
});

t.test('a broken document fails the oracle (the checks can fail)', async (t) => {
  const b = construirIngreso({ fecha, lugarExpedicion: '06600', emisor, receptor, metodoPago: 'PUE', formaPago: '04', conceptos: [{ descripcion: 'x', importeMinor: 100 }] });
  const sealed = sellarComprobante(b.doc, csd);
  t.notOk(xsdValidate(sealed.xml.replace('Exportacion="01" ', '')).ok, 'missing Exportacion is invalid');
  t.not(xsltCadena(sealed.xml.replace('SubTotal="0.86"', 'SubTotal="0.87"')), sealed.cadena, 'a changed amount changes the cadena');
});
