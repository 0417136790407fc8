// One request, from the uWS handler to the answer: the Exchange object carries it through the steps
// (1 authentication, 2 rate limit, 3 scope and path parameters, 4 body and query, 5 idempotency and
// the handler, then the answer) and is itself the handler's RequestContext.
//
// The steps run synchronously wherever nothing has to be waited for: on an authenticated route with
// the key in the cache, the rate-limit count in Redis is the only wait before the handler (the body,
// if any, is read while it runs), and a handler that answers without awaiting is answered in the
// same turn. Promises appear only where something async really happens (a key cache miss,
// idempotency, an async handler).
import { context, type Context, type Span } from '@opentelemetry/api';
import { ApiError, isApiError } from '../../kernel/errors.js';
import type { IdempotencyHandle } from '../../kernel/idempotency.js';
import type { Principal } from '../../kernel/principal.js';
import { ATTR } from '../../kernel/tracing.js';
import { requireScope } from '../auth.js';
import { parseQuery } from '../body.js';
import { parseIdempotencyKey } from '../idempotency.js';
import type { VerdictSink } from '../rate-limit.js';
import type { Method, Reply, RequestContext } from '../route.js';
import type { Services } from '../services.js';
import type { HttpResponse } from '../uws.js';
import { authenticate, countAuthFailure, failOpen, isAuthFailure } from './auth.js';
import { COMPLETE, DRAINING, GIVE_UP, MORE, NO_BODY, parsedBody, READING, takeChunk, TOO_LARGE, tooLarge, type BodyBuffer } from './body.js';
import type { EdgeRuntime } from './deps.js';
import { clientIp, H, HEADER_INDEX, READ_HEADERS, UUID, type HeadSink } from './head.js';
import { runIdempotent } from './idempotency.js';
import { errorReply, JSON_TYPE, send } from './reply.js';
import type { Compiled } from './route-table.js';
import { endRequestSpan, NO_SPAN } from './tracing.js';

const isThenable = (x: unknown): x is PromiseLike<Reply> => typeof (x as { then?: unknown } | null)?.then === 'function';

export class Exchange implements RequestContext, VerdictSink, HeadSink, BodyBuffer {
  readonly method: Method;
  readonly deps: Services;
  ip = '';
  params: Record<string, string> = {};
  query: unknown = undefined;
  body: unknown = undefined;
  rawBody: string | undefined = undefined;
  principal!: Principal;
  idem?: IdempotencyHandle;
  span: Span = NO_SPAN;
  /** The active context for the handler when tracing is on. */
  spanCtx: Context | undefined = undefined;
  hv: Array<string | undefined> = new Array(READ_HEADERS.length);
  headBytes = 0;
  duplicate: string | undefined = undefined;
  badParam: string | undefined = undefined;
  aborted = false;
  /** The answer is written (or the client is gone): nothing more is sent. */
  sent = false;
  /** end() ran: in-flight count, metrics, span. */
  finished = false;
  authCounted = false;
  controller: AbortController | undefined = undefined;
  bodyState = NO_BODY;
  bodySize = 0;
  bodyChunks: Buffer[] | null = null;
  bodyText = '';
  rawBytes: Buffer | null = null;
  /** The pipeline reached the body step before the body was complete. */
  bodyWaited = false;
  /** The declared length was over the limit: no pipeline runs; 413 once the body is drained. */
  refuseWhenDrained = false;

  constructor(
    readonly edge: EdgeRuntime,
    readonly c: Compiled,
    readonly res: HttpResponse,
    readonly requestId: string,
    readonly path: string,
    readonly rawQuery: string,
    readonly t0: number,
  ) {
    this.method = c.def.method;
    this.deps = edge.deps;
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
    if (!this.ip && !this.aborted) this.ip = clientIp(this.res, this.hv[H['x-forwarded-for']], this.edge.deps.config.trustedProxies);
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
    const r = takeChunk(this, this.c, chunk, isLast);
    if (r === MORE) return;
    if (r === GIVE_UP) return this.fail(this.tooLarge());
    if (r === COMPLETE && this.refuseWhenDrained) return this.fail(this.tooLarge());
    if (this.bodyWaited) {
      this.bodyWaited = false;
      this.guard(this.afterBody);
    }
  }

  tooLarge(): ApiError {
    return tooLarge(this.c, this.hv[H['content-length']]);
  }

  /** Runs a step; anything it throws becomes the error answer. */
  guard(step: (this: Exchange) => void) {
    try {
      step.call(this);
    } catch (e) {
      this.fail(e);
    }
  }

  // 1. Authentication (./auth.ts).
  start() {
    authenticate(this, this.edge.deps);
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
    const { limiter, config } = this.edge.deps;
    if (rl === 'v1' && this.principal) limiter.count(`k:${this.principal.keyId}`, config.rateLimitV1PerMin, this.principal.keyId, this);
    else if (rl === 'public') limiter.count(`ip:${this.ip}`, config.rateLimitPublicPerMin, '', this);
    else this.checks();
  }

  verdict(allowed: boolean, revoked: boolean, retryAfter: number) {
    try {
      if (revoked) throw new ApiError('api_key.missing_or_invalid');
      if (!allowed) {
        this.edge.deps.metrics.rateLimited.inc({ kind: this.c.rateLimit! });
        throw new ApiError('rate_limit_exceeded', undefined, { 'Retry-After': String(retryAfter) });
      }
      this.checks();
    } catch (e) {
      this.fail(e);
    }
  }

  limitFailed(err: unknown) {
    failOpen(this.edge.deps, err);
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

  // 4. Body and query (./body.ts), then idempotency (./idempotency.ts) and the handler.
  afterBody() {
    const c = this.c;
    if (this.bodyState === TOO_LARGE) throw this.tooLarge();
    const parsed = parsedBody(this, c, this.hv[H['content-type']]);
    const def = c.def;
    const keyHeader = def.idempotency ? this.hv[H['idempotency-key']] : undefined;
    // The fingerprint is taken before validation applies defaults, and only when it may be needed.
    const hashBody = keyHeader !== undefined ? (parsed === undefined ? null : JSON.parse(JSON.stringify(parsed))) : null;
    this.body = c.raw ? parsed : c.body ? c.body(parsed) : undefined;
    const queryObj = this.rawQuery ? parseQuery(this.rawQuery) : {};
    this.query = c.query ? c.query(queryObj) : queryObj;

    const idemKey = def.idempotency && this.principal ? parseIdempotencyKey(keyHeader, def.idempotency === 'required') : undefined;
    if (idemKey) {
      this.within(() => runIdempotent(this, this.edge.deps, idemKey, hashBody)).then(
        (r) => this.answer(r),
        (e) => this.fail(e),
      );
      return;
    }
    const out = this.spanCtx ? context.with(this.spanCtx, def.handler, def, this) : def.handler(this);
    if (isThenable(out)) out.then((r) => this.answer(r), (e) => this.fail(e));
    else this.answer(out);
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
      this.edge.deps.log.error('edge failure', { requestId: this.requestId, err: e });
    }
    this.end(reply.status, this.aborted ? 499 : reply.status);
  }

  fail(e: unknown): void {
    if (!this.authCounted && !this.sent && isAuthFailure(e)) return countAuthFailure(this, this.edge.deps, e as ApiError);
    const { log, config } = this.edge.deps;
    let reply: Reply;
    let close = false;
    try {
      // A 413 closes the connection: its body was drained (or is past DRAIN_FACTOR times the limit).
      close = isApiError(e) && (e.code === 'request.too_large' || e.code === this.c.def.tooLarge);
      reply = errorReply(e, this.requestId, this.c.def.path, log, config.publicBaseUrl);
    } catch (e2) {
      log.error('edge failure', { requestId: this.requestId, err: e2 });
      reply = { status: 500, text: '', contentType: JSON_TYPE };
    }
    this.answer(reply, close);
  }

  /** An exception that escaped a step (a bug): a 500 envelope if nothing was sent yet, and a log line. */
  crashed(e: unknown) {
    const { log, config } = this.edge.deps;
    log.error('edge: uncaught error in a request callback', { requestId: this.requestId, route: this.c.def.path, err: e });
    try {
      if (!this.sent) this.answer(errorReply(new Error('edge callback failed', { cause: e }), this.requestId, this.c.def.path, log, config.publicBaseUrl));
      else this.end(500, 500);
    } catch (e2) {
      log.error('edge failure', { requestId: this.requestId, err: e2 });
    }
  }

  /** Metrics, in-flight count and span, once. */
  end(spanStatus: number, metricStatus: number) {
    if (this.finished) return;
    this.finished = true;
    this.edge.finish(this.c, metricStatus, this.t0);
    if (this.spanCtx) endRequestSpan(this.span, spanStatus);
  }
}
