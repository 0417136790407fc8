// Documentation pieces and answers several route files share.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { webDir } from '../../kernel/paths.js';
import { defineRoute, type Reply, type RouteDef } from '../route.js';

/** The description of a newest-first list's `limit`. */
export const LIMIT = 'List `limit`: default 100; a larger value is clamped to 500. Newest first.';

/**
 * Endpoints that validate their Idempotency-Key themselves (spec: "validated by the endpoint
 * itself"), with their own conflict code, so they declare no edge idempotency: service payments
 * and recharges.
 */
export const KEY = 'Idempotency-Key (UUID) required, checked by this endpoint: a missing or malformed key is 400 `idempotency_key_required`; ';
export const IDEM_HEADER = (conflict: string) => [{
  name: 'Idempotency-Key',
  required: true,
  description: `UUID, validated by this endpoint (400 \`idempotency_key_required\`). Same key + same request answers the same resource with \`Idempotency-Replayed: true\`; same key + other data is 409 \`${conflict}\`.`,
  schema: { type: 'string', format: 'uuid' },
}];
export const REPLAYED = { 'Idempotency-Replayed': { description: '`true` when the answer is the resource of an earlier request with the same key.', schema: { type: 'string', enum: ['true'] } } };
export const replayed = (r: { body: unknown; replayed: boolean }): Reply => ({ status: 200, body: r.body, headers: r.replayed ? { 'Idempotency-Replayed': 'true' } : undefined });

/** GET /js/{file}: a static file of web/ (.js or .css), read once, cached by the browser for 5 minutes. */
export function assetRoute(file: string, summary: string, tag: string): RouteDef {
  const type = file.endsWith('.css') ? 'text/css' : 'application/javascript';
  let body: string | undefined;
  return defineRoute({
    method: 'GET',
    path: `/js/${file}`,
    auth: 'none',
    rateLimitExempt: true,
    summary: `${summary} ${file}`,
    tags: [tag],
    responses: { 200: { description: file, contentType: type } },
    handler: () => ({ status: 200, contentType: type, text: (body ??= readFileSync(join(webDir, file), 'utf8')), headers: { 'Cache-Control': 'public, max-age=300' } }),
  });
}
