// The one clock. Live mode reads real time; test mode reads the tenant's test clock: real time
// plus an offset that POST /v1/test/clock/advance moves (decisions.md §4).
import type { Db } from '../ops/db.js';

export async function clockOffsetMs(db: Db, tenantId: string, livemode: boolean): Promise<number> {
  if (livemode) return 0;
  const rows = await db`select offset_ms from test_clocks where tenant_id = ${tenantId}`;
  return rows.length ? Number(rows[0].offset_ms) : 0;
}

export const tenantNow = (offsetMs: number, livemode: boolean) => new Date(Date.now() + (livemode ? 0 : offsetMs));

export async function nowFor(db: Db, tenantId: string, livemode: boolean): Promise<Date> {
  return tenantNow(await clockOffsetMs(db, tenantId, livemode), livemode);
}
