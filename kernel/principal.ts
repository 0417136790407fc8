// Who is calling: the tenant, the mode (test or live) and the key's scopes, as authentication
// established them. Every query of an actor is scoped by tenant and mode (architecture invariant 7).

export type Scope = '*' | 'payments:write' | 'payments:read' | 'refunds:write' | 'payouts:write' | 'webhooks:manage' | 'invoices:write' | 'reports:read'
  // the portal's own (kernel/roles.ts): on portal routes only, never on an API key but through '*'
  | 'team:manage' | 'keys:manage' | 'audit:read' | 'settings:manage';

export interface Principal {
  readonly tenantId: string;
  readonly livemode: boolean;
  readonly keyId: string;
  readonly scopes: readonly string[];
  /** A portal session's member (docs/portal.md): keyId is then the member's id. */
  readonly member?: { readonly id: string; readonly email: string; readonly role: string };
}
