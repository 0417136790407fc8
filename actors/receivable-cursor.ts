// The opaque cursor of GET /v1/receivables: the report listings' style (spec: pagination style b;
// actors/reports/payments.ts): the last row's (created_at, id) and an HMAC-SHA256 over it, the
// listing's name, the tenant and the mode, with the deployment's cursor key (report_cursor_keys).
// A cursor changed by one bit, or of another listing, tenant or mode, is reports.invalid_cursor.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Sql } from '../kernel/db.js';
import { ApiError } from '../kernel/errors.js';

interface Pos {
  c: string;
  i: string;
}
type Who = { tenantId: string; livemode: boolean };

const keys = new WeakMap<object, Promise<Buffer>>();
function cursorKey(db: Sql): Promise<Buffer> {
  let k = keys.get(db);
  if (!k) {
    k = db`select secret from report_cursor_keys where id = 1`.then((r) => Buffer.from(r[0]!.secret as string, 'hex'));
    k.catch(() => keys.delete(db));
    keys.set(db, k);
  }
  return k;
}

const macFor = (listing: string) => (key: Buffer, p: Who, body: string) => createHmac('sha256', key).update(`${listing}\0${p.tenantId}\0${p.livemode ? 'live' : 'test'}\0${body}`).digest().subarray(0, 16);

/** The same signed (created_at, id) cursor for another listing (its name is inside the MAC). */
export const listCursor = (listing: string) => {
  const mac = macFor(listing);
  return {
    async sign(db: Sql, p: Who, pos: Pos): Promise<string> {
      const body = Buffer.from(JSON.stringify(pos)).toString('base64url');
      return `${body}.${mac(await cursorKey(db), p, body).toString('base64url')}`;
    },
    async read(db: Sql, p: Who, cursor: string): Promise<Pos> {
      const bad = () => new ApiError('reports.invalid_cursor', 'The `cursor` is corrupt or belongs to another listing, account or mode: pass the `next_cursor` of the previous page exactly as received.');
      const m = /^([A-Za-z0-9_-]{1,400})\.([A-Za-z0-9_-]{22})$/.exec(cursor);
      if (!m) throw bad();
      // Compared as text: base64url decoding ignores the last character's two spare bits, so a
      // byte comparison accepted four spellings of one MAC (a cursor changed in its last character).
      if (!timingSafeEqual(Buffer.from(m[2]!), Buffer.from(mac(await cursorKey(db), p, m[1]!).toString('base64url')))) throw bad();
      let o: Pos;
      try {
        o = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8')) as Pos;
      } catch {
        throw bad();
      }
      if (!o || typeof o.c !== 'string' || typeof o.i !== 'string' || !/^[0-9a-f-]{36}$/.test(o.i) || !/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/.test(o.c)) throw bad();
      return o;
    },
  };
};

export const receivableCursor = listCursor('receivables');
