// Idempotency-Key handling. spec: Errors > Idempotency; architecture invariant 3.
//
// Postgres holds the truth: the record (request hash + the exact response) is inserted by the
// command in the SAME transaction as the effect, so there is no effect without its record and no
// record without its effect. Its primary key (tenant, mode, key) makes a second effect impossible:
// a concurrent twin's commit fails and that request replays the winner's response.
// Redis holds a short lock per key, only so that a twin arriving while the first is running gets
// 409 idempotency_key_in_progress at once instead of doing the work and rolling it back. A request
// that committed its record leaves its lock to expire (Begin.release): a repeat then replays the record.
// Only responses of committed effects are stored; a request that failed (4xx/5xx) may be retried
// with the same key and runs again.
import type { RedisClient } from '../kernel/redis.js';
import type { Sql } from '../kernel/db.js';
import { ApiError } from '../kernel/errors.js';
import type { Reply } from './route.js';
import type { Principal } from '../kernel/principal.js';
import { openSealedRecord, pruneIdempotency, requestHash, type IdempotencyHandle } from '../kernel/idempotency.js';
export { isIdempotencyConflict, type IdempotencyHandle } from '../kernel/idempotency.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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

/**
 * `release(committed)`: the request is done. The key's marker is deleted, unless the request
 * committed its record (`committed`): then it is left to expire (lockMs). A repeat meanwhile
 * fails the marker's SET NX, looks the record up and replays it, as it would after a release;
 * the delete was one Redis round trip per successful request for nothing.
 */
export type Begin = { replay: Reply } | { handle: IdempotencyHandle; release: (committed?: boolean) => Promise<void> };

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export class Idempotency {
  /** `reveal` opens the values a record keeps sealed (kernel/idempotency.ts sealedInRecord) when an answer is replayed. */
  constructor(private sql: Sql, private redis: RedisClient, private prefix: string, private lockMs = 60_000, private reveal?: (sealed: string, context: string) => string) {
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
    const text = this.reveal ? openSealedRecord(rows[0].response_body as string, this.reveal) : (rows[0].response_body as string);
    return { status: rows[0].status_code as number, text, contentType: 'application/json', headers: { 'Idempotency-Replayed': 'true' } };
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
      release: async (committed = false) => {
        if (committed && handle.written) return;
        await (this.redis as unknown as { orqIdemRelease(k: string, v: string): Promise<number> }).orqIdemRelease(lockKey, requestId);
      },
    };
  }

  /** Deletes records past the retention (at least 24 h, spec). Returns how many were removed. */
  prune(retentionHours: number): Promise<number> {
    return pruneIdempotency(this.sql, retentionHours);
  }
}
