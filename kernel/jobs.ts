// The job registry: every job is declared once — its queue kind, name, how its id and shard come
// from its data, the shape its data must have, and its handler. The code that enqueues and the
// reconciler that rebuilds lost jobs from Postgres both go through the declaration, so they can
// never disagree on a job id (a repeated enqueue of the same work is absorbed by BullMQ while the
// first job is queued). A malformed or unknown job fails at once as unrecoverable instead of being
// retried.
import { UnrecoverableError, type Job, type JobsOptions } from 'bullmq';
import type { Logger } from './log.js';
import type { Queues } from './queues.js';

/** What a handler knows of the job's past: a retried or stalled job may have done its work already. */
export interface JobInfo {
  /** Earlier tries of this job (0 on the first run). */
  attemptsMade: number;
  /** The job was taken over from a worker that stopped renewing its lock (a crash). */
  stalled: boolean;
}

type FieldType = 'string' | 'uuid' | 'number' | 'boolean' | 'object';
/** The shape of a job's data: field → type; a trailing `?` makes it optional. */
export type Shape = Record<string, `${FieldType}` | `${FieldType}?`>;

export interface JobDef<D extends object = any> {
  /** Queue kind: the job goes to `{<queue>-<shard>}` (kernel/queues.ts). */
  readonly queue: string;
  readonly name: string;
  readonly shape: Shape;
  /** The job id, from its data: the same piece of work always has the same id. */
  id(data: D): string;
  /** Which entity the job is about (its shard). */
  shardKey(data: D): string;
  run(data: D, info: JobInfo): Promise<unknown>;
  /** Failures that only mean "later" (a busy lock, a provider that did not answer): logged quietly, retried. */
  transient?(e: unknown): boolean;
  opts?: JobsOptions;
}

export interface JobRequest<D extends object = any> {
  def: JobDef<D>;
  data: D;
  /** Milliseconds before the job may run. */
  delay?: number;
  /**
   * Appended to the id for a deliberate second job of the same work while the first may still be
   * queued (a timer fired early by a test-clock advance while its delayed job waits in Redis).
   */
  idSuffix?: string;
}

export const defineJob = <D extends object>(def: JobDef<D>): JobDef<D> => def;
export const jobRequest = <D extends object>(def: JobDef<D>, data: D, extra: Omit<JobRequest<D>, 'def' | 'data'> = {}): JobRequest<D> => ({ def, data, ...extra });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Why a job's data does not have its declared shape, or undefined when it has. */
export function shapeProblem(shape: Shape, data: unknown): string | undefined {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return 'data is not an object';
  const d = data as Record<string, unknown>;
  for (const [field, spec] of Object.entries(shape)) {
    const optional = spec.endsWith('?');
    const type = (optional ? spec.slice(0, -1) : spec) as FieldType;
    const v = d[field];
    if (v === undefined || v === null) {
      if (optional) continue;
      return `field ${field} is missing`;
    }
    const ok =
      type === 'uuid' ? typeof v === 'string' && UUID.test(v) : type === 'object' ? typeof v === 'object' && !Array.isArray(v) : typeof v === type;
    if (!ok) return `field ${field} is not a ${type}`;
  }
  return undefined;
}

export class JobRegistry {
  private defs = new Map<string, JobDef>();

  constructor(
    private queues: Queues,
    private log: Logger,
  ) {}

  define(...defs: JobDef[]): void {
    for (const d of defs) {
      const key = `${d.queue}\u0000${d.name}`;
      if (this.defs.has(key) && this.defs.get(key) !== d) throw new Error(`job ${d.queue}/${d.name} is declared twice`);
      this.defs.set(key, d);
    }
  }

  /** The queue kinds that have at least one job (the worker runs one BullMQ worker per kind and shard). */
  queueKinds(): string[] {
    return [...new Set([...this.defs.values()].map((d) => d.queue))].sort();
  }

  /** Enqueues a declared job. The id comes from the declaration, never from the caller. */
  async enqueue(r: JobRequest): Promise<void> {
    const problem = shapeProblem(r.def.shape, r.data);
    if (problem) throw new Error(`refusing to enqueue ${r.def.queue}/${r.def.name}: ${problem}`);
    const id = r.def.id(r.data) + (r.idSuffix ? `-${r.idSuffix}` : '');
    await this.queues.add(r.def.queue, r.def.shardKey(r.data), r.def.name, r.data, { ...r.def.opts, jobId: id, ...(r.delay ? { delay: r.delay } : {}) });
  }

  /**
   * Enqueues after a commit: a failure (Redis unreachable) is logged, not thrown — the commit
   * stands and the reconciler enqueues the same job (same id) from Postgres.
   */
  async enqueueAfterCommit(requests: readonly JobRequest[]): Promise<void> {
    for (const r of requests) {
      await this.enqueue(r).catch((e) => this.log.warn('enqueue after commit failed; the reconciler will retry', { job: r.def.name, err: e }));
    }
  }

  /** The processor of one queue kind: dispatches by job name; unknown or malformed jobs fail at once. */
  processor(queue: string): (job: Job) => Promise<unknown> {
    return async (job: Job) => {
      const def = this.defs.get(`${queue}\u0000${job.name}`);
      if (!def) throw new UnrecoverableError(`unknown job ${job.name} on queue ${queue}`);
      const { _trace: _t, ...data } = (job.data ?? {}) as Record<string, unknown>;
      const problem = shapeProblem(def.shape, data);
      if (problem) throw new UnrecoverableError(`malformed job ${queue}/${job.name} (${String(job.id)}): ${problem}`);
      return def.run(data, { attemptsMade: job.attemptsMade, stalled: (job.stalledCounter ?? 0) > 0 });
    };
  }

  /** Whether a failure of this job is an expected "later" (for quieter logs). */
  isTransient(queue: string, name: string, e: unknown): boolean {
    return this.defs.get(`${queue}\u0000${name}`)?.transient?.(e) ?? false;
  }
}
