// What a capability (payments, refunds, invoices, payouts, …) contributes to the runtime besides its
// routes: its jobs, its timers, what its reconcilers find pending in Postgres, the events of other
// entities it reacts to inside their transaction, and its repeatable jobs. ops/app.ts installs
// every capability into one Runtime (kernel/runtime.ts); nothing else needs to know about it.
import { sqlIdent, type Db, type Sql } from './db.js';
import type { JobDef, JobRequest } from './jobs.js';
import type { Reaction } from './reactions.js';
import type { TimerDef } from './timers.js';

export interface Reconciler {
  /** What it rebuilds, for logs (e.g. "attempts waiting on the provider"). */
  name: string;
  /**
   * The jobs that Postgres shows pending and untouched for a while (a lost job, a flushed Redis),
   * built with the same declarations (hence the same job ids) as the code that first enqueued them.
   */
  run(): Promise<JobRequest[]>;
}

/** Rows untouched for this long are considered lost by the reconcilers. */
export const RECONCILE_AFTER = '3 seconds';

/**
 * `<column> < now() - RECONCILE_AFTER`: the row has been untouched for a while (written once here;
 * safe inside a transaction of kernel/db.ts `atomically`, like kernel/clock.ts's fragments).
 */
export function untouchedSql(db: Db, column = 'updated_at') {
  return (db as Sql).unsafe(`${sqlIdent(column)} < now() - interval '${RECONCILE_AFTER}'`);
}

export interface StaleQuery {
  table: string;
  /** The state that waits on something (default `pending`), in `statusColumn` (default `status`); null: no status condition. */
  status?: string | null;
  statusColumn?: string;
  /** More conditions (a fragment built with the pool's `sql`). */
  where?: ReturnType<Sql['unsafe']>;
  /** The columns read (default `id`). */
  columns?: string[];
  /** The column that says when the row last changed (default `updated_at`). */
  touched?: string;
  limit?: number;
}

/**
 * The reconciler query, written once: the rows of `table` in a waiting state and untouched for
 * RECONCILE_AFTER, oldest first (`select id from refunds where status = 'requested' and updated_at < …`).
 */
export function staleRows(sql: Sql, q: StaleQuery): Promise<Array<Record<string, unknown>>> {
  const status = q.status === undefined ? 'pending' : q.status;
  const touched = q.touched ?? 'updated_at';
  return sql`
    select ${sql((q.columns ?? ['id']).map(sqlIdent))} from ${sql(sqlIdent(q.table))}
     where ${untouchedSql(sql, touched)}
       ${status === null ? sql`` : sql`and ${sql(sqlIdent(q.statusColumn ?? 'status'))} = ${status}`}
       ${q.where ? sql`and ${q.where}` : sql``}
     order by ${sql(sqlIdent(touched))} limit ${q.limit ?? 1000}` as unknown as Promise<Array<Record<string, unknown>>>;
}

/** A reconciler from its query and the job each row asks for (built with the job's declaration: same ids). */
export function reconciler<T>(name: string, find: () => Promise<T[]>, job: (row: T) => JobRequest): Reconciler {
  return { name, run: async () => (await find()).map(job) };
}

export interface Schedule {
  /** Repeatable job (BullMQ job scheduler: one run at a time across all workers). */
  name: string;
  everyMs: number;
  job: JobRequest;
}

export interface Capability {
  name: string;
  /** The shards of the queue kinds its jobs use: 'default' (QUEUE_SHARDS) for a busy kind; 1 when not said. */
  queues?: Record<string, number | 'default'>;
  jobs?: JobDef[];
  timers?: TimerDef[];
  reconcilers?: Reconciler[];
  reactions?: Array<{ on: string; run: Reaction }>;
  schedules?: Schedule[];
}
