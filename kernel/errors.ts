// One place that turns errors into HTTP: the spec's status-from-code rule, the envelope, doc_url.
import { ERROR_CATALOG, type ErrorCode, type ErrorType } from './error-catalog.js';

/**
 * Codes whose status the spec's substring rule does not give. Each one is named in the spec
 * (Errors > HTTP statuses, the tables) or is a status of the HTTP edge itself.
 */
const STATUS_EXCEPTIONS: Partial<Record<ErrorCode, number>> = {
  'api_key.missing_or_invalid': 401, // spec: Authentication and rate limit
  'admin_key.missing_or_invalid': 401,
  'portal.sign_in_invalid': 401, // docs/portal.md: like a bad API key
  'portal.session_invalid': 401,
  'portal.totp_invalid': 401,
  insufficient_scope: 403, // spec: Authentication rule 2
  rate_limit_exceeded: 429, // spec: Limits
  idempotency_key_in_progress: 409, // spec: Idempotency table
  idempotency_key_reused: 422, // spec: Idempotency table
  'payment_method.not_chargeable': 409, // spec: Customers and payment methods table
  'autofactura.not_available': 404, // spec: Self-invoice ("same answer" as receipt_not_found)
  'request.too_large': 413,
  'request.uri_too_long': 414,
  'request.unsupported_media_type': 415,
  'request.headers_too_large': 431,
  internal_error: 500,
  service_unavailable: 503,
};

/**
 * spec: Errors > HTTP statuses: "contains not_found gives 404; contains unauthorized gives 403;
 * contains concurrent, conflict, not_confirmable, not_refundable, blocked_by_risk or revoked gives
 * 409; otherwise 400" (so refund.exceeds_refundable and attempt.not_capturable are 400).
 */
export function statusForCode(code: string): number {
  let status = statusCache.get(code);
  if (status === undefined) statusCache.set(code, (status = computeStatus(code)));
  return status;
}
const statusCache = new Map<string, number>();

function computeStatus(code: string): number {
  const exception = STATUS_EXCEPTIONS[code as ErrorCode];
  if (exception !== undefined) return exception;
  if (code.includes('not_found')) return 404;
  if (code.includes('unauthorized')) return 403;
  if (/concurrent|conflict|not_confirmable|not_refundable|blocked_by_risk|revoked/.test(code)) return 409;
  return 400;
}

export function errorType(code: ErrorCode): ErrorType {
  return ERROR_CATALOG[code].type;
}

/** A failure a client can act on. Thrown anywhere below the edge; the edge renders it. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly headers: Record<string, string> = {},
  ) {
    const spec = ERROR_CATALOG[code];
    // An ApiError is an answer, not a bug: no stack trace to capture (it is costly on hot paths).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message ?? defaultMessage(code, spec));
    Error.stackTraceLimit = limit;
    this.status = statusForCode(code);
  }
}

const defaultMessages = new Map<string, string>();
function defaultMessage(code: ErrorCode, spec: (typeof ERROR_CATALOG)[ErrorCode]): string {
  let m = defaultMessages.get(code);
  if (m === undefined) defaultMessages.set(code, (m = 'message' in spec && spec.message ? spec.message : spec.doc.replace(/`/g, '')));
  return m;
}

export const isApiError = (e: unknown): e is ApiError => e instanceof ApiError;

export function docUrl(baseUrl: string, code: string): string {
  return `${baseUrl}/docs/errors#err-${code}`;
}

export interface ErrorEnvelope {
  error: { type: ErrorType; code: ErrorCode; message: string; doc_url: string; request_id: string };
}

export function envelope(err: ApiError, requestId: string, baseUrl: string): ErrorEnvelope {
  return {
    error: { type: errorType(err.code), code: err.code, message: err.message, doc_url: docUrl(baseUrl, err.code), request_id: requestId },
  };
}

/** Per code and base URL, the constant parts of an envelope's JSON. */
const envelopeParts = new Map<string, Map<string, { head: string; tail: string }>>();

/**
 * The JSON of envelope(err, requestId, baseUrl), byte for byte as answerJson would write it, from
 * pre-serialised constant parts (4xx answers are on hot paths: rejects, 401, 429).
 */
export function envelopeJson(err: ApiError, requestId: string, baseUrl: string): string {
  let byCode = envelopeParts.get(baseUrl);
  if (!byCode) envelopeParts.set(baseUrl, (byCode = new Map()));
  let parts = byCode.get(err.code);
  if (!parts) {
    // {"error":{"type":…,"code":…,"message":<message>,"doc_url":…,"request_id":"\u0000"}}
    const [head, tail] = JSON.stringify(envelope(err, '\u0000', baseUrl)).split(`"message":${JSON.stringify(err.message)}`);
    const [tailHead, tailEnd] = tail.split('"\\u0000"');
    if (tailEnd !== '}}') throw new Error(`unexpected envelope shape: ${tail}`);
    byCode.set(err.code, (parts = { head: `${head}"message":`, tail: tailHead }));
  }
  return `${parts.head}${JSON.stringify(err.message)}${parts.tail}${JSON.stringify(requestId)}}}`;
}
