// The route table's types: one declaration per route (method, path, auth kind, scope, idempotency,
// schemas, docs) that the edge serves and the OpenAPI document describes.
import type { Span } from '@opentelemetry/api';
import type { ErrorCode } from '../kernel/error-catalog.js';
import type { IdempotencyHandle } from '../kernel/idempotency.js';
import type { Principal, Scope } from '../kernel/principal.js';
import type { Services } from './services.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** none: open (health, docs); api_key: Authorization Bearer; admin: X-Admin-Key; public: client secret / open browser routes; session: a portal member's cookie (api/session-auth.ts). */
export type AuthKind = 'none' | 'api_key' | 'admin' | 'public' | 'session';
export type { Principal, Scope } from '../kernel/principal.js';

export interface Reply {
  status: number;
  /** JSON body; null fields are stripped on authenticated routes. */
  body?: unknown;
  /** Raw text body (HTML, plain text, Prometheus), sent as is; bytes for a binary file (an .xlsx). */
  text?: string | Uint8Array;
  contentType?: string;
  headers?: Record<string, string>;
  /** Send nulls as they are: the webhook envelope's data keeps `metadata: null` (spec: Global conventions, exception). */
  keepNulls?: boolean;
}

export interface RequestContext<B = unknown, Q = unknown> {
  readonly requestId: string;
  readonly method: Method;
  /** The request path as received, without the query string. */
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly query: Q;
  readonly body: B;
  /** The body text as received, on routes declared `signedBody` (signature verification). */
  readonly rawBody?: string;
  readonly ip: string;
  header(name: string): string | undefined;
  /** Set on api_key routes. */
  readonly principal: Principal;
  /** Set when the request carries a valid Idempotency-Key on a route that takes one. */
  readonly idem?: IdempotencyHandle;
  /** The capabilities a handler may call (api/services.ts): facades, never a pool. */
  readonly deps: Services;
  readonly span: Span;
  /** Aborted when the client disconnects. */
  readonly signal: AbortSignal;
}

export interface ResponseDoc {
  description: string;
  schema?: object;
  contentType?: string;
  /** Response headers the route sets (OpenAPI header objects), besides X-Request-Id. */
  headers?: Record<string, { description: string; schema: object }>;
}

export interface RouteDef<B = any, Q = any> {
  method: Method;
  /** OpenAPI-style path: /v1/customers/{id}. Params named id or ending in Id must be UUIDs. */
  path: string;
  auth: AuthKind;
  scope?: Scope;
  /** required: money-moving POSTs (spec marks them); optional: honoured when sent. */
  idempotency?: 'required' | 'optional';
  /**
   * When the stored answer of an earlier request with the same key is looked up. `before` (the
   * default): before the handler runs. `at_commit`: not before; the handler's effect is one
   * statement or transaction that writes the idempotency record, with no outside effect ahead of
   * it, so a repeat fails on the record's primary key and is answered with the stored response
   * then (one query less per request). A repeat the handler refuses before its commit (an ApiError:
   * stored state it checks changed since the first request) is answered with the stored response
   * as well when there is one (api/edge/idempotency.ts), so checks of stored state are allowed.
   */
  idempotencyLookup?: 'before' | 'at_commit';
  body?: object;
  query?: object;
  /** Keep the JSON body's text as received in ctx.rawBody: a provider signs those bytes. */
  signedBody?: boolean;
  /** Body cap in bytes; BODY_LIMIT_BYTES (1 MiB) unless the route needs more. */
  bodyLimit?: number;
  /**
   * The body is not JSON: the handler gets its bytes (a Buffer, empty when none was sent) as
   * `ctx.body`, read under `bodyLimit` while it streams in (a file upload: raw or multipart).
   */
  rawBody?: boolean;
  /** The code of the answer to a body over `bodyLimit` (`request.too_large`, 413, unless the route names its own). */
  tooLarge?: ErrorCode;
  /** OpenAPI only: query parameters the handler reads itself (not validated by the edge). */
  queryDoc?: object;
  /** OpenAPI only: the request body's media types when it is not JSON (`rawBody` routes). */
  requestContent?: Record<string, { schema: object; encoding?: object }>;
  /** Answer for a malformed UUID path parameter: the same as an unknown id. */
  notFound?: ErrorCode;
  /** The message of that answer when the code's default does not fit the route (e.g. /public: no key involved). */
  notFoundMessage?: string;
  summary: string;
  description?: string;
  tags: string[];
  responses: Record<number, ResponseDoc>;
  /** Request headers the handler itself reads (OpenAPI header parameters), e.g. an Idempotency-Key the endpoint validates on its own. */
  headerParams?: Array<{ name: string; required: boolean; description: string; schema: object }>;
  /** Error codes this route can answer besides the ones its auth kind and idempotency imply. */
  errors?: ErrorCode[];
  /** Rate-limit exempt even under /v1 or /public (spec: Limits > Exempt). */
  rateLimitExempt?: boolean;
  hidden?: boolean;
  handler(ctx: RequestContext<B, Q>): Promise<Reply> | Reply;
}

export const defineRoute = <B = unknown, Q = unknown>(r: RouteDef<B, Q>): RouteDef<B, Q> => r;
