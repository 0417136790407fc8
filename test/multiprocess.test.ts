// Several processes on loopback: 2 API (ROLE=api) and 2 worker (ROLE=worker) processes share
// Postgres and Redis. Confirms are spread over both APIs while one worker is killed and restarted;
// every intent ends terminal exactly once (one attempt, one terminal event), and the workers'
// own /metrics show the jobs they ran.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { createSql } from '../kernel/db.js';
import { freePort, httpCall, serviceProcesses, testConfig, waitReady } from './helpers/app.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
t.test('2 API + 2 worker processes, a worker killed mid-run: every intent terminal exactly once', async (t) => {
  const base = testConfig();
  const prefix = `orq_test_mp_${randomBytes(3).toString('hex')}`;
  const adminKey = `adm_mp_${randomBytes(12).toString('hex')}`;
  const procs = serviceProcesses({
    REDIS_PREFIX: prefix,
    ADMIN_KEY: adminKey,
    DATABASE_URL: base.databaseUrl,
    REDIS_URL: base.redisUrl,
    RATE_LIMIT_V1_PER_MIN: '1000000',
    JOB_LOCK_MS: '3000',
    ENTITY_LOCK_MS: '4000',
    RECONCILE_INTERVAL_MS: '500',
    SWEEP_INTERVAL_MS: '300',
  });
  const start = (extra: Record<string, string>) => procs.start(extra);
  const sql = createSql(base.databaseUrl, 2);
  t.teardown(async () => {
    procs.killAll();
    await sql.end();
  });

  const [api1, api2, w1m, w2m] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  start({ ROLE: 'api', PORT: String(api1) });
  await waitReady(`http://127.0.0.1:${api1}`); // the first one migrates
  start({ ROLE: 'api', PORT: String(api2) });
  let w1 = start({ ROLE: 'worker', METRICS_PORT: String(w1m) });
  start({ ROLE: 'worker', METRICS_PORT: String(w2m) });
  await Promise.all([waitReady(`http://127.0.0.1:${api2}`), waitReady(`http://127.0.0.1:${w1m}`), waitReady(`http://127.0.0.1:${w2m}`)]);

  const apis = [`http://127.0.0.1:${api1}`, `http://127.0.0.1:${api2}`];
  const tenant = await httpCall(`${apis[0]}/admin/tenants`, 'POST', { 'x-admin-key': adminKey, 'content-type': 'application/json' }, JSON.stringify({ name: 'mp' }));
  t.equal(tenant.status, 201);
  const key = JSON.parse(tenant.text).api_keys.find((k: { livemode: boolean }) => !k.livemode).key as string;
  const post = (api: string, path: string, body: object) =>
    httpCall(`${api}${path}`, 'POST', { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() }, JSON.stringify(body));

  const N = 240;
  const ids: string[] = [];
  let killedAt = -1;
  const tokens = ['tok_sim_ok', 'tok_sim_slow', 'tok_sim_insufficient', 'tok_sim_ok'];
  for (let batch = 0; batch < N / 12; batch++) {
    await Promise.all(
      Array.from({ length: 12 }, async (_, j) => {
        const i = batch * 12 + j;
        const api = apis[i % 2]; // spread over both APIs
        const pi = JSON.parse((await post(api, '/v1/payment_intents', { amount_minor: 2000 + i, currency: 'MXN' })).text);
        ids.push(pi.id);
        const c = await post(apis[(i + 1) % 2], `/v1/payment_intents/${pi.id}/confirm`, { payment_token: tokens[i % tokens.length], payment_method: 'card' });
        if (c.status !== 200) t.fail(`confirm ${c.status} ${c.text}`);
      }),
    );
    if (batch === 8) {
      w1.kill('SIGKILL');
      killedAt = ids.length;
      await sleep(300);
      w1 = start({ ROLE: 'worker', METRICS_PORT: String(w1m) });
    }
  }
  t.ok(killedAt > 0, `a worker was killed after ${killedAt} confirms and restarted`);

  const deadline = Date.now() + 60_000;
  let open = -1;
  while (Date.now() < deadline) {
    const [r] = await sql`select count(*)::int as n from payment_intents where id in ${sql(ids)} and status not in ('succeeded', 'failed')`;
    open = r.n;
    if (open === 0) break;
    await sleep(300);
  }
  t.equal(open, 0, `all ${N} intents terminal`);
  const attempts = await sql`select payment_intent_id from attempts where payment_intent_id in ${sql(ids)} group by 1 having count(*) <> 1`;
  t.same(attempts, [], 'exactly one attempt each');
  const events = await sql`select entity_id, count(*)::int as n from outbox_events where entity_id in ${sql(ids)} group by 1`;
  t.equal(events.length, N, 'one event stream per intent');
  t.ok(events.every((e) => e.n === 1), 'exactly one terminal event each');
  const charged = await sql`
    select count(*)::int as n from sim_provider_calls s join attempts a on a.provider_key = s.idempotency_key
     where a.payment_intent_id in ${sql(ids)} and s.charges > 1`;
  t.equal(charged[0].n, 0, 'nothing charged twice');

  const m1 = await httpCall(`http://127.0.0.1:${w2m}/metrics`, 'GET', {});
  t.match(m1.text, /orquesta_job_duration_seconds_count\{queue="pi",name="attempt.execute",result="ok"\} \d+/, "the surviving worker's metrics show its jobs");
  const apiMetrics = await httpCall(`${apis[0]}/metrics`, 'GET', {});
  t.match(apiMetrics.text, /orquesta_queue_depth\{queue="\{pi-0\}",state="waiting"\} \d+/, 'queue depth per queue');
  t.match(apiMetrics.text, /orquesta_outbox_lag_seconds -?\d/, 'outbox lag');
  t.match(apiMetrics.text, /orquesta_ledger_pending_entries \d/, 'ledger entries not summarized yet');
  t.match(apiMetrics.text, /orquesta_http_requests_total\{method="POST",route="\/v1\/payment_intents\/\{id\}\/confirm",status="200"\} \d+/, 'requests by route and status');

  // Leave Redis clean.
  const { Redis } = await import('ioredis');
  const r = new Redis(base.redisUrl);
  let cursor = '0';
  do {
    const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await r.del(...keys);
  } while (cursor !== '0');
  r.disconnect();
});
