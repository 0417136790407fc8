// The `sim` PAC (decisions.md §5): stamps in test mode with a TimbreFiscalDigital signed with SAT's
// public test CSD. It checks what a PAC checks first (well-formed CFDI 4.0, no previous stamp, the
// Sello verifies with the Certificado of the document) and fails on purpose when the receptor's
// Nombre asks it to:
//
// | Receptor Nombre   | Outcome                                                         | API code                  |
// |-------------------|-----------------------------------------------------------------|---------------------------|
// | `PAC ERROR`       | rejected, code `SIM-301` (decisions.md §5)                      | `invoice.pac_error`       |
// | `PAC UNREACHABLE` | OutcomeUnknown unreachable (as a refused connection / timeout)        | `invoice.pac_unreachable` |
// | `PAC BAD RESPONSE`| OutcomeUnknown bad_response (as an unreadable answer)                 | `invoice.pac_bad_response`|
// | `PAC NO UUID`     | OutcomeUnknown no_uuid (as an answer without UUID)                    | `invoice.pac_no_uuid`     |
//
// Cancellation: motivo 01..04 are accepted; motivo 01 without FolioSustitucion is rejected `SIM-207`;
// a sim built with `trustAllUuids: false` (the conformance suite) rejects a UUID it never stamped
// with `SIM-205` (UUID no existe). What SAT holds for the receptor (`pending`, "En proceso") follows
// RMF rule 2.7.1.35 (needsAcceptance): after the day following its stamp, an ingreso over $1,000.00
// that is not global, and a payment complement (REP) of any amount; a receptor named
// `CANCELA CON ACEPTACION` or `RECHAZA CANCELACION` is asked for any CFDI (a credit note included:
// the egresos the rule's exception names). Otherwise it is cancelled at once ("Cancelado sin
// aceptación"). `cancelStatus` answers the receptor's decision: it accepts (`Cancelado`) unless
// named `RECHAZA CANCELACION` (`Vigente`, "Solicitud rechazada"). Both read the document from the
// request (`xml`), so every process answers the same.
//
// What a real PAC refuses (SAT's Anexo 20 rules and the PAC's own checks; Finkok's codes, see
// docs/invoices.md "What the sim PAC refuses"), the sim refuses too, before stamping:
//   301        the XML does not match SAT's patterns: emisor/receptor Rfc, DomicilioFiscalReceptor,
//              LugarExpedicion (cfdv40.xsd t_RFC, [0-9]{5}).
//   303        "Sello no corresponde a emisor": the certificate's RFC (x500UniqueIdentifier) is not the
//              Emisor's Rfc (Anexo 20: the CSD must belong to the emisor).
//   CFDI40147  DomicilioFiscalReceptor not in SAT's c_CodigoPostal (00000 is no postal code).
//   CFDI40145  a generic receptor (XAXX010101000 / XEXX010101000) not named PUBLICO EN GENERAL.
//   CFDI40149  a generic receptor whose DomicilioFiscalReceptor is not the LugarExpedicion.
//   CFDI40157  RegimenFiscalReceptor not a key of c_RegimenFiscal.
//   CFDI40158  RegimenFiscalReceptor that does not apply to the receptor's kind of person.
//   CFDI40161  UsoCFDI that does not apply to the receptor's person or régimen.
//
// UUIDs are random (decisions.md §5): two tenants sending byte-identical documents (same test CSD,
// same folio, same second on a test clock) get two UUIDs. The sim keeps a book of what it stamped
// per sender (`account`, else the PAC user; sha-256 of the sealed bytes → the stamp) so the same
// sender's same bytes get the same stamp from `stamp` and `status`, like a PAC's "already stamped"
// (307) recovery; a document it has no record of (another process, a restart) and would
// stamp is stamped now with a new UUID, one it would refuse was never stamped.
import { createHash, randomUUID } from 'node:crypto';
import { cadenaOriginal } from '../../formats/cfdi/cadena.js';
import { readCertificate, verificarSello } from '../../formats/cfdi/csd.js';
import { REGIMENES, USOS } from '../../formats/cfdi/catalogs.js';
import { checkRfc, NOMBRE_PUBLICO_GENERAL } from '../../formats/cfdi/receptor.js';
import { fechaLocal } from '../../formats/cfdi/comprobante.js';
import { buscarTimbre, construirTimbre, insertarTimbre } from '../../formats/cfdi/tfd.js';
import { NS, attr, escapeAttr, kid, localName, parseXml, serialize } from '../../formats/cfdi/xml.js';
import { TEST_CSD_RFC, testCsd } from './test-csd.js';
import { type CancelOutcome, type CancelRequest, type CancelStatus, type CancelStatusRequest, type Pac, type StampOutcome, type StampRequest, type Stamped } from './pac.js';
import { OutcomeUnknown } from '../../kernel/outbound.js';

export const SIM_TRIGGERS = {
  'PAC ERROR': 'rejected',
  'PAC UNREACHABLE': 'unreachable',
  'PAC BAD RESPONSE': 'bad_response',
  'PAC NO UUID': 'no_uuid',
} as const;

const reject = (code: string, message: string): StampOutcome => ({ kind: 'rejected', code, message });

const digest = (bytes: string) => createHash('sha256').update(bytes).digest('base64');

/** What SAT checks of the emisor and receptor before a PAC stamps (codes as Finkok answers them). */
export function simChecks(doc: ReturnType<typeof parseXml>): { code: string; message: string } | undefined {
  const emisor = kid(doc, NS.cfdi, 'Emisor');
  const receptor = kid(doc, NS.cfdi, 'Receptor');
  if (!emisor || !receptor) return { code: '705', message: 'XML estructura inválida: faltan Emisor o Receptor' };
  const rfcE = attr(emisor, 'Rfc') ?? '';
  if (!checkRfc(rfcE).ok) return { code: '301', message: `XML mal formado: Emisor Rfc "${rfcE}" no cumple el patrón de t_RFC` };
  const lugar = attr(doc, 'LugarExpedicion') ?? '';
  if (!/^\d{5}$/.test(lugar)) return { code: '301', message: `XML mal formado: LugarExpedicion "${lugar}" no cumple el patrón [0-9]{5}` };
  let certRfc = '';
  try {
    certRfc = readCertificate(attr(doc, 'Certificado') ?? '').rfc;
  } catch {
    return { code: '308', message: 'Certificado no expedido por el SAT' };
  }
  if (certRfc.toUpperCase() !== rfcE.toUpperCase()) return { code: '303', message: `Sello no corresponde a emisor: el certificado es de ${certRfc}, el emisor es ${rfcE}` };
  const rfcR = attr(receptor, 'Rfc') ?? '';
  const r = checkRfc(rfcR);
  if (!r.ok) return { code: '301', message: `XML mal formado: Receptor Rfc "${rfcR}" no cumple el patrón de t_RFC` };
  const cp = attr(receptor, 'DomicilioFiscalReceptor') ?? '';
  if (!/^\d{5}$/.test(cp)) return { code: '301', message: `XML mal formado: DomicilioFiscalReceptor "${cp}" no cumple el patrón [0-9]{5}` };
  if (cp === '00000') return { code: 'CFDI40147', message: 'El campo DomicilioFiscalReceptor del receptor, debe encontrarse en la lista de RFC inscritos no cancelados en el SAT.' };
  const nombre = attr(receptor, 'Nombre') ?? '';
  const regimen = attr(receptor, 'RegimenFiscalReceptor') ?? '';
  const uso = attr(receptor, 'UsoCFDI') ?? '';
  if (r.generico) {
    if (nombre !== NOMBRE_PUBLICO_GENERAL) return { code: 'CFDI40145', message: `El campo Nombre del receptor debe ser "${NOMBRE_PUBLICO_GENERAL}" con el RFC genérico ${r.rfc}.` };
    if (cp !== lugar) return { code: 'CFDI40149', message: 'El campo DomicilioFiscalReceptor debe ser igual a LugarExpedicion cuando el RFC del receptor es genérico.' };
  }
  const reg = REGIMENES[regimen];
  if (!reg) return { code: 'CFDI40157', message: `El campo RegimenFiscalReceptor "${regimen}" no contiene un valor del catálogo c_RegimenFiscal.` };
  if (!reg[r.persona!]) return { code: 'CFDI40158', message: `El campo RegimenFiscalReceptor ${regimen} debe corresponder con el tipo de persona (${r.persona}).` };
  const u = USOS[uso];
  if (!u || !u[r.persona!] || !u.regimenes.includes(regimen)) return { code: 'CFDI40161', message: `El campo UsoCFDI ${uso} debe corresponder con el tipo de persona y el RegimenFiscalReceptor ${regimen}.` };
  return undefined;
}

/** Receptors the sim's SAT always asks (any kind of CFDI, any amount, any day): one accepts, one refuses. */
export const SIM_RECEPTOR_ASKED = ['CANCELA CON ACEPTACION', 'RECHAZA CANCELACION'] as const;

/**
 * Whether SAT holds a cancellation for the receptor's acceptance (CFF art. 29-A; RMF rule 2.7.1.35,
 * "Cancelación de CFDI sin aceptación del receptor"): never within the day after its issue (fr. IX);
 * an ingreso only over $1,000.00 (fr. I) and not to the público en general (fr. VII); a payment
 * complement (REP, tipo P) whatever its amount (fr. I excepts the "Complemento para recepción de
 * Pagos" from the $1,000.00 limit); an egreso never (fr. III), except the cases its exception names
 * (rule 2.7.1.34, third paragraph), which the sim cannot read from the document: a receptor named in
 * SIM_RECEPTOR_ASKED stands for them (and for any CFDI the receptor must answer).
 */
function needsAcceptance(f: SimFacts, now: Date): boolean {
  if ((SIM_RECEPTOR_ASKED as readonly string[]).includes(f.receptorNombre)) return true;
  if (now.getTime() - f.stampedAt <= 24 * 3600_000) return false;
  if (f.tipo === 'I') return f.totalMinor > 100_000 && !f.global;
  return f.tipo === 'P';
}

type SimFacts = { tipo: string; totalMinor: number; global: boolean; stampedAt: number; receptorNombre: string };

/** What SAT knows of a stamped CFDI, read from the document itself (undefined when unreadable). */
function factsOf(xml: string): SimFacts | undefined {
  try {
    const doc = parseXml(xml);
    const tfd = buscarTimbre(doc);
    const fecha = tfd ? attr(tfd, 'FechaTimbrado') : undefined;
    return {
      tipo: attr(doc, 'TipoDeComprobante') ?? '',
      totalMinor: Math.round(Number(attr(doc, 'Total') ?? '0') * 100),
      global: !!kid(doc, NS.cfdi, 'InformacionGlobal'),
      // FechaTimbrado is Mexico City's local time without offset (UTC-6 since 2022: no DST).
      stampedAt: fecha ? Date.parse(`${fecha}-06:00`) : NaN,
      receptorNombre: attr(kid(doc, NS.cfdi, 'Receptor') ?? doc, 'Nombre') ?? '',
    };
  } catch {
    return undefined;
  }
}

export class SimPac implements Pac {
  readonly key = 'sim';
  readonly live = false;
  /** UUIDs this process stamped (cancellation answers `SIM-205` for others unless `trustAll`). */
  private readonly stamped = new Set<string>();
  /** The book: sha-256 of the sealed bytes → the stamp given (bounded; the oldest go first). */
  private readonly book = new Map<string, Stamped>();
  /** What a cancellation needs to know of a stamped UUID: TipoDeComprobante, Total, global or not, when. */
  private readonly facts = new Map<string, SimFacts>();

  constructor(private readonly opts: { trustAllUuids?: boolean } = { trustAllUuids: true }) {}

  async stamp(req: StampRequest): Promise<StampOutcome> {
    if (req.livemode) throw new Error('the sim PAC never stamps live documents');
    let doc;
    try {
      doc = parseXml(req.xml);
    } catch (e) {
      return reject('SIM-301', `XML mal formado: ${(e as Error).message}`);
    }
    if (doc.ns !== NS.cfdi || localName(doc) !== 'Comprobante' || attr(doc, 'Version') !== '4.0') return reject('SIM-705', 'XML estructura inválida: no es un cfdi:Comprobante 4.0');
    if (buscarTimbre(doc)) return reject('SIM-707', 'XML ya contiene un nodo TimbreFiscalDigital');
    const receptor = kid(doc, NS.cfdi, 'Receptor');
    const trigger = SIM_TRIGGERS[(attr(receptor ?? doc, 'Nombre') ?? '') as keyof typeof SIM_TRIGGERS];
    if (trigger === 'rejected') return reject('SIM-301', 'Rechazo simulado: el receptor se llama "PAC ERROR" (PAC de pruebas)');
    if (trigger) {
      const text = { unreachable: 'simulated: the PAC did not answer (receptor "PAC UNREACHABLE")', bad_response: 'simulated: the PAC answered something unreadable (receptor "PAC BAD RESPONSE")', no_uuid: 'simulated: the PAC answered without a UUID (receptor "PAC NO UUID")' }[trigger];
      throw new OutcomeUnknown(trigger, text);
    }
    const sello = attr(doc, 'Sello') ?? '';
    const certificado = attr(doc, 'Certificado') ?? '';
    if (!sello || !certificado || !attr(doc, 'NoCertificado')) return reject('SIM-302', 'Sello mal formado o inválido: faltan Sello, NoCertificado o Certificado');
    if (!verificarSello(cadenaOriginal(doc), sello, certificado)) return reject('SIM-302', 'Sello mal formado o inválido: el Sello no corresponde a la cadena original con el Certificado');
    const key = `${req.account ?? req.credentials.user ?? ''}\u0000${digest(req.xml)}`;
    const again = this.book.get(key);
    if (again) return again; // the same sender's same bytes: the stamp given (a PAC's 307 recovery)
    const refused = simChecks(doc);
    if (refused) return reject(refused.code, refused.message);
    const csd = testCsd(false);
    const uuid = randomUUID().toUpperCase();
    const fechaTimbrado = fechaLocal(req.now);
    const tfd = construirTimbre({ uuid, fechaTimbrado, rfcProvCertif: TEST_CSD_RFC, selloCfd: sello, noCertificadoSat: csd.noCertificado }, csd.privateKey);
    insertarTimbre(doc, tfd);
    this.stamped.add(uuid);
    const out: Stamped = { kind: 'stamped', uuid, xml: serialize(doc), fechaTimbrado, noCertificadoSat: csd.noCertificado, selloSat: attr(tfd, 'SelloSAT')!, rfcProvCertif: TEST_CSD_RFC };
    if (this.book.size >= 10_000) this.book.delete(this.book.keys().next().value!);
    this.book.set(key, out);
    const total = attr(doc, 'Total') ?? '0';
    this.facts.set(uuid, { tipo: attr(doc, 'TipoDeComprobante') ?? '', totalMinor: Math.round(Number(total) * 100), global: !!kid(doc, NS.cfdi, 'InformacionGlobal'), stampedAt: req.now.getTime(), receptorNombre: attr(receptor ?? doc, 'Nombre') ?? '' });
    if (this.facts.size > 10_000) this.facts.delete(this.facts.keys().next().value!);
    return out;
  }

  /**
   * The stamp it gave these bytes (its book); without a record, a document it would stamp is stamped
   * now (a new random UUID), one it would refuse or fail on was never stamped.
   */
  async status(req: StampRequest): Promise<Stamped | { kind: 'not_stamped' }> {
    const known = this.book.get(`${req.account ?? req.credentials.user ?? ''}\u0000${digest(req.xml)}`);
    if (known) return known;
    try {
      const out = await this.stamp(req);
      return out.kind === 'stamped' ? out : { kind: 'not_stamped' };
    } catch (e) {
      if (e instanceof OutcomeUnknown) return { kind: 'not_stamped' };
      throw e;
    }
  }

  /**
   * SAT's view of a CFDI whose cancellation waited for the receptor (as Finkok's `get_sat_status`):
   * the sim's receptor accepts at the first question (`Cancelado`), unless it is named
   * `RECHAZA CANCELACION` (`Vigente`, "Solicitud rechazada": the CFDI stays live). The receptor is
   * read from the document (req.xml), so any process answers the same; without it, from what this
   * process stamped; unknown: the sim's receptor accepts.
   */
  async cancelStatus(req: CancelStatusRequest): Promise<CancelStatus> {
    const u = req.uuid.toUpperCase();
    const f = (req.xml ? factsOf(req.xml) : undefined) ?? this.facts.get(u);
    if (f?.receptorNombre === 'RECHAZA CANCELACION') return { kind: 'rejected', estado: 'Vigente', estatusCancelacion: 'Solicitud rechazada' };
    return { kind: 'cancelled', estado: 'Cancelado' };
  }

  async cancel(req: CancelRequest): Promise<CancelOutcome> {
    if (req.livemode) throw new Error('the sim PAC never cancels live documents');
    if (!['01', '02', '03', '04'].includes(req.motivo)) return { kind: 'rejected', code: 'SIM-207', message: `Motivo ${req.motivo} inválido` };
    if (req.motivo === '01' && !req.folioSustitucion) return { kind: 'rejected', code: 'SIM-207', message: 'El motivo 01 requiere FolioSustitucion' };
    if (!this.opts.trustAllUuids && !this.stamped.has(req.uuid.toUpperCase())) return { kind: 'rejected', code: 'SIM-205', message: `UUID ${req.uuid} no existe` };
    const acuse = `<Acuse Fecha="${fechaLocal(req.now)}" RfcEmisor="${escapeAttr(req.rfcEmisor)}"><Folios><UUID>${req.uuid.toUpperCase()}</UUID><EstatusUUID>201</EstatusUUID></Folios></Acuse>`;
    // The sim reads the document from the request (req.xml), else from what it stamped itself.
    const f = (req.xml ? factsOf(req.xml) : undefined) ?? this.facts.get(req.uuid.toUpperCase());
    return f && needsAcceptance(f, req.now) ? { kind: 'pending', acuse } : { kind: 'cancelled', acuse };
  }
}
