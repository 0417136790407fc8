// Crash safety of the money path: intents are confirmed while worker processes are killed with
// SIGKILL mid-run, several times. Afterwards every intent is terminal, no attempt was charged
// twice at the sim provider (its own book of calls by key), and no outbox event is lost or
// duplicated.
import type { Test } from 'tap';
import { serviceProcesses, sharedWith, startTestApp, waitForWorker } from './app.js';
import { ownDatabase } from './db.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** SIGKILL of workers mid-run loses nothing and charges nothing twice (crash tests run it on a single Redis and on a Redis Cluster). */
export async function workersKilledMidRun(t: Test, redisEnv: Record<string, string>): Promise<void> {
  const fast = { JOB_LOCK_MS: '3000', ENTITY_LOCK_MS: '4000', RECONCILE_INTERVAL_MS: '500', SWEEP_INTERVAL_MS: '300' };
  const dbUrl = ownDatabase(t, 'orq_crash'); // its own processes' work only (test/helpers/db.ts)
  const a = await startTestApp({ DATABASE_URL: dbUrl, ...redisEnv, ROLE: 'api', RATE_LIMIT_V1_PER_MIN: '100000', ...fast });
  const workers = serviceProcesses({ ...fast, ...sharedWith(a), ROLE: 'worker', WORKER_CONCURRENCY: '8' });
  t.teardown(async () => {
    workers.killAll();
    await a.stop();
  });
  const startWorker = async () => {
    const w = workers.start();
    await waitForWorker(a.app.deps.redis, a.config.redisPrefix, w); // booted: its queue workers exist
    return w;
  };

  const ten = await a.newTenant();
  const sql = a.app.deps.sql;
  // True once the provider recorded a call whose attempt is still pending: the worker is mid-call.
  const inFlight = async () => {
    for (let i = 0; i < 100; i++) {
      const r = await sql`
        select 1 from sim_provider_calls s join attempts at on at.provider_key = s.idempotency_key
         where at.tenant_id = ${ten.id} and at.status = 'pending' limit 1`;
      if (r.length) return;
      await sleep(30);
    }
  };
  // Tokens that end terminal: slow ones (2 s at the provider) are the likeliest to be cut mid-call.
  const tokens = ['tok_sim_slow', 'tok_sim_ok', 'tok_sim_slow', 'tok_sim_insufficient', 'tok_sim_slow', 'tok_sim_fraud'];
  const N = 48;
  const ids: string[] = [];
  let w = await startWorker();
  const kills = 3;
  let killed = 0;
  for (let i = 0; i < N; i++) {
    const pi = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 1000 + i * 100 + (i % 7 === 0 ? 99 : 0), currency: 'MXN' }, headers: { 'idempotency-key': crypto.randomUUID() } });
    ids.push(pi.body.id);
    const c = await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, {
      key: ten.testKey,
      body: { payment_token: tokens[i % tokens.length], payment_method: 'card' },
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
    t.equal(c.status, 200);
    if (i > 0 && i % 12 === 0 && killed < kills) {
      await inFlight(); // kill while a provider call is under way
      w.kill('SIGKILL');
      killed++;
      w = await startWorker();
    }
  }
  // One more kill while the tail is in flight.
  await inFlight();
  w.kill('SIGKILL');
  killed++;
  w = await startWorker();

  const deadline = Date.now() + 90_000;
  let open = N;
  while (Date.now() < deadline) {
    const [r] = await sql`select count(*)::int as n from payment_intents where id in ${sql(ids)} and status not in ('succeeded', 'failed')`;
    open = r.n;
    if (open === 0) break;
    await sleep(300);
  }
  t.equal(open, 0, `every intent reached a terminal state after ${killed} kills`);

  const attempts = await sql`select payment_intent_id, count(*)::int as n from attempts where payment_intent_id in ${sql(ids)} group by 1`;
  t.equal(attempts.length, N);
  t.ok(attempts.every((r) => r.n === 1), 'one attempt per intent');

  const book = await sql`
    select s.idempotency_key, s.charges, s.calls, s.retrievals, pi.status from sim_provider_calls s
      join attempts at on at.provider_key = s.idempotency_key join payment_intents pi on pi.id = at.payment_intent_id
     where pi.id in ${sql(ids)}`;
  t.equal(book.length, N, 'the provider saw every attempt');
  t.ok(book.every((b) => b.charges <= 1), 'no attempt charged twice');
  const succeeded = book.filter((b) => b.status === 'succeeded');
  t.ok(succeeded.every((b) => b.charges === 1), 'every success charged exactly once');
  // Attempts whose worker died after the provider recorded the call: settled by asking it (retrieve).
  const settledAfterCrash = book.filter((b) => b.retrievals > 0).length;
  t.ok(settledAfterCrash >= 1, `kills interrupted provider calls: ${settledAfterCrash} attempts were settled by asking the provider`);
  t.comment(`N=${N}, kills=${killed}, attempts settled after a crash=${settledAfterCrash}, succeeded=${succeeded.length}, lost=0, duplicated=0`);

  const evs = await sql`select entity_id, event_type, count(*)::int as n from outbox_events where entity_id in ${sql(ids)} group by 1, 2`;
  t.ok(evs.every((e) => e.n === 1), 'no duplicated event');
  const terminal = await sql`select id, status from payment_intents where id in ${sql(ids)}`;
  for (const p of terminal) {
    const mine = evs.filter((e) => e.entity_id === p.id);
    t.same(mine.map((e) => e.event_type), [`payment_intent.${p.status}`], `${p.id}: its one terminal event`);
  }
  const ledger = await sql`
    select count(*)::int as n from journal_entries where ref_id in (select id from attempts where payment_intent_id in ${sql(ids)})`;
  t.equal(ledger[0].n, succeeded.length, 'one capture entry per success');
}
