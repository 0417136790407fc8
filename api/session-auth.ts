// Portal sessions at the edge (docs/portal.md): the `orq_session` cookie (HttpOnly, SameSite=Strict,
// Secure when served over TLS, Path=/portal) authenticates a member instead of an API key; the
// member's role gives the scopes. Every change (any method but GET) must carry the session's
// X-CSRF-Token header and, when the browser sends an Origin, come from this service's own origin.
import { ApiError } from '../kernel/errors.js';
import type { Principal } from '../kernel/principal.js';
import { PortalAccounts, type SessionRecord } from '../actors/portal-accounts.js';

export const SESSION_COOKIE = 'orq_session';
/** The header of the portal's mode toggle: `live` shows live data, anything else test data. */
export const MODE_HEADER = 'orquesta-mode';

/** The session token of a Cookie header, if any. */
export function cookieToken(cookie: string | undefined): string | undefined {
  if (!cookie) return undefined;
  for (const part of cookie.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === SESSION_COOKIE) {
      const v = part.slice(i + 1).trim();
      return /^[A-Za-z0-9_-]{20,100}$/.test(v) ? v : undefined;
    }
  }
  return undefined;
}

export function sessionCookie(token: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/portal; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

export function clearedCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/portal; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`;
}

export interface SessionHeaders {
  cookie?: string;
  csrf?: string;
  origin?: string;
  host?: string;
  mode?: string;
}

/**
 * A change must come from the portal's own page: the Origin (when sent) names this host. Browsers
 * send Origin on every cross-site POST, so a form or script of another site fails here even before
 * the CSRF token (which it cannot read) is compared.
 */
export function sameOrigin(origin: string | undefined, host: string | undefined, publicBaseUrl: string): boolean {
  if (!origin) return true;
  let o: URL;
  try {
    o = new URL(origin);
  } catch {
    return false;
  }
  if (host && o.host === host) return true;
  try {
    return o.origin === new URL(publicBaseUrl).origin;
  } catch {
    return false;
  }
}

/** Paths a member owing the team's required second factor may still use (to set it up, or leave). */
const TOTP_SETUP_PATHS = new Set(['/portal/api/session', '/portal/api/me/totp', '/portal/api/me/totp/confirm']);

export async function authenticateSession(
  portal: { lookup(t: string): Promise<SessionRecord | undefined> },
  h: SessionHeaders,
  method: string,
  path: string,
  publicBaseUrl: string,
): Promise<Principal> {
  const t = cookieToken(h.cookie);
  // No cookie at all is no credential (every first visit of /portal asks GET /portal/api/session without
  // one): it answers 401 but is not counted as a failed authentication; a wrong or dead session is.
  if (!t) throw Object.assign(new ApiError('portal.session_invalid'), { noCredential: true });
  const s = await portal.lookup(t);
  if (!s || s.stage !== 'full') throw new ApiError('portal.session_invalid');
  if (method !== 'GET') {
    if (!sameOrigin(h.origin, h.host, publicBaseUrl) || !PortalAccounts.csrfMatches(h.csrf, s.csrfToken)) throw new ApiError('portal.csrf_unauthorized');
  }
  if (s.totpSetupOwed && !TOTP_SETUP_PATHS.has(path)) throw new ApiError('portal.totp_setup_required_unauthorized');
  return PortalAccounts.principal(s, h.mode === 'live');
}
