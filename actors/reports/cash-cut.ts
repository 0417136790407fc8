// The cash cut (spec: Resources > Reports, reporting.cash_cut): charges captured and refunds that
// succeeded in [from, to), by method, connector and branch (filtered by branch, register or terminal).
// It reads cash_facts_now: one row per captured charge and per succeeded refund, dated by the ledger
// entry, so the cut agrees with the books; cash_facts (migration 0050) written in batches by the
// worker, plus the entries not summarized yet, computed from the journal (migration 0180).
import type { Sql } from '../../kernel/db.js';
import type { Principal } from '../../kernel/principal.js';
import { requiredWindow } from './period.js';

export const NO_BRANCH = '(sin sucursal)';

export interface CashCutQuery {
  from?: string;
  to?: string;
  branch?: string;
  register?: string;
  /** Exact match on `metadata.terminal_id` (docs/terminals.md). */
  terminal_id?: string;
  currency?: string;
}

export interface CashCutRow {
  key: string;
  charged_minor: number;
  tip_minor: number;
  total_minor: number;
  operation_count: number;
}

export interface CashCut {
  object: 'cash_cut';
  livemode: boolean;
  currency: string;
  period_from: string;
  period_to: string;
  branch?: string;
  register?: string;
  terminal_id?: string;
  by_method: CashCutRow[];
  by_connector: CashCutRow[];
  by_branch?: CashCutRow[];
  totals: Omit<CashCutRow, 'key'>;
  refunds: { count: number; amount_minor: number };
}

const row = (key: string, charged: number, tip: number, n: number): CashCutRow => ({ key, charged_minor: charged, tip_minor: tip, total_minor: charged + tip, operation_count: n });

export async function cashCut(deps: { readSql: Sql }, p: Principal, q: CashCutQuery): Promise<CashCut> {
  const w = requiredWindow(q);
  const currency = q.currency ?? 'MXN';
  const sql = deps.readSql;
  const branch = q.branch !== undefined ? sql`and branch = ${q.branch}` : sql``;
  const register = q.register !== undefined ? sql`and register = ${q.register}` : sql``;
  // cash_facts does not carry the terminal: the charges that named it (index payment_intents_terminal, migration 0150).
  const terminal = q.terminal_id !== undefined
    ? sql`and payment_intent_id in (select id from payment_intents where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and metadata ? 'terminal_id' and metadata->>'terminal_id' = ${q.terminal_id})`
    : sql``;
  // One pass over the period's facts (index cash_facts_branch or cash_facts_period, index-only).
  const rows = await sql`
    select kind, method, connector_key, b as branch, grouping(method, connector_key, b) as g,
           coalesce(sum(amount_minor), 0)::bigint as amount, coalesce(sum(tip_minor), 0)::bigint as tip, count(*)::bigint as n
      from (select kind, method, connector_key, coalesce(branch, ${NO_BRANCH}) as b, amount_minor, tip_minor
              from cash_facts_now
             where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and currency = ${currency}
               and occurred_at >= ${w.from.at} and occurred_at < ${w.to.at} ${branch} ${register} ${terminal}) f
     group by grouping sets ((kind), (kind, method), (kind, connector_key), (kind, b))`;
  const by = { method: [] as CashCutRow[], connector: [] as CashCutRow[], branch: [] as CashCutRow[] };
  let totals = row('', 0, 0, 0);
  const refunds = { count: 0, amount_minor: 0 };
  for (const r of rows) {
    const g = Number(r.g);
    if (r.kind === 'refund') {
      if (g === 7) {
        refunds.count = Number(r.n);
        refunds.amount_minor = Number(r.amount);
      }
      continue;
    }
    // grouping bits: method 4, connector 2, branch 1 (a set bit = not grouped by that column)
    if (g === 7) totals = row('', Number(r.amount), Number(r.tip), Number(r.n));
    else if (g === 3) by.method.push(row(r.method as string, Number(r.amount), Number(r.tip), Number(r.n)));
    else if (g === 5) by.connector.push(row(r.connector_key as string, Number(r.amount), Number(r.tip), Number(r.n)));
    else if (g === 6) by.branch.push(row(r.branch as string, Number(r.amount), Number(r.tip), Number(r.n)));
  }
  const byKey = (a: CashCutRow, b: CashCutRow) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  const { key: _k, ...tot } = totals;
  return {
    object: 'cash_cut',
    livemode: p.livemode,
    currency,
    period_from: w.from.at.toISOString(),
    period_to: w.to.at.toISOString(),
    ...(q.branch !== undefined ? { branch: q.branch } : {}),
    ...(q.register !== undefined ? { register: q.register } : {}),
    ...(q.terminal_id !== undefined ? { terminal_id: q.terminal_id } : {}),
    by_method: by.method.sort(byKey),
    by_connector: by.connector.sort(byKey),
    ...(q.branch === undefined ? { by_branch: by.branch.sort(byKey) } : {}),
    totals: tot,
    refunds,
  };
}
