// The payments report (spec: paged report listings, pagination style b): payment intents newest
// first, with the method, connector, fee and refunded amount of their latest attempt. Keyset
// paging on (created_at, id) with the listings' signed cursor (actors/list-cursor.ts).
import type { Db, Sql } from '../../kernel/db.js';
import type { Principal } from '../../kernel/principal.js';
import { cursorKey, readCursor, signCursor, type CursorPos } from '../list-cursor.js';

export const PAGE_DEFAULT = 20;
export const PAGE_MAX = 100;

export interface PaymentRow {
  id: string;
  object: 'payment';
  payment_intent_id: string;
  status: string;
  amount_minor: number;
  tip_minor: number;
  total_minor: number;
  currency: string;
  livemode: boolean;
  metadata?: Record<string, string>;
  receipt_code: string;
  method?: string;
  connector_key?: string;
  attempt_id?: string;
  attempt_status?: string;
  fee_minor?: number;
  refunded_minor: number;
  created_at: string;
}

export async function paymentsPage(deps: { readSql: Sql }, p: Principal, q: { cursor?: string; limit?: number }) {
  const sql = deps.readSql;
  const limit = Math.min(q.limit ?? PAGE_DEFAULT, PAGE_MAX);
  const key = await cursorKey(sql);
  const after = q.cursor !== undefined ? readCursor('payments', key, p, q.cursor) : undefined;
  const rows = await pageRows(sql, p, limit + 1, after);
  const has_more = rows.length > limit;
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  return {
    object: 'list' as const,
    data: data.map(view),
    has_more,
    ...(has_more ? { next_cursor: signCursor('payments', key, p, { c: last.created_at_text as string, i: last.id as string }) } : {}),
  };
}

function pageRows(db: Db, p: Principal, n: number, after?: CursorPos) {
  const sql = db as Sql;
  return db`
    select pi.id, pi.status, pi.amount_minor, pi.tip_minor, pi.currency, pi.livemode, pi.metadata, pi.receipt_code, pi.created_at,
           pi.created_at::text as created_at_text, a.id as attempt_id, a.method, a.connector_key, a.status as attempt_status, a.fee_minor,
           coalesce((select sum(r.amount_minor) from refunds r where r.attempt_id in (select x.id from attempts x where x.payment_intent_id = pi.id) and r.status = 'succeeded'), 0)::bigint as refunded
      from payment_intents pi
      left join lateral (select * from attempts a where a.payment_intent_id = pi.id order by a.created_at desc, a.id desc limit 1) a on true
     where pi.tenant_id = ${p.tenantId} and pi.livemode = ${p.livemode}
       ${after ? sql`and (pi.created_at, pi.id) < (${after.c}::timestamptz, ${after.i}::uuid)` : sql``}
     order by pi.created_at desc, pi.id desc
     limit ${n}`;
}

function view(r: Record<string, unknown>): PaymentRow {
  const amount = Number(r.amount_minor);
  const tip = Number(r.tip_minor);
  return {
    id: r.id as string,
    object: 'payment',
    payment_intent_id: r.id as string,
    status: r.status as string,
    amount_minor: amount,
    tip_minor: tip,
    total_minor: amount + tip,
    currency: r.currency as string,
    livemode: r.livemode as boolean,
    metadata: (r.metadata as Record<string, string> | null) ?? undefined,
    receipt_code: r.receipt_code as string,
    method: (r.method as string | null) ?? undefined,
    connector_key: (r.connector_key as string | null) ?? undefined,
    attempt_id: (r.attempt_id as string | null) ?? undefined,
    attempt_status: (r.attempt_status as string | null) ?? undefined,
    fee_minor: r.fee_minor === null || r.fee_minor === undefined ? undefined : Number(r.fee_minor),
    refunded_minor: Number(r.refunded),
    created_at: (r.created_at as Date).toISOString(),
  };
}
