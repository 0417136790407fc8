// GET /openapi/v1.json: an OpenAPI 3.1.1 document generated from the route table and the same
// schemas the validators use, with every route's error codes. spec: Versioning.
import { ERROR_CATALOG, ERROR_CODES, type ErrorCode } from '../kernel/error-catalog.js';
import { EVENT_CATALOG } from '../schemas/events.js';
import { envelopeSchema } from '../schemas/webhooks.js';
import { statusForCode } from '../kernel/errors.js';
import type { RouteDef } from './route.js';

export const API_DESCRIPTION_VERSION = '2026-07-12';

type Sch = Record<string, unknown>;

/** Every x-error-code / x-required-error-code a schema can produce. */
function schemaCodes(s: unknown, out = new Set<ErrorCode>()): Set<ErrorCode> {
  if (Array.isArray(s)) s.forEach((x) => schemaCodes(x, out));
  else if (s && typeof s === 'object') {
    for (const [k, v] of Object.entries(s)) {
      if ((k === 'x-error-code' || k === 'x-required-error-code') && typeof v === 'string') out.add(v as ErrorCode);
      else schemaCodes(v, out);
    }
  }
  return out;
}

export function routeErrorCodes(r: RouteDef): ErrorCode[] {
  const codes = new Set<ErrorCode>(r.errors ?? []);
  if (r.auth === 'api_key') {
    codes.add('api_key.missing_or_invalid');
    if (r.scope) codes.add('insufficient_scope');
  }
  if (r.auth === 'admin') codes.add('admin_key.missing_or_invalid');
  if (!r.rateLimitExempt && (r.path.startsWith('/v1/') || r.path.startsWith('/public/'))) codes.add('rate_limit_exceeded');
  // Failed credentials are throttled per client IP (429 instead of 401 over the limit).
  if (r.auth === 'api_key' || r.auth === 'admin') codes.add('rate_limit_exceeded');
  // The edge's own refusals, on every route (docs/edge.md).
  codes.add('request.duplicate_header');
  codes.add('request.uri_too_long');
  codes.add('request.headers_too_large');
  if (r.body) {
    codes.add('request.malformed_json');
    codes.add('request.too_large');
    codes.add('request.unsupported_media_type');
    const own = schemaCodes(r.body);
    own.forEach((c) => codes.add(c));
    if (!(r.body as Sch)['x-error-code']) codes.add('request.invalid_body');
  }
  if (r.query) {
    schemaCodes(r.query).forEach((c) => codes.add(c));
    codes.add('request.invalid_query');
  }
  if (r.idempotency) {
    codes.add('idempotency_key_required');
    codes.add('idempotency_key_in_progress');
    codes.add('idempotency_key_reused');
  }
  if (r.notFound) codes.add(r.notFound);
  codes.add('internal_error');
  return [...codes];
}

const strip = (s: unknown): unknown => JSON.parse(JSON.stringify(s));

export function buildOpenApi(routes: RouteDef[], baseUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    if (r.hidden) continue;
    const params: unknown[] = [];
    for (const m of r.path.matchAll(/\{([^}]+)\}/g)) {
      const name = m[1];
      const isUuid = name === 'id' || /Id$/.test(name);
      params.push({ name, in: 'path', required: true, schema: isUuid ? { type: 'string', format: 'uuid' } : { type: 'string' } });
    }
    if (r.query || r.queryDoc) {
      const q = (r.query ?? r.queryDoc) as Sch;
      const req = new Set((q.required as string[] | undefined) ?? []);
      for (const [name, schema] of Object.entries((q.properties as Record<string, Sch>) ?? {})) {
        params.push({ name, in: 'query', required: req.has(name), schema: strip(schema), ...(schema.description ? { description: schema.description } : {}) });
      }
    }
    if (r.idempotency) {
      params.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: r.idempotency === 'required',
        description: 'UUID. Same key + same body + same route replays the stored answer with `Idempotency-Replayed: true`; kept at least 24 hours.',
        schema: { type: 'string', format: 'uuid' },
      });
    }
    for (const h of r.headerParams ?? []) params.push({ name: h.name, in: 'header', required: h.required, description: h.description, schema: h.schema });
    const responses: Record<string, unknown> = {};
    for (const [status, doc] of Object.entries(r.responses)) {
      const ct = doc.contentType ?? 'application/json';
      responses[status] = {
        description: doc.description,
        headers: { 'X-Request-Id': { $ref: '#/components/headers/RequestId' }, ...(doc.headers ?? {}) },
        ...(doc.schema || ct !== 'application/json' ? { content: { [ct]: { schema: doc.schema ? strip(doc.schema) : { type: 'string' } } } } : {}),
      };
    }
    const byStatus = new Map<number, ErrorCode[]>();
    for (const c of routeErrorCodes(r)) {
      const s = statusForCode(c);
      byStatus.set(s, [...(byStatus.get(s) ?? []), c]);
    }
    for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
      if (responses[String(status)]) continue;
      const headers: Record<string, unknown> = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };
      if (status === 429) headers['Retry-After'] = { description: 'Seconds until the rate-limit window ends', schema: { type: 'integer' } };
      if (codes.includes('idempotency_key_in_progress')) headers['Retry-After'] = { description: '2 (seconds) for idempotency_key_in_progress', schema: { type: 'integer' } };
      responses[String(status)] = {
        description: `Error: ${codes.map((c) => `\`${c}\``).join(', ')}`,
        headers,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        'x-error-codes': codes,
      };
    }
    const security =
      r.auth === 'api_key' ? [{ bearerAuth: [] }] : r.auth === 'admin' ? [{ adminKey: [] }] : [];
    const op: Record<string, unknown> = {
      operationId: `${r.method.toLowerCase()}${r.path.replace(/\{([^}]+)\}/g, 'By_$1').replace(/[^A-Za-z0-9]+(.)?/g, (_m, ch: string | undefined) => (ch ? ch.toUpperCase() : ''))}`,
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      tags: r.tags,
      security,
      ...(params.length ? { parameters: params } : {}),
      ...(r.body ? { requestBody: { required: !!(r.body as Sch).required, content: { 'application/json': { schema: strip(r.body) } } } } : {}),
      ...(r.requestContent ? { requestBody: { required: true, content: strip(r.requestContent) } } : {}),
      responses,
      ...(r.scope ? { 'x-required-scope': r.scope } : {}),
      'x-error-codes': routeErrorCodes(r),
    };
    const oasPath = r.path;
    paths[oasPath] ??= {};
    paths[oasPath][r.method.toLowerCase()] = op;
  }

  return {
    openapi: '3.1.1',
    info: {
      title: 'Orquesta API',
      version: API_DESCRIPTION_VERSION,
      summary: 'Payment orchestration for Mexican businesses',
      description:
        'One API over cards, SPEI, CoDi and OXXO, CFDI invoicing and a double-entry ledger. ' +
        'Keys: `Authorization: Bearer sk_test_...` (test mode) or `sk_live_...`. Amounts are integers in minor units. ' +
        'Null fields are omitted from authenticated responses. Errors: `{error: {type, code, message, doc_url, request_id}}`; ' +
        `every code is explained at ${baseUrl}/docs/errors. Choices where the contract is silent are written in each operation's description.`,
    },
    servers: [{ url: baseUrl }],
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    tags: [...new Set(routes.filter((r) => !r.hidden).flatMap((r) => r.tags))].map((name) => ({ name })),
    paths,
    // The events a merchant's endpoint receives (spec: Events): one POST per event type, its envelope and data.
    webhooks: Object.fromEntries(
      Object.entries(EVENT_CATALOG).map(([type, e]) => [
        type,
        {
          post: {
            summary: type,
            description: `${e.summary} Signed with \`Gateway-Signature\`; deduplicate on \`event_id\`; any 2xx within about 10 s acknowledges it.`,
            requestBody: { required: true, content: { 'application/json': { schema: { ...envelopeSchema, properties: { ...envelopeSchema.properties, event_type: { const: type }, data: e.data } } } } },
            responses: { 200: { description: 'Acknowledged (any 2xx)' } },
          },
        },
      ]),
    ),
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key: sk_test_... or sk_live_...' },
        adminKey: { type: 'apiKey', in: 'header', name: 'X-Admin-Key', description: 'Operator key (ADMIN_KEY)' },
      },
      headers: {
        RequestId: { description: 'Id of this request; equals error.request_id', schema: { type: 'string' } },
      },
      schemas: {
        ErrorCode: { type: 'string', enum: ERROR_CODES },
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['type', 'code', 'message', 'doc_url', 'request_id'],
              properties: {
                type: { type: 'string', enum: [...new Set(Object.values(ERROR_CATALOG).map((e) => e.type))] },
                code: { $ref: '#/components/schemas/ErrorCode' },
                message: { type: 'string' },
                doc_url: { type: 'string', format: 'uri', description: 'Ends with #err-<code>' },
                request_id: { type: 'string' },
              },
            },
          },
        },
      },
    },
  };
}
