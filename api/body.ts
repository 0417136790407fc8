// Reading a request's JSON body safely: nesting bounded before parsing, `__proto__` a plain key that
// is refused, no NUL character or unpaired surrogate in any string or key (Postgres refuses both in
// text and jsonb, and a lone surrogate cannot be written as UTF-8), a declared Content-Type that
// JSON can be. Each refusal is a 4xx that names the field. docs/edge.md has the rules.
import { ApiError } from '../kernel/errors.js';

/** Deepest nesting of objects and arrays a body may have (the deepest schema needs 3). */
export const MAX_JSON_DEPTH = 32;

/**
 * Whether the JSON text nests objects/arrays deeper than `max`, scanned before parsing (recursive
 * steps after parsing - null stripping, the idempotency fingerprint, validation - then stay bounded).
 * Brackets inside strings do not count. A text shorter than `max` cannot nest deeper.
 */
export function jsonDepthExceeds(text: string, max = MAX_JSON_DEPTH): boolean {
  const n = text.length;
  if (n <= max) return false;
  let depth = 0;
  for (let i = 0; i < n; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 34) {
      // a string: skip to its closing quote (a backslash escapes the next character)
      for (i++; i < n; i++) {
        const c = text.charCodeAt(i);
        if (c === 92) i++;
        else if (c === 34) break;
      }
    } else if (ch === 123 || ch === 91) {
      if (++depth > max) return true;
    } else if (ch === 125 || ch === 93) depth--;
  }
  return false;
}

const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** What is wrong with a string for storage, or undefined. */
function stringProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'contains a NUL character (\\u0000), which text cannot hold; remove it';
  if (!isWellFormed(s)) return 'contains an unpaired UTF-16 surrogate (such as \\ud800 alone), which is not text; send valid UTF-8';
  return undefined;
}

const at = (path: string, key: string) => (path ? `${path}.${key}` : key);

/** The first key or string value that cannot be stored, as an ApiError naming its field; undefined when all are fine. */
function findProblem(v: unknown, path: string, where: 'body' | 'query'): ApiError | undefined {
  const code = where === 'body' ? 'request.invalid_body' : 'request.invalid_query';
  if (typeof v === 'string') {
    const p = stringProblem(v);
    return p ? new ApiError(code, `\`${path || where}\` ${p}.`) : undefined;
  }
  if (v === null || typeof v !== 'object') return undefined;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const e = findProblem(v[i], `${path}[${i}]`, where);
      if (e) return e;
    }
    return undefined;
  }
  for (const k of Object.keys(v)) {
    if (k === '__proto__') {
      return new ApiError(code, `\`${at(path, k)}\` is not a field: the key \`__proto__\` is refused anywhere in a body.`);
    }
    const kp = stringProblem(k);
    if (kp) return new ApiError(code, `A key${path ? ` in \`${path}\`` : ''} (${JSON.stringify(k)}) ${kp}.`);
    const e = findProblem((v as Record<string, unknown>)[k], at(path, k), where);
    if (e) return e;
  }
  return undefined;
}

/**
 * The parsed body of a JSON route: an object, at most MAX_JSON_DEPTH deep, with `__proto__` refused
 * as a key and no NUL or unpaired surrogate in any string or key. Throws the 400 to answer.
 * JSON.parse makes a `"__proto__"` key an own data property (never the prototype), so it is seen here.
 */
export function parseJsonBody(text: string): Record<string, unknown> {
  if (jsonDepthExceeds(text)) {
    throw new ApiError('request.invalid_body', `The body nests objects or arrays more than ${MAX_JSON_DEPTH} levels deep; no field of this API needs more than a few.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new ApiError('request.malformed_json', `The body is not valid JSON (${(e as Error).message}). Send a JSON object with Content-Type: application/json.`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ApiError('request.malformed_json', 'The body must be a JSON object.');
  }
  // A NUL or a surrogate can only come from a \u escape (JSON refuses raw control characters, and
  // the UTF-8 decoder replaces invalid bytes), and `__proto__` only from that text or an escape of
  // it: bodies without either skip the walk.
  if (text.includes('\\u') || text.includes('__proto__')) {
    const e = findProblem(parsed, '', 'body');
    if (e) throw e;
  }
  return parsed as Record<string, unknown>;
}

/** The query string as an object (the last value of a repeated name wins), refusing NUL characters. */
export function parseQuery(raw: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [k, v] of new URLSearchParams(raw)) out[k] = v;
  if (raw.includes('%00') || raw.includes('__proto__')) {
    for (const k of Object.keys(out)) {
      if (k.includes('\u0000')) throw new ApiError('request.invalid_query', `A query parameter name (${JSON.stringify(k)}) contains a NUL character (%00); remove it.`);
      if (out[k].includes('\u0000')) throw new ApiError('request.invalid_query', `Query parameter \`${k}\` contains a NUL character (%00); remove it.`);
    }
  }
  return out;
}

/**
 * A path parameter as text: percent-decoded, or undefined when it is not valid percent-encoded
 * UTF-8 or holds a control character (U+0000-U+001F, U+007F): such a parameter names nothing.
 */
export function decodePathParam(raw: string): string | undefined {
  let s = raw;
  if (raw.includes('%')) {
    try {
      s = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
  }
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u001f\u007f]/.test(s) ? undefined : s;
}

/**
 * Whether a declared Content-Type can carry a JSON body. Accepted: none, `application/json` and
 * any `+json` type, and, read as JSON, `text/plain`, `application/x-www-form-urlencoded` (curl's
 * default for -d) and `application/octet-stream`; a `charset` other than UTF-8 (or its subset
 * US-ASCII) is refused, since the body is decoded as UTF-8. Everything else (XML, multipart,
 * HTML, images…) is refused with 415.
 */
export function jsonContentType(ct: string | undefined): boolean {
  if (!ct) return true;
  const semi = ct.indexOf(';');
  const type = (semi < 0 ? ct : ct.slice(0, semi)).trim().toLowerCase();
  if (
    type !== 'application/json' &&
    !type.endsWith('+json') &&
    type !== 'text/plain' &&
    type !== 'application/x-www-form-urlencoded' &&
    type !== 'application/octet-stream' &&
    type !== ''
  ) return false;
  if (semi < 0) return true;
  const m = /(?:^|;)\s*charset\s*=\s*"?([^";\s]+)/i.exec(ct.slice(semi));
  return !m || /^(utf-?8|us-ascii|ascii)$/i.test(m[1]);
}
