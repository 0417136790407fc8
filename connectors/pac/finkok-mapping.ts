// Finkok SOAP mapping, pure: request envelopes and answer readers, no I/O. Sources and confidence
// marks are in docs/invoices.md ("Finkok") and the shared format notes; the parts not confirmed by
// public sources are gathered in FINKOK_UNCONFIRMED below and nowhere else.
import { XMLParser } from 'fast-xml-parser';
import { escapeAttr, parseXml, type XmlElement } from '../../formats/cfdi/xml.js';
import { buscarTimbre, leerTimbre, UUID_RE } from '../../formats/cfdi/tfd.js';
import { type CancelOutcome, type CancelStatus, type StampOutcome } from './pac.js';
import { OutcomeUnknown } from '../../kernel/outbound.js';

const SOAP_ENV = 'http://schemas.xmlsoap.org/soap/envelope/';
export const FINKOK_NS = { stamp: 'http://facturacion.finkok.com/stamp', cancel: 'http://facturacion.finkok.com/cancel' } as const;

/** Hosts [C]. */
export const FINKOK_HOSTS = { demo: 'https://demo-facturacion.finkok.com', production: 'https://facturacion.finkok.com' } as const;

/**
 * What public sources do not confirm, in one place. The WSDLs are at `/servicios/soap/stamp.wsdl` and
 * `/servicios/soap/cancel.wsdl` [C]; their endpoint addresses and SOAPAction values are taken to be the
 * WSDL path without `.wsdl` and the operation name [U]; `cancel_signature`'s `xml` is sent base64 like
 * `stamp`'s (base64Binary in the stamp WSDL [C], unconfirmed for cancel [U]).
 */
export const FINKOK_UNCONFIRMED = {
  endpoint: { stamp: '/servicios/soap/stamp', cancel: '/servicios/soap/cancel' },
  soapAction: (op: string) => op,
  cancelXmlBase64: true,
} as const;

/** Incidence codes (CodigoError) of `stamp` and their class (shared notes §2; 300/501/70x config, 708 SAT down). */
export const STAMP_INCIDENCE: Record<string, 'duplicate' | 'rejected' | 'retry'> = {
  '300': 'rejected', '301': 'rejected', '302': 'rejected', '303': 'rejected', '304': 'rejected', '305': 'rejected',
  '306': 'rejected', '307': 'duplicate', '308': 'rejected', '401': 'rejected', '402': 'rejected', '403': 'rejected',
  '501': 'rejected', '702': 'rejected', '703': 'rejected', '704': 'rejected', '705': 'rejected', '706': 'rejected',
  '707': 'rejected', '708': 'retry', '603': 'rejected',
};

/** EstatusUUID of a cancelled folio [C]. Anything else is an answer Orquesta cannot read (throws). */
export const CANCEL_FOLIO_STATUS: Record<string, 'requested' | 'rejected'> = {
  '201': 'requested', '202': 'requested', '203': 'rejected', '205': 'rejected', '207': 'rejected', '208': 'rejected', no_cancelable: 'rejected',
};

/** Request-level CodEstatus of cancel_signature when no folio came back [C]: 708/798/799 retry, 711 certificate error. */
export const CANCEL_REQUEST_STATUS: Record<string, 'retry' | 'rejected'> = { '708': 'retry', '798': 'retry', '799': 'retry', '711': 'rejected' };

const el = (name: string, value: string) => `<${name}>${escapeAttr(value)}</${name}>`;

function envelope(prefix: string, ns: string, op: string, body: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<soapenv:Envelope xmlns:soapenv="${SOAP_ENV}" xmlns:${prefix}="${ns}"><soapenv:Header/><soapenv:Body><${prefix}:${op}>${body}</${prefix}:${op}></soapenv:Body></soapenv:Envelope>`;
}

/** `stamp` (or `stamped`, same parameters): the sealed CFDI in base64, user and password. */
export function stampEnvelope(op: 'stamp' | 'stamped', cfdiXml: string, user: string, password: string): string {
  const x = Buffer.from(cfdiXml, 'utf8').toString('base64');
  return envelope('stam', FINKOK_NS.stamp, op, el('stam:xml', x) + el('stam:username', user) + el('stam:password', password));
}

export function cancelEnvelope(signedXml: string, user: string, password: string, storePending = false): string {
  const x = FINKOK_UNCONFIRMED.cancelXmlBase64 ? Buffer.from(signedXml, 'utf8').toString('base64') : signedXml;
  return envelope('can', FINKOK_NS.cancel, 'cancel_signature', el('can:xml', x) + el('can:username', user) + el('can:password', password) + el('can:store_pending', String(storePending)));
}

/**
 * SOAP answers carry values as element text, which the CFDI tree (attributes only) does not keep:
 * this reads the answer with text preserved, as nested { name, text, children }.
 */
export interface SoapNode {
  name: string;
  text: string;
  children: SoapNode[];
}

const soapParser = new XMLParser({ preserveOrder: true, ignoreAttributes: true, parseTagValue: false, trimValues: true, processEntities: true, htmlEntities: true, ignoreDeclaration: true });

export function parseSoap(text: string): SoapNode {
  let doc: Record<string, unknown>[];
  try {
    doc = soapParser.parse(text, true);
  } catch (e) {
    throw new OutcomeUnknown('bad_response', `Finkok answered malformed XML: ${(e as Error).message}`);
  }
  const conv = (n: Record<string, unknown>): SoapNode | null => {
    const name = Object.keys(n).find((k) => k !== ':@');
    if (!name || name === '#text') return null;
    const kidsRaw = (n[name] as Record<string, unknown>[]) ?? [];
    const children: SoapNode[] = [];
    let t = '';
    for (const k of kidsRaw) {
      if ('#text' in k) t += String(k['#text']);
      else {
        const c = conv(k);
        if (c) children.push(c);
      }
    }
    return { name: name.includes(':') ? name.slice(name.indexOf(':') + 1) : name, text: t, children };
  };
  for (const n of doc) {
    const r = conv(n);
    if (r) return r;
  }
  throw new OutcomeUnknown('bad_response', 'Finkok answered an empty document');
}

const find = (n: SoapNode | undefined, name: string): SoapNode | undefined => n?.children.find((c) => c.name === name);
const findDeep = (n: SoapNode, name: string): SoapNode | undefined => {
  if (n.name === name) return n;
  for (const c of n.children) {
    const x = findDeep(c, name);
    if (x) return x;
  }
  return undefined;
};

/** The `<op>Result` inside the SOAP body, or an OutcomeUnknown (SOAP fault = the service failed: retry). */
function result(text: string, op: string): SoapNode {
  const root = parseSoap(text);
  if (root.name !== 'Envelope') throw new OutcomeUnknown('bad_response', `Finkok answered <${root.name}>, not a SOAP envelope`);
  const body = find(root, 'Body');
  if (!body) throw new OutcomeUnknown('bad_response', 'Finkok answered a SOAP envelope without Body');
  const fault = find(body, 'Fault');
  if (fault) throw new OutcomeUnknown('unreachable', `Finkok SOAP fault: ${find(fault, 'faultstring')?.text ?? 'no faultstring'} (retry with the same key)`);
  const r = findDeep(body, `${op}Result`);
  if (!r) throw new OutcomeUnknown('bad_response', `Finkok answer has no ${op}Result`);
  return r;
}

export interface Incidencia {
  codigo: string;
  mensaje: string;
}

function incidencias(r: SoapNode): Incidencia[] {
  const list = find(r, 'Incidencias');
  if (!list) return [];
  const out: Incidencia[] = [];
  for (const i of list.children.filter((c) => c.name === 'Incidencia')) {
    const codigo = find(i, 'CodigoError')?.text ?? '';
    const mensaje = find(i, 'MensajeIncidencia')?.text ?? '';
    if (!out.some((x) => x.codigo === codigo && x.mensaje === mensaje)) out.push({ codigo, mensaje }); // Finkok may repeat one
  }
  return out;
}

/** What a `stamp`/`stamped` answer says: stamped, duplicate (307 without the stamp), rejected, or throws. */
export type StampReading = StampOutcome | { kind: 'duplicate' };

export function readStampAnswer(text: string, op: 'stamp' | 'stamped'): StampReading {
  const r = result(text, op);
  const uuid = (find(r, 'UUID')?.text ?? '').trim();
  const xml = find(r, 'xml')?.text ?? '';
  const inc = incidencias(r);
  if (!uuid && !xml) {
    if (!inc.length) {
      const fault = find(r, 'faultstring')?.text;
      if (fault) throw new OutcomeUnknown('unreachable', `Finkok fault: ${fault}`);
      throw new OutcomeUnknown('no_uuid', 'Finkok answered without UUID, stamped XML or incidence');
    }
    const first = inc[0]!;
    const cls = STAMP_INCIDENCE[first.codigo];
    if (cls === 'duplicate') return { kind: 'duplicate' };
    if (cls === 'retry') throw new OutcomeUnknown('unreachable', `Finkok ${first.codigo}: ${first.mensaje} (retry with the same key)`);
    return { kind: 'rejected', code: first.codigo, message: inc.map((i) => `${i.codigo} ${i.mensaje}`).join('; ') };
  }
  if (!uuid) throw new OutcomeUnknown('no_uuid', 'Finkok returned a stamped XML without UUID');
  if (!UUID_RE.test(uuid)) throw new OutcomeUnknown('bad_response', `Finkok UUID "${uuid}" is not a UUID`);
  if (!xml) throw new OutcomeUnknown('bad_response', `Finkok returned UUID ${uuid} without the stamped XML`);
  let doc: XmlElement;
  try {
    doc = parseXml(xml);
  } catch (e) {
    throw new OutcomeUnknown('bad_response', `Finkok's stamped XML is malformed: ${(e as Error).message}`);
  }
  const tfd = buscarTimbre(doc);
  const t = leerTimbre(doc);
  if (!tfd || !t) throw new OutcomeUnknown('bad_response', 'Finkok stamped XML carries no TimbreFiscalDigital');
  if (t.uuid.toUpperCase() !== uuid.toUpperCase()) throw new OutcomeUnknown('bad_response', `Finkok UUID ${uuid} differs from its TimbreFiscalDigital's ${t.uuid}`);
  return { kind: 'stamped', uuid: uuid.toUpperCase(), xml, fechaTimbrado: t.fechaTimbrado, noCertificadoSat: t.noCertificadoSat, selloSat: t.selloSat, rfcProvCertif: t.rfcProvCertif };
}

/** `get_sat_status` (cancel service; parameters as phpcfdi/finkok's GetSatStatusService sends them [C]). */
export function satStatusEnvelope(q: { uuid: string; rfcEmisor: string; rfcReceptor: string; total: string }, user: string, password: string): string {
  return envelope('can', FINKOK_NS.cancel, 'get_sat_status', el('can:username', user) + el('can:password', password) + el('can:taxpayer_id', q.rfcEmisor) + el('can:rtaxpayer_id', q.rfcReceptor) + el('can:uuid', q.uuid) + el('can:total', q.total));
}

/**
 * A `get_sat_status` answer (`get_sat_statusResult` → `sat` → CodigoEstatus, Estado, EsCancelable,
 * EstatusCancelacion [C names, phpcfdi GetSatStatusResult]). `Estado`: Vigente / Cancelado / No Encontrado;
 * `EstatusCancelacion` of a request waiting for the receptor: "En proceso"; a refused one: "Solicitud
 * rechazada" ([U] the exact wording of the refusal and of "plazo vencido": docs/invoices.md).
 */
export function readSatStatusAnswer(text: string): CancelStatus {
  const r = result(text, 'get_sat_status');
  const sat = findDeep(r, 'sat') ?? r;
  const estado = (find(sat, 'Estado')?.text ?? '').trim();
  const esCancelable = (find(sat, 'EsCancelable')?.text ?? '').trim();
  const estatusCancelacion = (find(sat, 'EstatusCancelacion')?.text ?? '').trim();
  const e = estado.toLowerCase();
  if (e === 'cancelado') return { kind: 'cancelled', estado };
  if (e === 'no encontrado') return { kind: 'not_found' };
  if (e !== 'vigente') throw new OutcomeUnknown('bad_response', `get_sat_status answered Estado "${estado}"`);
  const c = estatusCancelacion.toLowerCase();
  if (c.includes('rechaz')) return { kind: 'rejected', estado, estatusCancelacion };
  if (c.includes('proceso')) return { kind: 'pending', estado, estatusCancelacion };
  return { kind: 'active', estado, esCancelable };
}

/** A `cancel_signature` answer for one UUID. */
export function readCancelAnswer(text: string, uuid: string): CancelOutcome {
  const r = result(text, 'cancel_signature');
  const folios = find(r, 'Folios');
  const acuse = find(r, 'Acuse')?.text || undefined;
  const folio = folios?.children.find((f) => f.name === 'Folio' && (find(f, 'UUID')?.text ?? '').toUpperCase() === uuid.toUpperCase());
  if (!folio) {
    const cod = (find(r, 'CodEstatus')?.text ?? '').trim();
    const cls = CANCEL_REQUEST_STATUS[cod] ?? CANCEL_REQUEST_STATUS[cod.slice(0, 3)];
    if (cls === 'retry') throw new OutcomeUnknown('unreachable', `Finkok cancel ${cod} (retry later)`);
    if (cls === 'rejected' || cod) return { kind: 'rejected', code: cod, message: `Finkok refused the cancellation: ${cod}` };
    throw new OutcomeUnknown('bad_response', `Finkok cancel answer has no folio ${uuid} and no CodEstatus`);
  }
  const estatus = (find(folio, 'EstatusUUID')?.text ?? '').trim();
  const cls = CANCEL_FOLIO_STATUS[estatus];
  if (!cls) throw new OutcomeUnknown('bad_response', `unknown EstatusUUID "${estatus}" for ${uuid}`);
  if (cls === 'rejected') return { kind: 'rejected', code: estatus, message: `SAT/Finkok refused cancelling ${uuid}: EstatusUUID ${estatus}` };
  const est = (find(folio, 'EstatusCancelacion')?.text ?? '').trim().toLowerCase();
  // "Cancelado sin aceptación" (or "Cancelado") is final; "En proceso"/empty waits for the receptor or SAT.
  return est.startsWith('cancelado') ? { kind: 'cancelled', acuse } : { kind: 'pending', acuse };
}

