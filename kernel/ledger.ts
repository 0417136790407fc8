// The double-entry journal: one entry per business fact, its lines inserted by one statement and
// summing to zero per currency (checked here, and by the database at that statement: the trigger in
// ops/migrations/functions/journal_lines_summarize.sql), never updated or deleted.
import { accounts, type Account } from './accounts.js';
import { randomUUID } from 'node:crypto';
import type { Db, Sql } from './db.js';

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
 * The reports' summaries (cash_facts, ledger_daily) are not written in the posting's transaction: the
 * lines' trigger lists the entry in ledger_pending, and these write the summaries of pending entries
 * and delete them in one transaction (migration 0180). Readers that need the summaries exact read the
 * views cash_facts_now and ledger_daily_now (table + pending, one snapshot), or summarize the book
 * first inside their own transaction (summarizeBook) and then read the tables by their indexes.
 */
export const SUMMARY_BATCH = 1000;

/** One batch: up to `limit` pending entries of any book, skipping rows another summarizer holds. Resolves to how many. */
export async function summarizePending(sql: Sql, limit = SUMMARY_BATCH): Promise<number> {
  const [r] = await sql`select ledger_summarize(${limit}::int) as n`;
  return Number(r.n);
}

/**
 * Batches of `batch` until the list is empty or `maxBatches` ran (the maintenance job, every second:
 * at most 50,000 entries a run; a bench draining what it generated: no cap).
 */
export async function summarizeAll(sql: Sql, o: { batch?: number; maxBatches?: number } = {}): Promise<number> {
  const batch = o.batch ?? SUMMARY_BATCH;
  const maxBatches = o.maxBatches ?? 50;
  let total = 0;
  for (let i = 0; i < maxBatches; i++) {
    const n = await summarizePending(sql, batch);
    total += n;
    if (n < batch) break;
  }
  return total;
}

/**
 * Reclaims the pending list's dead rows (each entry's row is inserted and deleted once). Autovacuum
 * would, where it runs; this cluster's CI and bench configuration turns it off, and a queue table that
 * is never vacuumed makes every batch's index scan walk the dead entries of every payment since.
 */
export function vacuumPending(sql: Sql) {
  return sql`vacuum (skip_locked) ledger_pending`.simple();
}

/** ledger_summarize's `limit` is an integer: its largest value means "all". */
const ALL_PENDING = 2_147_483_647;

/** Every pending entry of one book, waiting for rows another summarizer holds (inside the caller's transaction). */
export function summarizeBook(tx: Db, tenantId: string, livemode: boolean) {
  return tx`select ledger_summarize(${ALL_PENDING}::int, ${tenantId}::uuid, ${livemode}::boolean)`;
}

/**
 * IVA inside an amount at the tenant's default tax treatment (decisions.md §6: IVA 16 % included):
 * base = round(amount / 1.16) (half up, integer arithmetic; ties cannot happen), iva = amount − base.
 * The same split the CFDI of such an amount carries (formats/cfdi/amounts.ts), so the books and the
 * invoice agree to the cent; an invoice with other taxes posts the difference when stamped.
 */
export function ivaInside(amountMinor: number): { baseMinor: number; ivaMinor: number } {
  const base = Number((BigInt(amountMinor) * 100n + 58n) / 116n);
  return { baseMinor: base, ivaMinor: amountMinor - base };
}

/**
 * The capture of a charge, in the merchant's books (the orchestrator holds no funds): the
 * connector owes the total; the amount is the sale net of IVA (`sales`) plus the IVA trasladado
 * cobrado (`iva_trasladado_cobrado`, 208.01: a card or transfer payment is collected when captured,
 * LIVA art. 1-B), the tip is owed to staff (never a sale); the connector's fee, IVA included as the
 * acquirer invoices it, is an expense net of IVA (`connector_fees`) plus IVA acreditable pagado
 * (`iva_acreditable`, 118.01), netted from what the connector settles.
 */
export function captureLines(connector: string, currency: string, amountMinor: number, tipMinor: number, feeMinor: number): Line[] {
  const sale = ivaInside(amountMinor);
  const fee = ivaInside(feeMinor);
  return [
    { account: accounts.connectorReceivable(connector), currency, amountMinor: amountMinor + tipMinor },
    { account: accounts.sales, currency, amountMinor: -sale.baseMinor },
    { account: accounts.ivaTrasladadoCobrado, currency, amountMinor: -sale.ivaMinor },
    { account: accounts.tipsPayable, currency, amountMinor: -tipMinor },
    { account: accounts.connectorFees(connector), currency, amountMinor: fee.baseMinor },
    { account: accounts.ivaAcreditable, currency, amountMinor: fee.ivaMinor },
    { account: accounts.connectorReceivable(connector), currency, amountMinor: -feeMinor },
  ];
}

/**
 * A refund reverses the sale and its IVA (LIVA art. 7: the IVA of returned or discounted sales is
 * deducted from the IVA trasladado): `refunds` (402.01) net of IVA, the IVA back out of 208.01.
 */
export function refundLines(connector: string, currency: string, amountMinor: number): Line[] {
  const r = ivaInside(amountMinor);
  return [
    { account: accounts.refunds, currency, amountMinor: r.baseMinor },
    { account: accounts.ivaTrasladadoCobrado, currency, amountMinor: r.ivaMinor },
    { account: accounts.connectorReceivable(connector), currency, amountMinor: -amountMinor },
  ];
}
