// The one clock. Live mode reads real time; test mode reads the tenant's test clock: real time
// plus an offset that POST /v1/test/clock/advance moves (decisions.md §4).
import type { Db, Sql } from './db.js';

export async function clockOffsetMs(db: Db, tenantId: string, livemode: boolean): Promise<number> {
  if (livemode) return 0;
  const rows = await db`select offset_ms from test_clocks where tenant_id = ${tenantId}`;
  return rows.length ? Number(rows[0].offset_ms) : 0;
}

export const tenantNow = (offsetMs: number, livemode: boolean) => new Date(Date.now() + (livemode ? 0 : offsetMs));

export async function nowFor(db: Db, tenantId: string, livemode: boolean): Promise<Date> {
  return tenantNow(await clockOffsetMs(db, tenantId, livemode), livemode);
}

/**
 * The tenant clock in SQL, written once: the test-clock offset (ms) of the row's tenant, 0 in live
 * mode. `tenant` and `livemode` name the row's columns (qualified if needed, e.g. `t.tenant_id`).
 * Build it with the pool's `sql` (a fragment), never with a transaction's `tx` (ops: atomically).
 */
export function tenantOffsetMsSql(sql: Sql, tenant = 'tenant_id', livemode = 'livemode') {
  return sql`(case when ${sql(livemode)} then 0 else coalesce((select c.offset_ms from test_clocks c where c.tenant_id = ${sql(tenant)}), 0) end)`;
}

/** The tenant's `now()` in SQL (real time plus the test-clock offset in test mode); see tenantOffsetMsSql. */
export function tenantNowSql(sql: Sql, tenant = 'tenant_id', livemode = 'livemode') {
  return sql`(now() + make_interval(secs => ${tenantOffsetMsSql(sql, tenant, livemode)} / 1000.0))`;
}
