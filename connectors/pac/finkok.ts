// Finkok, the real PAC adapter (live mode only): SOAP 1.1 over HTTPS with undici, envelopes and
// answers mapped by finkok-mapping.ts. Stamp: `stamp`; on incidence 307 (already stamped, answer
// without the stamp) it asks `stamped` for the original stamp, as Finkok's documentation advises.
// Cancel: `cancel_signature` with SAT's cancellation request signed by the issuer's CSD.
import { request } from 'undici';
import { firmarCancelacion } from '../../formats/cfdi/cancelacion.js';
import { fechaLocal } from '../../formats/cfdi/comprobante.js';
import { FINKOK_UNCONFIRMED, cancelEnvelope, readCancelAnswer, readStampAnswer, stampEnvelope } from './finkok-mapping.js';
import { type CancelOutcome, type CancelRequest, type Pac, type StampOutcome, type StampRequest, type Stamped } from './pac.js';
import { OutcomeUnknown } from '../../kernel/outbound.js';

export interface FinkokOptions {
  /** Base URL (FINKOK_HOSTS.production or .demo; a loopback fake in tests). */
  baseUrl: string;
  /** Whole-call deadline (connect, headers and body), ms. */
  timeoutMs?: number;
}

export class FinkokPac implements Pac {
  readonly key = 'finkok';
  readonly live = true;
  private readonly timeoutMs: number;

  constructor(private readonly opts: FinkokOptions) {
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  private async post(path: string, op: string, body: string): Promise<string> {
    let res;
    try {
      res = await request(this.opts.baseUrl + path, {
        method: 'POST',
        headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${FINKOK_UNCONFIRMED.soapAction(op)}"` },
        body,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      throw new OutcomeUnknown('unreachable', `Finkok ${op} did not answer: ${(e as Error).message}`);
    }
    let text: string;
    try {
      text = await res.body.text();
    } catch (e) {
      throw new OutcomeUnknown('unreachable', `Finkok ${op} answer was cut: ${(e as Error).message}`);
    }
    // SOAP faults come back as 500 with a Fault body: read them; other non-2xx statuses are outages.
    if (res.statusCode >= 500 && !text.includes('Fault')) throw new OutcomeUnknown('unreachable', `Finkok ${op} answered HTTP ${res.statusCode}`);
    if (res.statusCode >= 300 && res.statusCode < 500) throw new OutcomeUnknown('bad_response', `Finkok ${op} answered HTTP ${res.statusCode}`);
    return text;
  }

  private creds(req: { credentials: { user?: string; password?: string } }) {
    const { user, password } = req.credentials;
    if (!user || !password) return null;
    return { user, password };
  }

  async stamp(req: StampRequest): Promise<StampOutcome> {
    if (!req.livemode) throw new Error('the Finkok adapter is used in live mode only');
    const c = this.creds(req);
    if (!c) return { kind: 'rejected', code: '300', message: 'Usuario y contraseña inválidos: PAC credentials are missing' };
    const first = readStampAnswer(await this.post(FINKOK_UNCONFIRMED.endpoint.stamp, 'stamp', stampEnvelope('stamp', req.xml, c.user, c.password)), 'stamp');
    if (first.kind !== 'duplicate') return first;
    // 307: the same pre-CFDI was stamped before; `stamped` returns that stamp.
    const again = readStampAnswer(await this.post(FINKOK_UNCONFIRMED.endpoint.stamp, 'stamped', stampEnvelope('stamped', req.xml, c.user, c.password)), 'stamped');
    if (again.kind === 'duplicate') throw new OutcomeUnknown('no_uuid', 'Finkok says the CFDI was stamped (307) but `stamped` does not return it');
    return again;
  }

  /** `stamped`: the stamp of a pre-CFDI sent before, or 603 (never stamped). */
  async status(req: StampRequest): Promise<Stamped | { kind: 'not_stamped' }> {
    if (!req.livemode) throw new Error('the Finkok adapter is used in live mode only');
    const c = this.creds(req);
    if (!c) return { kind: 'not_stamped' };
    const r = readStampAnswer(await this.post(FINKOK_UNCONFIRMED.endpoint.stamp, 'stamped', stampEnvelope('stamped', req.xml, c.user, c.password)), 'stamped');
    if (r.kind === 'stamped') return r;
    if (r.kind === 'rejected' && r.code === '603') return { kind: 'not_stamped' };
    throw new OutcomeUnknown('bad_response', `Finkok stamped answered ${r.kind === 'rejected' ? `${r.code} ${r.message}` : r.kind}`);
  }

  async cancel(req: CancelRequest): Promise<CancelOutcome> {
    if (!req.livemode) throw new Error('the Finkok adapter is used in live mode only');
    const c = this.creds(req);
    if (!c) return { kind: 'rejected', code: '300', message: 'PAC credentials are missing' };
    const signed = firmarCancelacion(
      { rfcEmisor: req.rfcEmisor, fecha: fechaLocal(req.now), folios: [{ uuid: req.uuid, motivo: req.motivo, folioSustitucion: req.motivo === '01' ? req.folioSustitucion : undefined }] },
      req.csd,
    );
    return readCancelAnswer(await this.post(FINKOK_UNCONFIRMED.endpoint.cancel, 'cancel_signature', cancelEnvelope(signed, c.user, c.password, false)), req.uuid);
  }
}
