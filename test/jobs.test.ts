// The job registry (kernel/jobs.ts) against the real Redis: a job's id comes from its declaration
// (the same work enqueued twice is one job), an unknown or malformed job fails at once as
// unrecoverable (no retries), and a transient failure is retried.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { defineJob, JobRegistry, jobRequest } from '../kernel/jobs.js';
import { createLogger } from '../kernel/log.js';
import { queueName, Queues } from '../kernel/queues.js';
import { testConfig } from './helpers/app.js';

t.test('job ids from declarations; unknown and malformed jobs fail at once; transient ones retry', async (t) => {
  const config = testConfig();
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
  const prefix = `orq_test_jobs_${randomBytes(3).toString('hex')}`;
  const queues = new Queues(redis, prefix, 1);
  const registry = new JobRegistry(queues, createLogger('silent'));
  const ran: string[] = [];
  let flaky = 0;
  const echo = defineJob<{ entityId: string; n: number }>({
    queue: 'probe',
    name: 'echo',
    shape: { entityId: 'uuid', n: 'number' },
    id: (d) => `echo-${d.entityId}-${d.n}`,
    shardKey: (d) => d.entityId,
    run: async (d) => {
      ran.push(`${d.entityId}:${d.n}`);
      return d.n;
    },
  });
  const retried = defineJob<{ entityId: string }>({
    queue: 'probe',
    name: 'flaky',
    shape: { entityId: 'uuid' },
    id: (d) => `flaky-${d.entityId}`,
    shardKey: (d) => d.entityId,
    opts: { attempts: 3, backoff: { type: 'fixed', delay: 10 } },
    run: async () => {
      if (++flaky < 3) throw new Error('try again');
      return 'ok';
    },
  });
  registry.define(echo, retried);
  const failed: Array<{ name: string; attemptsMade: number; message: string }> = [];
  const done = new Set<string>();
  const conns = [redis.duplicate({ maxRetriesPerRequest: null }), redis.duplicate({ maxRetriesPerRequest: null })];
  const worker = new Worker(queueName('probe', 0), registry.processor('probe'), { connection: conns[0], prefix });
  const raw = new Queue(queueName('probe', 0), { connection: conns[1], prefix });
  worker.on('failed', (job: Job | undefined, err) => failed.push({ name: job?.name ?? '?', attemptsMade: job?.attemptsMade ?? -1, message: err.message }));
  worker.on('completed', (job) => done.add(String(job.id)));
  t.teardown(async () => {
    await raw.close();
    await worker.close();
    await queues.close();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    for (const c of conns) c.disconnect();
    redis.disconnect();
  });
  const until = async (ok: () => boolean) => {
    for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
  };

  const id = crypto.randomUUID();
  await worker.pause();
  await registry.enqueue(jobRequest(echo, { entityId: id, n: 1 }));
  await registry.enqueue(jobRequest(echo, { entityId: id, n: 1 })); // the same work again, while queued
  worker.resume();
  await until(() => ran.length >= 1 && done.size >= 1);
  await new Promise((r) => setTimeout(r, 200));
  t.same(ran, [`${id}:1`], 'the same work enqueued twice ran once (one job id)');

  await t.rejects(registry.enqueue(jobRequest(echo, { entityId: 'not-a-uuid', n: 2 })), /refusing to enqueue probe\/echo: field entityId is not a uuid/, 'a malformed job is not enqueued');

  // What another version of the code, or a hand, might put on the queue.
  await raw.add('no.such.job', { entityId: id }, { attempts: 5, backoff: { type: 'fixed', delay: 10 } });
  await raw.add('echo', { entityId: id }, { attempts: 5, backoff: { type: 'fixed', delay: 10 } }); // n missing
  await until(() => failed.length >= 2);
  const unknown = failed.find((f) => f.name === 'no.such.job');
  const malformed = failed.find((f) => f.name === 'echo');
  t.match(unknown, { attemptsMade: 1, message: /unknown job no.such.job/ }, 'an unknown job fails once, not five times');
  t.match(malformed, { attemptsMade: 1, message: /malformed job probe\/echo .*field n is missing/ }, 'a malformed job fails once');
  t.equal(ran.length, 1, 'neither reached a handler');

  await registry.enqueue(jobRequest(retried, { entityId: id }));
  await until(() => done.has(`flaky-${id}`));
  t.equal(flaky, 3, 'a transient failure is retried until it succeeds');
});

t.test('jobs enqueued in one turn of the event loop go to Redis together, each settling on its own', async (t) => {
  const config = testConfig();
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
  const prefix = `orq_test_jobs_${randomBytes(3).toString('hex')}`;
  // The connection Queues makes for BullMQ (a duplicate of the client it is given), seen as it is made.
  const duplicate = redis.duplicate.bind(redis);
  const made: Redis[] = [];
  redis.duplicate = ((...a: Parameters<Redis['duplicate']>) => made[made.push(duplicate(...a)) - 1]) as Redis['duplicate'];
  const queues = new Queues(redis, prefix, 1);
  redis.duplicate = duplicate;
  t.equal(made.length, 1, 'Queues made one connection of its own');
  const conn = made[0];
  const rawConn = redis.duplicate({ maxRetriesPerRequest: null });
  const raw = new Queue(queueName('probe', 0), { connection: rawConn, prefix });
  t.teardown(async () => {
    await raw.close();
    await queues.close();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    rawConn.disconnect();
    redis.disconnect();
  });
  const id = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  // Count the pipelines the queue connection sends: one per batch (BullMQ's addBulk), none for a single add.
  let pipelines = 0;
  const pipeline = conn.pipeline.bind(conn);
  conn.pipeline = ((...a: Parameters<typeof conn.pipeline>) => (pipelines++, pipeline(...a))) as typeof conn.pipeline;

  // Five adds in one turn, one of them twice (the same work: one job), one delayed.
  const adds = [1, 2, 3, 3, 4].map((i) => queues.add('probe', id(i), 'echo', { entityId: id(i), n: i }, { jobId: `echo-${i}`, ...(i === 4 ? { delay: 60_000 } : {}) }));
  t.equal(pipelines, 0, 'nothing is sent before the turn ends');
  await Promise.all(adds);
  t.equal(pipelines, 1, 'the five went out in one pipeline');
  t.same((await raw.getJobs(['waiting'])).map((j) => j.id).sort(), ['echo-1', 'echo-2', 'echo-3'], 'one job per id');
  t.same((await raw.getJobs(['delayed'])).map((j) => j.id), ['echo-4'], 'the delayed one waits');
  t.same((await raw.getJob('echo-2'))?.data, { entityId: id(2), n: 2 }, "a job's data is its own");

  // A batch BullMQ refuses (one job's options are invalid: a float priority): the others are
  // enqueued one by one, and only the invalid one's promise rejects.
  const mixed = await Promise.allSettled([
    queues.add('probe', id(5), 'echo', { entityId: id(5), n: 5 }, { jobId: 'echo-5' }),
    queues.add('probe', id(6), 'echo', { entityId: id(6), n: 6 }, { jobId: 'echo-6', priority: 1.5 }),
    queues.add('probe', id(7), 'echo', { entityId: id(7), n: 7 }, { jobId: 'echo-7' }),
  ]);
  t.same(mixed.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled'], 'only the invalid job fails');
  t.ok(await raw.getJob('echo-5'), 'echo-5 enqueued');
  t.ok(await raw.getJob('echo-7'), 'echo-7 enqueued');
  t.notOk(await raw.getJob('echo-6'), 'echo-6 not enqueued');

  // A single add needs no pipeline.
  const before = pipelines;
  await queues.add('probe', id(8), 'echo', { entityId: id(8), n: 8 }, { jobId: 'echo-8' });
  t.equal(pipelines, before, 'one job alone is one script call');
  t.ok(await raw.getJob('echo-8'), 'echo-8 enqueued');

  // What was enqueued just before a close still goes out.
  const last = queues.add('probe', id(9), 'echo', { entityId: id(9), n: 9 }, { jobId: 'echo-9' });
  await queues.close();
  await last;
  t.ok(await raw.getJob('echo-9'), 'echo-9 enqueued before the queues closed');
});
