// The job history (kernel/job-history.ts) on a single Redis: a run is appended under each object its
// job's data names, not under the tenant (nothing reads a tenant's list: the inspection is per
// object, docs/operator.md), with one script call for all of them (one command per run; it was a
// round trip per entity, three for a capture, then a MULTI of eight commands: bench/RESULTS.md,
// issue 26 sixth and tenth sessions). The commands are counted on the client (other test files use
// the same Redis at the same time, so Redis's own counters would count theirs too).
import t, { type Test } from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { JobHistory, entitiesOf, type JobRun } from '../kernel/job-history.js';
import { until } from './helpers/app.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A client and a key prefix of the test's own, its keys removed at the end. */
function scratchRedis(t: Test) {
  const prefix = `orq_test_jobhist_${randomBytes(4).toString('hex')}`;
  const redis = new Redis(url);
  t.teardown(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });
  return { prefix, redis };
}

t.test('entitiesOf: the objects a job names, not its tenant nor its trace', async (t) => {
  const [tenant, intent, attempt] = [randomUUID(), randomUUID(), randomUUID()];
  t.same(entitiesOf({ tenantId: tenant, intentId: intent, attemptId: attempt.toUpperCase(), _trace: randomUUID(), n: 3 }), [intent, attempt]);
  t.same(entitiesOf({ tenant_id: tenant, payoutId: intent }), [intent]);
  t.same(entitiesOf(null), []);
});

t.test('a run is appended under each object in one command, and nothing under the tenant', async (t) => {
  const { prefix, redis } = scratchRedis(t);
  // The commands the history sends on this client (they go to the real Redis).
  const sent: string[] = [];
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((c: Parameters<Redis['sendCommand']>[0], ...rest: unknown[]) => (sent.push(c.name), (send as (...a: unknown[]) => unknown)(c, ...rest))) as Redis['sendCommand'];

  const history = new JobHistory(redis, prefix, { max: 50, ttlSeconds: 3600 });
  const [tenant, intent, attempt] = [randomUUID(), randomUUID(), randomUUID()];
  const run: JobRun = {
    job_id: `exec-${attempt}`, queue: '{pi-1}', name: 'attempt.execute', attempt: 1, max_attempts: 8,
    started_at: new Date().toISOString(), duration_ms: 12, outcome: 'completed',
  };
  history.record({ tenantId: tenant, livemode: false, intentId: intent, attemptId: attempt }, run);
  const recorded = [...sent];
  await until(() => history.of(attempt), (r) => r.length === 1, 5_000);

  t.same(recorded.filter((n) => n !== 'script'), ['evalsha'], 'one command for the run (one script call naming both lists)');
  t.same(await history.of(intent), [run], "the intent's list has the run");
  t.same(await history.of(attempt), [run], "the attempt's list has the run");
  t.equal(await redis.exists(`${prefix}:jobhist:${tenant}`), 0, 'no list for the tenant');
  t.ok((await redis.ttl(`${prefix}:jobhist:${intent}`)) > 0, 'the list expires');
});

t.test('each list keeps the newest runs, newest last in of()', async (t) => {
  const { prefix, redis } = scratchRedis(t);
  const history = new JobHistory(redis, prefix, { max: 3, ttlSeconds: 60 });
  const intent = randomUUID();
  const run = (n: number): JobRun => ({ job_id: `j-${n}`, queue: '{pi-0}', name: 'attempt.execute', attempt: n, max_attempts: 8, started_at: new Date().toISOString(), duration_ms: n, outcome: 'retrying' });
  for (let n = 1; n <= 5; n++) history.record({ intentId: intent }, run(n));
  const kept = await until(() => history.of(intent), (r) => r.at(-1)?.attempt === 5, 5_000);
  t.same(kept.map((r) => r.attempt), [3, 4, 5], 'the three newest, oldest first');
  const ttl = await redis.ttl(`${prefix}:jobhist:${intent}`);
  t.ok(ttl > 0 && ttl <= 60, `the list expires within the ttl (${ttl} s)`);
});

