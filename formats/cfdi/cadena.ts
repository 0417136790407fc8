// The cadena original, computed by Orquesta's own code with exactly the rules of SAT's
// `cadenaoriginal_4_0.xslt` (with `Pagos20.xslt` and `utilerias.xslt`) and
// `cadenaoriginal_TFD_1_1.xslt`. The tests compare it byte for byte with xsltproc running SAT's
// files over the serialized document (test/cfdi-documents.test.ts).
//
// The XSLT rules, restated:
// - the document is `|` + the Comprobante + `||`;
// - "Requerido": `|` + normalize-space(value), also when the attribute is absent (`|` alone);
// - "Opcional": only when the attribute exists (even empty): `|` + normalize-space(value);
// - elements are visited in the order of the templates below, not in document order; an element
//   without a template (e.g. tfd:TimbreFiscalDigital inside cfdi:Complemento) falls to XSLT's
//   built-in rule, which visits its children and prints their text (CFDI elements carry none).
import { NS, attr, kids, localName, type XmlElement } from './xml.js';

/** XPath normalize-space(): XML whitespace only (space, tab, CR, LF), not other Unicode spaces. */
export const normalizeSpace = (s: string) => s.replace(/[ \t\r\n]+/g, ' ').replace(/^ | $/g, '');

type Field = readonly [name: string, required: boolean];
const R = (n: string): Field => [n, true];
const O = (n: string): Field => [n, false];

function fields(out: string[], e: XmlElement, list: readonly Field[]): void {
  for (const [name, required] of list) {
    const v = attr(e, name);
    if (v !== undefined) out.push('|', normalizeSpace(v));
    else if (required) out.push('|');
  }
}

/** Descendants (document order) with this namespace and local name, as XPath `.//ns:Local`. */
function descendants(e: XmlElement, ns: string, local: string, acc: XmlElement[] = []): XmlElement[] {
  for (const c of e.children) {
    if (c.ns === ns && localName(c) === local) acc.push(c);
    descendants(c, ns, local, acc);
  }
  return acc;
}

const COMPROBANTE = [
  R('Version'), O('Serie'), O('Folio'), R('Fecha'), O('FormaPago'), R('NoCertificado'), O('CondicionesDePago'),
  R('SubTotal'), O('Descuento'), R('Moneda'), O('TipoCambio'), R('Total'), R('TipoDeComprobante'), R('Exportacion'),
  O('MetodoPago'), R('LugarExpedicion'), O('Confirmacion'),
] as const;
const TRASLADO = [R('Base'), R('Impuesto'), R('TipoFactor'), O('TasaOCuota'), O('Importe')] as const;
const RETENCION_CONCEPTO = [R('Base'), R('Impuesto'), R('TipoFactor'), R('TasaOCuota'), R('Importe')] as const;
const CONCEPTO = [
  R('ClaveProdServ'), O('NoIdentificacion'), R('Cantidad'), R('ClaveUnidad'), O('Unidad'), R('Descripcion'),
  R('ValorUnitario'), R('Importe'), O('Descuento'), R('ObjetoImp'),
] as const;
const PARTE = [R('ClaveProdServ'), O('NoIdentificacion'), R('Cantidad'), O('Unidad'), R('Descripcion'), O('ValorUnitario'), O('Importe')] as const;
const TOTALES = [
  O('TotalRetencionesIVA'), O('TotalRetencionesISR'), O('TotalRetencionesIEPS'), O('TotalTrasladosBaseIVA16'),
  O('TotalTrasladosImpuestoIVA16'), O('TotalTrasladosBaseIVA8'), O('TotalTrasladosImpuestoIVA8'), O('TotalTrasladosBaseIVA0'),
  O('TotalTrasladosImpuestoIVA0'), O('TotalTrasladosBaseIVAExento'), R('MontoTotalPagos'),
] as const;
const PAGO = [
  R('FechaPago'), R('FormaDePagoP'), R('MonedaP'), O('TipoCambioP'), R('Monto'), O('NumOperacion'), O('RfcEmisorCtaOrd'),
  O('NomBancoOrdExt'), O('CtaOrdenante'), O('RfcEmisorCtaBen'), O('CtaBeneficiario'), O('TipoCadPago'), O('CertPago'),
  O('CadPago'), O('SelloPago'),
] as const;
const DOCTO = [
  R('IdDocumento'), O('Serie'), O('Folio'), R('MonedaDR'), O('EquivalenciaDR'), R('NumParcialidad'), R('ImpSaldoAnt'),
  R('ImpPagado'), R('ImpSaldoInsoluto'), R('ObjetoImpDR'),
] as const;

const C = NS.cfdi;
const P = NS.pago20;

/** One template per matched element, as in SAT's stylesheets; `apply` dispatches like xsl:apply-templates. */
function apply(out: string[], e: XmlElement): void {
  const t = e.ns === C ? CFDI_TEMPLATES[localName(e)] : e.ns === P ? PAGOS_TEMPLATES[localName(e)] : undefined;
  if (t) t(out, e);
  else for (const c of e.children) apply(out, c); // built-in rule: children only (no text in CFDI)
}
const applyAll = (out: string[], list: XmlElement[]) => list.forEach((x) => apply(out, x));

const CFDI_TEMPLATES: Record<string, (out: string[], e: XmlElement) => void> = {
  Comprobante(out, e) {
    fields(out, e, COMPROBANTE);
    applyAll(out, kids(e, C, 'InformacionGlobal'));
    applyAll(out, kids(e, C, 'CfdiRelacionados'));
    applyAll(out, kids(e, C, 'Emisor'));
    applyAll(out, kids(e, C, 'Receptor'));
    applyAll(out, kids(e, C, 'Conceptos'));
    applyAll(out, kids(e, C, 'Impuestos'));
    applyAll(out, kids(e, C, 'Complemento'));
  },
  InformacionGlobal: (out, e) => fields(out, e, [R('Periodicidad'), R('Meses'), R('Año')]),
  CfdiRelacionados(out, e) {
    fields(out, e, [R('TipoRelacion')]);
    for (const r of kids(e, C, 'CfdiRelacionado')) fields(out, r, [R('UUID')]);
  },
  Emisor: (out, e) => fields(out, e, [R('Rfc'), R('Nombre'), R('RegimenFiscal'), O('FacAtrAdquirente')]),
  Receptor: (out, e) =>
    fields(out, e, [R('Rfc'), R('Nombre'), R('DomicilioFiscalReceptor'), O('ResidenciaFiscal'), O('NumRegIdTrib'), R('RegimenFiscalReceptor'), R('UsoCFDI')]),
  Conceptos: (out, e) => applyAll(out, kids(e, C, 'Concepto')),
  Concepto(out, e) {
    fields(out, e, CONCEPTO);
    for (const imp of kids(e, C, 'Impuestos')) for (const ts of kids(imp, C, 'Traslados')) for (const t of kids(ts, C, 'Traslado')) fields(out, t, TRASLADO);
    for (const imp of kids(e, C, 'Impuestos')) for (const rs of kids(imp, C, 'Retenciones')) for (const r of kids(rs, C, 'Retencion')) fields(out, r, RETENCION_CONCEPTO);
    applyAll(out, kids(e, C, 'ACuentaTerceros'));
    applyAll(out, kids(e, C, 'InformacionAduanera'));
    applyAll(out, kids(e, C, 'CuentaPredial'));
    applyAll(out, kids(e, C, 'ComplementoConcepto'));
    applyAll(out, descendants(e, C, 'Parte'));
  },
  ACuentaTerceros: (out, e) =>
    fields(out, e, [R('RfcACuentaTerceros'), R('NombreACuentaTerceros'), R('RegimenFiscalACuentaTerceros'), R('DomicilioFiscalACuentaTerceros')]),
  InformacionAduanera: (out, e) => fields(out, e, [R('NumeroPedimento')]),
  CuentaPredial: (out, e) => fields(out, e, [R('Numero')]),
  ComplementoConcepto: (out, e) => applyAll(out, e.children),
  Parte(out, e) {
    fields(out, e, PARTE);
    applyAll(out, descendants(e, C, 'InformacionAduanera'));
  },
  Complemento: (out, e) => applyAll(out, e.children),
  Impuestos(out, e) {
    for (const rs of kids(e, C, 'Retenciones')) for (const r of kids(rs, C, 'Retencion')) fields(out, r, [R('Impuesto'), R('Importe')]);
    fields(out, e, [O('TotalImpuestosRetenidos')]);
    for (const ts of kids(e, C, 'Traslados')) for (const t of kids(ts, C, 'Traslado')) fields(out, t, TRASLADO);
    fields(out, e, [O('TotalImpuestosTrasladados')]);
  },
};

const PAGOS_TEMPLATES: Record<string, (out: string[], e: XmlElement) => void> = {
  Pagos(out, e) {
    fields(out, e, [R('Version')]);
    applyAll(out, kids(e, P, 'Totales'));
    applyAll(out, kids(e, P, 'Pago'));
  },
  Totales: (out, e) => fields(out, e, TOTALES),
  Pago(out, e) {
    fields(out, e, PAGO);
    applyAll(out, kids(e, P, 'DoctoRelacionado'));
    applyAll(out, kids(e, P, 'ImpuestosP'));
  },
  DoctoRelacionado(out, e) {
    fields(out, e, DOCTO);
    for (const i of kids(e, P, 'ImpuestosDR'))
      for (const rs of kids(i, P, 'RetencionesDR'))
        for (const r of kids(rs, P, 'RetencionDR')) fields(out, r, [R('BaseDR'), R('ImpuestoDR'), R('TipoFactorDR'), R('TasaOCuotaDR'), R('ImporteDR')]);
    for (const i of kids(e, P, 'ImpuestosDR'))
      for (const ts of kids(i, P, 'TrasladosDR'))
        for (const t of kids(ts, P, 'TrasladoDR')) fields(out, t, [R('BaseDR'), R('ImpuestoDR'), R('TipoFactorDR'), O('TasaOCuotaDR'), O('ImporteDR')]);
  },
  ImpuestosP(out, e) {
    applyAll(out, kids(e, P, 'RetencionesP'));
    applyAll(out, kids(e, P, 'TrasladosP'));
  },
  RetencionesP: (out, e) => applyAll(out, kids(e, P, 'RetencionP')),
  TrasladosP: (out, e) => applyAll(out, kids(e, P, 'TrasladoP')),
  RetencionP: (out, e) => fields(out, e, [R('ImpuestoP'), R('ImporteP')]),
  TrasladoP: (out, e) => fields(out, e, [R('BaseP'), R('ImpuestoP'), R('TipoFactorP'), O('TasaOCuotaP'), O('ImporteP')]),
};

/** Cadena original of a CFDI 4.0 Comprobante (cadenaoriginal_4_0.xslt). */
export function cadenaOriginal(comprobante: XmlElement): string {
  if (comprobante.ns !== C || localName(comprobante) !== 'Comprobante') throw new Error('not a cfdi:Comprobante (CFDI 4.0)');
  const out = ['|'];
  apply(out, comprobante);
  out.push('||');
  return out.join('');
}

/** Cadena original del complemento de certificación digital del SAT (cadenaoriginal_TFD_1_1.xslt). */
export function cadenaTimbre(tfd: XmlElement): string {
  if (tfd.ns !== NS.tfd || localName(tfd) !== 'TimbreFiscalDigital') throw new Error('not a tfd:TimbreFiscalDigital');
  const out = ['|'];
  fields(out, tfd, [R('Version'), R('UUID'), R('FechaTimbrado'), R('RfcProvCertif'), O('Leyenda'), R('SelloCFD'), R('NoCertificadoSAT')]);
  out.push('||');
  return out.join('');
}
