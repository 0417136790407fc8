// What a capability (payments, refunds, invoices, payouts, …) contributes to the runtime besides its
// routes: its jobs, its timers, what its reconcilers find pending in Postgres, the events of other
// entities it reacts to inside their transaction, and its repeatable jobs. ops/app.ts installs
// every capability into one Runtime (kernel/runtime.ts); nothing else needs to know about it.
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
