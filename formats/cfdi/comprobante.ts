// Builders of CFDI 4.0 Comprobantes: ingreso (PUE/PPD), egreso (credit note related with
// TipoRelacion 01) and pago (Pagos 2.0 complement). Pure: data in, element tree out; sealing with a
// CSD is `sellarComprobante`. Every amount is integer cents (amounts.ts explains the rounding).
import { TASA_IVA_16, desglosar, pesos, baseDeTotal } from './amounts.js';
import { CLAVE_PROD_SERV_DEFAULT, CLAVE_UNIDAD_DEFAULT, CLAVE_PROD_SERV_NOTA_CREDITO, CONCEPTO_PAGO, USOS } from './catalogs.js';
import { cadenaOriginal } from './cadena.js';
import { sellar, sellarAsync, type Csd } from './csd.js';
import { NOMBRE_PUBLICO_GENERAL, RFC_PUBLICO_GENERAL, RFC_EXTRANJERO } from './receptor.js';
import { NS, SCHEMA_LOCATION, el, kid, serialize, setAttr, type XmlElement } from './xml.js';

export interface Emisor {
  rfc: string;
  nombre: string;
  regimenFiscal: string;
}

export interface Receptor {
  rfc: string;
  nombre: string;
  /** DomicilioFiscalReceptor. */
  cp: string;
  regimenFiscal: string;
  usoCfdi: string;
}

export interface ConceptoInput {
  descripcion: string;
  /** Amount of the line with IVA 16% inside, in cents. */
  importeMinor: number;
  claveProdServ?: string;
  claveUnidad?: string;
  noIdentificacion?: string;
}

interface Comun {
  serie?: string;
  folio?: string;
  /** Issue time; written as the local time of Mexico City (LugarExpedicion's time zone is not known). */
  fecha: Date;
  lugarExpedicion: string;
  emisor: Emisor;
  receptor: Receptor;
}

export interface IngresoInput extends Comun {
  metodoPago: 'PUE' | 'PPD';
  /** c_FormaPago; PPD is always `99` (Por definir), whatever is given. */
  formaPago: string;
  conceptos: ConceptoInput[];
}

export interface EgresoInput extends Comun {
  formaPago: string;
  /** UUIDs of the invoices this credit note reduces (TipoRelacion 01, Nota de crédito). */
  relacionados: string[];
  totalMinor: number;
  descripcion: string;
}

export interface PagoInput extends Comun {
  /** When the money arrived (FechaPago). */
  fechaPago: Date;
  formaDePagoP: string;
  montoMinor: number;
  numOperacion?: string;
  docto: {
    uuid: string;
    serie?: string;
    folio?: string;
    numParcialidad: number;
    saldoAnteriorMinor: number;
  };
}

export const MEXICO_TZ = 'America/Mexico_City';

/** t_FechaH: `aaaa-mm-ddThh:mm:ss` in the given IANA time zone, no offset (SAT wants local time). */
const formatters = new Map<string, Intl.DateTimeFormat>();
export function fechaLocal(d: Date, timeZone = MEXICO_TZ): string {
  // Building an Intl.DateTimeFormat costs far more than using one (bench/invoices profile): one per zone.
  let f = formatters.get(timeZone);
  if (!f) formatters.set(timeZone, (f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' })));
  const parts = f.formatToParts(d);
  const p = Object.fromEntries(parts.map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}`;
}

const esGenerico = (rfc: string) => rfc === RFC_PUBLICO_GENERAL || rfc === RFC_EXTRANJERO;
const esGlobal = (r: Receptor) => r.rfc === RFC_PUBLICO_GENERAL && r.nombre === NOMBRE_PUBLICO_GENERAL;

function raiz(tipo: 'I' | 'E' | 'P', c: Comun, extra: Record<string, string | undefined>, pagos = false): XmlElement {
  return el('cfdi:Comprobante', {
    'xmlns:cfdi': NS.cfdi,
    'xmlns:xsi': NS.xsi,
    ...(pagos ? { 'xmlns:pago20': NS.pago20 } : {}),
    'xsi:schemaLocation': pagos ? `${SCHEMA_LOCATION.cfdi} ${SCHEMA_LOCATION.pago20}` : SCHEMA_LOCATION.cfdi,
    Version: '4.0',
    Serie: c.serie || undefined,
    Folio: c.folio || undefined,
    Fecha: fechaLocal(c.fecha),
    ...extra,
    TipoDeComprobante: tipo,
    Exportacion: '01',
    LugarExpedicion: c.lugarExpedicion,
  });
}

/** Moves MetodoPago after Exportacion as SAT's samples show (order has no effect on validity or the cadena). */
function ordenar(root: XmlElement, metodoPago: string | undefined): void {
  if (metodoPago) {
    const i = root.attrs.findIndex(([k]) => k === 'LugarExpedicion');
    root.attrs.splice(i, 0, ['MetodoPago', metodoPago]);
  }
}

function emisorEl(e: Emisor) {
  return el('cfdi:Emisor', { Rfc: e.rfc, Nombre: e.nombre, RegimenFiscal: e.regimenFiscal });
}

/** Generic RFCs take the issuer's LugarExpedicion as DomicilioFiscalReceptor (CFDI 4.0 rule). */
function receptorEl(r: Receptor, lugarExpedicion: string, usoCfdi = r.usoCfdi) {
  return el('cfdi:Receptor', {
    Rfc: r.rfc,
    Nombre: r.nombre,
    DomicilioFiscalReceptor: esGenerico(r.rfc) ? lugarExpedicion : r.cp,
    RegimenFiscalReceptor: r.regimenFiscal,
    UsoCFDI: usoCfdi,
  });
}

function trasladoEl(name: 'cfdi:Traslado', baseMinor: number, ivaMinor: number) {
  return el(name, { Base: pesos(baseMinor), Impuesto: '002', TipoFactor: 'Tasa', TasaOCuota: TASA_IVA_16, Importe: pesos(ivaMinor) });
}

function conceptosConIva(lineas: { conc: ConceptoInput; baseMinor: number; ivaMinor: number }[]) {
  return el(
    'cfdi:Conceptos',
    {},
    lineas.map(({ conc, baseMinor, ivaMinor }) =>
      el(
        'cfdi:Concepto',
        {
          ClaveProdServ: conc.claveProdServ ?? CLAVE_PROD_SERV_DEFAULT,
          NoIdentificacion: conc.noIdentificacion,
          Cantidad: '1',
          ClaveUnidad: conc.claveUnidad ?? CLAVE_UNIDAD_DEFAULT,
          Descripcion: conc.descripcion,
          ValorUnitario: pesos(baseMinor),
          Importe: pesos(baseMinor),
          ObjetoImp: '02',
        },
        [el('cfdi:Impuestos', {}, [el('cfdi:Traslados', {}, [trasladoEl('cfdi:Traslado', baseMinor, ivaMinor)])])],
      ),
    ),
  );
}

export interface Construido {
  doc: XmlElement;
  subtotalMinor: number;
  ivaMinor: number;
  totalMinor: number;
}

/**
 * Ingreso (I). A receptor XAXX010101000 "PUBLICO EN GENERAL" makes it a global invoice of one day
 * (InformacionGlobal Periodicidad 01, the month and year of Fecha), whose concepts are, as SAT's
 * guide for global invoices says, ClaveProdServ 01010101 and ClaveUnidad ACT.
 */
export function construirIngreso(input: IngresoInput): Construido {
  if (!input.conceptos.length) throw new Error('an ingreso needs at least one concept');
  for (const c of input.conceptos) if (!Number.isSafeInteger(c.importeMinor) || c.importeMinor < 1) throw new Error(`concept importe must be a positive integer of cents: ${c.importeMinor}`);
  const d = desglosar(input.conceptos.map((c) => c.importeMinor));
  const global = esGlobal(input.receptor);
  const conceptos = input.conceptos.map((c) => (global ? { ...c, claveProdServ: '01010101', claveUnidad: 'ACT' } : c));
  const ppd = input.metodoPago === 'PPD';
  const root = raiz('I', input, {
    FormaPago: ppd ? '99' : input.formaPago,
    NoCertificado: '',
    SubTotal: pesos(d.baseMinor),
    Moneda: 'MXN',
    Total: pesos(d.totalMinor),
  });
  ordenar(root, input.metodoPago);
  const local = fechaLocal(input.fecha);
  if (global) root.children.push(el('cfdi:InformacionGlobal', { Periodicidad: '01', Meses: local.slice(5, 7), Año: local.slice(0, 4) }));
  root.children.push(emisorEl(input.emisor), receptorEl(input.receptor, input.lugarExpedicion));
  root.children.push(conceptosConIva(d.lineas.map((l, i) => ({ conc: conceptos[i]!, baseMinor: l.baseMinor, ivaMinor: l.ivaMinor }))));
  root.children.push(
    el('cfdi:Impuestos', { TotalImpuestosTrasladados: pesos(d.ivaMinor) }, [el('cfdi:Traslados', {}, [trasladoEl('cfdi:Traslado', d.baseMinor, d.ivaMinor)])]),
  );
  return { doc: root, subtotalMinor: d.baseMinor, ivaMinor: d.ivaMinor, totalMinor: d.totalMinor };
}

/**
 * Egreso (E): a credit note for part or all of one or more invoices (CfdiRelacionados TipoRelacion
 * 01), one concept 84111506 "Servicios de facturación" / ACT with IVA inside its total, PUE. UsoCFDI is
 * G02 (Devoluciones, descuentos o bonificaciones) when the receptor's régimen admits it, else S01.
 */
export function construirEgreso(input: EgresoInput): Construido {
  if (!input.relacionados.length) throw new Error('a credit note relates at least one CFDI');
  const d = desglosar([input.totalMinor]);
  const root = raiz('E', input, { FormaPago: input.formaPago, NoCertificado: '', SubTotal: pesos(d.baseMinor), Moneda: 'MXN', Total: pesos(d.totalMinor) });
  ordenar(root, 'PUE');
  const uso = USOS.G02!.regimenes.includes(input.receptor.regimenFiscal) ? 'G02' : 'S01';
  root.children.push(el('cfdi:CfdiRelacionados', { TipoRelacion: '01' }, input.relacionados.map((u) => el('cfdi:CfdiRelacionado', { UUID: u }))));
  root.children.push(emisorEl(input.emisor), receptorEl(input.receptor, input.lugarExpedicion, uso));
  root.children.push(conceptosConIva([{ conc: { descripcion: input.descripcion, importeMinor: input.totalMinor, claveProdServ: CLAVE_PROD_SERV_NOTA_CREDITO, claveUnidad: 'ACT' }, baseMinor: d.baseMinor, ivaMinor: d.ivaMinor }]));
  root.children.push(el('cfdi:Impuestos', { TotalImpuestosTrasladados: pesos(d.ivaMinor) }, [el('cfdi:Traslados', {}, [trasladoEl('cfdi:Traslado', d.baseMinor, d.ivaMinor)])]));
  return { doc: root, subtotalMinor: d.baseMinor, ivaMinor: d.ivaMinor, totalMinor: d.totalMinor };
}

/**
 * Pago (P) with the Pagos 2.0 complement for one payment of one PPD invoice: SubTotal 0, Moneda XXX,
 * Total 0, UsoCFDI CP01, the fixed concept 84111506 "Pago"; DoctoRelacionado with the chain
 * ImpSaldoAnt → ImpPagado → ImpSaldoInsoluto and NumParcialidad, ObjetoImpDR 02 with the IVA inside
 * the payment split like every other amount (BaseDR = round(monto / 1.16), ImporteDR = monto − BaseDR),
 * and the Totales of SAT's guide. MonedaP = MonedaDR = MXN, so EquivalenciaDR is 1.
 */
export function construirPago(input: PagoInput): Construido & { saldoInsolutoMinor: number } {
  const { docto } = input;
  if (!Number.isSafeInteger(input.montoMinor) || input.montoMinor < 1) throw new Error('payment amount must be a positive integer of cents');
  if (input.montoMinor > docto.saldoAnteriorMinor) throw new Error(`payment ${input.montoMinor} exceeds the balance ${docto.saldoAnteriorMinor}`);
  const saldoInsoluto = docto.saldoAnteriorMinor - input.montoMinor;
  const baseDR = baseDeTotal(input.montoMinor);
  const ivaDR = input.montoMinor - baseDR;
  const root = raiz('P', input, { NoCertificado: '', SubTotal: '0', Moneda: 'XXX', Total: '0' }, true);
  root.children.push(emisorEl(input.emisor), receptorEl(input.receptor, input.lugarExpedicion, 'CP01'));
  root.children.push(el('cfdi:Conceptos', {}, [el('cfdi:Concepto', { ...CONCEPTO_PAGO })]));
  const traslado = (p: string) => ({ [`Base${p}`]: pesos(baseDR), [`Impuesto${p}`]: '002', [`TipoFactor${p}`]: 'Tasa', [`TasaOCuota${p}`]: TASA_IVA_16, [`Importe${p}`]: pesos(ivaDR) });
  const pagos = el('pago20:Pagos', { Version: '2.0' }, [
    el('pago20:Totales', { TotalTrasladosBaseIVA16: pesos(baseDR), TotalTrasladosImpuestoIVA16: pesos(ivaDR), MontoTotalPagos: pesos(input.montoMinor) }),
    el(
      'pago20:Pago',
      { FechaPago: fechaLocal(input.fechaPago), FormaDePagoP: input.formaDePagoP, MonedaP: 'MXN', TipoCambioP: '1', Monto: pesos(input.montoMinor), NumOperacion: input.numOperacion },
      [
        el(
          'pago20:DoctoRelacionado',
          {
            IdDocumento: docto.uuid,
            Serie: docto.serie || undefined,
            Folio: docto.folio || undefined,
            MonedaDR: 'MXN',
            EquivalenciaDR: '1',
            NumParcialidad: String(docto.numParcialidad),
            ImpSaldoAnt: pesos(docto.saldoAnteriorMinor),
            ImpPagado: pesos(input.montoMinor),
            ImpSaldoInsoluto: pesos(saldoInsoluto),
            ObjetoImpDR: '02',
          },
          [el('pago20:ImpuestosDR', {}, [el('pago20:TrasladosDR', {}, [el('pago20:TrasladoDR', traslado('DR'))])])],
        ),
        el('pago20:ImpuestosP', {}, [el('pago20:TrasladosP', {}, [el('pago20:TrasladoP', traslado('P'))])]),
      ],
    ),
  ]);
  root.children.push(el('cfdi:Complemento', {}, [pagos]));
  return { doc: root, subtotalMinor: 0, ivaMinor: ivaDR, totalMinor: 0, saldoInsolutoMinor: saldoInsoluto };
}

export interface Sellado {
  doc: XmlElement;
  xml: string;
  cadena: string;
  sello: string;
}

/** Writes NoCertificado, computes the cadena original, signs it and writes Sello and Certificado. */
export function sellarComprobante(doc: XmlElement, csd: Pick<Csd, 'noCertificado' | 'certificado' | 'privateKey'>): Sellado {
  setAttr(doc, 'NoCertificado', csd.noCertificado);
  const cadena = cadenaOriginal(doc);
  return conSello(doc, csd, cadena, sellar(cadena, csd.privateKey));
}

/** sellarComprobante with the RSA signature on libuv's thread pool (csd.ts sellarAsync); same document. */
export async function sellarComprobanteAsync(doc: XmlElement, csd: Pick<Csd, 'noCertificado' | 'certificado' | 'privateKey'>): Promise<Sellado> {
  setAttr(doc, 'NoCertificado', csd.noCertificado);
  const cadena = cadenaOriginal(doc);
  return conSello(doc, csd, cadena, await sellarAsync(cadena, csd.privateKey));
}

/** Sello after Fecha and Certificado after NoCertificado, as in SAT's samples. */
function conSello(doc: XmlElement, csd: Pick<Csd, 'certificado'>, cadena: string, sello: string): Sellado {
  const at = (k: string) => doc.attrs.findIndex(([n]) => n === k);
  doc.attrs = doc.attrs.filter(([k]) => k !== 'Sello' && k !== 'Certificado');
  doc.attrs.splice(at('Fecha') + 1, 0, ['Sello', sello]);
  doc.attrs.splice(at('NoCertificado') + 1, 0, ['Certificado', csd.certificado]);
  return { doc, xml: serialize(doc), cadena, sello };
}

export const complemento = (doc: XmlElement) => kid(doc, NS.cfdi, 'Complemento');
