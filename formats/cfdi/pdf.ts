// The printed representation (representación impresa) of a stamped CFDI, read from the stamped XML
// itself so the PDF can never disagree with the document: issuer and receptor (RFC, nombre, régimen,
// CP), serie/folio, fecha, lugar de expedición, forma/método de pago, uso CFDI, the concepts table,
// subtotal, IVA trasladado 16%, total, total en letra, the sellos (CFDI and SAT), the cadena original
// of the TFD, certificate numbers, folio fiscal, fecha de timbrado and SAT's verification QR code.
// pdfmake (with the PDF standard Helvetica fonts, no font files) and qrcode (PNG data URL).
import { createRequire } from 'node:module';
import QRCode from 'qrcode';
import { cadenaTimbre } from './cadena.js';
import { FORMAS_PAGO, METODOS_PAGO, REGIMENES, TIPOS_COMPROBANTE, USOS } from './catalogs.js';
import { importeConLetra } from './letras.js';
import { urlVerificacion } from './qr.js';
import { buscarTimbre, leerTimbre } from './tfd.js';
import { NS, attr, kid, kids, parseXml, type XmlElement } from './xml.js';

// pdfmake has no types of its own; @types/pdfmake pulls the DOM library into every file of the
// project, so the few shapes used here are declared loosely.
type Content = Record<string, unknown> | string;
type TableCell = Content;
type TDocumentDefinitions = Record<string, unknown>;
interface PdfMake {
  setFonts(f: Record<string, Record<string, string>>): void;
  setUrlAccessPolicy(cb: (url: string) => boolean): void;
  setLocalAccessPolicy(cb: (path: string) => boolean): void;
  createPdf(def: TDocumentDefinitions): { getBuffer(): Promise<Uint8Array> };
}
const pdfmake = createRequire(import.meta.url)('pdfmake') as PdfMake;

const STANDARD_FONTS = new Set(['Helvetica', 'Helvetica-Bold', 'Helvetica-Oblique', 'Helvetica-BoldOblique', 'Courier', 'Courier-Bold', 'Courier-Oblique', 'Courier-BoldOblique']);
pdfmake.setFonts({
  Helvetica: { normal: 'Helvetica', bold: 'Helvetica-Bold', italics: 'Helvetica-Oblique', bolditalics: 'Helvetica-BoldOblique' },
  Courier: { normal: 'Courier', bold: 'Courier-Bold', italics: 'Courier-Oblique', bolditalics: 'Courier-BoldOblique' },
});
// Nothing is fetched and no file is read but the four standard fonts' metrics.
pdfmake.setUrlAccessPolicy(() => false);
pdfmake.setLocalAccessPolicy((p) => STANDARD_FONTS.has(p));

/** "1234.5" → "$1,234.50". */
export function moneda(v: string | undefined): string {
  if (v === undefined || v === '') return '';
  const [ent, dec = ''] = v.split('.');
  return `$${ent!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${(dec + '00').slice(0, 2)}`;
}

/** Cents from a SAT decimal string (two decimals at most in Orquesta's documents). */
const centavos = (v: string) => {
  const [e, d = ''] = v.split('.');
  return Number(e) * 100 + Number((d + '00').slice(0, 2));
};

const conDesc = (clave: string | undefined, cat: Record<string, { descripcion: string } | string>) => {
  if (!clave) return '';
  const x = cat[clave];
  return x ? `${clave} - ${typeof x === 'string' ? x : x.descripcion}` : clave;
};

const GRIS = '#555555';
const AZUL = '#1f3b5a';
const label = (t: string): Content => ({ text: t, bold: true, color: GRIS, fontSize: 7 });
const campo = (l: string, v: string | undefined, width?: 'auto') => ({ text: [{ text: `${l}: `, bold: true, color: GRIS }, v ?? ''], fontSize: 8, margin: [0, 1, 0, 1], ...(width ? { width } : {}) }) as Content;
const titulo = (t: string): Content => ({ text: t.toUpperCase(), bold: true, color: 'white', fillColor: AZUL, fontSize: 8, margin: [4, 2, 4, 2] });
const caja = (head: string, body: Content[], widths: (string | number)[] = ['*']): Content => ({
  table: { widths, body: [[titulo(head)], [{ stack: body, margin: [4, 3, 4, 3] }]] },
  layout: { hLineColor: () => AZUL, vLineColor: () => AZUL, hLineWidth: () => 0.6, vLineWidth: () => 0.6, paddingLeft: () => 0, paddingRight: () => 0, paddingTop: () => 0, paddingBottom: () => 0 },
  margin: [0, 0, 0, 6],
});
/**
 * Sellos and cadenas have no spaces to break at: they are cut into fixed lines of a monospaced font
 * (Courier 5.5 pt is 3.3 pt a character: 124 characters fit the 420 pt column).
 */
const MONO_CHARS = 124;
const mono = (t: string): Content => ({ text: (t.match(new RegExp(`.{1,${MONO_CHARS}}`, 'g')) ?? ['']).join('\n'), font: 'Courier', fontSize: 5.5, lineHeight: 1.05, margin: [0, 1, 0, 4], color: '#222222' });

export interface PdfOptions {
  /** Test-mode documents carry a visible "sin validez fiscal" mark. */
  testMode: boolean;
  /** SAT cancelled it (or the cancellation awaits the receptor): a visible mark with the date/status. */
  cancelled?: { status: 'cancelled' | 'cancel_pending'; at?: string };
}

/** Renders the stamped CFDI (XML text) as a PDF. */
export async function renderPdf(stampedXml: string, opts: PdfOptions): Promise<Buffer> {
  const doc = parseXml(stampedXml);
  const def = await definicion(doc, opts);
  return Buffer.from(await pdfmake.createPdf(def).getBuffer());
}

async function definicion(doc: XmlElement, opts: PdfOptions): Promise<TDocumentDefinitions> {
  const a = (k: string) => attr(doc, k);
  const emisor = kid(doc, NS.cfdi, 'Emisor')!;
  const receptor = kid(doc, NS.cfdi, 'Receptor')!;
  const tfd = buscarTimbre(doc);
  const timbre = leerTimbre(doc);
  if (!tfd || !timbre) throw new Error('the document is not stamped (no TimbreFiscalDigital)');
  const tipo = a('TipoDeComprobante') ?? 'I';
  const nombreDoc = tipo === 'E' ? 'Nota de crédito' : tipo === 'P' ? 'Recibo electrónico de pago' : 'Factura';
  const serieFolio = [a('Serie'), a('Folio')].filter(Boolean).join('-') || '—';
  const total = a('Total') ?? '0';
  const qrUrl = urlVerificacion({ uuid: timbre.uuid, rfcEmisor: attr(emisor, 'Rfc')!, rfcReceptor: attr(receptor, 'Rfc')!, totalMinor: centavos(total), sello: a('Sello') ?? '' });
  const qr = await QRCode.toDataURL(qrUrl, { errorCorrectionLevel: 'M', margin: 0, width: 300 });

  const conceptos = kids(kid(doc, NS.cfdi, 'Conceptos')!, NS.cfdi, 'Concepto');
  const filas: TableCell[][] = [
    ['Clave prod/serv', 'Cantidad', 'Clave unidad', 'Descripción', 'Valor unitario', 'IVA 16%', 'Importe'].map((h) => ({ text: h, bold: true, color: 'white', fillColor: AZUL, fontSize: 7 })),
  ];
  for (const c of conceptos) {
    const tras = kid(kid(kid(c, NS.cfdi, 'Impuestos') ?? c, NS.cfdi, 'Traslados') ?? c, NS.cfdi, 'Traslado');
    filas.push([
      { text: attr(c, 'ClaveProdServ') ?? '', fontSize: 8 },
      { text: attr(c, 'Cantidad') ?? '', fontSize: 8, alignment: 'right' },
      { text: attr(c, 'ClaveUnidad') ?? '', fontSize: 8 },
      { text: [attr(c, 'Descripcion') ?? '', attr(c, 'NoIdentificacion') ? { text: `\nNo. identificación: ${attr(c, 'NoIdentificacion')}`, color: GRIS, fontSize: 7 } : ''], fontSize: 8 },
      { text: moneda(attr(c, 'ValorUnitario')), fontSize: 8, alignment: 'right' },
      { text: tras ? moneda(attr(tras, 'Importe')) : '—', fontSize: 8, alignment: 'right' },
      { text: moneda(attr(c, 'Importe')), fontSize: 8, alignment: 'right' },
    ]);
  }

  const impuestos = kid(doc, NS.cfdi, 'Impuestos');
  const iva = impuestos ? attr(impuestos, 'TotalImpuestosTrasladados') : undefined;
  const totales: Content =
    tipo === 'P'
      ? { text: '' }
      : {
          columns: [
            { width: '*', stack: [label('IMPORTE CON LETRA'), { text: importeConLetra(centavos(total)), fontSize: 8, bold: true, margin: [0, 2, 0, 0] }] },
            {
              width: 190,
              table: {
                widths: ['*', 80],
                body: [
                  [{ text: 'Subtotal', fontSize: 8 }, { text: moneda(a('SubTotal')), fontSize: 8, alignment: 'right' }],
                  [{ text: 'IVA trasladado 16%', fontSize: 8 }, { text: moneda(iva ?? '0'), fontSize: 8, alignment: 'right' }],
                  [{ text: 'Total', fontSize: 10, bold: true }, { text: moneda(total), fontSize: 10, bold: true, alignment: 'right' }],
                ],
              },
              layout: 'lightHorizontalLines',
            },
          ],
          margin: [0, 6, 0, 8],
        };

  const relacionados = kids(doc, NS.cfdi, 'CfdiRelacionados');
  const relacion: Content[] = relacionados.map((r) =>
    caja('CFDI relacionados', [campo('Tipo de relación', attr(r, 'TipoRelacion') === '01' ? '01 - Nota de crédito de los documentos relacionados' : attr(r, 'TipoRelacion')), ...kids(r, NS.cfdi, 'CfdiRelacionado').map((x) => campo('UUID', attr(x, 'UUID')))]),
  );

  const pagos: Content[] = [];
  const comp = kid(doc, NS.cfdi, 'Complemento');
  const pagosEl = comp ? kid(comp, NS.pago20, 'Pagos') : undefined;
  if (pagosEl) {
    for (const p of kids(pagosEl, NS.pago20, 'Pago')) {
      const body: TableCell[][] = [
        ['Documento relacionado (UUID)', 'Serie-folio', 'Parcialidad', 'Saldo anterior', 'Importe pagado', 'Saldo insoluto'].map((h) => ({ text: h, bold: true, color: 'white', fillColor: AZUL, fontSize: 7 })),
      ];
      for (const d of kids(p, NS.pago20, 'DoctoRelacionado')) {
        body.push([
          { text: attr(d, 'IdDocumento') ?? '', fontSize: 7 },
          { text: [attr(d, 'Serie'), attr(d, 'Folio')].filter(Boolean).join('-'), fontSize: 8 },
          { text: attr(d, 'NumParcialidad') ?? '', fontSize: 8, alignment: 'right' },
          { text: moneda(attr(d, 'ImpSaldoAnt')), fontSize: 8, alignment: 'right' },
          { text: moneda(attr(d, 'ImpPagado')), fontSize: 8, alignment: 'right' },
          { text: moneda(attr(d, 'ImpSaldoInsoluto')), fontSize: 8, alignment: 'right' },
        ]);
      }
      pagos.push(
        caja('Complemento para recepción de pagos 2.0', [
          { columns: [campo('Fecha de pago', attr(p, 'FechaPago')), campo('Forma de pago', conDesc(attr(p, 'FormaDePagoP'), FORMAS_PAGO)), campo('Moneda', attr(p, 'MonedaP')), campo('Monto', moneda(attr(p, 'Monto')))] },
          attr(p, 'NumOperacion') ? campo('Número de operación', attr(p, 'NumOperacion')) : { text: '' },
          { table: { headerRows: 1, widths: ['*', 50, 45, 60, 60, 60], body }, layout: 'lightHorizontalLines', margin: [0, 4, 0, 0] },
          { text: `Monto del pago con letra: ${importeConLetra(centavos(attr(p, 'Monto') ?? '0'))}`, fontSize: 7, margin: [0, 4, 0, 0] },
        ]),
      );
    }
  }

  const global = kid(doc, NS.cfdi, 'InformacionGlobal');
  const content: Content[] = [];
  if (opts.cancelled) {
    const txt = opts.cancelled.status === 'cancelled' ? `CFDI CANCELADO ANTE EL SAT${opts.cancelled.at ? ` (${opts.cancelled.at})` : ''}` : 'CANCELACIÓN SOLICITADA — EN ESPERA DE LA ACEPTACIÓN DEL RECEPTOR';
    content.push({ text: txt, color: '#b00020', bold: true, fontSize: 10, alignment: 'center', margin: [0, 0, 0, 6] });
  }
  if (opts.testMode) {
    content.push({ text: 'DOCUMENTO DE PRUEBA — SIN VALIDEZ FISCAL (sellado con el CSD público de pruebas del SAT y timbrado por el PAC simulado)', color: '#b00020', bold: true, fontSize: 8, alignment: 'center', margin: [0, 0, 0, 6] });
  }
  content.push({
    columns: [
      {
        width: '*',
        stack: [
          { text: attr(emisor, 'Nombre') ?? '', fontSize: 13, bold: true, color: AZUL },
          campo('RFC', attr(emisor, 'Rfc')),
          campo('Régimen fiscal', conDesc(attr(emisor, 'RegimenFiscal'), REGIMENES)),
          campo('Lugar de expedición (C.P.)', a('LugarExpedicion')),
        ],
      },
      {
        width: 230,
        table: {
          widths: ['*'],
          body: [
            [{ text: nombreDoc.toUpperCase(), bold: true, color: 'white', fillColor: AZUL, alignment: 'center', fontSize: 10, margin: [0, 2, 0, 2] }],
            [
              {
                stack: [
                  campo('Serie y folio', serieFolio),
                  label('FOLIO FISCAL (UUID)'),
                  { text: timbre.uuid, fontSize: 8.5, bold: true, margin: [0, 0, 0, 1] },
                  campo('Fecha de emisión', a('Fecha')),
                  campo('Fecha de certificación', timbre.fechaTimbrado),
                  campo('Tipo de comprobante', conDesc(tipo, TIPOS_COMPROBANTE)),
                  campo('No. de serie del CSD del emisor', a('NoCertificado')),
                ],
                margin: [4, 2, 4, 2],
              },
            ],
          ],
        },
        layout: { hLineColor: () => AZUL, vLineColor: () => AZUL, hLineWidth: () => 0.6, vLineWidth: () => 0.6 },
      },
    ],
    columnGap: 10,
    margin: [0, 0, 0, 8],
  });
  content.push(
    caja('Receptor', [
      { text: attr(receptor, 'Nombre') ?? '', bold: true, fontSize: 9, margin: [0, 0, 0, 2] },
      {
        columns: [
          { stack: [campo('RFC', attr(receptor, 'Rfc')), campo('Domicilio fiscal (C.P.)', attr(receptor, 'DomicilioFiscalReceptor'))] },
          { stack: [campo('Régimen fiscal', conDesc(attr(receptor, 'RegimenFiscalReceptor'), REGIMENES)), campo('Uso del CFDI', conDesc(attr(receptor, 'UsoCFDI'), USOS))] },
        ],
      },
    ]),
  );
  if (tipo !== 'P') {
    content.push(
      caja('Datos del pago', [
        {
          columns: [
            campo('Forma de pago', conDesc(a('FormaPago'), FORMAS_PAGO), 'auto'),
            campo('Método de pago', conDesc(a('MetodoPago'), METODOS_PAGO), 'auto'),
            campo('Moneda', a('Moneda') === 'MXN' ? 'MXN - Peso Mexicano' : a('Moneda'), 'auto'),
          ],
          columnGap: 24,
        },
        global ? campo('Información global', `Periodicidad ${attr(global, 'Periodicidad')} (diaria), mes ${attr(global, 'Meses')}, año ${attr(global, 'Año')}`) : { text: '' },
      ]),
    );
  }
  content.push(...relacion);
  content.push({ table: { headerRows: 1, widths: [52, 38, 38, '*', 62, 52, 62], body: filas }, layout: 'lightHorizontalLines', margin: [0, 0, 0, 4] });
  content.push(totales);
  content.push(...pagos);
  content.push({
    columns: [
      { width: 110, stack: [{ image: qr, width: 105 }, { text: 'Verifique este comprobante en verificacfdi.facturaelectronica.sat.gob.mx', fontSize: 6, color: GRIS, margin: [0, 3, 0, 0] }] },
      {
        width: '*',
        stack: [
          label('SELLO DIGITAL DEL CFDI'),
          mono(a('Sello') ?? ''),
          label('SELLO DIGITAL DEL SAT'),
          mono(timbre.selloSat),
          label('CADENA ORIGINAL DEL COMPLEMENTO DE CERTIFICACIÓN DIGITAL DEL SAT'),
          mono(cadenaTimbre(tfd)),
          campo('No. de serie del certificado del SAT', timbre.noCertificadoSat),
          campo('RFC del proveedor de certificación', timbre.rfcProvCertif),
        ],
      },
    ],
    columnGap: 8,
    margin: [0, 6, 0, 0],
  });

  return {
    pageSize: 'LETTER',
    pageMargins: [28, 28, 28, 36],
    defaultStyle: { font: 'Helvetica', fontSize: 8 },
    info: { title: `${nombreDoc} ${serieFolio} ${timbre.uuid}`, author: attr(emisor, 'Nombre') ?? '', subject: 'CFDI 4.0' },
    ...(opts.cancelled?.status === 'cancelled' ? { watermark: { text: 'CANCELADO', color: '#b00020', opacity: 0.12, bold: true } } : opts.testMode ? { watermark: { text: 'SIN VALIDEZ FISCAL', color: '#b00020', opacity: 0.08, bold: true } } : {}),
    footer: (page: number, pages: number) => ({
      columns: [
        { text: 'Este documento es una representación impresa de un CFDI versión 4.0', fontSize: 7, color: GRIS },
        { text: `Página ${page} de ${pages}`, alignment: 'right', fontSize: 7, color: GRIS },
      ],
      margin: [28, 10, 28, 0],
    }),
    content,
  };
}
