// Default accounting codes for Orquesta's ledger accounts: the SAT código agrupador (Anexo 24 RMF)
// that fits each account's nature. A tenant maps its own catalog codes over these
// (PUT /v1/reports/account_mapping); pólizas list the codes that still came from here.
// Choices and sources: docs/reports.md ("Default account mapping").

export interface DefaultAccount {
  /** A ledger account, or `prefix:*` for every account of that prefix (one per connector or carrier). */
  pattern: string;
  code: string;
  /** Name used as the movement concept (ASCII). */
  name: string;
}

export const DEFAULT_ACCOUNTS: readonly DefaultAccount[] = [
  // What the acquirer/PSP owes on captured charges (funds in transit): 107.05 Otros deudores diversos.
  { pattern: 'connector_receivable:*', code: '107.05', name: 'Por cobrar al procesador' },
  // A bank account of the tenant (bank reconciliation: a matched statement line moves the charge here).
  { pattern: 'bank:*', code: '102.01', name: 'Bancos nacionales' },
  // Funds withheld by the acquirer while a dispute is open: also a receivable.
  { pattern: 'disputed_funds', code: '107.05', name: 'Fondos retenidos por contracargo' },
  { pattern: 'sales', code: '401.01', name: 'Ventas y/o servicios gravados a la tasa general' },
  // Tips collected for staff: owed to them, 205.06 Otros acreedores diversos a corto plazo.
  { pattern: 'tips_payable', code: '205.06', name: 'Propinas por pagar al personal' },
  // Card-processing fees: 601.75 Comisiones por tarjetas de credito (701.10 Comisiones bancarias is the alternative).
  { pattern: 'connector_fees:*', code: '601.75', name: 'Comisiones del procesador' },
  { pattern: 'refunds', code: '402.01', name: 'Devoluciones sobre ventas' },
  // Recharges (spec: recharge ledger entry).
  { pattern: 'recharge_clearing', code: '107.05', name: 'Recargas por cobrar' },
  { pattern: 'recharge_payable:*', code: '201.01', name: 'Proveedores de recargas' },
  { pattern: 'merchant_recharge_income', code: '401.29', name: 'Ingresos por comisiones de recargas' },
];

/** An account no rule names: 107.05 (Otros deudores diversos), listed as a default so the accountant sees it. */
export const FALLBACK_CODE = '107.05';

const matches = (pattern: string, account: string) =>
  pattern.endsWith(':*') ? account.startsWith(pattern.slice(0, -1)) : pattern === account;

export function defaultFor(account: string): DefaultAccount {
  return DEFAULT_ACCOUNTS.find((d) => matches(d.pattern, account)) ?? { pattern: account, code: FALLBACK_CODE, name: account };
}

/** A readable concept for a ledger account: its default name plus the part after the colon (the connector). */
export function conceptFor(account: string): string {
  const d = defaultFor(account);
  const i = account.indexOf(':');
  return i >= 0 && d.pattern.endsWith(':*') ? `${d.name} ${account.slice(i + 1)}` : d.name;
}

export interface ResolvedCode {
  code: string;
  source: 'tenant' | 'default';
}

/** The tenant's exact account rule, then its `prefix:*` rule, then the default. */
export function resolveCode(account: string, tenant: ReadonlyMap<string, string>): ResolvedCode {
  const exact = tenant.get(account);
  if (exact) return { code: exact, source: 'tenant' };
  const i = account.indexOf(':');
  if (i >= 0) {
    const pat = tenant.get(`${account.slice(0, i)}:*`);
    if (pat) return { code: pat, source: 'tenant' };
  }
  return { code: defaultFor(account).code, source: 'default' };
}
