// The route table as the edge serves it: each RouteDef compiled once (its uWS pattern, validators,
// limits, rate-limit class, span and metric names) and registered with uWS.
import type { Method, RouteDef } from '../route.js';
import { compileBody, compileQuery, type Validator } from '../validation.js';
import { isCorsPath } from '../cors.js';

export interface Compiled {
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

const METHODS_WITH_BODY = new Set<Method>(['POST', 'PUT', 'PATCH', 'DELETE']);

/** `/v1/customers/{id}` → `/v1/customers/:id` and its parameter names. */
export function toUwsPattern(path: string): { pattern: string; params: string[] } {
  const params: string[] = [];
  const pattern = path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => {
    params.push(name);
    return `:${name}`;
  });
  return { pattern, params };
}

export function compileRoute(def: RouteDef, defaultBodyLimit: number): Compiled {
  const { params } = toUwsPattern(def.path);
  const rl = def.rateLimitExempt ? null : def.path.startsWith('/v1/') ? 'v1' : def.path.startsWith('/public/') ? 'public' : null;
  return {
    def,
    paramNames: params,
    uuidParams: params.map((p, i) => (p === 'id' || /Id$/.test(p) ? i : -1)).filter((i) => i >= 0),
    body: def.body ? compileBody(def.body) : undefined,
    query: def.query ? compileQuery(def.query) : undefined,
    bodyLimit: def.bodyLimit ?? defaultBodyLimit,
    raw: def.rawBody === true,
    rateLimit: rl,
    hasBody: METHODS_WITH_BODY.has(def.method),
    spanName: `${def.method} ${def.path}`,
    metricRoute: def.path,
    cors: isCorsPath(def.path),
    counters: new Map(),
  };
}
