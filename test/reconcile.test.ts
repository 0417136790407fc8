// Postgres is the source of truth: when Redis loses everything (queues, delayed jobs), the
// reconciler re-enqueues pending attempts, refunds and saved-card activations, and the sweeper
// fires due timers, from Postgres.
import t from 'tap';
import { startApp } from '../ops/app.js';
import { createLogger } from '../kernel/log.js';
import { startTestApp, flushPrefix } from './helpers/app.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


t.test('a flushed Redis mid-run: pending attempts, due timers, requested refunds and pending saved cards are rebuilt from Postgres', async (t) => {
  const knobs = { RECONCILE_INTERVAL_MS: '300', SWEEP_INTERVAL_MS: '200', RATE_LIMIT_V1_PER_MIN: '100000' };
  const a = await startTestApp({ ROLE: 'api', ...knobs });
  t.teardown(() => a.stop());
  const ten = await a.newTenant();
  const sql = a.app.deps.sql;
  const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
  const mk = async (token: string, method = 'card') => {
    const pi = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 2500, currency: 'MXN' }, headers: idem() });
    const c = await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key: ten.testKey, body: { payment_token: token, payment_method: method }, headers: idem() });
    t.equal(c.status, 200);
    return pi.body.id as string;
  };

  // A push payment waiting for its payer, with its expiry timer, handled by a first worker.
  let worker = await startApp({ ...a.config, role: 'worker' }, createLogger('silent'));
  const spei = await mk('x', 'spei');
  for (let i = 0; i < 100 && (await sql`select status from payment_intents where id = ${spei}`)[0].status !== 'requires_action'; i++) await sleep(50);
  // A paid intent, to refund while no worker runs.
  const paid = await mk('tok_sim_ok');
  for (let i = 0; i < 100 && (await sql`select status from payment_intents where id = ${paid}`)[0].status !== 'succeeded'; i++) await sleep(50);
  const [paidAttempt] = await sql`select id from attempts where payment_intent_id = ${paid}`;
  await worker.stop();

  // No worker runs: a refund and a saved card wait for their provider calls, queued in Redis only.
  const rf = await a.call('POST', '/v1/refunds', { key: ten.testKey, body: { attempt_id: paidAttempt.id }, headers: idem() });
  t.same([rf.status, rf.body.status], [201, 'requested']);
  const cust = await a.call('POST', '/v1/customers', { key: ten.testKey, body: {} });
  const pm = await a.call('POST', `/v1/customers/${cust.body.id}/payment_methods`, { key: ten.testKey, body: { payment_token: 'tok_sim_ok' }, headers: idem() });
  t.same([pm.status, pm.body.status], [201, 'pending']);

  // No worker runs: confirms queue their provider calls in Redis only.
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) ids.push(await mk(i % 2 ? 'tok_sim_ok' : 'tok_sim_insufficient'));
  // The tenant's clock passes the SPEI expiry: the due timer's job goes to Redis too.
  const adv = await a.call('POST', '/v1/test/clock/advance', { key: ten.testKey, body: { seconds: 25 * 3600 } });
  t.equal(adv.status, 200);

  const lost = await flushPrefix(a.app.deps.redis, a.config.redisPrefix);
  t.ok(lost > 0, `Redis lost ${lost} keys (queues, jobs, delayed timers)`);
  const pending = await sql`select count(*)::int as n from attempts where payment_intent_id in ${sql(ids)} and status = 'pending'`;
  t.equal(pending[0].n, ids.length, 'Postgres still knows every pending attempt');

  worker = await startApp({ ...a.config, role: 'worker' }, createLogger('silent'));
  t.teardown(() => worker.stop());
  const deadline = Date.now() + 30_000;
  let open = -1;
  while (Date.now() < deadline) {
    const [r] = await sql`select count(*)::int as n from payment_intents where id in ${sql(ids.concat(spei))} and status not in ('succeeded', 'failed', 'expired')`;
    open = r.n;
    if (open === 0) break;
    await sleep(200);
  }
  t.equal(open, 0, 'the reconciler re-enqueued every pending attempt and the sweeper fired the due timer');
  const [s] = await sql`select status from payment_intents where id = ${spei}`;
  t.equal(s.status, 'expired');
  const evs = await sql`select event_type from outbox_events where entity_id = ${spei} order by id`;
  t.same(evs.map((e) => e.event_type), ['payment_intent.requires_action', 'payment_intent.expired']);
  const dup = await sql`select entity_id from outbox_events where entity_id in ${sql(ids)} group by entity_id having count(*) <> 1`;
  t.equal(dup.length, 0, 'one terminal event each');

  // The refund and the saved card were rebuilt from Postgres too.
  let refund = 'requested';
  let method = 'pending';
  while (Date.now() < deadline && (refund === 'requested' || method === 'pending')) {
    refund = (await sql`select status from refunds where id = ${rf.body.id}`)[0].status as string;
    method = (await sql`select status from payment_methods where id = ${pm.body.id}`)[0].status as string;
    if (refund === 'requested' || method === 'pending') await sleep(200);
  }
  t.equal(refund, 'succeeded', 'the reconciler re-enqueued the requested refund');
  t.equal(method, 'active', 'the reconciler re-enqueued the pending saved-card activation');
  const calls = await sql`select kind, calls, charges from sim_provider_calls where tenant_id = ${ten.id} and kind in ('refund', 'save')`;
  t.equal(calls.length, 2, 'one provider call each for the refund and the save');
});
