// The delivery's HTTP client: one undici keep-alive Pool per origin, every new connection resolved
// through the delivery-time address guard (actors/net-guard.ts `guardedLookup`, so a name rebound
// to a private address is refused at connect), a signed POST through `dispatch()` with a small
// handler, the whole answer within DELIVERY_TIMEOUT_MS, no redirects followed, TLS verified.
import { Pool } from 'undici';
import { signatureHeader, SIGNATURE_HEADER } from '../../kernel/signing.js';
import { injectTrace } from '../../kernel/tracing.js';
import { guardedLookup, type NetPolicy } from '../net-guard.js';
import { API_VERSION } from './version.js';

/** Success is a 2xx answer, whole, within this window (spec: "about 10 seconds"). */
export const DELIVERY_TIMEOUT_MS = 10_000;
const USER_AGENT = `Orquesta-Webhooks/${API_VERSION}`;
const TIMEOUT_MESSAGE = `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`;
/** Connections per origin at most (several endpoints may share an origin; each endpoint has at most 8 in flight). */
const CONNECTIONS_PER_ORIGIN = 64;

export type Outcome = { ok: boolean; status?: number; error?: string };

/** Where a URL's requests go, parsed once per endpoint URL: the origin's connection pool and the path. */
export interface Target {
  origin: string;
  pool: Pool;
  path: string;
  host: string;
}

/**
 * One POST's undici handler: success is a final 2xx status once the whole answer has arrived; the
 * body is dropped chunk by chunk (no redirect is followed: undici follows none unless asked).
 */
class PostHandler {
  private status = 0;
  private abort: ((err?: Error) => void) | null = null;
  private timedOut = false;
  private done = false;
  constructor(
    readonly until: number,
    private resolve: (o: Outcome) => void,
    private pending: Set<PostHandler>,
  ) {}
  onConnect(abort: (err?: Error) => void) {
    if (this.timedOut) abort(new Error(TIMEOUT_MESSAGE));
    else this.abort = abort;
  }
  onHeaders(statusCode: number) {
    this.status = statusCode; // 1xx first, then the final status
    return true;
  }
  onData() {
    return true;
  }
  onComplete() {
    this.finish({ ok: this.status >= 200 && this.status < 300, status: this.status });
  }
  onError(err: Error) {
    this.finish({ ok: false, status: this.status || undefined, error: err.message });
  }
  /** Past the deadline: aborts the request (closing its connection), or gives up on it while it waits for one. */
  expire() {
    this.timedOut = true;
    if (this.abort) this.abort(new Error(TIMEOUT_MESSAGE));
    else this.finish({ ok: false, error: TIMEOUT_MESSAGE });
  }
  private finish(o: Outcome) {
    if (this.done) return;
    this.done = true;
    this.pending.delete(this);
    this.resolve(o);
  }
}

export class WebhookHttpClient {
  /** One keep-alive pool per origin; connections resolve through the guard. */
  private pools = new Map<string, Pool>();
  private targets = new Map<string, Target | null>();
  private pending = new Set<PostHandler>();
  private deadlines?: NodeJS.Timeout;
  private readonly lookup;

  /** `policy`: the address rules at delivery (net-guard: listed hosts may be private only outside production). */
  constructor(policy: NetPolicy) {
    this.lookup = guardedLookup(policy);
  }

  /** The parsed target of an endpoint URL (cached), or null when it is not an http(s) URL. */
  target(url: string): Target | null {
    let t = this.targets.get(url);
    if (t !== undefined) return t;
    try {
      const u = new URL(url);
      if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('not http(s)');
      t = { origin: u.origin, pool: this.pool(u.origin), path: `${u.pathname}${u.search}`, host: u.host };
    } catch {
      t = null;
    }
    if (this.targets.size > 10_000) this.targets.clear();
    this.targets.set(url, t);
    return t;
  }

  /**
   * One signed POST through the origin's pool. `dispatch` with a small handler rather than
   * `request()`: no response stream, AbortController or promise per request inside undici (measured,
   * bench/RESULTS.md); the answer's body is read and dropped as it arrives, so the connection is reused.
   */
  post(target: Target | null, body: string, secrets: string[]): Promise<Outcome> {
    if (!target) return Promise.resolve({ ok: false, error: 'invalid url' });
    if (target.pool.destroyed) target.pool = this.pool(target.origin); // held across a stop()
    const t = Math.floor(Date.now() / 1000); // real time: receivers compare t with their own clock
    const headers = ['content-type', 'application/json', 'user-agent', USER_AGENT, SIGNATURE_HEADER, signatureHeader(secrets, t, body)];
    const tp = injectTrace(); // traceparent: the receiver may join the trace
    for (const k in tp) headers.push(k, tp[k]);
    return new Promise((resolve) => {
      // The whole answer within DELIVERY_TIMEOUT_MS: one interval checks every request (no timer per request).
      const h = new PostHandler(Date.now() + DELIVERY_TIMEOUT_MS, resolve, this.pending);
      this.pending.add(h);
      this.deadlines ??= setInterval(() => this.expire(), 250).unref();
      target.pool.dispatch({ path: target.path, method: 'POST', headers, body }, h);
    });
  }

  /** Closes every connection (a POST still running is aborted); a later POST opens new pools. */
  async closePools(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    this.targets.clear();
    await Promise.all(pools.map((p) => p.destroy().catch(() => undefined)));
  }

  async close(): Promise<void> {
    clearInterval(this.deadlines);
    this.deadlines = undefined;
    await this.closePools();
  }

  /**
   * The origin's pool: keep-alive, one request per connection at a time (no pipelining), no
   * redirects (undici follows none unless asked), TLS verified (the default), and every connection
   * resolved through `guardedLookup` so a name rebound to a private address is refused at connect.
   */
  private pool(origin: string): Pool {
    let p = this.pools.get(origin);
    if (p) return p;
    if (this.pools.size >= 1_000) {
      for (const [o, q] of this.pools) {
        if (q.stats.connected === 0 && q.stats.size === 0) {
          this.pools.delete(o);
          void q.close().catch(() => undefined);
        }
      }
    }
    p = new Pool(origin, {
      connections: CONNECTIONS_PER_ORIGIN,
      pipelining: 1,
      connect: { lookup: this.lookup as never },
      // Backstops only: `expire` aborts any request whose whole answer took longer than DELIVERY_TIMEOUT_MS.
      headersTimeout: DELIVERY_TIMEOUT_MS + 5_000,
      bodyTimeout: DELIVERY_TIMEOUT_MS + 5_000,
    });
    this.pools.set(origin, p);
    return p;
  }

  private expire() {
    const now = Date.now();
    for (const h of this.pending) if (h.until <= now) h.expire();
    if (!this.pending.size) {
      clearInterval(this.deadlines);
      this.deadlines = undefined;
    }
  }
}
