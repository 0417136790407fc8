// The payments report (spec: paged report listings, pagination style b): payment intents newest
// first, with the method, connector, fee and refunded amount of their latest attempt. Keyset
// paging on (created_at, id); the cursor carries the last row's key and an HMAC-SHA256 over it,
// the tenant and the mode, with a key kept in the database (report_cursor_keys, the same for every
// process). A cursor changed by one bit, or used by another tenant or mode, is reports.invalid_cursor;
// it can never become an offset or another tenant's rows.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../../kernel/errors.js';
import type { Db, Sql } from '../../kernel/db.js';
import type { Principal } from '../../kernel/principal.js';

export const PAGE_DEFAULT = 20;
export const PAGE_MAX = 100;

const keys = new WeakMap<object, Promise<Buffer>>();
function cursorKey(db: Sql): Promise<Buffer> {
  let k = keys.get(db);
  if (!k) {
    k = db`select secret from report_cursor_keys where id = 1`.then((r) => {
      if (!r.length) throw new Error('report_cursor_keys has no key (migration 0050)');
      return Buffer.from(r[0].secret as string, 'hex');
    });
    k.catch(() => keys.delete(db));
    keys.set(db, k);
  }
  return k;
}

interface CursorPos {
  /** created_at as Postgres prints it (microseconds kept). */
  c: string;
  i: string;
}

const mac = (key: Buffer, p: Principal, body: string) => createHmac('sha256', key).update(`payments\0${p.tenantId}\0${p.livemode ? 'live' : 'test'}\0${body}`).digest();

export function signCursor(key: Buffer, p: Principal, pos: CursorPos): string {
  const body = Buffer.from(JSON.stringify(pos)).toString('base64url');
  return `${body}.${mac(key, p, body).subarray(0, 16).toString('base64url')}`;
}

export function readCursor(key: Buffer, p: Principal, cursor: string): CursorPos {
  const bad = () => new ApiError('reports.invalid_cursor', 'The `cursor` is corrupt or belongs to another listing, account or mode: pass the `next_cursor` of the previous page exactly as received.');
  const m = /^([A-Za-z0-9_-]{1,400})\.([A-Za-z0-9_-]{22})$/.exec(cursor);
  if (!m) throw bad();
  // Compared as text (22 characters each): base64url decoding ignores the last character's two spare
  // bits, so a byte comparison accepted four spellings of one MAC.
  if (!timingSafeEqual(Buffer.from(m[2]), Buffer.from(mac(key, p, m[1]).subarray(0, 16).toString('base64url')))) throw bad();
  let pos: unknown;
  try {
    pos = JSON.parse(Buffer.from(m[1], 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  const o = pos as CursorPos;
  if (!o || typeof o.c !== 'string' || typeof o.i !== 'string' || !/^[0-9a-f-]{36}$/.test(o.i) || !/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/.test(o.c)) throw bad();
  return o;
}

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
  const after = q.cursor !== undefined ? readCursor(key, p, q.cursor) : undefined;
  const rows = await pageRows(sql, p, limit + 1, after);
  const has_more = rows.length > limit;
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  return {
    object: 'list' as const,
    data: data.map(view),
    has_more,
    ...(has_more ? { next_cursor: signCursor(key, p, { c: last.created_at_text as string, i: last.id as string }) } : {}),
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
