// The job history (kernel/job-history.ts) on a single Redis: a run is appended under each object its
// job's data names, not under the tenant (nothing reads a tenant's list: the inspection is per
// object, docs/operator.md), and with one MULTI for all of them (one round trip per run; it was one
// per entity, three for a capture: bench/RESULTS.md, issue 26 sixth session). The client's MULTIs are
// counted on the client (other test files use the same Redis at the same time, so Redis's own
// counters would count theirs too).
import t from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { JobHistory, entitiesOf, type JobRun } from '../kernel/job-history.js';
import { until } from './helpers/app.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

t.test('entitiesOf: the objects a job names, not its tenant nor its trace', async (t) => {
  const [tenant, intent, attempt] = [randomUUID(), randomUUID(), randomUUID()];
  t.same(entitiesOf({ tenantId: tenant, intentId: intent, attemptId: attempt.toUpperCase(), _trace: randomUUID(), n: 3 }), [intent, attempt]);
  t.same(entitiesOf({ tenant_id: tenant, payoutId: intent }), [intent]);
  t.same(entitiesOf(null), []);
});

t.test('a run is appended under each object in one MULTI, and nothing under the tenant', async (t) => {
  const prefix = `orq_test_jobhist_${randomBytes(4).toString('hex')}`;
  const redis = new Redis(url);
  t.teardown(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });
  // The transactions the history opens on this client (the commands go to the real Redis).
  let multis = 0;
  const multi = redis.multi.bind(redis) as (...a: unknown[]) => ReturnType<Redis['multi']>;
  (redis as unknown as { multi: (...a: unknown[]) => unknown }).multi = (...a: unknown[]) => (multis++, multi(...a));

  const history = new JobHistory(redis, prefix, { max: 50, ttlSeconds: 3600 });
  const [tenant, intent, attempt] = [randomUUID(), randomUUID(), randomUUID()];
  const run: JobRun = {
    job_id: `exec-${attempt}`, queue: '{pi-1}', name: 'attempt.execute', attempt: 1, max_attempts: 8,
    started_at: new Date().toISOString(), duration_ms: 12, outcome: 'completed',
  };
  history.record({ tenantId: tenant, livemode: false, intentId: intent, attemptId: attempt }, run);
  await until(() => history.of(attempt), (r) => r.length === 1, 5_000);

  t.equal(multis, 1, 'one MULTI for the run');
  t.same(await history.of(intent), [run], "the intent's list has the run");
  t.same(await history.of(attempt), [run], "the attempt's list has the run");
  t.equal(await redis.exists(`${prefix}:jobhist:${tenant}`), 0, 'no list for the tenant');
  t.ok((await redis.ttl(`${prefix}:jobhist:${intent}`)) > 0, 'the list expires');
});
