// Portal roles and the API scopes each gives (docs/portal.md). A member's session authenticates
// like an API key whose scopes are its role's plus any given to the member; the same routes and
// the same scope checks then apply (one implementation, api/routes/portal-api.ts).

export const ROLES = ['owner', 'admin', 'developer', 'accountant', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/** Scopes that exist only in the portal (its own routes): managing the team, keys, settings; reading the audit log. */
export const PORTAL_SCOPES = ['team:manage', 'keys:manage', 'audit:read', 'settings:manage'] as const;

/** The API scopes a member can be given on top of the role's (the same words as API keys). */
export const GRANTABLE_SCOPES = ['payments:write', 'payments:read', 'refunds:write', 'payouts:write', 'webhooks:manage', 'invoices:write', 'reports:read', 'keys:manage'] as const;

const ROLE_SCOPES: Record<Role, readonly string[]> = {
  // '*' covers every API scope and every portal scope
  owner: ['*'],
  admin: ['*'],
  // keys, webhooks and their deliveries, payments to test with; no books (reports:read) unless given
  developer: ['payments:write', 'webhooks:manage', 'keys:manage'],
  // invoices, credit notes, REPs, reconciliation, cash cut, balanza, pólizas; reads payments
  accountant: ['payments:read', 'invoices:write', 'reports:read'],
  // reads what payments:read covers; changes nothing
  viewer: ['payments:read'],
};

export function isRole(x: string): x is Role {
  return (ROLES as readonly string[]).includes(x);
}

/** The scopes of a member: the role's plus the extra ones given to the member. */
export function scopesOf(role: Role, extra: readonly string[] = []): string[] {
  const base = ROLE_SCOPES[role];
  return [...new Set([...base, ...extra])];
}

/**
 * The scope a portal call of an API route needs: the route's own, or, for a change (any method but
 * GET) whose route declares none, payments:write, so that a viewer never changes anything.
 */
export function portalScopeFor(method: string, declared: string | undefined): string | undefined {
  if (declared) return declared;
  return method === 'GET' ? undefined : 'payments:write';
}
