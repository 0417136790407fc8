// CORS for the browser kit on a merchant's own page (decisions §7): every `/public/*` answer carries
// `Access-Control-Allow-Origin: *`, and preflights (`OPTIONS /public/…`) are answered here. No
// cookies are involved (no Allow-Credentials): the intent's client secret, sent in a header or the
// body, is the credential. A merchant that lists its origins in checkout_settings has other pages
// refused by the checkout actor (403 checkout.origin_unauthorized, readable by the page: the refusal
// carries these headers too). The edge hooks this module in three places (api/edge.ts, api/edge/route-table.ts, api/edge/reply.ts).
import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js';

/** The routes whose answers carry the CORS headers. */
export const isCorsPath = (path: string): boolean => path.startsWith('/public/');

const enc = (x: string): ArrayBuffer => {
  const b = Buffer.from(x, 'latin1');
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.length) as ArrayBuffer;
};
const ALLOW_ORIGIN = enc('Access-Control-Allow-Origin');
const ANY = enc('*');
const EXPOSE = enc('Access-Control-Expose-Headers');
// What a page may read besides the simple headers: the request id (for support) and the waits.
const EXPOSED = enc('X-Request-Id, Retry-After, Idempotency-Replayed');
const NO_CONTENT = enc('204 No Content');
const ALLOW_METHODS = enc('Access-Control-Allow-Methods');
const METHODS = enc('GET, POST');
const ALLOW_HEADERS = enc('Access-Control-Allow-Headers');
// The headers the kit sends (and an SDK in a browser may): JSON bodies and the client secret.
const HEADERS = enc('Content-Type, Accept, X-Service-Client-Secret, Idempotency-Key');
const MAX_AGE = enc('Access-Control-Max-Age');
// Browsers cap it (Chromium: 2 hours); one preflight per page load and route is plenty.
const TEN_MINUTES = enc('600');

/** The headers of an actual answer of a CORS route (inside the answer's cork). */
export function writeCorsHeaders(res: HttpResponse): void {
  res.writeHeader(ALLOW_ORIGIN, ANY);
  res.writeHeader(EXPOSE, EXPOSED);
}

/**
 * `OPTIONS /public/*`: 204 with what the kit needs, whatever the origin (the origin rule of a
 * merchant applies to the request itself, where the tenant is known). Registered before the
 * catch-all route, so a preflight never gets the 404 envelope.
 */
export function registerPreflight(app: TemplatedApp): void {
  app.options('/public/*', (res: HttpResponse, _req: HttpRequest) => {
    res.cork(() => {
      res.writeStatus(NO_CONTENT);
      res.writeHeader(ALLOW_ORIGIN, ANY);
      res.writeHeader(ALLOW_METHODS, METHODS);
      res.writeHeader(ALLOW_HEADERS, HEADERS);
      res.writeHeader(MAX_AGE, TEN_MINUTES);
      res.end();
    });
  });
}
