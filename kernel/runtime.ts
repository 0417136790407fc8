// The runtime that every capability is installed into: one job registry, one timer registry, one
// set of reactions, one entity actor; and, in a worker process, the BullMQ workers of every queue
// kind (`{<kind>-<shard>}`), the sweeper that fires due timers by their tenant's clock, the reconciler
// loop that re-enqueues what Postgres shows pending, and the repeatable jobs. The sweeper and the
// reconciler depend on Postgres only, so they survive a flushed Redis.
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { duplicateClient, isCluster, type RedisClient } from './redis.js';
import type { Capability, Reconciler, Schedule } from './capability.js';
import type { Sql } from './db.js';
import { EntityActor } from './entity.js';
import { JobRegistry } from './jobs.js';
import type { EntityLocks } from './lock.js';
import type { Logger } from './log.js';
import type { Metrics } from './metrics.js';
import { queueName, type Queues } from './queues.js';
import { Reactions } from './reactions.js';
import { Timers } from './timers.js';
import { activeTraceId, ATTR, extractTrace, inSpan, SpanKind, type Carrier } from './tracing.js';
import type { JobHistory } from './job-history.js';

export interface RuntimeDeps {
  sql: Sql;
  queues: Queues;
  locks: EntityLocks;
  log: Logger;
  /** Entity lock TTL: longer than the slowest provider call made under it. */
  lockMs: number;
  /** Called after a commit that wrote outbox events. */
  onEvents?: (tenantId?: string) => void;
  /** Where each job run (attempt, outcome, error, trace) is recorded for operators (kernel/job-history.ts). */
  jobHistory?: JobHistory;
}

export interface WorkerSettings {
  redis: RedisClient;
  prefix: string;
  concurrency: number;
  jobLockMs: number;
  sweepIntervalMs: number;
  reconcileIntervalMs: number;
  metrics?: Pick<Metrics, 'jobDuration' | 'jobWait'>;
}

export interface RunningRuntime {
  /** Fires due timers and runs the reconcilers once (tests; after a clock advance). */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

/** Rows untouched for this long are considered lost by the reconcilers (declared with the reconciler helper). */
export { RECONCILE_AFTER } from './capability.js';

export class Runtime {
  readonly jobs: JobRegistry;
  readonly timers: Timers;
  readonly reactions = new Reactions();
  readonly actor: EntityActor;
  private reconcilers: Reconciler[] = [];
  private schedules: Schedule[] = [];
  private installed = new Set<string>();

  constructor(private d: RuntimeDeps) {
    this.onEvents = d.onEvents;
    this.jobs = new JobRegistry(d.queues, d.log);
    this.timers = new Timers(d.sql, this.jobs, d.log);
    this.actor = new EntityActor({ sql: d.sql, locks: d.locks, jobs: this.jobs, reactions: this.reactions, timers: this.timers, log: d.log, lockMs: d.lockMs, onEvents: (tenantId) => this.onEvents?.(tenantId) });
  }

  /** Called after a commit that wrote outbox events (the webhook relay's wake-up, set by the wiring). */
  onEvents: ((tenantId?: string) => void) | undefined;

  install(...caps: Capability[]): void {
    for (const c of caps) {
      if (this.installed.has(c.name)) throw new Error(`capability ${c.name} is installed twice`);
      this.installed.add(c.name);
      for (const [kind, n] of Object.entries(c.queues ?? {})) this.d.queues.setShards(kind, n);
      this.jobs.define(...(c.jobs ?? []));
      this.timers.define(...(c.timers ?? []));
      this.reconcilers.push(...(c.reconcilers ?? []));
      for (const r of c.reactions ?? []) this.reactions.on(r.on, r.run);
      this.schedules.push(...(c.schedules ?? []));
    }
  }

  /** Enqueues whatever every capability's reconciler finds pending. Returns how many jobs. */
  async reconcile(): Promise<number> {
    let n = 0;
    for (const r of this.reconcilers) {
      try {
        const found = await r.run();
        for (const j of found) await this.jobs.enqueue(j);
        n += found.length;
      } catch (e) {
        this.d.log.warn('reconciler failed', { reconciler: r.name, err: e });
      }
    }
    return n;
  }

  /** Fires (enqueues) every timer due by its tenant's clock. */
  sweep(opts: { tenantId?: string; suffix?: string } = {}): Promise<number> {
    return this.timers.sweep({ tenantId: opts.tenantId, suffix: opts.suffix ?? 'sweep' });
  }

  /** Starts one BullMQ worker per queue kind and shard, the sweeper, the reconciler loop and the schedules. */
  async startWorkers(s: WorkerSettings): Promise<RunningRuntime> {
    const log = this.d.log;
    const connections: Array<{ disconnect(): void }> = [];
    const conn = () => {
      // BullMQ connections without auto-pipelining (bench/RESULTS.md: +53% deliveries/s).
      const c = duplicateClient(s.redis, { maxRetriesPerRequest: null, enableAutoPipelining: false });
      connections.push(c);
      return c;
    };
    const workers: Worker[] = [];
    for (const kind of this.jobs.queueKinds()) {
      for (let shard = 0; shard < this.d.queues.shardsOf(kind); shard++) {
        const name = queueName(kind, shard);
        const w = new Worker(name, traced(name, kind, this.jobs.processor(kind), s.metrics, this.d.jobHistory), {
          prefix: s.prefix,
          connection: conn(),
          concurrency: s.concurrency,
          // A job whose worker died is taken over after lockDuration; it may stall several times (kills).
          lockDuration: s.jobLockMs,
          stalledInterval: Math.max(500, Math.floor(s.jobLockMs / 2)),
          maxStalledCount: 20,
        });
        w.on('failed', (job, err) => {
          const transient = !!job && this.jobs.isTransient(kind, job.name, err);
          log[transient ? 'info' : 'warn']('job failed', { queue: name, job: job?.name, jobId: job?.id, attemptsMade: job?.attemptsMade, err: transient ? err.message : err });
        });
        w.on('error', (err) => log.warn('worker error', { err }));
        workers.push(w);
      }
    }
    for (const sc of this.schedules) {
      await this.d.queues.schedule(sc.job.def.queue, sc.job.def.shardKey(sc.job.data), sc.name, sc.everyMs, sc.job.def.name, sc.job.data);
    }

    let ticking = false;
    const tick = async () => {
      if (ticking) return;
      ticking = true;
      try {
        await this.sweep();
        await this.reconcile();
      } catch (e) {
        log.warn('sweep/reconcile failed', { err: e });
      } finally {
        ticking = false;
      }
    };
    const sweepTimer = setInterval(() => void this.sweep().catch((e) => log.warn('sweep failed', { err: e })), s.sweepIntervalMs);
    const reconcileTimer = setInterval(() => void this.reconcile(), s.reconcileIntervalMs);
    void tick();
    return {
      tick,
      async stop() {
        clearInterval(sweepTimer);
        clearInterval(reconcileTimer);
        // On a Redis Cluster a graceful close leaves BullMQ's blocking connections reconnecting (its
        // cluster reconnect races the close: sockets stay open, measured); a forced close does not. A job
        // in flight then is taken over when its lock expires, as after a crash (every job is fenced).
        const force = isCluster(s.redis);
        await Promise.all(workers.map((w) => w.close(force)));
        for (const c of connections) c.disconnect();
      },
    };
  }
}

/** A job runs in a consumer span that continues the trace of whoever enqueued it, and is measured. */
function traced(queue: string, kind: string, fn: (job: Job) => Promise<unknown>, metrics?: Pick<Metrics, 'jobDuration' | 'jobWait'>, history?: JobHistory) {
  return async (job: Job) => {
    const started = Date.now();
    metrics?.jobWait.observe({ queue: kind, name: job.name }, Math.max(0, started - job.timestamp - (job.delay ?? 0)) / 1000);
    let result = 'ok';
    let error: unknown;
    let traceId: string | null = null;
    try {
      return await inSpan(`job ${job.name}`, { [ATTR.jobName]: job.name, [ATTR.queue]: queue, [ATTR.jobId]: String(job.id) }, () => {
        traceId = activeTraceId();
        return fn(job);
      }, {
        parent: extractTrace((job.data as { _trace?: Carrier })?._trace),
        kind: SpanKind.CONSUMER,
      });
    } catch (e) {
      result = 'error';
      error = e;
      throw e;
    } finally {
      const ms = Date.now() - started;
      metrics?.jobDuration.observe({ queue: kind, name: job.name, result }, ms / 1000);
      if (history) {
        const max = job.opts.attempts ?? 1;
        const attempt = job.attemptsMade + 1;
        const final = error instanceof UnrecoverableError || attempt >= max;
        history.record(job.data, {
          job_id: String(job.id), queue, name: job.name, attempt, max_attempts: max, started_at: new Date(started).toISOString(), duration_ms: ms,
          outcome: result === 'ok' ? 'completed' : final ? 'failed' : 'retrying',
          ...(error !== undefined ? { error: String((error as Error)?.message ?? error).slice(0, 500) } : {}),
          ...(traceId ? { trace_id: traceId } : {}),
        });
      }
    }
  };
}
