// TimbreFiscalDigital 1.1: the PAC's stamp inside cfdi:Complemento. SelloCFD is the issuer's Sello;
// SelloSAT signs the TFD's own cadena (cadenaoriginal_TFD_1_1.xslt) with the PAC/SAT certificate.
import { cadenaTimbre } from './cadena.js';
import { sellar, sellarAsync, verificarSello } from './csd.js';
import { NS, SCHEMA_LOCATION, attr, el, kid, setAttr, type XmlElement } from './xml.js';
import type { KeyObject } from 'node:crypto';

export interface Timbre {
  uuid: string;
  fechaTimbrado: string;
  rfcProvCertif: string;
  selloCfd: string;
  noCertificadoSat: string;
  selloSat: string;
  leyenda?: string;
}

/** Builds and signs a TFD 1.1 (what a PAC does). UUID upper case as SAT writes it. */
export function construirTimbre(t: Omit<Timbre, 'selloSat'>, pacKey: KeyObject): XmlElement {
  const tfd = timbreSinSello(t);
  setAttr(tfd, 'SelloSAT', sellar(cadenaTimbre(tfd), pacKey));
  return tfd;
}

/** construirTimbre with the RSA signature on libuv's thread pool (csd.ts sellarAsync); same TFD. */
export async function construirTimbreAsync(t: Omit<Timbre, 'selloSat'>, pacKey: KeyObject): Promise<XmlElement> {
  const tfd = timbreSinSello(t);
  setAttr(tfd, 'SelloSAT', await sellarAsync(cadenaTimbre(tfd), pacKey));
  return tfd;
}

function timbreSinSello(t: Omit<Timbre, 'selloSat'>): XmlElement {
  return el('tfd:TimbreFiscalDigital', {
    'xmlns:tfd': NS.tfd,
    'xmlns:xsi': NS.xsi,
    'xsi:schemaLocation': SCHEMA_LOCATION.tfd,
    Version: '1.1',
    UUID: t.uuid.toUpperCase(),
    FechaTimbrado: t.fechaTimbrado,
    RfcProvCertif: t.rfcProvCertif,
    Leyenda: t.leyenda,
    SelloCFD: t.selloCfd,
    NoCertificadoSAT: t.noCertificadoSat,
  });
}

/** Puts the TFD last inside cfdi:Complemento (created when the document has none). */
export function insertarTimbre(doc: XmlElement, tfd: XmlElement): void {
  let comp = kid(doc, NS.cfdi, 'Complemento');
  if (!comp) {
    comp = el('cfdi:Complemento', {});
    // Complemento goes after Impuestos (or Conceptos), before Addenda.
    const addenda = doc.children.findIndex((c) => c.ns === NS.cfdi && c.name.endsWith(':Addenda'));
    if (addenda >= 0) doc.children.splice(addenda, 0, comp);
    else doc.children.push(comp);
  }
  comp.children.push(tfd);
}

export function buscarTimbre(doc: XmlElement): XmlElement | undefined {
  const comp = kid(doc, NS.cfdi, 'Complemento');
  return comp ? kid(comp, NS.tfd, 'TimbreFiscalDigital') : undefined;
}

/** Reads the stamp fields of a stamped document; undefined when it carries no TFD. */
export function leerTimbre(doc: XmlElement): Timbre | undefined {
  const tfd = buscarTimbre(doc);
  if (!tfd) return undefined;
  return {
    uuid: attr(tfd, 'UUID') ?? '',
    fechaTimbrado: attr(tfd, 'FechaTimbrado') ?? '',
    rfcProvCertif: attr(tfd, 'RfcProvCertif') ?? '',
    selloCfd: attr(tfd, 'SelloCFD') ?? '',
    noCertificadoSat: attr(tfd, 'NoCertificadoSAT') ?? '',
    selloSat: attr(tfd, 'SelloSAT') ?? '',
    leyenda: attr(tfd, 'Leyenda'),
  };
}

/** Verifies SelloSAT with the certificate of the PAC/SAT (base64 DER). */
export function verificarTimbre(tfd: XmlElement, certificadoSatBase64: string): boolean {
  return verificarSello(cadenaTimbre(tfd), attr(tfd, 'SelloSAT') ?? '', certificadoSatBase64);
}

export const UUID_RE = /^[a-fA-F0-9]{8}-[a-fA-F0-9]{4}-[a-fA-F0-9]{4}-[a-fA-F0-9]{4}-[a-fA-F0-9]{12}$/;
