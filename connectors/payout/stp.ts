// The `stp` payout rail: STP's REST API (registraOrden to send, consOrdEnvRastreo to ask) over
// HTTPS with undici. The mapping is in stp-mapping.ts (pure); this file is the I/O: credentials per
// tenant (resolved by the caller, decrypted only in memory), the signing key, timeouts, and the
// rule that a duplicate tracking key is answered by asking STP what it has.
import { createHash, createPrivateKey, type KeyObject } from 'node:crypto';
import { request } from 'undici';
import { checkClabe } from '../../formats/clabe.js';
import {
  buildOrden,
  consultaBody,
  consultaFechaBody,
  mapConciliacion,
  mapConsulta,
  type ConciliatedOrder,
  mapRegistra,
  parseStpCallback,
  registraBody,
  type StpCredentials,
} from './stp-mapping.js';
import { operationDateOf, RailConfigurationError, type CallbackNotice, type OrderRef, type PayoutOrder, type PayoutRail, type RailState } from './rail.js';
import { OutcomeUnknown } from '../../kernel/outbound.js';

/** STP's hosts (shared/formats/stp.md §1). The REST base is `{host}/speiws/rest`. */
export const STP_PROD_URL = 'https://prod.stpmex.com/speiws/rest';
export const STP_DEMO_URL = 'https://demo.stpmex.com:7024/speiws/rest';

export interface StpRailOptions {
  /** REST base, e.g. STP_PROD_URL (config STP_API_URL); tests point it at test/fakes/stp.ts. */
  baseUrl: string;
  /** The tenant's credentials for a mode; null when the tenant configured none. */
  credentials(tenantId: string, livemode: boolean): Promise<StpCredentials | null>;
  /** Whole-call deadline (connect, send, answer). */
  timeoutMs?: number;
  /** The current instant (tests move it to check the query's dates). */
  now?: () => Date;
}

/** How many operation days after the recorded one a status query also looks at (an order sent after STP's cut-off belongs to a later day). */
export const STATUS_LOOKAHEAD_DAYS = 7;

export class StpPayoutRail implements PayoutRail {
  readonly key = 'stp';
  private keys = new Map<string, KeyObject>();
  constructor(private o: StpRailOptions) {}

  private async creds(tenantId: string, livemode: boolean): Promise<{ creds: StpCredentials; key: KeyObject }> {
    const creds = await this.o.credentials(tenantId, livemode);
    // No credentials is a configuration fault of this tenant, not an answer of STP: nothing was sent.
    if (!creds) throw new OutcomeUnknown('not_ready', `tenant ${tenantId} has no STP credentials for ${livemode ? 'live' : 'test'} mode`);
    const id = createHash('sha256').update(creds.privateKeyPem).update('\0').update(creds.passphrase).digest('hex');
    let key = this.keys.get(id);
    if (!key) {
      try {
        key = createPrivateKey({ key: creds.privateKeyPem, format: 'pem', passphrase: creds.passphrase });
      } catch {
        throw new OutcomeUnknown('not_ready', `tenant ${tenantId}'s STP private key cannot be opened with its passphrase`);
      }
      if (this.keys.size > 1000) this.keys.clear();
      this.keys.set(id, key);
    }
    return { creds, key };
  }

  private async call(method: 'PUT' | 'POST', path: string, body: Record<string, unknown>): Promise<unknown> {
    let res;
    try {
      res = await request(`${this.o.baseUrl}${path}`, {
        method,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.o.timeoutMs ?? 10_000),
      });
    } catch (e) {
      throw new OutcomeUnknown('unreachable', `STP ${path}: ${(e as Error).name === 'TimeoutError' ? 'no answer in time' : (e as Error).message}`);
    }
    let text: string;
    try {
      text = await res.body.text();
    } catch (e) {
      throw new OutcomeUnknown('unreachable', `STP ${path}: the answer broke off (${(e as Error).message})`);
    }
    // STP's gateway refuses callers outside its allow-list (no VPN, an IP not registered) with an HTML
    // 403 page before its application sees the call [C, stpmex-python cassette test_forbidden_without_vpn]:
    // a configuration fault to show, not an outage to retry.
    const html = /^\s*<(!doctype|html)/i.test(text) || String(res.headers['content-type'] ?? '').includes('text/html');
    if (res.statusCode === 401 || res.statusCode === 403 || (html && res.statusCode < 500)) {
      throw new RailConfigurationError(`STP refused the connection (HTTP ${res.statusCode}${html ? ', an HTML page from its gateway' : ''}): the calling IP is not registered with STP or the VPN to STP is down. Nothing reached STP; fix the network access and send again.`);
    }
    if (res.statusCode !== 200) throw new OutcomeUnknown('provider_error', `STP ${path}: HTTP ${res.statusCode}`);
    try {
      return JSON.parse(text);
    } catch {
      throw new OutcomeUnknown('bad_response', `STP ${path}: the answer is not JSON`);
    }
  }

  async send(order: PayoutOrder): Promise<RailState> {
    const check = checkClabe(order.clabe);
    if (!check.ok) return { state: 'failed', code: 'invalid_clabe', reason: check.message };
    const { creds, key } = await this.creds(order.tenantId, order.livemode);
    const answer = await this.call('PUT', '/ordenPago/registra', registraBody(buildOrden(order, creds, check.institution), key));
    const r = mapRegistra(answer);
    switch (r.kind) {
      case 'accepted':
        return { state: 'in_flight', providerRef: r.providerRef };
      case 'rejected':
        return { state: 'failed', code: r.code, reason: r.reason };
      case 'unknown':
        throw new OutcomeUnknown('unreachable', r.reason);
      case 'duplicate': {
        // The tracking key is STP's: the order exists already (an earlier send got through).
        const known = await this.status(order);
        if (!known) throw new OutcomeUnknown('bad_response', `STP says tracking key ${order.trackingKey} was used, but finds no order with it`);
        return known;
      }
    }
  }

  async status(ref: OrderRef): Promise<RailState | null> {
    const { creds, key } = await this.creds(ref.tenantId, ref.livemode);
    for (const fecha of this.queryDates(ref.operationDate)) {
      const found = mapConsulta(await this.call('POST', '/ordenPago/consOrdEnvRastreo', consultaBody(creds.empresa, ref.trackingKey, fecha, key)));
      if (found) return found;
    }
    return null;
  }

  /**
   * The day's conciliation: every order the tenant's account sent on an operation day (consOrdenesFech,
   * estado E) with its state, so orders whose callback never came are found in one call a day.
   * `operationDate` omitted: STP's current day.
   */
  async conciliate(tenantId: string, livemode: boolean, operationDate?: string): Promise<ConciliatedOrder[]> {
    const { creds, key } = await this.creds(tenantId, livemode);
    return mapConciliacion(await this.call('POST', '/ordenPago/consOrdenesFech', consultaFechaBody(creds.empresa, operationDate, key)));
  }

  /** STP's current operation day (no date sent), then the recorded day and the days after it up to today. */
  private queryDates(recorded: string): Array<string | undefined> {
    const out: Array<string | undefined> = [undefined];
    const today = operationDateOf(this.o.now?.() ?? new Date());
    let d = parseYmd(recorded);
    for (let i = 0; i <= STATUS_LOOKAHEAD_DAYS && d; i++) {
      const s = yyyymmdd(d);
      if (s > today) break;
      if (s !== today) out.push(s);
      d = new Date(d.getTime() + 86_400_000);
    }
    return out;
  }

  parseCallback(raw: string): CallbackNotice {
    return parseStpCallback(raw);
  }
}

const yyyymmdd = (d: Date) => d.toISOString().slice(0, 10).replace(/-/g, '');
const parseYmd = (s: string) => (/^\d{8}$/.test(s) ? new Date(`${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}T12:00:00Z`) : undefined);
