// The HTTP edge on uWebSockets.js: route table → parse, authenticate, rate-limit, validate,
// idempotency → handler → envelope. No business rule lives here.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { performance } from 'node:perf_hooks';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace, type Span } from '@opentelemetry/api';
import type { AppDeps } from './deps.js';
import { ApiError, envelope, isApiError } from './errors.js';
import { isIdempotencyConflict, parseIdempotencyKey, type IdempotencyHandle } from './idempotency.js';
import { answerJson, stripNulls } from './json.js';
import { constantTimeEqual, requireScope } from './auth.js';
import type { Method, Principal, Reply, RequestContext, RouteDef } from './route.js';
import { uws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from './uws.js';
import { compileBody, compileQuery, type Validator } from './validation.js';
import { hashKey } from './auth.js';
import { ATTR } from '../ops/tracing.js';

const tracer = trace.getTracer('orquesta-edge');
// Span attribute names live in ops/tracing.ts (ATTR).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STATUS_LINE: Record<number, string> = {};
for (const [code, text] of Object.entries(STATUS_CODES)) STATUS_LINE[Number(code)] = `${code} ${text}`;

interface Compiled {
  def: RouteDef;
  paramNames: string[];
  uuidParams: number[];
  body?: Validator;
  query?: Validator;
  bodyLimit: number;
  rateLimit: 'v1' | 'public' | null;
  metricRoute: string;
  /** prom-client children per method, cached (label hashing per request is not free). */
  durationChild?: { observe(v: number): void };
  counters: Map<number, { inc(): void }>;
}

interface ReqState {
  aborted: boolean;
  done: boolean;
  /** Created only when someone asks for the signal (an AbortController per request is not free). */
  controller?: AbortController;
  onAbort?: () => void;
}

function signalOf(st: ReqState): AbortSignal {
  if (!st.controller) {
    st.controller = new AbortController();
    if (st.aborted) st.controller.abort();
  }
  return st.controller.signal;
}

class Aborted extends Error {}

export interface Edge {
  app: TemplatedApp;
  listen(host: string, port: number): Promise<number>;
  /** Stops accepting, waits for in-flight requests (up to timeoutMs). */
  close(timeoutMs: number): Promise<void>;
  inFlight(): number;
}

const METHODS_WITH_BODY = new Set<Method>(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Every request header the service reads (ctx.header() sees only these). */
export const READ_HEADERS = [
  'authorization', 'x-admin-key', 'idempotency-key', 'content-length', 'content-type', 'host',
  'x-service-client-secret', 'x-forwarded-for', 'traceparent', 'tracestate', 'baggage',
] as const;
const enc = (x: string) => new Uint8Array(Buffer.from(x, 'latin1'));
const STATUS_BUF: Record<number, Uint8Array> = {};
for (const [code, line] of Object.entries(STATUS_LINE)) STATUS_BUF[Number(code)] = enc(line);
const H_REQUEST_ID = enc('X-Request-Id');
const H_CONTENT_TYPE = enc('Content-Type');
const V_JSON = enc('application/json; charset=utf-8');
const H_NOSNIFF = enc('X-Content-Type-Options');
const V_NOSNIFF = enc('nosniff');

export function toUwsPattern(path: string): { pattern: string; params: string[] } {
  const params: string[] = [];
  const pattern = path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => {
    params.push(name);
    return `:${name}`;
  });
  return { pattern, params };
}

function clientIp(res: HttpResponse, headers: Map<string, string>, trusted: readonly string[]): string {
  let ip = Buffer.from(res.getRemoteAddressAsText()).toString();
  if (ip.startsWith('::ffff:')) ip = ip.slice(7);
  else if (/^0000:0000:0000:0000:0000:ffff:/.test(ip)) ip = ip.slice(30);
  if (trusted.length && trusted.includes(ip)) {
    // Walk X-Forwarded-For from the right, skipping our own proxies: the first other hop is the client.
    const hops = (headers.get('x-forwarded-for') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    for (let i = hops.length - 1; i >= 0; i--) if (!trusted.includes(hops[i])) return hops[i];
  }
  return ip;
}

export function createEdge(deps: AppDeps, routes: RouteDef[]): Edge {
  const app = uws.App();
  const { config, log, metrics } = deps;
  let listenSocket: us_listen_socket | null = null;
  let inflight = 0;
  let draining = false;
  let drained: (() => void) | null = null;

  const compiled: Compiled[] = routes.map((def) => {
    const { params } = toUwsPattern(def.path);
    const rl = def.rateLimitExempt ? null : def.path.startsWith('/v1/') ? 'v1' : def.path.startsWith('/public/') ? 'public' : null;
    return {
      def,
      paramNames: params,
      uuidParams: params.map((p, i) => (p === 'id' || /Id$/.test(p) ? i : -1)).filter((i) => i >= 0),
      body: def.body ? compileBody(def.body) : undefined,
      query: def.query ? compileQuery(def.query) : undefined,
      bodyLimit: def.bodyLimit ?? config.bodyLimitBytes,
      rateLimit: rl,
      metricRoute: def.path,
      counters: new Map(),
    };
  });

  function send(res: HttpResponse, st: ReqState, requestId: string, reply: Reply, close = false) {
    if (st.aborted || st.done) return;
    st.done = true;
    let payload: string;
    let type = reply.contentType;
    if (reply.text !== undefined) payload = reply.text;
    else if (reply.body !== undefined) {
      // spec: null fields are omitted (authenticated responses; we omit them everywhere for one shape).
      payload = reply.keepNulls ? JSON.stringify(reply.body) : answerJson(reply.body);
      type ??= 'application/json';
    } else payload = '';
    res.cork(() => {
      // Constant status lines and headers are pre-encoded: uWS then copies bytes, no UTF-8 conversion.
      res.writeStatus(STATUS_BUF[reply.status] ?? String(reply.status));
      res.writeHeader(H_REQUEST_ID, requestId);
      if (type === 'application/json') res.writeHeader(H_CONTENT_TYPE, V_JSON);
      else if (type) res.writeHeader(H_CONTENT_TYPE, type.includes('charset') || !type.startsWith('text/') ? type : `${type}; charset=utf-8`);
      res.writeHeader(H_NOSNIFF, V_NOSNIFF);
      if (reply.headers) for (const k in reply.headers) res.writeHeader(k, reply.headers[k]);
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
    return { status: err.status, body: envelope(err, requestId, config.publicBaseUrl), headers: err.headers };
  }

  function readBody(res: HttpResponse, st: ReqState, limit: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let over = false;
      st.onAbort = () => reject(new Aborted());
      res.onData((chunk, isLast) => {
        if (over) return;
        size += chunk.byteLength;
        if (size > limit) {
          over = true;
          reject(new ApiError('request.too_large', `The body is larger than the ${limit} bytes this route accepts.`));
          return;
        }
        chunks.push(Buffer.from(chunk.slice(0))); // copy: uWS reuses the chunk's memory after the callback
        if (isLast) resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
      });
    });
  }

  async function pipeline(
    c: Compiled,
    res: HttpResponse,
    st: ReqState,
    requestId: string,
    method: Method,
    path: string,
    rawQuery: string,
    headers: Map<string, string>,
    params: Record<string, string>,
    ip: string,
    bodyPromise: Promise<Buffer> | null,
    span: Span,
  ): Promise<{ reply: Reply; principal?: Principal; close?: boolean }> {
    const def = c.def;
    let principal: Principal | undefined;
    try {
      // 1. Authentication.
      if (def.auth === 'api_key') {
        principal = await deps.keys.authenticate(headers.get('authorization'));
        span.setAttribute(ATTR.tenantId, principal.tenantId);
        span.setAttribute(ATTR.livemode, principal.livemode);
      } else if (def.auth === 'admin') {
        const k = headers.get('x-admin-key');
        if (!k || !constantTimeEqual(hashKey(k), deps.adminKeyHash)) throw new ApiError('admin_key.missing_or_invalid');
      }
      // 2. Rate limit (spec: Limits): per API key on /v1, per client IP on /public.
      if (c.rateLimit === 'v1' && principal) {
        const v = await deps.limiter.hit(`k:${principal.keyId}`, config.rateLimitV1PerMin, principal.keyId).catch((e) => failOpen(e));
        if (v.revoked) throw new ApiError('api_key.missing_or_invalid');
        if (!v.allowed) {
          metrics.rateLimited.inc({ kind: 'v1' });
          throw new ApiError('rate_limit_exceeded', undefined, { 'Retry-After': String(v.retryAfter) });
        }
      } else if (c.rateLimit === 'public') {
        const v = await deps.limiter.hit(`ip:${ip}`, config.rateLimitPublicPerMin).catch((e) => failOpen(e));
        if (!v.allowed) {
          metrics.rateLimited.inc({ kind: 'public' });
          throw new ApiError('rate_limit_exceeded', undefined, { 'Retry-After': String(v.retryAfter) });
        }
      }
      // 3. Scope.
      if (principal) requireScope(principal, def.scope);
      // 4. Path parameters: a malformed id answers exactly like an unknown one.
      for (const i of c.uuidParams) {
        if (!UUID.test(params[c.paramNames[i]])) throw new ApiError(def.notFound ?? 'route.not_found');
      }
      // 5. Body and query.
      let parsed: unknown = undefined;
      if (bodyPromise) {
        const raw = await bodyPromise;
        if (c.body) {
          const text = raw.length ? raw.toString('utf8') : '';
          if (text.trim() === '') parsed = {};
          else {
            try {
              parsed = JSON.parse(text);
            } catch (e) {
              throw new ApiError('request.malformed_json', `The body is not valid JSON (${(e as Error).message}). Send a JSON object with Content-Type: application/json.`);
            }
          }
          if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
            throw new ApiError('request.malformed_json', 'The body must be a JSON object.');
          }
        }
      }
      // A null field means "not sent" (spec: tip_minor null/omitted = 0; patch: null = untouched).
      if (parsed !== undefined) parsed = stripNulls(parsed);
      // The fingerprint is taken before validation applies defaults, and only when it may be needed.
      const hashBody = def.idempotency && headers.has('idempotency-key') ? (parsed === undefined ? null : JSON.parse(JSON.stringify(parsed))) : null;
      const body = c.body ? c.body(parsed) : undefined;
      const queryObj: Record<string, string> = {};
      if (rawQuery) for (const [k, v] of new URLSearchParams(rawQuery)) queryObj[k] = v;
      const query = c.query ? c.query(queryObj) : queryObj;

      // 6. Idempotency.
      let idem: IdempotencyHandle | undefined;
      let release: (() => Promise<void>) | undefined;
      if (def.idempotency && principal) {
        const key = parseIdempotencyKey(headers.get('idempotency-key'), def.idempotency === 'required');
        if (key) {
          const begun = await deps.idempotency.begin(principal, key, method, path, hashBody, requestId);
          if ('replay' in begun) {
            metrics.idempotentReplays.inc();
            return { reply: begun.replay, principal };
          }
          idem = begun.handle;
          release = begun.release;
        }
      }

      const ctx: RequestContext = {
        requestId,
        method,
        path,
        params,
        query,
        body,
        ip,
        header: (n) => headers.get(n.toLowerCase()),
        principal: principal as Principal,
        idem,
        deps,
        span,
        get signal() {
          return signalOf(st);
        },
      };
      try {
        return { reply: await def.handler(ctx), principal };
      } catch (e) {
        // A concurrent twin with the same key committed first: our effect rolled back; replay theirs.
        if (idem && principal && isIdempotencyConflict(e)) {
          const stored = await deps.idempotency.lookup(principal, idem.key, idem.requestHash);
          if (stored) return { reply: stored, principal };
        }
        throw e;
      } finally {
        if (release) await release().catch((e) => log.warn('idempotency lock release failed', { requestId, err: e }));
      }
    } catch (e) {
      if (e instanceof Aborted) return { reply: { status: 499 }, principal };
      const close = isApiError(e) && e.code === 'request.too_large';
      return { reply: errorReply(e, requestId, def.path), principal, close };
    }
  }

  function failOpen(e: unknown) {
    // Redis unreachable: the window cannot be counted. Serve rather than refuse everyone; the
    // key cache (KEY_CACHE_SECONDS) still bounds how long a revoked key can slip through.
    log.warn('rate limiter unavailable, request not counted', { err: e });
    return { allowed: true, revoked: false, retryAfter: 0 };
  }

  function handlerFor(c: Compiled) {
    return (res: HttpResponse, req: HttpRequest) => {
      const t0 = performance.now();
      const st: ReqState = { aborted: false, done: false };
      res.onAborted(() => {
        st.aborted = true;
        st.controller?.abort();
        st.onAbort?.();
      });
      const requestId = randomUUID();
      const method = c.def.method;
      const path = req.getUrl();
      const rawQuery = req.getQuery() ?? '';
      // Only the headers the edge and the handlers read (copying them all costs ~10% of a request).
      const headers = new Map<string, string>();
      for (const h of READ_HEADERS) {
        const v = req.getHeader(h);
        if (v) headers.set(h, v);
      }
      const params: Record<string, string> = {};
      c.paramNames.forEach((n, i) => (params[n] = decodeURIComponent(req.getParameter(i) ?? '')));
      // The client IP is read now (res is only valid synchronously) but only for routes that use it.
      const ip = c.rateLimit === 'public' || c.def.auth !== 'api_key' ? clientIp(res, headers, config.trustedProxies) : '';

      if (draining) {
        send(res, st, requestId, errorReply(new ApiError('service_unavailable', 'The server is shutting down; retry on another instance.'), requestId, c.def.path), true);
        return;
      }
      inflight++;

      let bodyPromise: Promise<Buffer> | null = null;
      if (METHODS_WITH_BODY.has(method)) {
        const declared = Number(headers.get('content-length') ?? '0');
        if (declared > c.bodyLimit) {
          // Refuse before reading a byte; close so the unread body does not poison the connection.
          const err = new ApiError('request.too_large', `The body (${declared} bytes) is larger than the ${c.bodyLimit} bytes this route accepts.`);
          send(res, st, requestId, errorReply(err, requestId, c.def.path), true);
          finish(c, method, 413, t0);
          return;
        }
        bodyPromise = readBody(res, st, c.bodyLimit);
        bodyPromise.catch(() => {}); // observed in the pipeline; avoid an unhandled rejection before that
      }

      const parent = headers.has('traceparent') ? propagation.extract(ROOT_CONTEXT, Object.fromEntries(headers)) : ROOT_CONTEXT;
      const span = tracer.startSpan(
        `${method} ${c.def.path}`,
        { kind: SpanKind.SERVER, attributes: { [ATTR.httpMethod]: method, [ATTR.httpRoute]: c.def.path, [ATTR.urlPath]: path, [ATTR.requestId]: requestId } },
        parent,
      );
      context
        .with(trace.setSpan(parent, span), () =>
          pipeline(c, res, st, requestId, method, path, rawQuery, headers, params, ip, bodyPromise, span),
        )
        .then(({ reply, principal, close }) => {
          if (reply.status !== 499) send(res, st, requestId, reply, close);
          span.setAttribute(ATTR.httpStatus, reply.status);
          if (reply.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          finish(c, method, st.aborted ? 499 : reply.status, t0);
        })
        .catch((e) => {
          log.error('edge failure', { requestId, err: e });
          send(res, st, requestId, errorReply(e, requestId, c.def.path));
          finish(c, method, 500, t0);
        })
        .finally(() => span.end());
    };
  }

  function finish(c: Compiled, method: string, status: number, t0: number) {
    inflight--;
    let counter = c.counters.get(status);
    if (!counter) c.counters.set(status, (counter = metrics.httpRequests.labels({ method, route: c.metricRoute, status: String(status) })));
    counter.inc();
    (c.durationChild ??= metrics.httpDuration.labels({ method, route: c.metricRoute })).observe((performance.now() - t0) / 1000);
    if (draining && inflight === 0 && drained) drained();
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

  // Anything else: the envelope, never uWS's empty 404.
  app.any('/*', (res, req) => {
    const st: ReqState = { aborted: false, done: false };
    res.onAborted(() => (st.aborted = true));
    const requestId = randomUUID();
    const line = `${req.getMethod().toUpperCase()} ${req.getUrl()}`;
    const err = new ApiError('route.not_found', `No route for ${line}. The API is described at ${config.publicBaseUrl}/openapi/v1.json.`);
    send(res, st, requestId, { status: 404, body: envelope(err, requestId, config.publicBaseUrl) }, true);
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
