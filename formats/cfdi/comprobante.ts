// Builders of CFDI 4.0 Comprobantes: ingreso (PUE/PPD), egreso (credit note related with
// TipoRelacion 01) and pago (Pagos 2.0 complement). Pure: data in, element tree out; sealing with a
// CSD is `sellarComprobante`. Every amount is integer cents (amounts.ts explains the rounding).
import { pesos } from './amounts.js';
import { calcular, lineasParaTotal, proporcion, resumen16, type CalculoCfdi, type ConceptoFiscal, type LineaCalc, type ResumenImpuestos, type RetencionCalc, type TrasladoCalc } from './impuestos.js';
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

/** A concept line: its amount with IVA 16 % inside (`importeMinor`), or the full tax model (impuestos.ts). */
export type ConceptoInput = ConceptoFiscal;

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
  /** CfdiRelacionados (e.g. TipoRelacion 04, sustitución de los CFDI previos). */
  relacionados?: { tipoRelacion: string; uuids: string[] };
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
  /** The related invoice's taxes: the note reverses each group in proportion (default: IVA 16 % inside). */
  impuestos?: ResumenImpuestos;
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
    /** The paid invoice's taxes (ImpuestosDR in proportion); default IVA 16 % inside the amount. */
    impuestos?: ResumenImpuestos;
  };
}

export const MEXICO_TZ = 'America/Mexico_City';

/** t_FechaH: `aaaa-mm-ddThh:mm:ss` in the given IANA time zone, no offset (SAT wants local time). */
const formatters = new Map<string, { f: Intl.DateTimeFormat; second: number; text: string }>();
export function fechaLocal(d: Date, timeZone = MEXICO_TZ): string {
  // Building an Intl.DateTimeFormat costs far more than using one (bench/invoices profile): one per
  // zone. Using one (formatToParts) still cost ~0.1 ms a call (issue 26, sixth session), and the text
  // depends only on the second: the last second's text is kept per zone (an invoice's Fecha and its
  // FechaTimbrado, and the invoices of a busy second, ask for the same one).
  let z = formatters.get(timeZone);
  if (!z) formatters.set(timeZone, (z = { f: new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }), second: NaN, text: '' }));
  const second = Math.floor(d.getTime() / 1000);
  if (second === z.second) return z.text;
  const p = Object.fromEntries(z.f.formatToParts(d).map((x) => [x.type, x.value]));
  z.second = second;
  z.text = `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}`;
  return z.text;
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

function trasladoAttrs(t: TrasladoCalc, p = '') {
  return t.tipoFactor === 'Exento'
    ? { [`Base${p}`]: pesos(t.baseMinor), [`Impuesto${p}`]: t.impuesto, [`TipoFactor${p}`]: 'Exento' }
    : { [`Base${p}`]: pesos(t.baseMinor), [`Impuesto${p}`]: t.impuesto, [`TipoFactor${p}`]: 'Tasa', [`TasaOCuota${p}`]: t.tasa!, [`Importe${p}`]: pesos(t.importeMinor!) };
}
const retencionAttrs = (r: RetencionCalc, p = '') => ({ [`Base${p}`]: pesos(r.baseMinor), [`Impuesto${p}`]: r.impuesto, [`TipoFactor${p}`]: 'Tasa', [`TasaOCuota${p}`]: r.tasa, [`Importe${p}`]: pesos(r.importeMinor) });

function conceptosEl(lineas: LineaCalc[]) {
  return el(
    'cfdi:Conceptos',
    {},
    lineas.map((l) => {
      const c = l.input;
      const imp: XmlElement[] = [];
      if (l.traslado) imp.push(el('cfdi:Traslados', {}, [el('cfdi:Traslado', trasladoAttrs(l.traslado))]));
      if (l.retenciones.length) imp.push(el('cfdi:Retenciones', {}, l.retenciones.map((r) => el('cfdi:Retencion', retencionAttrs(r)))));
      return el(
        'cfdi:Concepto',
        {
          ClaveProdServ: c.claveProdServ ?? CLAVE_PROD_SERV_DEFAULT,
          NoIdentificacion: c.noIdentificacion,
          Cantidad: l.cantidad,
          ClaveUnidad: c.claveUnidad ?? CLAVE_UNIDAD_DEFAULT,
          Descripcion: c.descripcion,
          ValorUnitario: l.valorUnitario,
          Importe: pesos(l.importeMinor),
          Descuento: l.descuentoMinor ? pesos(l.descuentoMinor) : undefined,
          ObjetoImp: l.objetoImp,
        },
        imp.length ? [el('cfdi:Impuestos', {}, imp)] : [],
      );
    }),
  );
}

/** The Comprobante's Impuestos: Retenciones (per Impuesto) then Traslados (per group), as cfdv40.xsd orders them. */
function impuestosEl(c: Pick<CalculoCfdi, 'traslados' | 'retenciones' | 'totalTrasladosMinor' | 'totalRetencionesMinor'>): XmlElement | undefined {
  if (!c.traslados.length && !c.retenciones.length) return undefined;
  const kids: XmlElement[] = [];
  if (c.retenciones.length) kids.push(el('cfdi:Retenciones', {}, c.retenciones.map((r) => el('cfdi:Retencion', { Impuesto: r.impuesto, Importe: pesos(r.importeMinor) }))));
  if (c.traslados.length) kids.push(el('cfdi:Traslados', {}, c.traslados.map((t) => el('cfdi:Traslado', trasladoAttrs(t)))));
  const anyTasa = c.traslados.some((t) => t.tipoFactor === 'Tasa');
  return el('cfdi:Impuestos', { TotalImpuestosRetenidos: c.retenciones.length ? pesos(c.totalRetencionesMinor) : undefined, TotalImpuestosTrasladados: anyTasa ? pesos(c.totalTrasladosMinor) : undefined }, kids);
}

export interface Construido {
  doc: XmlElement;
  subtotalMinor: number;
  ivaMinor: number;
  totalMinor: number;
  /** The document's taxes, for the row, its payment complements, credit notes and the books. */
  impuestos: ResumenImpuestos & { retencionesMinor: number; ivaRetenidoMinor: number; isrRetenidoMinor: number };
}

const resumenDe = (c: CalculoCfdi): Construido['impuestos'] => ({
  traslados: c.traslados,
  retencionesDetalle: c.retencionesDetalle,
  totalMinor: c.totalMinor,
  subtotalMinor: c.subtotalMinor,
  descuentoMinor: c.descuentoMinor,
  retencionesMinor: c.totalRetencionesMinor,
  ivaRetenidoMinor: c.retenciones.find((r) => r.impuesto === '002')?.importeMinor ?? 0,
  isrRetenidoMinor: c.retenciones.find((r) => r.impuesto === '001')?.importeMinor ?? 0,
});

/**
 * Ingreso (I). A receptor XAXX010101000 "PUBLICO EN GENERAL" makes it a global invoice of one day
 * (InformacionGlobal Periodicidad 01, the month and year of Fecha), whose concepts are, as SAT's
 * guide for global invoices says, ClaveProdServ 01010101 and ClaveUnidad ACT.
 */
export function construirIngreso(input: IngresoInput): Construido {
  if (!input.conceptos.length) throw new Error('an ingreso needs at least one concept');
  for (const c of input.conceptos) if (c.importeMinor !== undefined && (!Number.isSafeInteger(c.importeMinor) || c.importeMinor < 1)) throw new Error(`concept importe must be a positive integer of cents: ${c.importeMinor}`);
  const global = esGlobal(input.receptor);
  const conceptos = input.conceptos.map((c) => (global ? { ...c, claveProdServ: '01010101', claveUnidad: 'ACT' } : c));
  const d = calcular(conceptos);
  const ppd = input.metodoPago === 'PPD';
  const root = raiz('I', input, {
    FormaPago: ppd ? '99' : input.formaPago,
    NoCertificado: '',
    SubTotal: pesos(d.subtotalMinor),
    Descuento: d.descuentoMinor ? pesos(d.descuentoMinor) : undefined,
    Moneda: 'MXN',
    Total: pesos(d.totalMinor),
  });
  ordenar(root, input.metodoPago);
  const local = fechaLocal(input.fecha);
  if (global) root.children.push(el('cfdi:InformacionGlobal', { Periodicidad: '01', Meses: local.slice(5, 7), Año: local.slice(0, 4) }));
  if (input.relacionados?.uuids.length) root.children.push(el('cfdi:CfdiRelacionados', { TipoRelacion: input.relacionados.tipoRelacion }, input.relacionados.uuids.map((u) => el('cfdi:CfdiRelacionado', { UUID: u }))));
  root.children.push(emisorEl(input.emisor), receptorEl(input.receptor, input.lugarExpedicion));
  root.children.push(conceptosEl(d.lineas));
  const imp = impuestosEl(d);
  if (imp) root.children.push(imp);
  return { doc: root, subtotalMinor: d.subtotalMinor - d.descuentoMinor, ivaMinor: d.ivaMinor, totalMinor: d.totalMinor, impuestos: resumenDe(d) };
}

/**
 * Egreso (E): a credit note for part or all of one or more invoices (CfdiRelacionados TipoRelacion
 * 01), one concept 84111506 "Servicios de facturación" / ACT with IVA inside its total, PUE. UsoCFDI is
 * G02 (Devoluciones, descuentos o bonificaciones) when the receptor's régimen admits it, else S01.
 */
export function construirEgreso(input: EgresoInput): Construido {
  if (!input.relacionados.length) throw new Error('a credit note relates at least one CFDI');
  const lineas = lineasDeNota(input.totalMinor, input.descripcion, input.impuestos);
  const d = calcular(lineas);
  const root = raiz('E', input, { FormaPago: input.formaPago, NoCertificado: '', SubTotal: pesos(d.subtotalMinor), Moneda: 'MXN', Total: pesos(d.totalMinor) });
  ordenar(root, 'PUE');
  const uso = USOS.G02!.regimenes.includes(input.receptor.regimenFiscal) ? 'G02' : 'S01';
  root.children.push(el('cfdi:CfdiRelacionados', { TipoRelacion: '01' }, input.relacionados.map((u) => el('cfdi:CfdiRelacionado', { UUID: u }))));
  root.children.push(emisorEl(input.emisor), receptorEl(input.receptor, input.lugarExpedicion, uso));
  root.children.push(conceptosEl(d.lineas));
  const imp = impuestosEl(d);
  if (imp) root.children.push(imp);
  return { doc: root, subtotalMinor: d.subtotalMinor, ivaMinor: d.ivaMinor, totalMinor: d.totalMinor, impuestos: resumenDe(d) };
}

/**
 * A credit note's concepts: one per tax group of the invoice, each the share of the note's total in
 * proportion to the group's share of the invoice (the last group takes the remainder), with the
 * group's IVA inside and the invoice's retention rates (retentions are assumed to apply to every
 * taxed concept, as they do for services). The note's Total is the amount asked for, with or without
 * retentions (it is what the customer is credited and what comes off a PPD's saldo). Without the
 * invoice's taxes: IVA 16 % inside.
 */
function lineasDeNota(totalMinor: number, descripcion: string, imp?: ResumenImpuestos): ConceptoFiscal[] {
  const base = { descripcion, claveProdServ: CLAVE_PROD_SERV_NOTA_CREDITO, claveUnidad: 'ACT' };
  const groups = imp?.traslados.length ? imp.traslados : resumen16(1, 1, 0).traslados;
  const retIsr = imp?.retencionesDetalle.find((r) => r.impuesto === '001')?.tasa;
  const retIva = imp?.retencionesDetalle.find((r) => r.impuesto === '002')?.tasa;
  if (groups.length === 1 && !retIsr && !retIva) {
    const g = groups[0]!;
    return [{ ...base, importeMinor: totalMinor, iva: ivaDe(g) }];
  }
  // Shares by each group's amount with its IVA (before retentions).
  const weight = groups.map((g) => g.baseMinor + (g.importeMinor ?? 0));
  const sum = weight.reduce((s, w) => s + w, 0);
  let left = totalMinor;
  return groups.map((g, i) => {
    const share = i === groups.length - 1 ? left : Math.round((totalMinor * weight[i]!) / sum);
    left -= share;
    const iva = ivaDe(g);
    const taxedIva = iva !== 'exento' && iva !== '0';
    const ret = { ...(retIsr ? { retencionIsr: retIsr } : {}), ...(retIva && taxedIva ? { retencionIva: retIva } : {}) };
    // With retentions the share is what the note credits (its Total: base + IVA − retenciones), as
    // for the invoice it relates; the lines before taxes are found for it (lineasParaTotal).
    if (retIsr || (retIva && taxedIva)) return lineasParaTotal(Math.max(1, share), { ...base, iva, ...ret });
    return [{ ...base, importeMinor: Math.max(1, share), iva }];
  }).flat();
}
const ivaDe = (t: TrasladoCalc) => (t.tipoFactor === 'Exento' ? 'exento' : t.tasa === '0.160000' ? '16' : t.tasa === '0.080000' ? '8' : '0') as ConceptoFiscal['iva'];

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
  // The paid document's taxes in proportion to the payment (default: IVA 16 % inside the amount,
  // which is the historical BaseDR = round(monto / 1.16), ImporteDR = monto − BaseDR).
  const share = docto.impuestos ? proporcion(docto.impuestos, input.montoMinor) : undefined;
  const traslados: TrasladoCalc[] = share?.traslados ?? (() => {
    const d = calcular([{ descripcion: 'x', importeMinor: input.montoMinor }]);
    return d.traslados;
  })();
  const retenciones: RetencionCalc[] = share?.retenciones ?? [];
  const root = raiz('P', input, { NoCertificado: '', SubTotal: '0', Moneda: 'XXX', Total: '0' }, true);
  root.children.push(emisorEl(input.emisor), receptorEl(input.receptor, input.lugarExpedicion, 'CP01'));
  root.children.push(el('cfdi:Conceptos', {}, [el('cfdi:Concepto', { ...CONCEPTO_PAGO })]));
  const impDR: XmlElement[] = [];
  if (retenciones.length) impDR.push(el('pago20:RetencionesDR', {}, retenciones.map((r) => el('pago20:RetencionDR', retencionAttrs(r, 'DR')))));
  if (traslados.length) impDR.push(el('pago20:TrasladosDR', {}, traslados.map((t) => el('pago20:TrasladoDR', trasladoAttrs(t, 'DR')))));
  const impP: XmlElement[] = [];
  const retP = new Map<string, number>();
  for (const r of retenciones) retP.set(r.impuesto, (retP.get(r.impuesto) ?? 0) + r.importeMinor);
  if (retP.size) impP.push(el('pago20:RetencionesP', {}, [...retP.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([imp, importe]) => el('pago20:RetencionP', { ImpuestoP: imp, ImporteP: pesos(importe) }))));
  if (traslados.length) impP.push(el('pago20:TrasladosP', {}, traslados.map((t) => el('pago20:TrasladoP', trasladoAttrs(t, 'P')))));
  const tot: Record<string, string> = {};
  if (retP.has('002')) tot.TotalRetencionesIVA = pesos(retP.get('002')!);
  if (retP.has('001')) tot.TotalRetencionesISR = pesos(retP.get('001')!);
  for (const t of traslados) {
    const k = t.tipoFactor === 'Exento' ? 'IVAExento' : t.tasa === '0.160000' ? 'IVA16' : t.tasa === '0.080000' ? 'IVA8' : 'IVA0';
    if (k === 'IVAExento') tot.TotalTrasladosBaseIVAExento = pesos(t.baseMinor);
    else {
      tot[`TotalTrasladosBase${k}`] = pesos(t.baseMinor);
      tot[`TotalTrasladosImpuesto${k}`] = pesos(t.importeMinor!);
    }
  }
  // Attribute order of pago20:Totales in Pagos20.xsd (the cadena follows the XSLT, not this order).
  const ORDER = ['TotalRetencionesIVA', 'TotalRetencionesISR', 'TotalRetencionesIEPS', 'TotalTrasladosBaseIVA16', 'TotalTrasladosImpuestoIVA16', 'TotalTrasladosBaseIVA8', 'TotalTrasladosImpuestoIVA8', 'TotalTrasladosBaseIVA0', 'TotalTrasladosImpuestoIVA0', 'TotalTrasladosBaseIVAExento'];
  const totales = Object.fromEntries(ORDER.filter((k) => tot[k]).map((k) => [k, tot[k]!]));
  const pagos = el('pago20:Pagos', { Version: '2.0' }, [
    el('pago20:Totales', { ...totales, MontoTotalPagos: pesos(input.montoMinor) }),
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
            ObjetoImpDR: impDR.length ? '02' : '01',
          },
          impDR.length ? [el('pago20:ImpuestosDR', {}, impDR)] : [],
        ),
        ...(impP.length ? [el('pago20:ImpuestosP', {}, impP)] : []),
      ],
    ),
  ]);
  root.children.push(el('cfdi:Complemento', {}, [pagos]));
  const iva = traslados.reduce((s, t) => s + (t.importeMinor ?? 0), 0);
  const base = traslados.reduce((s, t) => s + t.baseMinor, 0);
  const ivaRet = retP.get('002') ?? 0;
  const isrRet = retP.get('001') ?? 0;
  return {
    doc: root,
    subtotalMinor: 0,
    ivaMinor: iva,
    totalMinor: 0,
    saldoInsolutoMinor: saldoInsoluto,
    impuestos: { traslados, retencionesDetalle: retenciones, totalMinor: input.montoMinor, subtotalMinor: base, descuentoMinor: 0, retencionesMinor: ivaRet + isrRet, ivaRetenidoMinor: ivaRet, isrRetenidoMinor: isrRet },
  };
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
