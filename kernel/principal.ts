// Who is calling: the tenant, the mode (test or live) and the key's scopes, as authentication
// established them. Every query of an actor is scoped by tenant and mode (architecture invariant 7).

export type Scope = '*' | 'payments:write' | 'payments:read' | 'refunds:write' | 'payouts:write' | 'webhooks:manage' | 'invoices:write' | 'reports:read';

export interface Principal {
  readonly tenantId: string;
  readonly livemode: boolean;
  readonly keyId: string;
  readonly scopes: readonly string[];
}
