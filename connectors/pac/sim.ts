// The `sim` PAC (decisions.md §5): stamps in test mode with a TimbreFiscalDigital signed with SAT's
// public test CSD. It checks what a PAC checks first (well-formed CFDI 4.0, no previous stamp, the
// Sello verifies with the Certificado of the document) and fails on purpose when the receptor's
// Nombre asks it to:
//
// | Receptor Nombre   | Outcome                                                         | API code                  |
// |-------------------|-----------------------------------------------------------------|---------------------------|
// | `PAC ERROR`       | rejected, code `SIM-301` (decisions.md §5)                      | `invoice.pac_error`       |
// | `PAC UNREACHABLE` | PacFault unreachable (as a refused connection / timeout)        | `invoice.pac_unreachable` |
// | `PAC BAD RESPONSE`| PacFault bad_response (as an unreadable answer)                 | `invoice.pac_bad_response`|
// | `PAC NO UUID`     | PacFault no_uuid (as an answer without UUID)                    | `invoice.pac_no_uuid`     |
//
// Cancellation: motivo 01..04 are accepted and cancelled at once ("Cancelado sin aceptación");
// motivo 01 without FolioSustitucion is rejected `SIM-207`; a sim built with `trustAllUuids: false`
// (the conformance suite) rejects a UUID it never stamped with `SIM-205` (UUID no existe).
//
// The UUID is derived from the sealed document (sha-256, shaped as a version-4 UUID), so stamping the
// same sealed bytes twice gives the same stamp, like a PAC's "already stamped" recovery; documents
// differ in Fecha and Sello, so UUIDs never repeat in practice.
import { createHash } from 'node:crypto';
import { cadenaOriginal } from '../../formats/cfdi/cadena.js';
import { verificarSello } from '../../formats/cfdi/csd.js';
import { fechaLocal } from '../../formats/cfdi/comprobante.js';
import { buscarTimbre, construirTimbre, insertarTimbre } from '../../formats/cfdi/tfd.js';
import { NS, attr, escapeAttr, kid, localName, parseXml, serialize } from '../../formats/cfdi/xml.js';
import { TEST_CSD_RFC, testCsd } from './test-csd.js';
import { PacFault, type CancelOutcome, type CancelRequest, type Pac, type StampOutcome, type StampRequest, type Stamped } from './pac.js';

export const SIM_TRIGGERS = {
  'PAC ERROR': 'rejected',
  'PAC UNREACHABLE': 'unreachable',
  'PAC BAD RESPONSE': 'bad_response',
  'PAC NO UUID': 'no_uuid',
} as const;

const reject = (code: string, message: string): StampOutcome => ({ kind: 'rejected', code, message });

function uuidFrom(bytes: string): string {
  const h = createHash('sha256').update(bytes).digest();
  h[6] = (h[6]! & 0x0f) | 0x40;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex').toUpperCase();
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

export class SimPac implements Pac {
  readonly key = 'sim';
  readonly live = false;
  /** UUIDs this process stamped (cancellation answers `SIM-205` for others unless `trustAll`). */
  private readonly stamped = new Set<string>();

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
      throw new PacFault(trigger, text);
    }
    const sello = attr(doc, 'Sello') ?? '';
    const certificado = attr(doc, 'Certificado') ?? '';
    if (!sello || !certificado || !attr(doc, 'NoCertificado')) return reject('SIM-302', 'Sello mal formado o inválido: faltan Sello, NoCertificado o Certificado');
    if (!verificarSello(cadenaOriginal(doc), sello, certificado)) return reject('SIM-302', 'Sello mal formado o inválido: el Sello no corresponde a la cadena original con el Certificado');
    const csd = testCsd(false);
    const uuid = uuidFrom(req.xml);
    const fechaTimbrado = fechaLocal(req.now);
    const tfd = construirTimbre({ uuid, fechaTimbrado, rfcProvCertif: TEST_CSD_RFC, selloCfd: sello, noCertificadoSat: csd.noCertificado }, csd.privateKey);
    insertarTimbre(doc, tfd);
    this.stamped.add(uuid);
    return { kind: 'stamped', uuid, xml: serialize(doc), fechaTimbrado, noCertificadoSat: csd.noCertificado, selloSat: attr(tfd, 'SelloSAT')!, rfcProvCertif: TEST_CSD_RFC };
  }

  /**
   * The sim stamps deterministically, so it knows without a book: a document it would stamp is
   * stamped (same UUID as `stamp` gives), one it would refuse or fail on was never stamped.
   */
  async status(req: StampRequest): Promise<Stamped | { kind: 'not_stamped' }> {
    try {
      const out = await this.stamp(req);
      return out.kind === 'stamped' ? out : { kind: 'not_stamped' };
    } catch (e) {
      if (e instanceof PacFault) return { kind: 'not_stamped' };
      throw e;
    }
  }

  async cancel(req: CancelRequest): Promise<CancelOutcome> {
    if (req.livemode) throw new Error('the sim PAC never cancels live documents');
    if (!['01', '02', '03', '04'].includes(req.motivo)) return { kind: 'rejected', code: 'SIM-207', message: `Motivo ${req.motivo} inválido` };
    if (req.motivo === '01' && !req.folioSustitucion) return { kind: 'rejected', code: 'SIM-207', message: 'El motivo 01 requiere FolioSustitucion' };
    if (!this.opts.trustAllUuids && !this.stamped.has(req.uuid.toUpperCase())) return { kind: 'rejected', code: 'SIM-205', message: `UUID ${req.uuid} no existe` };
    const acuse = `<Acuse Fecha="${fechaLocal(req.now)}" RfcEmisor="${escapeAttr(req.rfcEmisor)}"><Folios><UUID>${req.uuid.toUpperCase()}</UUID><EstatusUUID>201</EstatusUUID></Folios></Acuse>`;
    return { kind: 'cancelled', acuse };
  }
}
