// The idempotency record (spec: Errors > Idempotency; architecture invariant 3): the row that an
// effect's transaction writes with the exact response the client receives, so there is no effect
// without its record and no record without its effect. The edge (api/idempotency.ts) looks records
// up and holds the short Redis lock; actors write records here, inside their transaction.
import { createHash } from 'node:crypto';
import type { Db, Sql } from './db.js';
import { answerJson, canonicalJson } from './json.js';

export interface IdempotencyHandle {
  readonly tenantId: string;
  readonly livemode: boolean;
  readonly key: string;
  readonly requestHash: string;
  readonly method: string;
  readonly path: string;
  /**
   * Set when a command put the record in its transaction (saveIdempotent, idempotencyCte). If the
   * command then answers (its transaction committed), the edge leaves the key's Redis marker to
   * expire instead of deleting it: a repeat finds the marker, looks the record up and replays it.
   */
  written?: boolean;
}

export function requestHash(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${path}\n${canonicalJson(body ?? null)}`).digest('hex');
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
  h.written = true;
  // the idempotency record of this request; commits or rolls back with its effect
  return tx`insert into idempotency_keys ${(tx as unknown as RowHelper)(recordRow(h, status, body), ...RECORD_COLUMNS)}`;
}

/**
 * The same record as a data-modifying CTE (`, idempotency_record as (insert …)`) for a command
 * that writes its whole effect in one statement; an empty fragment without a handle.
 */
export function idempotencyCte(sql: Sql, h: IdempotencyHandle | undefined, status: number, body: unknown) {
  if (!h) return sql``;
  h.written = true;
  return sql`, idempotency_record as (insert into idempotency_keys ${(sql as unknown as RowHelper)(recordRow(h, status, body), ...RECORD_COLUMNS)})`;
}

/**
 * A value the idempotency record keeps sealed (a full CLABE, sealed as its row keeps it): the answer
 * stored for a replay carries `{"$sealed": <box>, "context": <context>}` in its place, and
 * `openSealedRecord` restores it when the answer is replayed. Nothing secret rests in the clear.
 */
export const sealedInRecord = (sealed: string, context: string) => ({ $sealed: sealed, context });

/** The stored answer with every sealed value opened (`open` is the deployment's secret box). */
export function openSealedRecord(text: string, open: (sealed: string, context: string) => string): string {
  if (!text.includes('"$sealed"')) return text;
  return JSON.stringify(
    JSON.parse(text, (_k, v: unknown) => {
      const s = v as { $sealed?: unknown; context?: unknown } | null;
      return s && typeof s === 'object' && typeof s.$sealed === 'string' && typeof s.context === 'string' ? open(s.$sealed, s.context) : v;
    }),
  );
}

export const isIdempotencyConflict = (e: unknown) =>
  (e as { code?: string; constraint_name?: string })?.code === '23505' && (e as { constraint_name?: string }).constraint_name === 'idempotency_keys_pkey';

/** Deletes records past the retention (at least 24 h, spec). Returns how many were removed. */
export async function pruneIdempotency(sql: Sql, retentionHours: number): Promise<number> {
  const r = await sql`
    -- idempotency records older than the retention window
    delete from idempotency_keys where created_at < now() - make_interval(hours => ${retentionHours})`;
  return r.count;
}
