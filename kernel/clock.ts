// The one clock. Live mode reads real time; test mode reads the tenant's test clock: real time
// plus an offset that POST /v1/test/clock/advance moves (decisions.md §4).
//
// Every SQL that reads the test clock is built here: no module outside kernel/ names the
// `test_clocks` table (issue 24.4). The fragments are built with `db.unsafe` from checked column
// names, so they may be made with the pool or with a transaction of kernel/db.ts `atomically`
// alike (a tagged fragment made with its `tx` would be sent as a statement of its own).
import { sqlIdent, type Db, type Sql } from './db.js';

export async function clockOffsetMs(db: Db, tenantId: string, livemode: boolean): Promise<number> {
  if (livemode) return 0;
  const rows = await db`select offset_ms from test_clocks where tenant_id = ${tenantId}`;
  return rows.length ? Number(rows[0].offset_ms) : 0;
}

export const tenantNow = (offsetMs: number, livemode: boolean) => new Date(Date.now() + (livemode ? 0 : offsetMs));

export async function nowFor(db: Db, tenantId: string, livemode: boolean): Promise<Date> {
  return tenantNow(await clockOffsetMs(db, tenantId, livemode), livemode);
}

/** The test-clock offsets (ms) of these tenants (a tenant without a clock is absent). */
export async function clockOffsets(db: Db, tenantIds: string[]): Promise<Map<string, number>> {
  if (!tenantIds.length) return new Map();
  const rows = await db`select tenant_id, offset_ms from test_clocks where tenant_id = any(${`{${tenantIds.join(',')}}`}::uuid[])`;
  return new Map(rows.map((r) => [r.tenant_id as string, Number(r.offset_ms)]));
}

/** Moves a tenant's test clock forward by `deltaMs` (creating it at `initialMs + deltaMs`); returns the new offset. */
export async function advanceClockOffset(db: Db, tenantId: string, initialMs: number, deltaMs: number): Promise<number> {
  const [row] = await db`
    insert into test_clocks (tenant_id, offset_ms) values (${tenantId}, ${initialMs + deltaMs})
    on conflict (tenant_id) do update set offset_ms = test_clocks.offset_ms + ${deltaMs}, updated_at = now()
    returning offset_ms`;
  return Number(row.offset_ms);
}

/**
 * The tenant clock in SQL, written once: the test-clock offset (ms) of the row's tenant, 0 in live
 * mode. `tenant` and `livemode` name the row's columns (qualified if needed, e.g. `t.tenant_id`).
 */
export function tenantOffsetMsSql(db: Db, tenant = 'tenant_id', livemode = 'livemode') {
  return (db as Sql).unsafe(offsetExpr(tenant, livemode));
}
const offsetExpr = (tenant: string, livemode: string) =>
  `(case when ${sqlIdent(livemode)} then 0 else coalesce((select c.offset_ms from test_clocks c where c.tenant_id = ${sqlIdent(tenant)}), 0) end)`;

/** The tenant's `now()` in SQL (real time plus the test-clock offset in test mode); see tenantOffsetMsSql. */
export function tenantNowSql(db: Db, tenant = 'tenant_id', livemode = 'livemode') {
  return (db as Sql).unsafe(`(now() + make_interval(secs => ${offsetExpr(tenant, livemode)} / 1000.0))`);
}

/**
 * A join to the tenant clock, for set-based queries over many rows where a join plans better than
 * a subquery per row: `left join test_clocks <alias> on <alias>.tenant_id = <tenant> and not <livemode>`.
 * Read the offset with `clockOffsetOfSql(db, alias)` (0 when the row is live or has no clock).
 */
export function tenantClockJoinSql(db: Db, alias: string, tenant: string, livemode: string) {
  return (db as Sql).unsafe(`left join test_clocks ${sqlIdent(alias)} on ${alias}.tenant_id = ${sqlIdent(tenant)} and not ${sqlIdent(livemode)}`);
}

/** The offset (ms) read through tenantClockJoinSql's alias. */
export function clockOffsetOfSql(db: Db, alias: string) {
  return (db as Sql).unsafe(`coalesce(${sqlIdent(alias)}.offset_ms, 0)`);
}

/** The largest test-clock offset of any tenant (ms, at least 0): a bound that lets an index on a due time stop its scan. */
export function maxClockOffsetMsSql(db: Db) {
  return (db as Sql).unsafe(`greatest(0, (select coalesce(max(offset_ms), 0) from test_clocks))`);
}

/**
 * One tenant's test-clock offset (ms, at least 0) as a constant of the statement (an uncorrelated
 * subquery: the planner can bound an index scan on a due time with it, and under Citus it names the
 * tenant, so a statement pinned to that tenant stays on its shard). A tagged fragment: make it
 * with the pool or a postgres.js `begin` transaction, not kernel/db.ts `atomically`'s `tx`.
 */
export function tenantClockBoundMsSql(db: Sql, tenantId: string) {
  return db`greatest(0, coalesce((select offset_ms from test_clocks where tenant_id = ${tenantId}), 0))`;
}
