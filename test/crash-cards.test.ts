// Crash safety with the real card adapters (issue 28): intents confirmed on Conekta (single-use
// tokens; its fake here ignores createOrder's Idempotency-Key, the worst case of Conekta no longer
// keeping the key, so only the adapter's lookup stands between a resend and a second charge) and
// Openpay (order_id) whose fakes answer after the adapter's deadline *after moving the money*, while worker processes are killed with SIGKILL mid-run.
// Afterwards every intent is terminal, no token and no attempt was charged twice, every success was
// charged exactly once, and no attempt was recorded as a decline because its own token was spent.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { serviceProcesses, sharedWith, startTestApp, waitForWorker } from './helpers/app.js';
import { ownDatabase } from './helpers/db.js';
import { FakeConekta } from './fakes/conekta.js';
import { FakeOpenpay } from './fakes/openpay.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Worker restarts and provider answers after the deadline take longer than the default file timeout.
t.setTimeout(300_000);

t.test('card fakes time out after moving money while workers are killed: 0 double charges', async (t) => {
  const conekta = await new FakeConekta().start();
  conekta.honorsIdempotencyKey = false;
  const openpay = await new FakeOpenpay().start();
  conekta.slowMs = 1500;
  openpay.slowMs = 1500;
  const fast = { JOB_LOCK_MS: '3000', ENTITY_LOCK_MS: '4000', RECONCILE_INTERVAL_MS: '500', SWEEP_INTERVAL_MS: '300' };
  // The same secrets key in the API and the workers: the connectors' credentials are sealed by one and opened by the other.
  const providers = { CONEKTA_API_URL: conekta.url, OPENPAY_SANDBOX_URL: openpay.url, CARD_TIMEOUT_MS: '600', SECRETS_KEY: randomBytes(32).toString('hex') };
  const dbUrl = ownDatabase(t, 'orq_crash_cards'); // its own processes' work only (test/helpers/db.ts)
  const a = await startTestApp({ DATABASE_URL: dbUrl, ROLE: 'api', RATE_LIMIT_V1_PER_MIN: '100000', ...fast, ...providers });
  const workers = serviceProcesses({ ...fast, ...providers, ...sharedWith(a), ROLE: 'worker', WORKER_CONCURRENCY: '8' });
  t.teardown(async () => {
    workers.killAll();
    await a.stop();
    await conekta.stop();
    await openpay.stop();
  });
  const startWorker = async () => {
    const w = workers.start();
    await waitForWorker(a.app.deps.redis, a.config.redisPrefix, w);
    return w;
  };

  const ten = await a.newTenant('Crash cards');
  const put = async (connector: string, body: unknown) => t.equal((await a.call('PUT', `/v1/routing/connectors/${connector}`, { key: ten.testKey, body })).status, 200);
  await put('conekta', { default: true, fees: { card: { bps: 290, fixed_minor: 250 } }, credentials: { private_key: conekta.privateKey, webhook_public_key: conekta.publicKeyPem } });
  await put('openpay', { fees: { card: { bps: 250, fixed_minor: 250 } }, credentials: { merchant_id: openpay.merchantId, private_key: openpay.privateKey } });
  const sql = a.app.deps.sql;

  const N = 12;
  const ids: string[] = [];
  const conektaTokens: string[] = [];
  let w = await startWorker();
  let killed = 0;
  for (let i = 0; i < N; i++) {
    const pi = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 5000 + i * 10, currency: 'MXN' }, headers: { 'idempotency-key': crypto.randomUUID() } });
    ids.push(pi.body.id);
    let token: string;
    if (i % 2 === 0) {
      // Conekta: a single-use token, most of them answered after the deadline (the money moved).
      const tok = conekta.issueToken(i % 6 === 4 ? 'ok' : 'timeout');
      conektaTokens.push(tok);
      token = `conekta:${tok}`;
    } else token = i % 6 === 5 ? 'tok_ok#dsess_crash' : 'tok_timeout#dsess_crash'; // Openpay (the cheaper)
    const c = await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key: ten.testKey, body: { payment_token: token, payment_method: 'card', payer_ip: '203.0.113.9' }, headers: { 'idempotency-key': crypto.randomUUID() } });
    t.equal(c.status, 200, c.text);
    if (i > 0 && i % 6 === 0) {
      await sleep(200); // a provider call is under way (the fakes answer after 1.5 s)
      w.kill('SIGKILL');
      killed++;
      w = await startWorker();
    }
  }
  await sleep(200);
  w.kill('SIGKILL');
  killed++;
  w = await startWorker();

  const deadline = Date.now() + 180_000;
  let open = N;
  while (Date.now() < deadline) {
    const [r] = await sql`select count(*)::int as n from payment_intents where id in ${sql(ids)} and status not in ('succeeded', 'failed')`;
    open = r.n;
    if (open === 0) break;
    await sleep(300);
  }
  t.equal(open, 0, `every intent reached a terminal state after ${killed} kills`);

  const rows = await sql`
    select pi.id, pi.status, at.connector_key, at.provider_key, at.status as attempt_status, at.failure_code
      from payment_intents pi join attempts at on at.payment_intent_id = pi.id where pi.id in ${sql(ids)}`;
  let doubles = 0;
  for (const tok of conektaTokens) if (conekta.paidWithToken(tok) > 1) doubles++;
  for (const r of rows) {
    const moved = r.connector_key === 'conekta' ? conekta.paidFor(r.provider_key) : openpay.completedFor(r.provider_key);
    if (moved > 1) doubles++;
    if (r.attempt_status === 'captured') t.equal(moved, 1, `${r.id}: captured and charged exactly once at ${r.connector_key}`);
  }
  t.equal(doubles, 0, '0 double charges');
  t.same(rows.filter((r) => r.failure_code === 'token_used').map((r) => r.id), [], 'no attempt declined because its own earlier send spent the token');
  const paidIntents = new Set(rows.filter((r) => r.attempt_status === 'captured').map((r) => r.id));
  for (const r of rows) if (r.status === 'succeeded') t.ok(paidIntents.has(r.id), `${r.id}: a success has its captured attempt`);
  t.same(conekta.violations, [], 'every Conekta request and answer matched its published schema');
  t.comment(`N=${N}, kills=${killed}, succeeded=${rows.filter((r) => r.status === 'succeeded').length}, double charges=${doubles}`);
});
