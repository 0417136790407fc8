// The HTTP edge on uWebSockets.js: route table → parse, authenticate, rate-limit, validate,
// idempotency → handler → envelope. No business rule lives here. This file is the server (routes
// registered with uWS, a request's intake, listen and a graceful close); the steps are in api/edge/:
// head.ts (headers, limits, path parameters), exchange.ts (one request through the steps),
// auth.ts, body.ts, idempotency.ts, reply.ts (the answer and the error envelope), tracing.ts,
// route-table.ts. Spans are made only when an OpenTelemetry SDK is registered.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { ApiError } from '../kernel/errors.js';
import type { Method, RouteDef } from './route.js';
import { uws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from './uws.js';
import { registerPreflight } from './cors.js';
import { DRAIN_FACTOR, DRAINING, READING, TOO_LARGE } from './edge/body.js';
import type { EdgeDeps, EdgeRuntime } from './edge/deps.js';
import { Exchange } from './edge/exchange.js';
import { H, MAX_HEAD_BYTES, MAX_URL_BYTES, readHead } from './edge/head.js';
import { errorReply, send } from './edge/reply.js';
import { compileRoute, toUwsPattern, type Compiled } from './edge/route-table.js';
import { startRequestSpan, tracingOn } from './edge/tracing.js';

export type { EdgeDeps } from './edge/deps.js';

export interface Edge {
  app: TemplatedApp;
  listen(host: string, port: number): Promise<number>;
  /** Stops accepting, waits for in-flight requests (up to timeoutMs). */
  close(timeoutMs: number): Promise<void>;
  inFlight(): number;
}

export function createEdge(deps: EdgeDeps, routes: RouteDef[]): Edge {
  const app = uws.App();
  const { config, log, metrics } = deps;
  const baseUrl = config.publicBaseUrl;
  let listenSocket: us_listen_socket | null = null;
  let inflight = 0;
  let draining = false;
  let drained: (() => void) | null = null;

  const edge: EdgeRuntime = {
    deps,
    finish(c, status, t0) {
      inflight--;
      let counter = c.counters.get(status);
      if (!counter) c.counters.set(status, (counter = metrics.httpRequests.labels({ method: c.def.method, route: c.metricRoute, status: String(status) })));
      counter.inc();
      (c.durationChild ??= metrics.httpDuration.labels({ method: c.def.method, route: c.metricRoute })).observe((performance.now() - t0) / 1000);
      if (draining && inflight === 0 && drained) drained();
    },
  };

  /** A request refused before its pipeline starts: answered at once. */
  function refuse(x: Exchange, err: ApiError) {
    inflight++;
    x.fail(err);
  }

  /** A request's intake: the head read synchronously (uWS's request object is valid only here), then step 1. */
  function handlerFor(c: Compiled) {
    const { def } = c;
    return (res: HttpResponse, req: HttpRequest) => {
      let x: Exchange | undefined;
      try {
        const t0 = performance.now();
        const requestId = randomUUID();
        const url = req.getUrl();
        const rawQuery = req.getQuery() ?? '';
        x = new Exchange(edge, c, res, requestId, url, rawQuery, t0);
        const ex = x;
        res.onAborted(() => {
          try {
            ex.onAborted();
          } catch (e) {
            ex.crashed(e);
          }
        });
        const urlBytes = readHead(x, req, def.method, url, rawQuery, c.paramNames);
        // The client IP is read now (res is only valid synchronously) but only for routes that use it.
        if (c.rateLimit === 'public' || def.auth !== 'api_key') x.clientIp();

        if (draining) {
          x.sent = true;
          send(res, requestId, errorReply(new ApiError('service_unavailable', 'The server is shutting down; retry on another instance.'), requestId, def.path, log, baseUrl), true);
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
          const s = startRequestSpan(c.spanName, def.method, def.path, x.path, requestId, x.hv);
          x.span = s.span;
          x.spanCtx = s.ctx;
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
      send(res, requestId, errorReply(new Error('edge callback failed', { cause: e }), requestId, '/*', log, baseUrl), true);
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
  for (const def of routes) {
    const c = compileRoute(def, config.bodyLimitBytes);
    const { pattern } = toUwsPattern(def.path);
    const id = `${def.method} ${pattern.replace(/:[^/]+/g, ':')}`;
    if (seen.has(id)) throw new Error(`duplicate route ${def.method} ${def.path}`);
    seen.add(id);
    register[def.method](pattern, handlerFor(c));
  }

  registerPreflight(app);
  // Anything else: the envelope, never uWS's empty 404.
  app.any('/*', (res, req) => {
    try {
      res.onAborted(() => {});
      const requestId = randomUUID();
      const line = `${req.getMethod().toUpperCase()} ${req.getUrl()}`.slice(0, 300);
      const err = new ApiError('route.not_found', `No route for ${line}. The API is described at ${baseUrl}/openapi/v1.json.`);
      send(res, requestId, errorReply(err, requestId, '/*', log, baseUrl), true);
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
