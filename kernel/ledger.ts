// The double-entry journal: one entry per business fact, lines summing to zero per currency
// (checked here, and enforced by the database at commit), never updated or deleted.
import { accounts, type Account } from './accounts.js';
import { randomUUID } from 'node:crypto';
import type { Db } from './db.js';

export interface Line {
  /** A name of the chart of accounts (kernel/accounts.ts). */
  account: Account;
  currency: string;
  /** Debit positive, credit negative, integer minor units. */
  amountMinor: number;
}

export interface EntryInput {
  tenantId: string;
  livemode: boolean;
  kind: string;
  refType: string;
  refId: string;
  memo?: string;
  lines: Line[];
}

export class UnbalancedEntry extends Error {
  override name = 'UnbalancedEntry';
}

export function assertBalanced(lines: Line[]): void {
  const sums = new Map<string, number>();
  for (const l of lines) {
    if (!Number.isSafeInteger(l.amountMinor)) throw new UnbalancedEntry(`line ${l.account} amount ${l.amountMinor} is not an integer of minor units`);
    sums.set(l.currency, (sums.get(l.currency) ?? 0) + l.amountMinor);
  }
  for (const [cur, s] of sums) if (s !== 0) throw new UnbalancedEntry(`entry does not balance in ${cur}: lines sum to ${s}`);
}

/**
 * Posts an entry inside the caller's transaction: two statements issued together (the entry, then
 * all its lines in one insert). Lines of amount 0 are dropped. Resolves to the entry id.
 */
export function postEntry(tx: Db, e: EntryInput): Promise<string> {
  const lines = e.lines.filter((l) => l.amountMinor !== 0);
  assertBalanced(lines);
  const id = randomUUID();
  const rows = lines.map((l) => ({ entry_id: id, tenant_id: e.tenantId, livemode: e.livemode, account: l.account, currency: l.currency, amount_minor: l.amountMinor }));
  const entry = tx`
    insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id, memo)
    values (${id}, ${e.tenantId}, ${e.livemode}, ${e.kind}, ${e.refType}, ${e.refId}, ${e.memo ?? null})`;
  const written = [entry];
  if (rows.length) {
    written.push(tx`
      insert into journal_lines ${(tx as unknown as (r: unknown, ...cols: string[]) => never)(rows, 'entry_id', 'tenant_id', 'livemode', 'account', 'currency', 'amount_minor')}`);
  }
  return Promise.all(written).then(() => id);
}

/**
 * The capture of a charge, in the merchant's books (the orchestrator holds no funds): the
 * connector owes the total; the amount is sales, the tip is owed to staff; the connector's fee is
 * an expense netted from what it settles.
 */
export function captureLines(connector: string, currency: string, amountMinor: number, tipMinor: number, feeMinor: number): Line[] {
  return [
    { account: accounts.connectorReceivable(connector), currency, amountMinor: amountMinor + tipMinor },
    { account: accounts.sales, currency, amountMinor: -amountMinor },
    { account: accounts.tipsPayable, currency, amountMinor: -tipMinor },
    { account: accounts.connectorFees(connector), currency, amountMinor: feeMinor },
    { account: accounts.connectorReceivable(connector), currency, amountMinor: -feeMinor },
  ];
}
