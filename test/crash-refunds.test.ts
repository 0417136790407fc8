// Refunds and saved-card activations survive a worker SIGKILL and a flushed Redis like payment
// intents do: requested while no worker runs (their jobs only in Redis), Redis flushed, workers
// started and killed mid-run; afterwards every refund is settled exactly once (one provider refund
// per refund key, one ledger entry, one event), every attempt shows what was refunded, and every
// saved card is active.
import t from 'tap';
import { serviceProcesses, sharedWith, startTestApp, waitForWorker, flushPrefix } from './helpers/app.js';
import { ownDatabase } from './helpers/db.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


t.test('refunds and saved cards: worker SIGKILLs and a Redis flush lose nothing and do nothing twice', async (t) => {
  const fast = { JOB_LOCK_MS: '3000', ENTITY_LOCK_MS: '4000', RECONCILE_INTERVAL_MS: '400', SWEEP_INTERVAL_MS: '300' };
  const dbUrl = ownDatabase(t, 'orq_crash_refunds'); // its own processes' work only (test/helpers/db.ts)
  const a = await startTestApp({ DATABASE_URL: dbUrl, ROLE: 'api', RATE_LIMIT_V1_PER_MIN: '100000', ...fast });
  const workers = serviceProcesses({ ...fast, ...sharedWith(a), ROLE: 'worker' });
  t.teardown(async () => {
    workers.killAll();
    await a.stop();
  });
  const startWorker = async () => {
    const w = workers.start();
    await waitForWorker(a.app.deps.redis, a.config.redisPrefix, w);
    return w;
  };
  const ten = await a.newTenant();
  const sql = a.app.deps.sql;
  const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
  const until = async (what: string, fn: () => Promise<boolean>, ms = 60_000) => {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (await fn()) return true;
      await sleep(200);
    }
    t.fail(`timed out waiting: ${what}`);
    return false;
  };

  // Charges to refund.
  let w = await startWorker();
  const N = 12;
  const intents: string[] = [];
  for (let i = 0; i < N; i++) {
    const pi = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 10_000 + i * 100, currency: 'MXN' }, headers: idem() });
    await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key: ten.testKey, body: { payment_token: 'tok_sim_ok', payment_method: 'card' }, headers: idem() });
    intents.push(pi.body.id);
  }
  await until('every charge captured', async () => (await sql`select count(*)::int as n from attempts where payment_intent_id in ${sql(intents)} and status = 'captured'`)[0].n === N);
  const attempts = await sql`select id, amount_minor from attempts where payment_intent_id in ${sql(intents)} order by amount_minor`;
  w.kill('SIGKILL');
  let kills = 1;

  // No worker runs: refunds (a full one, or two partial ones; cents 98 are declined by the sim) and saved cards.
  const refundIds: string[] = [];
  for (const [i, at] of attempts.entries()) {
    const amounts = i % 3 === 0 ? [undefined] : i % 3 === 1 ? [2000, 3000] : [1098];
    for (const amount_minor of amounts) {
      const r = await a.call('POST', '/v1/refunds', { key: ten.testKey, body: { attempt_id: at.id, ...(amount_minor ? { amount_minor } : {}) }, headers: idem() });
      t.equal(r.status, 201);
      refundIds.push(r.body.id);
    }
  }
  const cust = await a.call('POST', '/v1/customers', { key: ten.testKey, body: {} });
  const methods: string[] = [];
  for (let i = 0; i < 6; i++) {
    const pm = await a.call('POST', `/v1/customers/${cust.body.id}/payment_methods`, { key: ten.testKey, body: { payment_token: 'tok_sim_ok' }, headers: idem() });
    t.equal(pm.body.status, 'pending');
    methods.push(pm.body.id);
  }
  t.ok((await flushPrefix(a.app.deps.redis, a.config.redisPrefix)) > 0, 'Redis flushed: the jobs are gone');

  // Workers come back, and are killed mid-run twice.
  for (let round = 0; round < 2; round++) {
    w = await startWorker();
    await sleep(300 + round * 400);
    w.kill('SIGKILL');
    kills++;
  }
  w = await startWorker();
  await until('every refund settled and every card active', async () => {
    const [r] = await sql`select count(*)::int as n from refunds where id in ${sql(refundIds)} and status = 'requested'`;
    const [m] = await sql`select count(*)::int as n from payment_methods where id in ${sql(methods)} and status <> 'active'`;
    return r.n === 0 && m.n === 0;
  });
  const refunds = await sql`select id, status, attempt_id, amount_minor from refunds where id in ${sql(refundIds)}`;
  const calls = await sql`select idempotency_key from sim_provider_calls where kind = 'refund' and idempotency_key in ${sql(refundIds.map((id) => `orq_ref_${id}`))}`;
  t.equal(calls.length, refundIds.length, 'the provider saw every refund, each under its own key (a repeat is absorbed by the key)');
  const succeeded = refunds.filter((r) => r.status === 'succeeded');
  t.equal(refunds.filter((r) => r.status === 'failed').length, N / 3, 'the sim declined the cents-98 refunds');
  const entries = await sql`select ref_id, count(*)::int as n from journal_entries where kind = 'refund.succeeded' and ref_id in ${sql(refundIds)} group by 1`;
  t.equal(entries.length, succeeded.length, 'one ledger entry per succeeded refund');
  t.ok(entries.every((e) => e.n === 1), 'never two');
  const evs = await sql`select entity_id, count(*)::int as n from outbox_events where entity_id in ${sql(refundIds)} group by 1`;
  t.ok(evs.length === refundIds.length && evs.every((e) => e.n === 1), 'one event per refund');
  // The attempts follow their refunds (the payment intent actor's job after each refund's commit).
  await until('attempt statuses follow their refunds', async () => {
    const rows = await sql`select id, status from attempts where payment_intent_id in ${sql(intents)}`;
    return rows.every((at) => {
      const done = succeeded.filter((r) => r.attempt_id === at.id).reduce((s, r) => s + Number(r.amount_minor), 0);
      const amount = Number(attempts.find((x) => x.id === at.id)!.amount_minor);
      return at.status === (done === 0 ? 'captured' : done >= amount ? 'refunded' : 'partially_refunded');
    });
  });
  const saves = await sql`select idempotency_key from sim_provider_calls where kind = 'save' and idempotency_key in ${sql(methods.map((id) => `orq_pm_${id}`))}`;
  t.equal(saves.length, methods.length, 'each card saved once at the provider');
  t.comment(`refunds=${refundIds.length}, saved cards=${methods.length}, kills=${kills}, flushes=1, lost=0`);
});
