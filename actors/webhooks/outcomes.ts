// The outcome writer: attempts' results written in batches (one UPDATE per outcome kind per flush,
// every FLUSH_MS or FLUSH_AT outcomes), and the endpoint disable of the 72-hour rule.
//
// A failure's next attempt is fixed when its answer came back, not when the batch is written: the
// failure carries its due time on the tenant's clock (the answer's local time + the tenant's offset
// + the wait), and the UPDATE turns it into a timestamp relative to the statement's now(), so a
// test-clock advance between the answer and the flush does not move the retry, and only a local
// duration (flush − answer) crosses from this process's clock to Postgres's.
// Losing a batch in a crash means the delivery is sent again once its lease lapses: a repeat, never a loss.
import type { Sql } from '../../kernel/db.js';
import { clockOffsetOfSql, tenantClockJoinSql } from '../../kernel/clock.js';
import type { Logger } from '../../kernel/log.js';
import { idArray } from './item.js';

const FLUSH_MS = 25;
const FLUSH_AT = 500;

export interface Failure {
  id: number;
  /** Failed attempts before this one (the row is updated only if it still says so). */
  attempts: number;
  /** When the next attempt is due: local clock + the tenant's offset at the answer + the wait, in ms. */
  dueMs: number;
  status: number | null;
  error: string | null;
}

export interface Lease {
  /** This process's lease owner id (`lease_owner`). */
  owner: string;
  /** The lease's length (JOB_LOCK_MS). */
  ms: number;
}

export class OutcomeWriter {
  private successes: number[] = [];
  private failures: Failure[] = [];
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private readonly flushMs: number;

  constructor(
    private readonly d: { sql: Sql; log: Logger; lease: Lease; flushMs?: number },
  ) {
    this.flushMs = d.flushMs ?? FLUSH_MS;
  }

  succeeded(id: number) {
    this.successes.push(id);
    this.schedule();
  }

  failed(f: Failure) {
    this.failures.push(f);
    this.schedule();
  }

  /**
   * Writes the recorded outcomes: one UPDATE for the successes, one for the failures (attempts,
   * next_attempt_at, last status and error, lease released; only while the lease is still ours).
   */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const ok = this.successes.splice(0);
    const failed = this.failures.splice(0);
    if (!ok.length && !failed.length) return this.flushing;
    const { sql, log, lease } = this.d;
    this.flushing = this.flushing.then(async () => {
      const sentMs = Date.now(); // the statements' now() is a moment later: a retry is never early
      await Promise.all([
        ok.length
          ? sql`
              update webhook_deliveries set status = 'succeeded', attempts = attempts + 1, delivered_at = now(), last_status = 200, last_error = null, lease_until = null, lease_owner = null
               where id = any(${idArray(ok)}::bigint[]) and status = 'pending'`.catch((e) => log.warn('recording delivered webhooks failed; they will be sent again', { err: e }))
          : undefined,
        failed.length
          ? sql`
              update webhook_deliveries d
                 set attempts = f.attempts + 1,
                     next_attempt_at = now() + make_interval(secs => (f.due_ms - ${sentMs}::float8) / 1000.0),
                     last_status = f.status, last_error = f.error, lease_until = null, lease_owner = null
                from jsonb_to_recordset(${sql.json(failed.map((f) => ({ id: f.id, attempts: f.attempts, due_ms: f.dueMs, status: f.status, error: f.error })))}) as f(id bigint, attempts int, due_ms float8, status int, error text)
               where d.id = f.id and d.status = 'pending' and d.attempts = f.attempts and d.lease_owner = ${lease.owner}`.catch((e) =>
              log.warn('recording failed webhook attempts failed; they will be retried when their lease lapses', { err: e }),
            )
          : undefined,
      ]);
    });
    return this.flushing;
  }

  /** The last attempt failed 72 h after the delivery was queued: its count and error, lease released (the endpoint is disabled separately). */
  async lastFailure(id: number, failures: number, status: number | null, error: string | null) {
    await this.d.sql`update webhook_deliveries set attempts = ${failures}, last_status = ${status}, last_error = ${error}, lease_until = null, lease_owner = null where id = ${id}`;
  }

  /** Disables an endpoint and discards its pending deliveries. */
  async disable(endpointId: string, reason: string) {
    await this.d.sql.begin(async (tx) => {
      await tx`update webhook_endpoints set active = false, disabled_at = now(), disabled_reason = ${reason} where id = ${endpointId} and active`;
      await tx`update webhook_deliveries set status = 'discarded', lease_until = null, lease_owner = null where endpoint_id = ${endpointId} and status = 'pending'`;
    });
    this.d.log.warn('webhook endpoint disabled', { endpointId, reason });
  }

  /** Endpoints with a delivery failing for 72 h on its tenant's clock. */
  async staleEndpoints(): Promise<string[]> {
    const stale = await this.d.sql`
      select distinct d.endpoint_id from webhook_deliveries d ${tenantClockJoinSql(this.d.sql, 'c', 'd.tenant_id', 'd.livemode')}
       where d.status = 'pending' and d.attempts > 0
         and d.queued_at <= now() + make_interval(secs => ${clockOffsetOfSql(this.d.sql, 'c')} / 1000.0) - interval '72 hours'`;
    return stale.map((s) => s.endpoint_id as string);
  }

  private schedule() {
    if (this.successes.length + this.failures.length >= FLUSH_AT) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
  }
}
