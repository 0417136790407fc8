// The request head: the headers the service reads, collected in one pass, the head's size limits,
// path parameters and the client's address. Everything here runs synchronously inside the uWS
// request callback (the request object is only valid there).
import type { HttpRequest, HttpResponse } from '../uws.js';
import { decodePathParam } from '../body.js';

/**
 * Every request header the service reads; ctx.header() sees only these. They are collected in one
 * pass over the request's headers (req.forEach), which also measures the head (431) and finds
 * repeated headers (400): one native call instead of one getHeader call per header.
 */
export const READ_HEADERS = [
  'authorization', 'x-admin-key', 'idempotency-key', 'content-length', 'content-type', 'host', 'accept',
  'x-service-client-secret', 'x-forwarded-for', 'traceparent', 'tracestate', 'baggage',
  'service-account-key',
  // Conekta signs its webhook deliveries in DIGEST (routes declared signedBody; docs/routing.md)
  'digest',
  // the page of a browser call to /public (a merchant may restrict origins; api/cors.ts)
  'origin',
  // portal sessions (api/session-auth.ts): the cookie, the CSRF token of a change, the test/live toggle
  'cookie', 'x-csrf-token', 'orquesta-mode',
  // the operator console: why an operator acts, for the audit row (api/routes/operator-console.ts)
  'x-operator-reason',
] as const;
export const HEADER_INDEX = new Map<string, number>(READ_HEADERS.map((h, i) => [h, i]));
/** A header's index in READ_HEADERS: `hv[H.authorization]`. */
export const H = Object.fromEntries(READ_HEADERS.map((h, i) => [h, i])) as Record<(typeof READ_HEADERS)[number], number>;
/** Headers that must appear once: a second copy is refused (which one would the client mean?). */
const SINGLE = READ_HEADERS.map((h) => ['authorization', 'x-admin-key', 'idempotency-key', 'content-type', 'content-length', 'x-service-client-secret', 'service-account-key'].includes(h));
/** Trace context headers: passed on only while tracing is on. */
export const TRACE_HEADERS = ['traceparent', 'tracestate', 'baggage'] as const;

/**
 * The request head this edge reads: request line plus headers at most 4 KiB, of which the URL
 * (path and query) at most 3 KiB. uWebSockets.js 20.30 (uWS 20.43) parses a head that arrives in
 * several reads in a 4,096-byte buffer and drops the connection without an answer when it fills, so
 * a bigger head only ever worked when it arrived in one read. Refusing every head over the limit
 * with 414/431 makes the rule the same whichever way the bytes arrive (docs/edge.md).
 */
export const MAX_URL_BYTES = 3072;
export const MAX_HEAD_BYTES = 4096;

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What the head step fills on the request's Exchange. */
export interface HeadSink {
  /** Header values, in the order of READ_HEADERS (the first copy of each). */
  hv: Array<string | undefined>;
  /** Bytes of the request head as parsed (request line and headers). */
  headBytes: number;
  /** The first header that must appear once and came twice. */
  duplicate: string | undefined;
  params: Record<string, string>;
  /** A path parameter that does not decode to text. */
  badParam: string | undefined;
}

/** The sink req.forEach is reporting to (synchronous: one request at a time). */
let collecting: HeadSink | null = null;
function collectHeader(k: string, v: string) {
  const x = collecting!;
  x.headBytes += k.length + v.length + 4;
  const i = HEADER_INDEX.get(k);
  if (i === undefined || v === '') return;
  if (x.hv[i] === undefined) x.hv[i] = v;
  else if (SINGLE[i]) x.duplicate ??= k;
}

/**
 * Reads the head into `x`: every header in one pass (the ones read, their repeats, the size of the
 * head) and the path parameters. Returns the URL's bytes (path and query).
 */
export function readHead(x: HeadSink, req: HttpRequest, method: string, url: string, rawQuery: string, paramNames: readonly string[]): number {
  collecting = x;
  try {
    req.forEach(collectHeader);
  } finally {
    collecting = null;
  }
  const urlBytes = url.length + (rawQuery ? rawQuery.length + 1 : 0);
  x.headBytes += urlBytes + method.length + 12; // "GET <url> HTTP/1.1\r\n" and the final "\r\n"
  for (let i = 0; i < paramNames.length; i++) {
    const raw = req.getParameter(i) ?? '';
    const v = decodePathParam(raw);
    if (v === undefined) x.badParam ??= paramNames[i];
    x.params[paramNames[i]] = v ?? raw;
  }
  return urlBytes;
}

/** The client's address: the socket's, or behind a trusted proxy the first other hop of X-Forwarded-For. */
export function clientIp(res: HttpResponse, forwardedFor: string | undefined, trusted: readonly string[]): string {
  let ip = Buffer.from(res.getRemoteAddressAsText()).toString();
  if (ip.startsWith('::ffff:')) ip = ip.slice(7);
  else if (/^0000:0000:0000:0000:0000:ffff:/.test(ip)) ip = ip.slice(30);
  if (trusted.length && trusted.includes(ip)) {
    // Walk X-Forwarded-For from the right, skipping our own proxies: the first other hop is the client.
    const hops = (forwardedFor ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    for (let i = hops.length - 1; i >= 0; i--) if (!trusted.includes(hops[i])) return hops[i];
  }
  return ip;
}
