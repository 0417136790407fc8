// The opaque cursor of the paged listings (spec: pagination style b; the payments report, receivables,
// CFDI documents): the last row's (created_at, id) and an HMAC-SHA256 over it, the listing's name, the
// tenant and the mode, with the deployment's cursor key (report_cursor_keys, the same for every
// process). A cursor changed by one bit, or of another listing, tenant or mode, is
// reports.invalid_cursor; it can never become an offset or another tenant's rows.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Sql } from '../kernel/db.js';
import { ApiError } from '../kernel/errors.js';

export interface CursorPos {
  /** created_at as Postgres prints it (microseconds kept). */
  c: string;
  i: string;
}
type Who = { tenantId: string; livemode: boolean };

const keys = new WeakMap<object, Promise<Buffer>>();
/** The deployment's cursor key, read once per pool. */
export function cursorKey(db: Sql): Promise<Buffer> {
  let k = keys.get(db);
  if (!k) {
    k = db`select secret from report_cursor_keys where id = 1`.then((r) => {
      if (!r.length) throw new Error('report_cursor_keys has no key (migration 0050)');
      return Buffer.from(r[0]!.secret as string, 'hex');
    });
    k.catch(() => keys.delete(db));
    keys.set(db, k);
  }
  return k;
}

const mac = (listing: string, key: Buffer, p: Who, body: string) =>
  createHmac('sha256', key).update(`${listing}\0${p.tenantId}\0${p.livemode ? 'live' : 'test'}\0${body}`).digest().subarray(0, 16).toString('base64url');

export function signCursor(listing: string, key: Buffer, p: Who, pos: CursorPos): string {
  const body = Buffer.from(JSON.stringify(pos)).toString('base64url');
  return `${body}.${mac(listing, key, p, body)}`;
}

export function readCursor(listing: string, key: Buffer, p: Who, cursor: string): CursorPos {
  const bad = () => new ApiError('reports.invalid_cursor', 'The `cursor` is corrupt or belongs to another listing, account or mode: pass the `next_cursor` of the previous page exactly as received.');
  const m = /^([A-Za-z0-9_-]{1,400})\.([A-Za-z0-9_-]{22})$/.exec(cursor);
  if (!m) throw bad();
  // Compared as text (22 characters each): base64url decoding ignores the last character's two spare
  // bits, so a byte comparison accepted four spellings of one MAC (a cursor changed in its last character).
  if (!timingSafeEqual(Buffer.from(m[2]!), Buffer.from(mac(listing, key, p, m[1]!)))) throw bad();
  let o: CursorPos;
  try {
    o = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8')) as CursorPos;
  } catch {
    throw bad();
  }
  if (!o || typeof o.c !== 'string' || typeof o.i !== 'string' || !/^[0-9a-f-]{36}$/.test(o.i) || !/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/.test(o.c)) throw bad();
  return o;
}

/** One listing's cursor, with the key read from the pool. */
export const listCursor = (listing: string) => ({
  sign: async (db: Sql, p: Who, pos: CursorPos) => signCursor(listing, await cursorKey(db), p, pos),
  read: async (db: Sql, p: Who, cursor: string) => readCursor(listing, await cursorKey(db), p, cursor),
});
