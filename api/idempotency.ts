// Idempotency-Key handling. spec: Errors > Idempotency; architecture invariant 3.
//
// Postgres holds the truth: the record (request hash + the exact response) is inserted by the
// command in the SAME transaction as the effect, so there is no effect without its record and no
// record without its effect. Its primary key (tenant, mode, key) makes a second effect impossible:
// a concurrent twin's commit fails and that request replays the winner's response.
// Redis holds a short lock per key, only so that a twin arriving while the first is running gets
// 409 idempotency_key_in_progress at once instead of doing the work and rolling it back.
// Only responses of committed effects are stored; a request that failed (4xx/5xx) may be retried
// with the same key and runs again.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Db, Sql } from '../ops/db.js';
import { ApiError } from './errors.js';
import { answerJson, canonicalJson } from './json.js';
import type { Principal, Reply } from './route.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface IdempotencyHandle {
  readonly tenantId: string;
  readonly livemode: boolean;
  readonly key: string;
  readonly requestHash: string;
  readonly method: string;
  readonly path: string;
}

export function requestHash(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${path}\n${canonicalJson(body ?? null)}`).digest('hex');
}

/** The header's key, validated: absent or non-UUID answers 400 idempotency_key_required where required. */
export function parseIdempotencyKey(raw: string | undefined, required: boolean): string | undefined {
  if (raw === undefined || raw === '') {
    if (required) throw new ApiError('idempotency_key_required');
    return undefined;
  }
  if (!UUID.test(raw.trim())) {
    throw new ApiError('idempotency_key_required', `Idempotency-Key must be a UUID (e.g. ${'3f1c2a9e-6b1d-4c1e-9a57-0e8f5b2d7c41'}); got a value that is not one.`);
  }
  return raw.trim().toLowerCase();
}

/** The idempotency record of a request: its row, as postgres.js's `sql(row, ...columns)` inserts it. */
const RECORD_COLUMNS = ['tenant_id', 'livemode', 'key', 'request_hash', 'method', 'path', 'status_code', 'response_body'] as const;
const recordRow = (h: IdempotencyHandle, status: number, body: unknown) => ({
  tenant_id: h.tenantId,
  livemode: h.livemode,
  key: h.key,
  request_hash: h.requestHash,
  method: h.method,
  path: h.path,
  status_code: status,
  response_body: answerJson(body),
});
type RowHelper = (row: object, ...columns: readonly string[]) => never;

/**
 * Stores the response of a committed effect. Call it inside the effect's transaction with the
 * exact status and body the client will receive.
 */
export function saveIdempotent(tx: Db, h: IdempotencyHandle | undefined, status: number, body: unknown): Promise<unknown> {
  if (!h) return Promise.resolve();
  // the idempotency record of this request; commits or rolls back with its effect
  return tx`insert into idempotency_keys ${(tx as unknown as RowHelper)(recordRow(h, status, body), ...RECORD_COLUMNS)}`;
}

/**
 * The same record as a data-modifying CTE (`, idempotency_record as (insert …)`) for a command
 * that writes its whole effect in one statement; an empty fragment without a handle.
 */
export function idempotencyCte(sql: Sql, h: IdempotencyHandle | undefined, status: number, body: unknown) {
  if (!h) return sql``;
  return sql`, idempotency_record as (insert into idempotency_keys ${(sql as unknown as RowHelper)(recordRow(h, status, body), ...RECORD_COLUMNS)})`;
}

export const isIdempotencyConflict = (e: unknown) =>
  (e as { code?: string; constraint_name?: string })?.code === '23505' && (e as { constraint_name?: string }).constraint_name === 'idempotency_keys_pkey';

export type Begin = { replay: Reply } | { handle: IdempotencyHandle; release: () => Promise<void> };

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export class Idempotency {
  constructor(private sql: Sql, private redis: Redis, private prefix: string, private lockMs = 60_000) {
    if (!(redis as unknown as { orqIdemRelease?: unknown }).orqIdemRelease) redis.defineCommand('orqIdemRelease', { numberOfKeys: 1, lua: RELEASE });
  }

  /** The stored answer for this key, 422 when it belongs to another request, or undefined when none. */
  async lookup(p: Principal, key: string, hash: string): Promise<Reply | undefined> {
    const rows = await this.sql`
      -- the stored outcome of an earlier request with this key, if any
      select request_hash, status_code, response_body from idempotency_keys
      where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and key = ${key}`;
    if (!rows.length) return undefined;
    if (rows[0].request_hash !== hash) throw new ApiError('idempotency_key_reused');
    return { status: rows[0].status_code as number, text: rows[0].response_body as string, contentType: 'application/json', headers: { 'Idempotency-Replayed': 'true' } };
  }

  /**
   * Replays a stored answer, or takes the key's lock for a request that will run. With
   * `lookupFirst: false` the stored answer is not looked up here (route option `at_commit`): the
   * command's commit fails on the record's primary key and the edge replays then.
   */
  async begin(p: Principal, key: string, method: string, path: string, body: unknown, requestId: string, lookupFirst = true): Promise<Begin> {
    const hash = requestHash(method, path, body);
    if (lookupFirst) {
      const stored = await this.lookup(p, key, hash);
      if (stored) return { replay: stored };
    }
    const lockKey = `${this.prefix}:idem:${p.tenantId}:${p.livemode ? 'live' : 'test'}:${key}`;
    const got = await this.redis.set(lockKey, requestId, 'PX', this.lockMs, 'NX');
    if (got !== 'OK') {
      const now = await this.lookup(p, key, hash); // it may have committed between our two reads
      if (now) return { replay: now };
      throw new ApiError('idempotency_key_in_progress', undefined, { 'Retry-After': '2' });
    }
    const handle: IdempotencyHandle = { tenantId: p.tenantId, livemode: p.livemode, key, requestHash: hash, method, path };
    return {
      handle,
      release: async () => {
        await (this.redis as unknown as { orqIdemRelease(k: string, v: string): Promise<number> }).orqIdemRelease(lockKey, requestId);
      },
    };
  }

  /** Deletes records past the retention (at least 24 h, spec). Returns how many were removed. */
  async prune(retentionHours: number): Promise<number> {
    const r = await this.sql`
      -- idempotency records older than the retention window
      delete from idempotency_keys where created_at < now() - make_interval(hours => ${retentionHours})`;
    return r.count;
  }
}
