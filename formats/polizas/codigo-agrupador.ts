// Default accounting codes for Orquesta's ledger accounts: the SAT código agrupador (Anexo 24 RMF)
// that fits each account's nature. A tenant maps its own catalog codes over these
// (PUT /v1/reports/account_mapping); pólizas list the codes that still came from here.
// Choices and sources: docs/reports.md ("Default account mapping"); the codes live in the chart of
// accounts, kernel/accounts.ts.
import { CHART } from '../../kernel/accounts.js';

export interface DefaultAccount {
  /** A ledger account, or `prefix:*` for every account of that prefix (one per connector or carrier). */
  pattern: string;
  code: string;
  /** Name used as the movement concept (ASCII). */
  name: string;
}

/** The chart's defaults (kernel/accounts.ts keeps the codes beside the account names). */
export const DEFAULT_ACCOUNTS: readonly DefaultAccount[] = CHART.flatMap((c) => (c.agrupador ? [{ pattern: c.pattern, code: c.agrupador.code, name: c.agrupador.name }] : []));

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
