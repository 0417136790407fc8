// Finkok, the real PAC adapter (live mode only): SOAP 1.1 over HTTPS with undici, envelopes and
// answers mapped by finkok-mapping.ts. Stamp: `stamp`; on incidence 307 (already stamped, answer
// without the stamp) it asks `stamped` for the original stamp, as Finkok's documentation advises.
// Cancel: `cancel_signature` with SAT's cancellation request signed by the issuer's CSD; a request
// waiting for the receptor is followed with `get_sat_status` (cancelStatus).
// As Finkok behaves (issue 28.5, phpcfdi/finkok docs/issues/StampServiceDobleEstampado.md): right after
// a stamp, `stamped` answers 603 ("no contiene un timbre previo") and `stamp` 307 without the XML for
// seconds (observed 4, up to 8): a 603 or a 307 without the stamp is re-asked for `stampLagMs` before
// it is believed. Test mode goes to Finkok's demo host, live mode to production.
import { request } from 'undici';
import { firmarCancelacion } from '../../formats/cfdi/cancelacion.js';
import { fechaLocal } from '../../formats/cfdi/comprobante.js';
import { FINKOK_HOSTS, FINKOK_UNCONFIRMED, cancelEnvelope, readCancelAnswer, readSatStatusAnswer, readStampAnswer, satStatusEnvelope, stampEnvelope, type StampReading } from './finkok-mapping.js';
import { type CancelOutcome, type CancelRequest, type CancelStatus, type CancelStatusRequest, type Pac, type StampOutcome, type StampRequest, type Stamped } from './pac.js';
import { OutcomeUnknown } from '../../kernel/outbound.js';

export interface FinkokOptions {
  /** Live mode's base URL (FINKOK_HOSTS.production; a loopback fake in tests). */
  baseUrl: string;
  /** Test mode's base URL (FINKOK_HOSTS.demo by default; a loopback fake in tests). */
  demoUrl?: string;
  /** Whole-call deadline (connect, headers and body), ms. */
  timeoutMs?: number;
  /** How long after a stamp a 603 / a 307 without the stamp is re-asked before it is believed (ms). */
  stampLagMs?: number;
  /** The pause between those re-asks (ms). */
  lagStepMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class FinkokPac implements Pac {
  readonly key = 'finkok';
  readonly live = true;
  private readonly timeoutMs: number;
  private readonly lagMs: number;
  private readonly stepMs: number;

  constructor(private readonly opts: FinkokOptions) {
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.lagMs = opts.stampLagMs ?? 12_000;
    this.stepMs = opts.lagStepMs ?? 1000;
  }

  /** Test keys stamp at Finkok's demo host, live keys at production; never across. */
  hostFor(livemode: boolean): string {
    return livemode ? this.opts.baseUrl : this.opts.demoUrl ?? FINKOK_HOSTS.demo;
  }

  /** Asks `stamped` until it answers the stamp or the lag has passed (603 / 307 without it meanwhile). */
  private async stampedAfterLag(livemode: boolean, xml: string, user: string, password: string): Promise<StampReading> {
    const until = Date.now() + this.lagMs;
    for (;;) {
      const r = readStampAnswer(await this.post(livemode, FINKOK_UNCONFIRMED.endpoint.stamp, 'stamped', stampEnvelope('stamped', xml, user, password)), 'stamped');
      const lagging = r.kind === 'duplicate' || (r.kind === 'rejected' && r.code === '603');
      if (!lagging || Date.now() + this.stepMs > until) return r;
      await sleep(this.stepMs);
    }
  }

  private async post(livemode: boolean, path: string, op: string, body: string): Promise<string> {
    let res;
    try {
      res = await request(this.hostFor(livemode) + path, {
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
    const c = this.creds(req);
    if (!c) return { kind: 'rejected', code: '300', message: 'Usuario y contraseña inválidos: PAC credentials are missing' };
    const first = readStampAnswer(await this.post(req.livemode, FINKOK_UNCONFIRMED.endpoint.stamp, 'stamp', stampEnvelope('stamp', req.xml, c.user, c.password)), 'stamp');
    if (first.kind !== 'duplicate') return first;
    // 307: the same pre-CFDI was stamped before; `stamped` returns that stamp, once Finkok has it available.
    const again = await this.stampedAfterLag(req.livemode, req.xml, c.user, c.password);
    // Still 603/307 after the lag: Finkok holds a stamp it does not hand back yet. Unknown, never "not stamped".
    if (again.kind !== 'stamped') throw new OutcomeUnknown('no_uuid', 'Finkok says the CFDI was stamped (307) but `stamped` does not return it yet (ask again)');
    return again;
  }

  /**
   * `stamped`: the stamp of a pre-CFDI sent before, or `not_stamped` when it answers 603 once the lag
   * has passed. With `sentAt` (the caller's mark) Finkok is asked once: a 603 / 307 without the stamp
   * inside the lag is "ask again later" (OutcomeUnknown `no_uuid`: the CFDI stays pending, nothing
   * sleeps under the entity's lock), after it a 603 is believed. Without `sentAt` the re-asks wait
   * out the lag here.
   */
  async status(req: StampRequest): Promise<Stamped | { kind: 'not_stamped' }> {
    const c = this.creds(req);
    if (!c) return { kind: 'not_stamped' };
    const r = req.sentAt
      ? readStampAnswer(await this.post(req.livemode, FINKOK_UNCONFIRMED.endpoint.stamp, 'stamped', stampEnvelope('stamped', req.xml, c.user, c.password)), 'stamped')
      : await this.stampedAfterLag(req.livemode, req.xml, c.user, c.password);
    const lagging = r.kind === 'duplicate' || (r.kind === 'rejected' && r.code === '603');
    if (lagging && req.sentAt && Date.now() - req.sentAt.getTime() < this.lagMs) {
      throw new OutcomeUnknown('no_uuid', `Finkok \`stamped\` answers ${r.kind === 'duplicate' ? '307 without the stamp' : '603'} within ${Math.round(this.lagMs / 1000)} s of the first send (its documented lag after a stamp): asked again later`);
    }
    if (r.kind === 'stamped') return r;
    if (r.kind === 'rejected' && r.code === '603') return { kind: 'not_stamped' };
    if (r.kind === 'duplicate') throw new OutcomeUnknown('no_uuid', 'Finkok `stamped` keeps answering 307 without the stamp (ask again)');
    throw new OutcomeUnknown('bad_response', `Finkok stamped answered ${r.code} ${r.message}`);
  }

  /** `get_sat_status`: SAT's view of a CFDI whose cancellation waits for the receptor. */
  async cancelStatus(req: CancelStatusRequest): Promise<CancelStatus> {
    const c = this.creds(req);
    if (!c) throw new OutcomeUnknown('not_ready', 'PAC credentials are missing');
    return readSatStatusAnswer(await this.post(req.livemode, FINKOK_UNCONFIRMED.endpoint.cancel, 'get_sat_status', satStatusEnvelope(req, c.user, c.password)));
  }

  async cancel(req: CancelRequest): Promise<CancelOutcome> {
    const c = this.creds(req);
    if (!c) return { kind: 'rejected', code: '300', message: 'PAC credentials are missing' };
    const signed = firmarCancelacion(
      { rfcEmisor: req.rfcEmisor, fecha: fechaLocal(req.now), folios: [{ uuid: req.uuid, motivo: req.motivo, folioSustitucion: req.motivo === '01' ? req.folioSustitucion : undefined }] },
      req.csd,
    );
    return readCancelAnswer(await this.post(req.livemode, FINKOK_UNCONFIRMED.endpoint.cancel, 'cancel_signature', cancelEnvelope(signed, c.user, c.password, false)), req.uuid);
  }
}
