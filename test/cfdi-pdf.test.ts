// The printed representation: a stamped PUE, REP and credit note rendered to PDF, read back with
// poppler's pdftotext (what a person sees) and rasterized with pdftoppm. `CFDI_PDF_PNG=dir` keeps the
// PNG pages (docs/invoice-pdf.png was made that way and looked at).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { construirEgreso, construirIngreso, construirPago, sellarComprobante, type Emisor, type Receptor } from '../formats/cfdi/comprobante.js';
import { renderPdf } from '../formats/cfdi/pdf.js';
import { SimPac } from '../connectors/pac/sim.js';
import { testCsd } from '../connectors/pac/test-csd.js';
import type { XmlElement } from '../formats/cfdi/xml.js';

const csd = testCsd(false);
const emisor: Emisor = { rfc: 'AAA010101AAA', nombre: 'ACCEM SERVICIOS EMPRESARIALES SC', regimenFiscal: '601' };
const receptor: Receptor = { rfc: 'EKU9003173C9', nombre: 'ESCUELA KEMPER URGATE', cp: '26015', regimenFiscal: '601', usoCfdi: 'G03' };
const fecha = new Date('2026-03-02T18:04:05Z');
const pac = new SimPac();

async function stamp(doc: XmlElement) {
  const out = await pac.stamp({ xml: sellarComprobante(doc, csd).xml, livemode: false, credentials: {}, now: new Date('2026-03-02T18:04:09Z') });
  if (out.kind !== 'stamped') throw new Error(out.message);
  return out;
}

function look(pdf: Buffer, name: string): { text: string; pages: number } {
  const dir = mkdtempSync(join(tmpdir(), 'orq-pdf-'));
  try {
    const f = join(dir, `${name}.pdf`);
    writeFileSync(f, pdf);
    const text = execFileSync('pdftotext', ['-layout', f, '-'], { encoding: 'utf8' });
    execFileSync('pdftoppm', ['-png', '-r', '110', f, join(dir, name)]);
    const pngs = readdirSync(dir).filter((x) => x.endsWith('.png')).sort();
    if (process.env.CFDI_PDF_PNG) for (const p of pngs) copyFileSync(join(dir, p), join(process.env.CFDI_PDF_PNG, p));
    return { text, pages: pngs.length };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

t.test('PUE invoice PDF carries what an accountant checks', async (t) => {
  const b = construirIngreso({
    serie: 'F', folio: '1042', fecha, lugarExpedicion: '06600', emisor, receptor, metodoPago: 'PUE', formaPago: '04',
    conceptos: [
      { descripcion: 'Suscripción mensual plan Negocio', importeMinor: 11600, claveProdServ: '81112101', claveUnidad: 'E48' },
      { descripcion: 'Terminal punto de venta (renta)', importeMinor: 23200, claveProdServ: '43211509', claveUnidad: 'H87' },
      { descripcion: 'Comisión por transacción', importeMinor: 1740 },
    ],
  });
  const out = await stamp(b.doc);
  const pdf = await renderPdf(out.xml, { testMode: true });
  t.equal(pdf.subarray(0, 5).toString(), '%PDF-', 'a PDF');
  const { text, pages } = look(pdf, 'invoice-pdf');
  t.equal(pages, 1, 'one page');
  for (const s of [
    'ACCEM SERVICIOS EMPRESARIALES SC', 'AAA010101AAA', 'EKU9003173C9', 'ESCUELA KEMPER URGATE', '601 - General de Ley Personas Morales',
    'G03 - Gastos en general', '26015', '06600', 'F-1042', out.uuid, '2026-03-02T12:04:05', '04 - Tarjeta de crédito',
    'PUE - Pago en una sola exhibición', '81112101', 'E48', 'Suscripción mensual plan Negocio', '$100.00', '$200.00', '$50.40', '$315.00',
    '$365.40', 'TRESCIENTOS SESENTA Y CINCO PESOS 40/100 M.N.', 'SELLO DIGITAL DEL CFDI', 'SELLO DIGITAL DEL SAT', '30001000000300023708',
    'SIN VALIDEZ FISCAL',
  ]) t.ok(text.includes(s), `shows ${s}`);
  t.match(text, /\|\|1\.1\|/, 'the TFD cadena original is printed');
});

t.test('REP and credit note PDFs', async (t) => {
  const rep = await stamp(
    construirPago({ serie: 'RP', folio: '7', fecha, lugarExpedicion: '06600', emisor, receptor, fechaPago: fecha, formaDePagoP: '03', montoMinor: 11600, docto: { uuid: '0A1B2C3D-0000-4000-8000-000000000001', serie: 'P', folio: '3', numParcialidad: 1, saldoAnteriorMinor: 23200 } }).doc,
  );
  const r = look(await renderPdf(rep.xml, { testMode: false }), 'rep');
  for (const s of ['RECIBO ELECTRÓNICO DE PAGO', '0A1B2C3D-0000-4000-8000-000000000001', '$232.00', '$116.00', 'CIENTO DIECISÉIS PESOS 00/100 M.N.', 'CP01']) t.ok(r.text.includes(s), `REP shows ${s}`);
  t.notOk(r.text.includes('SIN VALIDEZ FISCAL'), 'no test mark outside test mode');
  const nc = await stamp(construirEgreso({ serie: 'NC', folio: '2', fecha, lugarExpedicion: '06600', emisor, receptor, formaPago: '04', relacionados: [rep.uuid], totalMinor: 5800, descripcion: 'Bonificación' }).doc);
  const n = look(await renderPdf(nc.xml, { testMode: true }), 'nota');
  for (const s of ['NOTA DE CRÉDITO', '01 - Nota de crédito de los documentos relacionados', rep.uuid, 'CINCUENTA Y OCHO PESOS 00/100 M.N.']) t.ok(n.text.includes(s), `credit note shows ${s}`);
});
