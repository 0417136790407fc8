// Entity queues sharded by entity id: `{<kind>-<shard>}` (the braces are a Redis Cluster hash tag,
// so each queue's keys live in one slot and the queues spread over the slots of a cluster). Job ids are deterministic per piece of work, so a
// repeated enqueue (retry, reconciler) is absorbed while the first job is still queued.
import { createHash } from 'node:crypto';
import { Queue, type JobsOptions } from 'bullmq';
import { duplicateClient, type RedisClient } from './redis.js';
import { injectTrace } from './tracing.js';

export const shardOf = (entityId: string, shards: number) => createHash('sha1').update(entityId).digest().readUInt32BE(0) % shards;
export const queueName = (kind: string, shard: number) => `{${kind}-${shard}}`;

export const DEFAULT_JOB: JobsOptions = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 250 },
  removeOnComplete: true,
  // Failed jobs are removed too: the reconciler re-enqueues whatever Postgres still shows pending.
  removeOnFail: true,
};

/** An enqueue waiting for the end of the event loop's turn (see Queues.add). */
interface PendingAdd {
  name: string;
  data: object;
  opts: JobsOptions;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class Queues {
  private queues = new Map<string, Queue>();
  private pending = new Map<string, PendingAdd[]>();
  private flushScheduled = false;
  /** Batches sent and not yet answered (close waits for them). */
  private inflight = new Set<Promise<unknown>>();
  private connection: RedisClient;
  private shardCounts = new Map<string, number>();

  /** `shards`: QUEUE_SHARDS, the shards of queue kinds that ask for the default (the payment spine's). */
  constructor(redis: RedisClient, private prefix: string, readonly shards: number) {
    // No auto-pipelining for BullMQ: it rebuilds a Pipeline with every script per tick (measured: -35% CPU).
    this.connection = duplicateClient(redis, { maxRetriesPerRequest: null, enableAutoPipelining: false });
  }

  /**
   * Shards of a queue kind (every process installs the same capabilities, so they agree): a busy
   * kind takes QUEUE_SHARDS, a quiet one fewer (each shard is a BullMQ worker and its connections).
   */
  setShards(kind: string, n: number | 'default'): void {
    this.shardCounts.set(kind, n === 'default' ? this.shards : Math.max(1, Math.min(n, this.shards)));
  }

  shardsOf(kind: string): number {
    return this.shardCounts.get(kind) ?? 1;
  }

  private queue(name: string): Queue {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: this.connection, prefix: this.prefix });
      this.queues.set(name, q);
    }
    return q;
  }

  /**
   * Enqueues with the caller's trace context in the job data (`_trace`), so the worker's span joins the trace.
   *
   * The jobs enqueued during one turn of the event loop (the commits whose answers arrived in one
   * poll) go to Redis together at its end: one pipelined write of their scripts per queue
   * (BullMQ's addBulk) instead of a write and a wake-up of Redis each (bench/RESULTS.md, issue 26,
   * tenth session). Each promise settles with its own job: if the batch fails, its jobs are
   * enqueued one by one again, so one job's error is only its own. Sending again is safe: every job
   * has the id its declaration gives it (kernel/jobs.ts), so one the batch did add is absorbed.
   */
  add(kind: string, entityId: string, name: string, data: object, opts: JobsOptions & { jobId: string }): Promise<void> {
    const trace = (data as { _trace?: object })._trace ?? injectTrace();
    const q = queueName(kind, shardOf(entityId, this.shardsOf(kind)));
    return new Promise<void>((resolve, reject) => {
      let list = this.pending.get(q);
      if (!list) this.pending.set(q, (list = []));
      list.push({ name, data: Object.keys(trace).length ? { ...data, _trace: trace } : data, opts: { ...DEFAULT_JOB, ...opts }, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  private readonly flush = () => {
    this.flushScheduled = false;
    const batches = this.pending;
    this.pending = new Map();
    for (const [name, list] of batches) {
      const q = this.queue(name);
      const one = (a: PendingAdd) => q.add(a.name, a.data, a.opts).then(() => a.resolve(), a.reject);
      const sent =
        list.length === 1
          ? one(list[0])
          : q.addBulk(list.map((a) => ({ name: a.name, data: a.data, opts: a.opts }))).then(
              () => {
                for (const a of list) a.resolve();
              },
              () => Promise.all(list.map(one)),
            );
      this.inflight.add(sent);
      void sent.finally(() => this.inflight.delete(sent));
    }
  };

  /** A repeatable job (BullMQ job scheduler): one job per interval, whatever the number of workers. */
  async schedule(kind: string, entityId: string, schedulerId: string, everyMs: number, name: string, data: object): Promise<void> {
    await this.queue(queueName(kind, shardOf(entityId, this.shardsOf(kind)))).upsertJobScheduler(schedulerId, { every: everyMs }, { name, data, opts: { removeOnComplete: 10, removeOnFail: 50 } });
  }

  /** Job counts of every shard queue of the given kinds (for /metrics). */
  async depths(kinds: string[]): Promise<Array<{ queue: string; state: string; count: number }>> {
    const out: Array<{ queue: string; state: string; count: number }> = [];
    for (const kind of kinds) {
      for (let shard = 0; shard < this.shardsOf(kind); shard++) {
        const name = queueName(kind, shard);
        const counts = await this.queue(name).getJobCounts('waiting', 'active', 'delayed', 'failed');
        for (const [state, count] of Object.entries(counts)) out.push({ queue: name, state, count });
      }
    }
    return out;
  }

  async close(): Promise<void> {
    // what was enqueued before the close still goes out
    this.flush();
    await Promise.allSettled([...this.inflight]);
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.connection.disconnect();
  }
}
