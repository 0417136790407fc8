// The worker role: BullMQ workers that run actors' commands and timers. Later issues add the
// sharded entity queues (<kind>:<shard>) here; the foundation runs the maintenance queue.
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Config } from '../ops/config.js';
import type { Sql } from '../ops/db.js';
import { startHeartbeat } from '../ops/heartbeat.js';
import type { Logger } from '../ops/log.js';
import { Idempotency } from '../api/idempotency.js';

export interface WorkerDeps {
  config: Config;
  sql: Sql;
  redis: Redis;
  log: Logger;
}

export interface RunningWorkers {
  stop(): Promise<void>;
}

export const MAINTENANCE_QUEUE = 'maintenance';

export async function startWorkers(deps: WorkerDeps, instanceId: string): Promise<RunningWorkers> {
  const { config, log } = deps;
  // BullMQ does not close connections it was given: keep them to close on stop.
  const connection = deps.redis.duplicate({ maxRetriesPerRequest: null });
  const workerConnection = deps.redis.duplicate({ maxRetriesPerRequest: null });
  const opts = { connection, prefix: config.redisPrefix };
  const idem = new Idempotency(deps.sql, deps.redis, config.redisPrefix);

  const queue = new Queue(MAINTENANCE_QUEUE, opts);
  // The job scheduler id makes this idempotent across processes and restarts.
  await queue.upsertJobScheduler('prune-idempotency', { every: 60 * 60 * 1000 }, { name: 'prune-idempotency', opts: { removeOnComplete: 10, removeOnFail: 50 } });

  const worker = new Worker(
    MAINTENANCE_QUEUE,
    async (job: Job) => {
      switch (job.name) {
        case 'prune-idempotency': {
          const n = await idem.prune(config.idempotencyRetentionHours);
          log.info('pruned idempotency records', { count: n });
          return { pruned: n };
        }
        default:
          throw new Error(`unknown maintenance job ${job.name}`);
      }
    },
    { ...opts, connection: workerConnection, concurrency: 1 },
  );
  worker.on('failed', (job, err) => log.warn('maintenance job failed', { job: job?.name, err }));

  const stopBeat = startHeartbeat(deps.redis, config.redisPrefix, instanceId);
  return {
    async stop() {
      await stopBeat();
      await worker.close();
      await queue.close();
      connection.disconnect();
      workerConnection.disconnect();
    },
  };
}
