// The Orquesta SDK for TypeScript and JavaScript (Node 20+, browsers): the typed client of the API,
// generated at build time from the service's own OpenAPI document (ops/gen-sdk.mjs: openapi-typescript
// makes sdk/generated/openapi.d.ts; openapi-fetch is the runtime). On top of the generated client:
//   - the API key on every call;
//   - an Idempotency-Key on every POST that takes one (a UUID, kept across the retries of that call);
//   - retries of safe errors: an answer that says nothing was done (429, 409 idempotency_key_in_progress,
//     503, a refused connection) is retried after Retry-After or a backoff; an unknown outcome (a reset, a
//     timeout, 500/502/504) only for reads and for operations that honour the Idempotency-Key;
//   - pagination: `events()` follows the event stream's cursor, `list()` report listings' next_cursor;
//   - errors as OrquestaError with the envelope's code, message, doc_url and request_id;
//   - webhook signature verification: sdk/webhooks.ts (`constructEvent`).
//
//   import { Orquesta } from 'orquesta/sdk';
//   const orq = new Orquesta({ apiKey: process.env.ORQUESTA_API_KEY!, baseUrl: 'http://127.0.0.1:8080' });
//   const pi = await orq.paymentIntents.create({ amount_minor: 15000, currency: 'MXN' });
//   const { data, error } = await orq.api.GET('/v1/payment_intents/{id}', { params: { path: { id: pi.id } } });
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './generated/openapi.js';
import { IDEMPOTENT_OPERATIONS } from './generated/operations.js';

export type { components, paths } from './generated/openapi.js';
export { API_VERSION } from './generated/operations.js';
export { constructEvent, WebhookSignatureError, type WebhookEvent } from './webhooks.js';

export const SDK_VERSION = '0.1.0';

export interface OrquestaOptions {
  /** `sk_test_…` or `sk_live_…`; omitted for the open routes only (health, status). */
  apiKey?: string;
  /** Default `http://127.0.0.1:8080`. */
  baseUrl?: string;
  /** Retries after a safe error (default 2: three tries). */
  maxRetries?: number;
  /** Per try (default 15 s). */
  timeoutMs?: number;
  /** Aborts every call (e.g. Ctrl-C in a CLI). */
  signal?: AbortSignal;
  /** Appended to the User-Agent (e.g. `orquesta-cli/0.1.0`). */
  userAgent?: string;
  /** Another fetch (tests, proxies); Node's global one by default. */
  fetch?: typeof fetch;
  /** Longest wait honoured from a Retry-After header, in seconds (default 10). */
  maxRetryAfterSeconds?: number;
}

export interface ErrorEnvelope {
  type: string;
  code: string;
  message: string;
  doc_url?: string;
  request_id?: string;
}

/** The API answered an error: `code` is the stable field for logic (spec: Errors). */
export class OrquestaError extends Error {
  readonly type: string;
  readonly code: string;
  readonly docUrl?: string;
  readonly requestId?: string;
  constructor(
    readonly status: number,
    readonly error: ErrorEnvelope,
  ) {
    super(`${error.code}: ${error.message}`);
    this.name = 'OrquestaError';
    this.type = error.type;
    this.code = error.code;
    this.docUrl = error.doc_url;
    this.requestId = error.request_id;
  }
}

/** The service could not be reached, or did not answer in time (after the retries). */
export class OrquestaConnectionError extends Error {
  constructor(
    readonly url: string,
    override readonly cause: unknown,
  ) {
    super(`Cannot reach ${url}: ${describeCause(cause)}`);
    this.name = 'OrquestaConnectionError';
  }
}

export function describeCause(e: unknown): string {
  const err = e as { name?: string; message?: string; code?: string; cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError') return 'timed out';
  if (err?.name === 'AbortError') return 'aborted';
  return err?.cause?.code ?? err?.code ?? err?.cause?.message ?? err?.message ?? String(e);
}

const RETRY_STATUSES_SAFE = new Set([429, 503]);
const RETRY_STATUSES_UNKNOWN = new Set([500, 502, 504]);
/** Connection failures where the request never reached the service. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

const IDEMPOTENT = IDEMPOTENT_OPERATIONS.map(([method, path]) => ({
  method,
  re: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
}));
/** Whether an operation honours Idempotency-Key (from the OpenAPI document). */
export function takesIdempotencyKey(method: string, pathname: string): boolean {
  return IDEMPOTENT.some((o) => o.method === method && o.re.test(pathname));
}

/** The JSON body of a POST operation. */
export type JsonBody<P extends keyof paths> = paths[P] extends { post: { requestBody?: infer B } } ? NonNullable<B> extends { content: { 'application/json': infer J } } ? J : never : never;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

/** The typed client with the SDK's rules: openapi-fetch over a fetch that adds key, idempotency and retries. */
export class Orquesta {
  /** Every operation of the API, typed from the OpenAPI document: `api.GET('/v1/payouts/{id}', …)`. */
  readonly api: Client<paths>;
  readonly baseUrl: string;
  private readonly o: Required<Pick<OrquestaOptions, 'maxRetries' | 'timeoutMs' | 'maxRetryAfterSeconds'>> & OrquestaOptions;

  constructor(options: OrquestaOptions = {}) {
    this.baseUrl = (options.baseUrl ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
    this.o = { maxRetries: 2, timeoutMs: 15_000, maxRetryAfterSeconds: 10, ...options };
    this.api = createClient<paths>({ baseUrl: this.baseUrl, fetch: (req: Request) => this.send(req) });
  }

  /** One call with the SDK's rules (used by `api`; also for a path the caller builds itself). */
  async send(request: Request): Promise<Response> {
    const headers = new Headers(request.headers);
    if (this.o.apiKey && !headers.has('authorization')) headers.set('authorization', `Bearer ${this.o.apiKey}`);
    headers.set('accept', 'application/json');
    headers.set('user-agent', [`orquesta-sdk/${SDK_VERSION}`, this.o.userAgent].filter(Boolean).join(' '));
    const url = new URL(request.url);
    const idempotent = request.method === 'GET' || takesIdempotencyKey(request.method, url.pathname);
    // One key per call, the same for every retry of it: a retry replays, never charges twice.
    if (request.method !== 'GET' && takesIdempotencyKey(request.method, url.pathname) && !headers.has('idempotency-key')) headers.set('idempotency-key', crypto.randomUUID());
    const body = request.body ? await request.arrayBuffer() : undefined;
    const doFetch = this.o.fetch ?? fetch;
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= this.o.maxRetries;
      const timeout = AbortSignal.timeout(this.o.timeoutMs);
      let res: Response;
      try {
        res = await doFetch(request.url, { method: request.method, headers, body, signal: this.o.signal ? AbortSignal.any([this.o.signal, timeout]) : timeout });
      } catch (e) {
        if (this.o.signal?.aborted) throw e;
        const code = (e as { cause?: { code?: string } })?.cause?.code ?? '';
        // Refused: nothing was sent, always safe to retry; a reset or a timeout: only when a repeat cannot double the effect.
        const retry = !last && (NOT_SENT.has(code) ? code === 'ECONNREFUSED' : idempotent);
        if (!retry) throw new OrquestaConnectionError(this.baseUrl, e);
        await sleep(backoff(attempt), this.o.signal);
        continue;
      }
      const inProgress = res.status === 409 && res.headers.get('retry-after') !== null;
      const retry = !last && (RETRY_STATUSES_SAFE.has(res.status) || inProgress || (idempotent && RETRY_STATUSES_UNKNOWN.has(res.status)));
      if (!retry) return res;
      const after = Number(res.headers.get('retry-after'));
      await res.arrayBuffer().catch(() => undefined);
      await sleep(Number.isFinite(after) && after > 0 ? Math.min(after, this.o.maxRetryAfterSeconds) * 1000 : backoff(attempt), this.o.signal);
      if (this.o.signal?.aborted) throw new DOMException('aborted', 'AbortError');
    }
  }

  /** The data of an answer, or an OrquestaError with its envelope. */
  static unwrap<T>(r: { data?: T; error?: unknown; response: Response }): T {
    if (r.error !== undefined || !r.response.ok) {
      const env = (r.error as { error?: ErrorEnvelope } | undefined)?.error;
      if (env && typeof env.code === 'string') throw new OrquestaError(r.response.status, env);
      throw new OrquestaError(r.response.status, {
        type: 'api_error',
        code: `http_${r.response.status}`,
        message: `HTTP ${r.response.status} without an error envelope`,
        request_id: r.response.headers.get('x-request-id') ?? undefined,
      });
    }
    return r.data as T;
  }

  readonly paymentIntents = {
    create: async (body: JsonBody<'/v1/payment_intents'>) =>
      Orquesta.unwrap(await this.api.POST('/v1/payment_intents', { body })),
    retrieve: async (id: string, opts: { expand?: 'attempts' } = {}) =>
      Orquesta.unwrap(await this.api.GET('/v1/payment_intents/{id}', { params: { path: { id }, query: opts.expand ? { expand: opts.expand } : {} } })),
    confirm: async (id: string, body: JsonBody<'/v1/payment_intents/{id}/confirm'>) =>
      Orquesta.unwrap(await this.api.POST('/v1/payment_intents/{id}/confirm', { params: { path: { id } }, body })),
    capture: async (id: string) => Orquesta.unwrap(await this.api.POST('/v1/payment_intents/{id}/capture', { params: { path: { id } } })),
    cancel: async (id: string) => Orquesta.unwrap(await this.api.POST('/v1/payment_intents/{id}/cancel', { params: { path: { id } } })),
    /** Polls until the intent leaves `processing` (or reaches one of `until`), every `intervalMs`. */
    waitFor: async (id: string, opts: { until?: string[]; timeoutMs?: number; intervalMs?: number } = {}) => {
      const end = Date.now() + (opts.timeoutMs ?? 60_000);
      for (;;) {
        const pi = await this.paymentIntents.retrieve(id, { expand: 'attempts' });
        if (opts.until ? opts.until.includes(pi.status) : pi.status !== 'processing') return pi;
        if (Date.now() > end) return pi;
        await sleep(opts.intervalMs ?? 500, this.o.signal);
      }
    },
  };

  /** Test mode only (decisions §7): what the payer does outside the API. */
  readonly testHelpers = {
    /** The payer pays the SPEI transfer, OXXO voucher or CoDi QR of a `requires_action` intent. */
    pay: async (id: string) => Orquesta.unwrap(await this.api.POST('/v1/test_helpers/payment_intents/{id}/pay', { params: { path: { id } } })),
    /** The cardholder passes or fails the 3-D Secure challenge. */
    threeDSecure: async (id: string, result: 'approve' | 'fail') =>
      Orquesta.unwrap(
        result === 'approve'
          ? await this.api.POST('/v1/test_helpers/payment_intents/{id}/three_d_secure/approve', { params: { path: { id } } })
          : await this.api.POST('/v1/test_helpers/payment_intents/{id}/three_d_secure/fail', { params: { path: { id } } }),
      ),
  };

  /**
   * The event stream (`GET /v1/events`), oldest first from `afterId` (exclusive), page after page
   * until it is exhausted; `follow: true` keeps polling every `intervalMs` (spec: 2 s) for new ones.
   */
  async *events(opts: { afterId?: number; limit?: number; follow?: boolean; intervalMs?: number } = {}): AsyncGenerator<Record<string, any>> {
    let cursor = opts.afterId ?? 0;
    for (;;) {
      const page = Orquesta.unwrap(await this.api.GET('/v1/events', { params: { query: { after_id: cursor, limit: opts.limit ?? 200 } } })) as { data: Array<{ id: number }>; has_more?: boolean };
      for (const e of page.data) {
        cursor = Math.max(cursor, e.id);
        yield e;
      }
      if (page.data.length && page.has_more !== false) continue;
      if (!opts.follow || this.o.signal?.aborted) return;
      await sleep(opts.intervalMs ?? 2000, this.o.signal);
      if (this.o.signal?.aborted) return;
    }
  }

  /**
   * Every item of a paged listing (`{object: list, data, has_more, next_cursor}`, e.g.
   * `/v1/reports/payments`), following `next_cursor` while `has_more` is true.
   */
  async *list<P extends '/v1/reports/payments'>(path: P, query: Record<string, string | number> = {}): AsyncGenerator<Record<string, any>> {
    let cursor: string | undefined;
    for (;;) {
      const q: Record<string, string | number> = { ...query, ...(cursor ? { cursor } : {}) };
      const page = Orquesta.unwrap(await this.api.GET(path, { params: { query: q } } as never)) as { data: unknown[]; has_more?: boolean; next_cursor?: string };
      for (const item of page.data) yield item as Record<string, any>;
      if (!page.has_more || !page.next_cursor) return;
      cursor = page.next_cursor;
    }
  }
}

function backoff(attempt: number): number {
  return Math.round(300 * 3 ** attempt * (0.75 + Math.random() * 0.5));
}
