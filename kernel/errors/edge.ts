// Error codes of the HTTP edge, authentication, rate limit and idempotency.
import { authz, inv, type ErrorSpec } from './spec.js';

export const EDGE_ERRORS = {
  // --- Edge (this service's own, not in a spec table) ---
  'request.malformed_json': inv('The body is not valid JSON. Send `Content-Type: application/json` with a JSON object.'),
  'request.too_large': inv('The body is larger than the route accepts (1 MiB unless the route says otherwise). Answered with 413.'),
  'request.invalid_body': inv('The body does not match the schema of the route; the message names the field.'),
  'request.invalid_query': inv('A query parameter does not match what the route accepts; the message names it.'),
  'request.unsupported_media_type': inv('The body is declared (`Content-Type`) as something JSON cannot be, such as XML or multipart. Send JSON with `Content-Type: application/json` (no type, `text/plain` and `application/x-www-form-urlencoded` are also read as JSON). Answered with 415.'),
  'request.duplicate_header': inv('A header that must appear once (`Authorization`, `X-Admin-Key`, `Idempotency-Key`, `Content-Type`, `Content-Length`, `X-Service-Client-Secret`) was sent more than once. Send it once.'),
  'request.uri_too_long': inv('The URL (path and query) is longer than the 3,072 bytes the API reads. Answered with 414.'),
  'request.headers_too_large': inv('The request line and headers together are larger than the 4,096 bytes the API reads. Answered with 431.'),
  'route.not_found': inv('No route has this method and path. Check the path against GET /openapi/v1.json.'),
  'tenant.not_found': inv('Operator API: no tenant has this id.'),
  'api_key.not_found': inv('Operator API: no API key with this id belongs to the tenant.'),
  'admin_key.missing_or_invalid': { type: 'authentication_error', doc: 'Operator API: header `X-Admin-Key` is missing or wrong.', message: 'Missing or invalid X-Admin-Key.' },
  internal_error: { type: 'api_error', doc: 'Something failed on our side. The request may be retried with the same Idempotency-Key; quote the request_id when you contact us.', message: 'An internal error occurred. Retry with the same Idempotency-Key, or contact support quoting the request id.' },
  service_unavailable: { type: 'api_error', doc: 'A dependency (database or queue) is unreachable. Retry after a short wait.', message: 'The service is temporarily unavailable; retry shortly.' },
  // --- Authentication and rate limit ---
  'api_key.missing_or_invalid': {
    type: 'authentication_error',
    doc: 'The `Authorization: Bearer <key>` header is missing, malformed, unknown or revoked. One message for every cause, so the answer reveals nothing about which.',
    message: 'Missing or invalid API key. Send it as "Authorization: Bearer sk_test_..." or "sk_live_...".',
  },
  insufficient_scope: authz('The key is valid but lacks the scope the endpoint needs; the message names it. Issue a key with that scope (or `*`).'),
  rate_limit_exceeded: {
    type: 'rate_limit_error',
    doc: 'Too many requests in the current one-minute window (per API key on /v1, per client IP on /public). Wait the seconds in `Retry-After`.',
    message: 'Too many requests; retry after the number of seconds in Retry-After.',
  },
  // --- Idempotency ---
  idempotency_key_required: { type: 'idempotency_error', doc: 'This POST moves money or creates a resource that must not be duplicated: send an `Idempotency-Key` header holding a UUID (v4 recommended).', message: 'This request needs an Idempotency-Key header holding a UUID.' },
  idempotency_key_in_progress: { type: 'idempotency_error', doc: 'Another request with the same key is still being processed. Retry after `Retry-After` (2 s) to get its stored answer.', message: 'A request with this Idempotency-Key is still in progress; retry in 2 seconds.' },
  idempotency_key_reused: { type: 'idempotency_error', doc: 'The key was already used with a different body or route. Use a new key for a different request.', message: 'This Idempotency-Key was already used with a different request body or route.' },
} as const satisfies Record<string, ErrorSpec>;
