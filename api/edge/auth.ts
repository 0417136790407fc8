// Authentication (spec: Authentication): an API key from the key cache (or the key store on a
// miss), a portal member's session (api/session-auth.ts), the operator key, and failed credentials
// counted per client IP (docs/edge.md).
import { ApiError, isApiError } from '../../kernel/errors.js';
import type { Principal } from '../../kernel/principal.js';
import { constantTimeEqual, hashKey } from '../auth.js';
import { authenticateSession } from '../session-auth.js';
import type { RouteDef } from '../route.js';
import type { EdgeDeps } from './deps.js';
import { H } from './head.js';

/** What the authentication step needs of the request. */
export interface Authenticating {
  readonly c: { readonly def: RouteDef };
  readonly method: string;
  readonly hv: ReadonlyArray<string | undefined>;
  /** Set once a failed authentication was counted (once per request). */
  authCounted: boolean;
  within<T>(fn: () => Promise<T>): Promise<T>;
  clientIp(): string;
  /** The next step, with the key's principal (api_key routes). */
  authenticated(p: Principal): void;
  /** The next step on routes without an API key. */
  rateLimit(): void;
  guard(step: () => void): void;
  fail(e: unknown): void;
}

/** Step 1: the credentials the route's auth kind asks for. A valid cached key goes on synchronously. */
export function authenticate(x: Authenticating, deps: EdgeDeps): void {
  const def = x.c.def;
  if (def.auth === 'api_key') {
    const authorization = x.hv[H.authorization];
    const p = deps.keys.cached(authorization);
    if (p) return x.authenticated(p);
    x.within(() => deps.keys.authenticate(authorization)).then(
      (p) => x.guard(() => x.authenticated(p)),
      (e) => x.fail(e),
    );
    return;
  }
  if (def.auth === 'session') {
    // A portal member's session instead of an API key; the role gives the scopes.
    const hv = x.hv;
    const h = { cookie: hv[H.cookie], csrf: hv[H['x-csrf-token']], origin: hv[H.origin], host: hv[H.host], mode: hv[H['orquesta-mode']] };
    x.within(() => authenticateSession(deps.portal, h, x.method, def.path, deps.config.publicBaseUrl)).then(
      (p) => x.guard(() => x.authenticated(p)),
      (e) => x.fail(e),
    );
    return;
  }
  if (def.auth === 'admin') {
    const k = x.hv[H['x-admin-key']];
    if (!k || !constantTimeEqual(hashKey(k), deps.adminKeyHash)) throw new ApiError('admin_key.missing_or_invalid');
  }
  x.rateLimit();
}

const AUTH_FAILURES = new Set(['api_key.missing_or_invalid', 'admin_key.missing_or_invalid', 'portal.sign_in_invalid', 'portal.session_invalid', 'portal.totp_invalid']);
/** Failed credentials of any kind (a key, a portal password, session or second factor): counted per client address. */
export const isAuthFailure = (e: unknown): boolean => isApiError(e) && AUTH_FAILURES.has(e.code) && !(e as { noCredential?: boolean }).noCredential;

/** Redis unreachable: the window cannot be counted. Serve rather than refuse everyone. */
export function failOpen(deps: EdgeDeps, e: unknown) {
  // The key cache (KEY_CACHE_SECONDS) still bounds how long a revoked key can slip through.
  deps.log.warn('rate limiter unavailable, request not counted', { err: e });
}

/**
 * Failed credentials are counted per client IP (never per key: a key has no public name an
 * attacker could aim at). Over AUTH_FAILURES_PER_MIN in the window, a failure answers 429 with
 * Retry-After instead of 401. Valid credentials are always served, from any address, so no one
 * can lock out a real key, not even from behind the same NAT. docs/edge.md.
 */
export function countAuthFailure(x: Authenticating, deps: EdgeDeps, e: ApiError): void {
  x.authCounted = true;
  const ip = x.clientIp();
  if (!ip) return x.fail(e);
  const perMin = deps.config.authFailuresPerMin;
  deps.limiter.count(`af:${ip}`, perMin, '', {
    verdict: (allowed, _revoked, retryAfter) => {
      if (allowed) return x.fail(e);
      deps.metrics.rateLimited.inc({ kind: 'auth_failures' });
      x.fail(
        new ApiError(
          'rate_limit_exceeded',
          `Too many failed authentications from this address (more than ${perMin} a minute); retry after the seconds in Retry-After with a valid key.`,
          { 'Retry-After': String(retryAfter) },
        ),
      );
    },
    limitFailed: (err) => {
      failOpen(deps, err);
      x.fail(e);
    },
  });
}
