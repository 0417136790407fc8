// The HTTP edge on uWebSockets.js: route table → parse, authenticate, rate-limit, validate,
// idempotency → handler → envelope. No business rule lives here.
//
// One Exchange object per request carries it through the steps. The steps run synchronously
// wherever nothing has to be waited for: on an authenticated route with the key in the cache, the
// rate-limit count in Redis is the only wait before the handler (the body, if any, is read while
// it runs), and a handler that answers without awaiting is answered in the same turn. Promises
// appear only where something async really happens (a key cache miss, idempotency, an async
// handler). Spans are made only when an OpenTelemetry SDK is registered.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { performance } from 'node:perf_hooks';
import {
  INVALID_SPAN_CONTEXT,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type Context,
  type Span,
} from '@opentelemetry/api';
import type { Services } from './services.js';
import type { KeyStore } from './auth.js';
import type { Idempotency } from './idempotency.js';
import type { RateLimiter } from './rate-limit.js';
import type { Logger } from '../kernel/log.js';
import { ApiError, envelopeJson, isApiError } from '../kernel/errors.js';
import { isIdempotencyConflict, parseIdempotencyKey, type IdempotencyHandle } from './idempotency.js';
import { answerJson, stripNulls } from '../kernel/json.js';
import { constantTimeEqual, hashKey, requireScope } from './auth.js';
import type { VerdictSink } from './rate-limit.js';
import type { Method, Principal, Reply, RequestContext, RouteDef } from './route.js';
import { uws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from './uws.js';
import { compileBody, compileQuery, type Validator } from './validation.js';
import { ATTR } from '../kernel/tracing.js';
import { decodePathParam, jsonContentType, parseJsonBody, parseQuery } from './body.js';
import { isCorsPath, registerPreflight, writeCorsHeaders } from './cors.js';
import { authenticateSession } from './session-auth.js';

const tracer = trace.getTracer('orquesta-edge');
// Span attribute names live in kernel/tracing.ts (ATTR).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The API's no-op provider: what the global provider delegates to until an SDK registers one. */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();
/** Whether spans are recorded now (an SDK may be started or stopped at any time, e.g. in tests). */
function tracingOn(): boolean {
  const p = trace.getTracerProvider();
  return !(p instanceof ProxyTracerProvider) || p.getDelegate() !== NOOP_TRACER_PROVIDER;
}
/** ctx.span when tracing is off: a non-recording span, as the no-op tracer would make. */
const NO_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

interface Compiled {
  def: RouteDef;
  paramNames: string[];
  uuidParams: number[];
  body?: Validator;
  query?: Validator;
  bodyLimit: number;
  /** The handler takes the body's bytes (RouteDef.rawBody). */
  raw: boolean;
  rateLimit: 'v1' | 'public' | null;
  hasBody: boolean;
  spanName: string;
  metricRoute: string;
  /** Answers carry the CORS headers (api/cors.ts: /public/*). */
  cors: boolean;
  /** prom-client children per method, cached (label hashing per request is not free). */
  durationChild?: { observe(v: number): void };
  counters: Map<number, { inc(): void }>;
}

/** What createEdge is given: the handlers' services and the edge's own collaborators. */
export interface EdgeDeps extends Services {
  readonly log: Logger;
  readonly keys: KeyStore;
  readonly limiter: RateLimiter;
  readonly idempotency: Idempotency;
  /** sha256 of the operator key (from ADMIN_KEY or the stored generated one). */
  readonly adminKeyHash: string;
}

export interface Edge {
  app: TemplatedApp;
  listen(host: string, port: number): Promise<number>;
  /** Stops accepting, waits for in-flight requests (up to timeoutMs). */
  close(timeoutMs: number): Promise<void>;
  inFlight(): number;
}

const METHODS_WITH_BODY = new Set<Method>(['POST', 'PUT', 'PATCH', 'DELETE']);
/**
 * Every request header the service reads; ctx.header() sees only these. They are collected in one
 * pass over the request's headers (req.forEach), which also measures the head (431) and finds
 * repeated headers (400): one native call instead of one getHeader call per header.
 */
export const READ_HEADERS = [
  'authorization', 'x-admin-key', 'idempotency-key', 'content-length', 'content-type', 'host', 'accept',
  'x-service-client-secret', 'x-forwarded-for', 'traceparent', 'tracestate', 'baggage',
  'service-account-key',
  // Conekta signs its webhook deliveries in DIGEST (routes declared signedBody; docs/routing.md)
  'digest',
  // the page of a browser call to /public (a merchant may restrict origins; api/cors.ts)
  'origin',
  // portal sessions (api/session-auth.ts): the cookie, the CSRF token of a change, the test/live toggle
  'cookie', 'x-csrf-token', 'orquesta-mode',
  // the operator console: why an operator acts, for the audit row (api/routes/operator-console.ts)
  'x-operator-reason',
] as const;
const HEADER_INDEX = new Map<string, number>(READ_HEADERS.map((h, i) => [h, i]));
const H = Object.fromEntries(READ_HEADERS.map((h, i) => [h, i])) as Record<(typeof READ_HEADERS)[number], number>;
/** Headers that must appear once: a second copy is refused (which one would the client mean?). */
const SINGLE = READ_HEADERS.map((h) => ['authorization', 'x-admin-key', 'idempotency-key', 'content-type', 'content-length', 'x-service-client-secret', 'service-account-key'].includes(h));
/** Trace context headers: passed on only while tracing is on. */
const TRACE_HEADERS = ['traceparent', 'tracestate', 'baggage'] as const;
/** A constant for uWS as its own ArrayBuffer: uWS reads the bytes as they are (no UTF-8 conversion). */
const enc = (x: string): ArrayBuffer => {
  const b = Buffer.from(x, 'latin1');
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.length) as ArrayBuffer;
};
/**
 * The request head this edge reads: request line plus headers at most 4 KiB, of which the URL
 * (path and query) at most 3 KiB. uWebSockets.js 20.30 (uWS 20.43) parses a head that arrives in
 * several reads in a 4,096-byte buffer and drops the connection without an answer when it fills, so
 * a bigger head only ever worked when it arrived in one read. Refusing every head over the limit
 * with 414/431 makes the rule the same whichever way the bytes arrive (docs/edge.md).
 */
export const MAX_URL_BYTES = 3072;
export const MAX_HEAD_BYTES = 4096;
/** A body over the limit is read and dropped up to this many times the limit, then answered 413 and closed. */
const DRAIN_FACTOR = 4;
const STATUS_BUF: Record<number, ArrayBuffer> = {};
for (const [code, text] of Object.entries(STATUS_CODES)) STATUS_BUF[Number(code)] = enc(`${code} ${text}`);
const H_REQUEST_ID = enc('X-Request-Id');
const H_CONTENT_TYPE = enc('Content-Type');
const H_NOSNIFF = enc('X-Content-Type-Options');
const V_NOSNIFF = enc('nosniff');
/**
 * The value of X-Request-Id followed by the two constant headers of a JSON answer: uWS writes a
 * header as `name: value\r\n`, so one call writes the three lines a JSON answer always carries
 * (each call into uWS costs about as much as a header's bytes). Request ids are our UUIDs.
 */
const JSON_HEADERS_AFTER_ID = '\r\nContent-Type: application/json; charset=utf-8\r\nX-Content-Type-Options: nosniff';
const JSON_TYPE = 'application/json';

export function toUwsPattern(path: string): { pattern: string; params: string[] } {
  const params: string[] = [];
  const pattern = path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => {
    params.push(name);
    return `:${name}`;
  });
  return { pattern, params };
}

/** What collectHeader fills: the Exchange whose headers req.forEach is reporting (synchronous: one at a time). */
interface HeaderSink {
  hv: Array<string | undefined>;
  headBytes: number;
  duplicate: string | undefined;
}
let collecting: HeaderSink | null = null;
function collectHeader(k: string, v: string) {
  const x = collecting!;
  x.headBytes += k.length + v.length + 4;
  const i = HEADER_INDEX.get(k);
  if (i === undefined || v === '') return;
  if (x.hv[i] === undefined) x.hv[i] = v;
  else if (SINGLE[i]) x.duplicate ??= k;
}

function clientIp(res: HttpResponse, forwardedFor: string | undefined, trusted: readonly string[]): string {
  let ip = Buffer.from(res.getRemoteAddressAsText()).toString();
  if (ip.startsWith('::ffff:')) ip = ip.slice(7);
  else if (/^0000:0000:0000:0000:0000:ffff:/.test(ip)) ip = ip.slice(30);
  if (trusted.length && trusted.includes(ip)) {
    // Walk X-Forwarded-For from the right, skipping our own proxies: the first other hop is the client.
    const hops = (forwardedFor ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    for (let i = hops.length - 1; i >= 0; i--) if (!trusted.includes(hops[i])) return hops[i];
  }
  return ip;
}

const isThenable = (x: unknown): x is PromiseLike<Reply> => typeof (x as { then?: unknown } | null)?.then === 'function';
const AUTH_FAILURES = new Set(['api_key.missing_or_invalid', 'admin_key.missing_or_invalid', 'portal.sign_in_invalid', 'portal.session_invalid', 'portal.totp_invalid']);
/** Failed credentials of any kind (a key, a portal password, session or second factor): counted per client address. */
const isAuthFailure = (e: unknown): boolean => isApiError(e) && AUTH_FAILURES.has(e.code);

/** Body reading states. */
const NO_BODY = 0;
const READING = 1;
const READ = 2;
/** Over the limit: the rest is read and dropped, so that the 413 can close the connection with nothing unread. */
const DRAINING = 3;
const TOO_LARGE = 4;

export function createEdge(deps: EdgeDeps, routes: RouteDef[]): Edge {
  const app = uws.App();
  const { config, log, metrics } = deps;
  const baseUrl = config.publicBaseUrl;
  let listenSocket: us_listen_socket | null = null;
  let inflight = 0;
  let draining = false;
  let drained: (() => void) | null = null;

  const compiled: Compiled[] = routes.map((def) => {
    const { params } = toUwsPattern(def.path);
    const rl = def.rateLimitExempt ? null : def.path.startsWith('/v1/') ? 'v1' : def.path.startsWith('/public/') ? 'public' : null;
    const hasBody = METHODS_WITH_BODY.has(def.method);
    return {
      def,
      paramNames: params,
      uuidParams: params.map((p, i) => (p === 'id' || /Id$/.test(p) ? i : -1)).filter((i) => i >= 0),
      body: def.body ? compileBody(def.body) : undefined,
      query: def.query ? compileQuery(def.query) : undefined,
      bodyLimit: def.bodyLimit ?? config.bodyLimitBytes,
      raw: def.rawBody === true,
      rateLimit: rl,
      hasBody,
      spanName: `${def.method} ${def.path}`,
      metricRoute: def.path,
      cors: isCorsPath(def.path),
      counters: new Map(),
    };
  });

  function send(res: HttpResponse, requestId: string, reply: Reply, close = false, cors = false) {
    let payload: string | Uint8Array;
    let type = reply.contentType;
    if (reply.text !== undefined) payload = reply.text;
    else if (reply.body !== undefined) {
      // spec: null fields are omitted (authenticated responses; we omit them everywhere for one shape).
      payload = reply.keepNulls ? JSON.stringify(reply.body) : answerJson(reply.body);
      type ??= JSON_TYPE;
    } else payload = '';
    res.cork(() => {
      // Constant status lines and headers are pre-encoded: uWS then copies bytes, no UTF-8 conversion.
      res.writeStatus(STATUS_BUF[reply.status] ?? String(reply.status));
      if (type === JSON_TYPE) res.writeHeader(H_REQUEST_ID, requestId + JSON_HEADERS_AFTER_ID);
      else {
        res.writeHeader(H_REQUEST_ID, requestId);
        if (type) res.writeHeader(H_CONTENT_TYPE, type.includes('charset') || !type.startsWith('text/') ? type : `${type}; charset=utf-8`);
        res.writeHeader(H_NOSNIFF, V_NOSNIFF);
      }
      if (reply.headers) for (const k in reply.headers) res.writeHeader(k, reply.headers[k]);
      if (cors) writeCorsHeaders(res);
      res.end(payload, close);
    });
  }

  function errorReply(e: unknown, requestId: string, route: string): Reply {
    let err: ApiError;
    if (isApiError(e)) err = e;
    else {
      const code = (e as { code?: string })?.code;
      const unavailable = code === 'ECONNREFUSED' || code === 'CONNECT_TIMEOUT' || code === 'CONNECTION_CLOSED' || /Connection is closed|ECONNREFUSED/.test(String((e as Error)?.message));
      err = new ApiError(unavailable ? 'service_unavailable' : 'internal_error');
      log.error('request failed', { requestId, route, err: e });
    }
    // The envelope's JSON from pre-serialised parts (the same bytes as answerJson(envelope(…))).
    return { status: err.status, text: envelopeJson(err, requestId, baseUrl), contentType: JSON_TYPE, headers: err.headers };
  }

  function finish(c: Compiled, status: number, t0: number) {
    inflight--;
    let counter = c.counters.get(status);
    if (!counter) c.counters.set(status, (counter = metrics.httpRequests.labels({ method: c.def.method, route: c.metricRoute, status: String(status) })));
    counter.inc();
    (c.durationChild ??= metrics.httpDuration.labels({ method: c.def.method, route: c.metricRoute })).observe((performance.now() - t0) / 1000);
    if (draining && inflight === 0 && drained) drained();
  }

  function failOpen(e: unknown) {
    // Redis unreachable: the window cannot be counted. Serve rather than refuse everyone; the
    // key cache (KEY_CACHE_SECONDS) still bounds how long a revoked key can slip through.
    log.warn('rate limiter unavailable, request not counted', { err: e });
  }

  /** One request, from the uWS handler to the answer. It is also the handler's RequestContext. */
  class Exchange implements RequestContext, VerdictSink {
    readonly method: Method;
    readonly deps = deps;
    ip = '';
    params: Record<string, string> = {};
    query: unknown = undefined;
    body: unknown = undefined;
    /** The body as received, for routes that verify a signature over it (RouteDef.signedBody). */
    rawBody: string | undefined = undefined;
    principal!: Principal;
    idem?: IdempotencyHandle;
    span: Span = NO_SPAN;
    /** The active context for the handler when tracing is on. */
    spanCtx: Context | undefined = undefined;
    /** Header values, in the order of READ_HEADERS (the first copy of each). */
    hv: Array<string | undefined> = new Array(READ_HEADERS.length);
    /** Bytes of the request head as parsed (request line and headers). */
    headBytes = 0;
    /** The first header of SINGLE that came twice. */
    duplicate: string | undefined = undefined;
    /** A path parameter that does not decode to text. */
    badParam: string | undefined = undefined;
    aborted = false;
    /** The answer is written (or the client is gone): nothing more is sent. */
    sent = false;
    /** finish() ran: in-flight count, metrics, span. */
    finished = false;
    /** A failed authentication was counted against the client IP (once per request). */
    authCounted = false;
    controller: AbortController | undefined = undefined;
    bodyState = NO_BODY;
    bodySize = 0;
    bodyChunks: Buffer[] | null = null;
    bodyText = '';
    /** The bytes of a raw-body route, once read. */
    rawBytes: Buffer | null = null;
    /** The pipeline reached the body step before the body was complete. */
    bodyWaited = false;
    /** The declared length was over the limit: no pipeline runs; 413 once the body is drained. */
    refuseWhenDrained = false;

    constructor(
      readonly c: Compiled,
      readonly res: HttpResponse,
      readonly requestId: string,
      readonly path: string,
      readonly rawQuery: string,
      readonly t0: number,
    ) {
      this.method = c.def.method;
    }

    header(name: string): string | undefined {
      const i = HEADER_INDEX.get(name.toLowerCase());
      return i === undefined ? undefined : this.hv[i];
    }

    get signal(): AbortSignal {
      // Created only when someone asks for it (an AbortController per request is not free).
      if (!this.controller) {
        this.controller = new AbortController();
        if (this.aborted) this.controller.abort();
      }
      return this.controller.signal;
    }

    /** The client's address (read from the socket while the request is open, so only when needed). */
    clientIp(): string {
      if (!this.ip && !this.aborted) this.ip = clientIp(this.res, this.hv[H['x-forwarded-for']], config.trustedProxies);
      return this.ip;
    }

    onAborted() {
      this.aborted = true;
      this.sent = true;
      this.controller?.abort();
      if (this.bodyState === READING || this.bodyState === DRAINING) this.bodyState = NO_BODY;
      if (this.bodyWaited || this.refuseWhenDrained) this.end(499, 499);
    }

    onData(chunk: ArrayBuffer, isLast: boolean) {
      const state = this.bodyState;
      if (state !== READING && state !== DRAINING) return;
      const n = chunk.byteLength;
      this.bodySize += n;
      const limit = this.c.bodyLimit;
      if (this.bodySize > limit) {
        if (state === READING) {
          this.bodyState = DRAINING;
          this.bodyChunks = null;
          this.bodyText = '';
        }
        if (!isLast && this.bodySize > limit * DRAIN_FACTOR) {
          // Past what is worth reading: answer now and close (the client may see a reset while sending).
          this.bodyState = TOO_LARGE;
          return this.fail(this.tooLarge());
        }
      } else if (this.c.raw) {
        // A file: its bytes as they are (copied: uWS reuses the chunk's memory after the callback).
        (this.bodyChunks ??= []).push(Buffer.from(chunk.slice(0)));
        if (isLast) {
          this.rawBytes = this.bodyChunks.length === 1 ? this.bodyChunks[0] : Buffer.concat(this.bodyChunks, this.bodySize);
          this.bodyChunks = null;
        }
      } else if (this.c.body) {
        if (isLast && this.bodyChunks === null) {
          // The usual small body: one chunk, decoded while uWS still owns its memory.
          this.bodyText = n ? Buffer.from(chunk, 0, n).toString('utf8') : '';
        } else {
          (this.bodyChunks ??= []).push(Buffer.from(chunk.slice(0))); // copy: uWS reuses the chunk's memory after the callback
          if (isLast) {
            this.bodyText = Buffer.concat(this.bodyChunks).toString('utf8');
            this.bodyChunks = null;
          }
        }
      }
      if (!isLast) return;
      this.bodyState = this.bodyState === DRAINING ? TOO_LARGE : READ;
      if (this.refuseWhenDrained) return this.fail(this.tooLarge());
      if (this.bodyWaited) {
        this.bodyWaited = false;
        this.guard(this.afterBody);
      }
    }

    tooLarge(): ApiError {
      const declared = this.hv[H['content-length']];
      return new ApiError(this.c.def.tooLarge ?? 'request.too_large', `The body${declared ? ` (${declared} bytes)` : ''} is larger than the ${this.c.bodyLimit} bytes this route accepts.`);
    }

    /** Runs a step; anything it throws becomes the error answer. */
    guard(step: (this: Exchange) => void) {
      try {
        step.call(this);
      } catch (e) {
        this.fail(e);
      }
    }

    // 1. Authentication.
    start() {
      const def = this.c.def;
      if (def.auth === 'api_key') {
        const authorization = this.hv[H.authorization];
        const p = deps.keys.cached(authorization);
        if (p) return this.authenticated(p);
        this.within(() => deps.keys.authenticate(authorization)).then(
          (p) => this.guard(() => this.authenticated(p)),
          (e) => this.fail(e),
        );
        return;
      }
      if (def.auth === 'session') {
        // A portal member's session instead of an API key (api/session-auth.ts); the role gives the scopes.
        const hv = this.hv;
        const h = { cookie: hv[H.cookie], csrf: hv[H['x-csrf-token']], origin: hv[H.origin], host: hv[H.host], mode: hv[H['orquesta-mode']] };
        this.within(() => authenticateSession(deps.portal, h, this.method, this.c.def.path, baseUrl)).then(
          (p) => this.guard(() => this.authenticated(p)),
          (e) => this.fail(e),
        );
        return;
      }
      if (def.auth === 'admin') {
        const k = this.hv[H['x-admin-key']];
        if (!k || !constantTimeEqual(hashKey(k), deps.adminKeyHash)) throw new ApiError('admin_key.missing_or_invalid');
      }
      this.rateLimit();
    }

    authenticated(p: Principal) {
      this.principal = p;
      if (this.spanCtx) {
        this.span.setAttribute(ATTR.tenantId, p.tenantId);
        this.span.setAttribute(ATTR.livemode, p.livemode);
      }
      this.rateLimit();
    }

    // 2. Rate limit (spec: Limits): per API key on /v1, per client IP on /public.
    rateLimit() {
      const rl = this.c.rateLimit;
      if (rl === 'v1' && this.principal) deps.limiter.count(`k:${this.principal.keyId}`, config.rateLimitV1PerMin, this.principal.keyId, this);
      else if (rl === 'public') deps.limiter.count(`ip:${this.ip}`, config.rateLimitPublicPerMin, '', this);
      else this.checks();
    }

    verdict(allowed: boolean, revoked: boolean, retryAfter: number) {
      try {
        if (revoked) throw new ApiError('api_key.missing_or_invalid');
        if (!allowed) {
          metrics.rateLimited.inc({ kind: this.c.rateLimit! });
          throw new ApiError('rate_limit_exceeded', undefined, { 'Retry-After': String(retryAfter) });
        }
        this.checks();
      } catch (e) {
        this.fail(e);
      }
    }

    limitFailed(err: unknown) {
      failOpen(err);
      this.guard(this.checks);
    }

    // 3. Scope, path parameters, then the body once it is all here.
    checks() {
      if (this.principal) requireScope(this.principal, this.c.def.scope);
      // A malformed id answers exactly like an unknown one; so does a parameter that is not text.
      if (this.badParam !== undefined) throw this.notFound();
      for (const i of this.c.uuidParams) {
        if (!UUID.test(this.params[this.c.paramNames[i]])) throw this.notFound();
      }
      if (this.bodyState === READING || this.bodyState === DRAINING) {
        if (this.aborted) return this.end(499, 499);
        this.bodyWaited = true; // onData continues
        return;
      }
      this.afterBody();
    }

    notFound(): ApiError {
      const def = this.c.def;
      return def.notFound ? new ApiError(def.notFound, def.notFoundMessage) : new ApiError('route.not_found', `No route for ${def.method} ${this.path}: a path parameter is not valid percent-encoded text.`);
    }

    // 4. Body and query, then idempotency and the handler.
    afterBody() {
      const c = this.c;
      if (this.bodyState === TOO_LARGE) throw this.tooLarge();
      let parsed: unknown = undefined;
      if (c.raw) {
        parsed = this.rawBytes ?? Buffer.alloc(0);
        this.rawBytes = null;
      } else if (this.bodyState === READ && c.body) {
        const text = this.bodyText;
        this.bodyText = '';
        if (c.def.signedBody) this.rawBody = text;
        if (text.trim() === '') parsed = {};
        else {
          const type = this.hv[H['content-type']];
          if (type !== undefined && type !== JSON_TYPE && !jsonContentType(type)) {
            throw new ApiError('request.unsupported_media_type', `The body is declared as "${type}", which cannot be JSON. Send JSON with Content-Type: application/json.`);
          }
          parsed = parseJsonBody(text);
          // A null field means "not sent" (spec: tip_minor null/omitted = 0; patch: null = untouched).
          if (text.includes('null')) parsed = stripNulls(parsed);
        }
      }
      const def = c.def;
      const keyHeader = def.idempotency ? this.hv[H['idempotency-key']] : undefined;
      // The fingerprint is taken before validation applies defaults, and only when it may be needed.
      const hashBody = keyHeader !== undefined ? (parsed === undefined ? null : JSON.parse(JSON.stringify(parsed))) : null;
      this.body = c.raw ? parsed : c.body ? c.body(parsed) : undefined;
      const queryObj = this.rawQuery ? parseQuery(this.rawQuery) : {};
      this.query = c.query ? c.query(queryObj) : queryObj;

      const idemKey = def.idempotency && this.principal ? parseIdempotencyKey(keyHeader, def.idempotency === 'required') : undefined;
      if (idemKey) {
        this.within(() => this.idempotent(idemKey, hashBody)).then(
          (r) => this.answer(r),
          (e) => this.fail(e),
        );
        return;
      }
      const out = this.spanCtx ? context.with(this.spanCtx, def.handler, def, this) : def.handler(this);
      if (isThenable(out)) out.then((r) => this.answer(r), (e) => this.fail(e));
      else this.answer(out);
    }

    // 5. Idempotency (spec: Idempotency): replay, or run the handler under the key's lock.
    async idempotent(key: string, hashBody: unknown): Promise<Reply> {
      const principal = this.principal;
      const begun = await deps.idempotency.begin(principal, key, this.method, this.path, hashBody, this.requestId, this.c.def.idempotencyLookup !== 'at_commit');
      if ('replay' in begun) {
        metrics.idempotentReplays.inc();
        return begun.replay;
      }
      this.idem = begun.handle;
      try {
        return await this.c.def.handler(this);
      } catch (e) {
        // A concurrent twin with the same key committed first: our effect rolled back; replay theirs.
        // (With idempotencyLookup 'at_commit' this is also how any repeat of the key is answered.)
        if (isIdempotencyConflict(e)) {
          const stored = await deps.idempotency.lookup(principal, begun.handle.key, begun.handle.requestHash);
          if (stored) {
            metrics.idempotentReplays.inc();
            return stored;
          }
        }
        throw e;
      } finally {
        await begun.release().catch((e) => log.warn('idempotency lock release failed', { requestId: this.requestId, err: e }));
      }
    }

    /** Runs fn in this request's trace context (when tracing is on). */
    within<T>(fn: () => Promise<T>): Promise<T> {
      return this.spanCtx ? context.with(this.spanCtx, fn) : fn();
    }

    answer(reply: Reply, close = false) {
      try {
        if (!this.sent && reply.status !== 499) {
          this.sent = true;
          send(this.res, this.requestId, reply, close, this.c.cors);
        }
      } catch (e) {
        log.error('edge failure', { requestId: this.requestId, err: e });
      }
      this.end(reply.status, this.aborted ? 499 : reply.status);
    }

    fail(e: unknown): void {
      if (!this.authCounted && !this.sent && isAuthFailure(e)) return this.countAuthFailure(e as ApiError);
      let reply: Reply;
      let close = false;
      try {
        // A 413 closes the connection: its body was drained (or is past DRAIN_FACTOR times the limit).
        close = isApiError(e) && (e.code === 'request.too_large' || e.code === this.c.def.tooLarge);
        reply = errorReply(e, this.requestId, this.c.def.path);
      } catch (e2) {
        log.error('edge failure', { requestId: this.requestId, err: e2 });
        reply = { status: 500, text: '', contentType: JSON_TYPE };
      }
      this.answer(reply, close);
    }

    /**
     * Failed credentials are counted per client IP (never per key: a key has no public name an
     * attacker could aim at). Over AUTH_FAILURES_PER_MIN in the window, a failure answers 429 with
     * Retry-After instead of 401. Valid credentials are always served, from any address, so no one
     * can lock out a real key, not even from behind the same NAT. docs/edge.md.
     */
    countAuthFailure(e: ApiError): void {
      this.authCounted = true;
      const ip = this.clientIp();
      if (!ip) return this.fail(e);
      deps.limiter.count(`af:${ip}`, config.authFailuresPerMin, '', {
        verdict: (allowed, _revoked, retryAfter) => {
          if (allowed) return this.fail(e);
          metrics.rateLimited.inc({ kind: 'auth_failures' });
          this.fail(
            new ApiError(
              'rate_limit_exceeded',
              `Too many failed authentications from this address (more than ${config.authFailuresPerMin} a minute); retry after the seconds in Retry-After with a valid key.`,
              { 'Retry-After': String(retryAfter) },
            ),
          );
        },
        limitFailed: (err) => {
          failOpen(err);
          this.fail(e);
        },
      });
    }

    /** An exception that escaped a step (a bug): a 500 envelope if nothing was sent yet, and a log line. */
    crashed(e: unknown) {
      log.error('edge: uncaught error in a request callback', { requestId: this.requestId, route: this.c.def.path, err: e });
      try {
        if (!this.sent) this.answer(errorReply(new Error('edge callback failed', { cause: e }), this.requestId, this.c.def.path));
        else this.end(500, 500);
      } catch (e2) {
        log.error('edge failure', { requestId: this.requestId, err: e2 });
      }
    }

    /** Metrics, in-flight count and span, once. */
    end(spanStatus: number, metricStatus: number) {
      if (this.finished) return;
      this.finished = true;
      finish(this.c, metricStatus, this.t0);
      if (this.spanCtx) {
        this.span.setAttribute(ATTR.httpStatus, spanStatus);
        if (spanStatus >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR });
        this.span.end();
      }
    }
  }

  /** A request refused before it became an Exchange's pipeline: answered at once. */
  function refuse(x: Exchange, err: ApiError) {
    inflight++;
    x.fail(err);
  }

  function handlerFor(c: Compiled) {
    const { def } = c;
    return (res: HttpResponse, req: HttpRequest) => {
      let x: Exchange | undefined;
      try {
        const t0 = performance.now();
        const requestId = randomUUID();
        const url = req.getUrl();
        const rawQuery = req.getQuery() ?? '';
        x = new Exchange(c, res, requestId, url, rawQuery, t0);
        const ex = x;
        res.onAborted(() => {
          try {
            ex.onAborted();
          } catch (e) {
            ex.crashed(e);
          }
        });
        // Every header in one pass: the ones read, their repeats, the size of the head.
        collecting = x;
        try {
          req.forEach(collectHeader);
        } finally {
          collecting = null;
        }
        const urlBytes = url.length + (rawQuery ? rawQuery.length + 1 : 0);
        x.headBytes += urlBytes + def.method.length + 12; // "GET <url> HTTP/1.1\r\n" and the final "\r\n"
        for (let i = 0; i < c.paramNames.length; i++) {
          const raw = req.getParameter(i) ?? '';
          const v = decodePathParam(raw);
          if (v === undefined) x.badParam ??= c.paramNames[i];
          x.params[c.paramNames[i]] = v ?? raw;
        }
        // The client IP is read now (res is only valid synchronously) but only for routes that use it.
        if (c.rateLimit === 'public' || def.auth !== 'api_key') x.clientIp();

        if (draining) {
          x.sent = true;
          send(res, requestId, errorReply(new ApiError('service_unavailable', 'The server is shutting down; retry on another instance.'), requestId, def.path), true);
          return;
        }
        if (urlBytes > MAX_URL_BYTES) return refuse(x, new ApiError('request.uri_too_long', `The URL is ${urlBytes} bytes; this API reads at most ${MAX_URL_BYTES} (path and query). Send long values in a JSON body.`));
        if (x.headBytes > MAX_HEAD_BYTES) return refuse(x, new ApiError('request.headers_too_large', `The request line and headers are ${x.headBytes} bytes; this API reads at most ${MAX_HEAD_BYTES}. Send fewer or shorter headers.`));
        if (x.duplicate) return refuse(x, new ApiError('request.duplicate_header', `The header ${x.duplicate} was sent more than once; send it once.`));
        inflight++;

        if (c.hasBody) {
          const declared = Number(x.hv[H['content-length']] ?? '0');
          x.bodyState = READING;
          res.onData((chunk, isLast) => {
            try {
              ex.onData(chunk, isLast);
            } catch (e) {
              ex.crashed(e);
            }
          });
          if (declared > c.bodyLimit) {
            // Over the limit before a byte is read: read and drop the body (up to DRAIN_FACTOR times
            // the limit) and answer when it is all read, so closing leaves nothing unread behind
            // (unread bytes make the kernel reset the connection, and the client may lose the 413).
            // (uWS answers `Expect: 100-continue` itself before this handler runs, so such a client
            // sends its body too.)
            if (declared > c.bodyLimit * DRAIN_FACTOR) {
              x.bodyState = TOO_LARGE;
              return x.fail(x.tooLarge());
            }
            x.bodyState = DRAINING;
            x.refuseWhenDrained = true;
            return;
          }
        }

        if (tracingOn()) {
          const traceHeaders: Record<string, string> = {};
          for (const h of TRACE_HEADERS) {
            const v = x.hv[H[h]];
            if (v) traceHeaders[h] = v;
          }
          const parent = propagation.extract(ROOT_CONTEXT, traceHeaders);
          x.span = tracer.startSpan(
            c.spanName,
            { kind: SpanKind.SERVER, attributes: { [ATTR.httpMethod]: def.method, [ATTR.httpRoute]: def.path, [ATTR.urlPath]: x.path, [ATTR.requestId]: requestId } },
            parent,
          );
          x.spanCtx = trace.setSpan(parent, x.span);
        }
        x.guard(x.start);
      } catch (e) {
        // Nothing may throw out of a uWS callback (an exception there ends the process).
        if (x) x.crashed(e);
        else lastResort(res, e);
      }
    };
  }

  /** An error before the request had an Exchange: a 500 envelope if the response can still be written. */
  function lastResort(res: HttpResponse, e: unknown) {
    const requestId = randomUUID();
    log.error('edge: uncaught error in a request callback', { requestId, err: e });
    try {
      send(res, requestId, errorReply(new Error('edge callback failed', { cause: e }), requestId, '/*'), true);
    } catch (e2) {
      log.error('edge failure', { requestId, err: e2 });
    }
  }

  const register: Record<Method, (p: string, h: (res: HttpResponse, req: HttpRequest) => void) => TemplatedApp> = {
    GET: (p, h) => app.get(p, h),
    POST: (p, h) => app.post(p, h),
    PUT: (p, h) => app.put(p, h),
    PATCH: (p, h) => app.patch(p, h),
    DELETE: (p, h) => app.del(p, h),
  };
  const seen = new Set<string>();
  for (const c of compiled) {
    const { pattern } = toUwsPattern(c.def.path);
    const id = `${c.def.method} ${pattern.replace(/:[^/]+/g, ':')}`;
    if (seen.has(id)) throw new Error(`duplicate route ${c.def.method} ${c.def.path}`);
    seen.add(id);
    register[c.def.method](pattern, handlerFor(c));
  }

  registerPreflight(app);
  // Anything else: the envelope, never uWS's empty 404.
  app.any('/*', (res, req) => {
    try {
      res.onAborted(() => {});
      const requestId = randomUUID();
      const line = `${req.getMethod().toUpperCase()} ${req.getUrl()}`.slice(0, 300);
      const err = new ApiError('route.not_found', `No route for ${line}. The API is described at ${baseUrl}/openapi/v1.json.`);
      send(res, requestId, errorReply(err, requestId, '/*'), true);
    } catch (e) {
      lastResort(res, e);
    }
  });

  return {
    app,
    inFlight: () => inflight,
    listen(host, port) {
      return new Promise((resolve, reject) => {
        app.listen(host, port, (sock) => {
          if (!sock) return reject(new Error(`cannot listen on ${host}:${port} (port in use?)`));
          listenSocket = sock;
          resolve(uws.us_socket_local_port(sock as never));
        });
      });
    },
    async close(timeoutMs) {
      draining = true;
      if (listenSocket) uws.us_listen_socket_close(listenSocket);
      listenSocket = null;
      if (inflight > 0) {
        await new Promise<void>((resolve) => {
          drained = resolve;
          setTimeout(resolve, timeoutMs).unref();
        });
      }
    },
  };
}
