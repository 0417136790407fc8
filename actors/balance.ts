// GET /v1/balance (issue 20; docs/routing.md "Balance"): Orquesta holds no funds, so the balance is
// what each connector owes the merchant, read from the ledger: the `connector_receivable:<key>`
// account (captures less fees, refunds and disputes). Each connector settles on its own schedule
// (days after the capture, by the tenant's clock): what is older than that is `available`, the rest
// `pending`. Connectors' payouts to the merchant are not posted yet, so `available` is what is due.
import { prefixOf } from '../kernel/accounts.js';
import type { Sql } from '../kernel/db.js';
import { ApiError } from '../kernel/errors.js';
import { nowFor } from '../kernel/clock.js';
import type { Principal } from '../kernel/principal.js';
import { SETTLEMENT_DAYS } from '../connectors/routing.js';

const ACCOUNT = prefixOf('connector_receivable');
/** Ages are bucketed in days up to this (every schedule is shorter). */
const MAX_AGE_DAYS = 30;

export async function balance(d: { readSql: Sql }, p: Principal, q: { currency?: string }) {
  if (q.currency !== undefined && !/^[A-Z]{3}$/.test(q.currency)) throw new ApiError('balance.invalid_currency');
  const sql = d.readSql;
  const now = await nowFor(sql, p.tenantId, p.livemode);
  const rows = await sql`
    -- the receivable of each connector, by currency and age of the entry in whole days (tenant clock)
    select substr(l.account, ${ACCOUNT.length + 1}) as connector_key, l.currency,
           least(floor(extract(epoch from (${now}::timestamptz - e.created_at)) / 86400), ${MAX_AGE_DAYS})::int as age_days,
           sum(l.amount_minor)::bigint as amount
      from journal_lines l join journal_entries e on e.id = l.entry_id and e.tenant_id = l.tenant_id
     where l.tenant_id = ${p.tenantId} and l.livemode = ${p.livemode}
       and l.account >= ${ACCOUNT} and l.account < ${ACCOUNT.slice(0, -1) + ';'}
       ${q.currency ? sql`and l.currency = ${q.currency}` : sql``}
     group by 1, 2, 3`;
  const by = new Map<string, { connector_key: string; currency: string; available_minor: number; pending_minor: number; settlement_delay_days: number }>();
  for (const r of rows) {
    const key = r.connector_key as string;
    const delay = SETTLEMENT_DAYS[key] ?? 2;
    const id = `${key}\0${r.currency as string}`;
    let b = by.get(id);
    if (!b) by.set(id, (b = { connector_key: key, currency: r.currency as string, available_minor: 0, pending_minor: 0, settlement_delay_days: delay }));
    if ((r.age_days as number) >= delay) b.available_minor += Number(r.amount);
    else b.pending_minor += Number(r.amount);
  }
  const byConnector = [...by.values()].sort((a, b) => a.currency.localeCompare(b.currency) || a.connector_key.localeCompare(b.connector_key));
  const totals = (k: 'available_minor' | 'pending_minor') => {
    const m = new Map<string, number>();
    for (const b of byConnector) m.set(b.currency, (m.get(b.currency) ?? 0) + b[k]);
    return [...m.entries()].map(([currency, amount_minor]) => ({ currency, amount_minor }));
  };
  return { object: 'balance' as const, livemode: p.livemode, as_of: now.toISOString(), available: totals('available_minor'), pending: totals('pending_minor'), by_connector: byConnector };
}
