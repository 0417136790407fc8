// Savings and fee leakage read only the contract views savings_facts and fee_facts (migration
// 0050; docs/reports.md "Contract with routing"): empty until the routing capability replaces them
// with its rows, so every figure is a true zero until then.
import type { Sql } from '../../kernel/db.js';
import type { Principal } from '../../kernel/principal.js';
import { instantWindow } from './period.js';

export const SAVINGS_DEFAULT_DAYS = 30;
export const FEE_LEAKAGE_DEFAULT_DAYS = 30;
/** Items listed by the fee-leakage report: the largest overcharges first. */
export const FEE_LEAKAGE_ITEMS = 100;

export async function savings(deps: { readSql: Sql }, p: Principal, q: { from?: string; to?: string; currency?: string }) {
  const sql = deps.readSql;
  const w = await instantWindow(sql, p, q, SAVINGS_DEFAULT_DAYS);
  const currency = q.currency ?? 'MXN';
  const rows = await sql`
    select connector_key,
           coalesce(sum(routing_saved_minor), 0)::bigint as routing, coalesce(sum(retry_recovered_minor), 0)::bigint as retry,
           coalesce(sum(dunning_recovered_minor), 0)::bigint as dunning
      from savings_facts
     where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and currency = ${currency}
       and occurred_at >= ${w.from.at} and occurred_at < ${w.to.at}
     group by connector_key order by connector_key`;
  const by_connector = rows.map((r) => {
    const [routing, retry, dunning] = [Number(r.routing), Number(r.retry), Number(r.dunning)];
    return { connector_key: r.connector_key as string, routing_saved_minor: routing, retry_recovered_minor: retry, dunning_recovered_minor: dunning, total_minor: routing + retry + dunning };
  });
  const sum = (k: 'routing_saved_minor' | 'retry_recovered_minor' | 'dunning_recovered_minor') => by_connector.reduce((s, r) => s + r[k], 0);
  const routing_saved_minor = sum('routing_saved_minor');
  const retry_recovered_minor = sum('retry_recovered_minor');
  const dunning_recovered_minor = sum('dunning_recovered_minor');
  return {
    object: 'savings' as const,
    livemode: p.livemode,
    currency,
    period_from: w.from.at.toISOString(),
    period_to: w.to.at.toISOString(),
    routing_saved_minor,
    retry_recovered_minor,
    dunning_recovered_minor,
    total_minor: routing_saved_minor + retry_recovered_minor + dunning_recovered_minor,
    by_connector,
  };
}

export async function feeLeakage(deps: { readSql: Sql }, p: Principal, q: { from?: string; to?: string; currency?: string }) {
  const sql = deps.readSql;
  const w = await instantWindow(sql, p, q, FEE_LEAKAGE_DEFAULT_DAYS);
  const currency = q.currency ?? 'MXN';
  const scope = sql`tenant_id = ${p.tenantId} and livemode = ${p.livemode} and currency = ${currency} and occurred_at >= ${w.from.at} and occurred_at < ${w.to.at}`;
  const [byConnector, items] = await Promise.all([
    sql`
      select connector_key, count(*)::bigint as n, coalesce(sum(expected_fee_minor), 0)::bigint as expected, coalesce(sum(charged_fee_minor), 0)::bigint as charged,
             coalesce(sum(greatest(charged_fee_minor - expected_fee_minor, 0)), 0)::bigint as leak,
             count(*) filter (where charged_fee_minor > expected_fee_minor)::bigint as over
        from fee_facts where ${scope}
       group by connector_key order by connector_key`,
    sql`
      select attempt_id, connector_key, occurred_at, expected_fee_minor, charged_fee_minor
        from fee_facts where ${scope} and charged_fee_minor > expected_fee_minor
       order by charged_fee_minor - expected_fee_minor desc, occurred_at, attempt_id
       limit ${FEE_LEAKAGE_ITEMS}`,
  ]);
  const by_connector = byConnector.map((r) => ({
    connector_key: r.connector_key as string,
    attempt_count: Number(r.n),
    overcharged_count: Number(r.over),
    expected_fee_minor: Number(r.expected),
    charged_fee_minor: Number(r.charged),
    leakage_minor: Number(r.leak),
  }));
  const total = (k: 'expected_fee_minor' | 'charged_fee_minor' | 'leakage_minor') => by_connector.reduce((s, r) => s + r[k], 0);
  return {
    object: 'fee_leakage' as const,
    livemode: p.livemode,
    currency,
    period_from: w.from.at.toISOString(),
    period_to: w.to.at.toISOString(),
    expected_fee_minor: total('expected_fee_minor'),
    charged_fee_minor: total('charged_fee_minor'),
    leakage_minor: total('leakage_minor'),
    by_connector,
    data: items.map((r) => {
      const expected = Number(r.expected_fee_minor);
      const charged = Number(r.charged_fee_minor);
      return {
        object: 'fee_leakage_item' as const,
        attempt_id: r.attempt_id as string,
        connector_key: r.connector_key as string,
        occurred_at: (r.occurred_at as Date).toISOString(),
        expected_fee_minor: expected,
        charged_fee_minor: charged,
        leakage_minor: charged - expected,
        reason: `${r.connector_key as string} charged a fee of ${charged} ${currency} minor units where its fee table says ${expected}: ${charged - expected} over.`,
      };
    }),
  };
}
