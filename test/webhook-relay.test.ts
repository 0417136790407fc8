// The relay wakes at once after a commit (kernel/outbox.ts wakeRelay) instead of waiting for its
// poll, in the committing process or over Redis in another one, and a burst of wake-ups costs one
// pass; and a failed delivery's next wait counts from the moment its answer came back, on the
// tenant's clock, not from when its batched outcome is written (issue 13 item 7).
//
// The tests that need to know *who* relayed run on a scratch database of their own (created and
// dropped here, as test/migrate.test.ts does): other test files share the test database and their
// workers poll the outbox, so there an event would be relayed whether or not a wake-up worked.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { Redis } from 'ioredis';
import type { RedisClient } from '../kernel/redis.js';
import { createLogger } from '../kernel/log.js';
import { appendEvent, relayWakeChannel, wakeRelay } from '../kernel/outbox.js';
import { RelayLoop } from '../actors/webhooks/relay.js';
import { WebhookDelivery } from '../actors/webhook-delivery.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { serviceProcesses, sharedWith, startTestApp, testConfig, type TestApp } from './helpers/app.js';
import { scratchDatabase } from './helpers/db.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const turn = () => new Promise((r) => setImmediate(r));
const log = createLogger('silent');
const OFF = '3600000'; // an hour: the poll, sweeps and reconciler never run during a test

/** A database of this file's own; dropped at the end (after every app on it has stopped). */
const scratchDb = scratchDatabase('orq_whrelay');
const scratch = scratchDb.url;
t.teardown(() => scratchDb.drop());

/** Messages on a channel, in order; `mark` publishes a sentinel through `via` and waits for it, so every earlier publish on `via` has arrived. */
async function listen(channel: string) {
  const sub = new Redis(testConfig().redisUrl);
  const got: string[] = [];
  let waiting: { text: string; done: () => void } | undefined;
  sub.on('message', (_c, m: string) => {
    got.push(m);
    if (waiting && m === waiting.text) waiting.done();
  });
  await sub.subscribe(channel);
  return {
    got,
    async mark(via: Pick<Redis, "publish"> | Pick<RedisClient, "publish">, text: string) {
      const seen = new Promise<void>((done) => (waiting = { text, done }));
      await turn(); // wakeRelay publishes on the next turn: ours goes after it on the same connection
      await via.publish(channel, text);
      await seen;
    },
    close: () => sub.disconnect(),
  };
}

async function endpoint(a: TestApp, key: string, url: string) {
  const r = await a.call('POST', '/v1/webhook_endpoints', { key, body: { url } });
  if (r.status !== 201) throw new Error(`endpoint: ${r.status} ${r.text}`);
  return r.body as { id: string; secret: string };
}

/** One event committed as the actors write them (appendEvent inside a transaction); returns its event_id. */
async function commitEvent(a: TestApp, tenantId: string): Promise<string> {
  const sql = a.app.deps.sql;
  await sql.begin((tx) => appendEvent(tx, { tenantId, livemode: false, type: 'payment_intent.succeeded', entityId: crypto.randomUUID(), data: { metadata: null } }));
  const [e] = await sql`select event_id from outbox_events where tenant_id = ${tenantId} order by id desc limit 1`;
  return e.event_id as string;
}

t.test('a burst of wake-ups costs one relay pass; those during a pass, one more', async (t) => {
  const redis = new Redis(testConfig().redisUrl);
  const prefix = `orq_test_relaywake_${Math.random().toString(36).slice(2, 8)}`;
  let gate: (() => void) | undefined;
  const calls: number[] = [];
  const loop = new RelayLoop({
    redis,
    prefix,
    log,
    intervalMs: Number(OFF),
    wakeGapMs: 0,
    relayOnce: async (batch) => {
      calls.push(batch);
      if (gate === undefined && calls.length === 1) await new Promise<void>((r) => (gate = r));
      return 0;
    },
  });
  const channel = await listen(relayWakeChannel(prefix));
  t.teardown(async () => {
    await loop.stop();
    channel.close();
    redis.disconnect();
  });
  await loop.start();
  for (let i = 0; i < 100; i++) wakeRelay(redis, prefix); // one turn of commits
  while (!gate) await turn();
  t.equal(loop.passes, 1, 'one pass for 100 wake-ups of one turn');
  for (let i = 0; i < 50; i++) wakeRelay(redis, prefix); // commits while the pass runs
  gate();
  while (calls.length < 2) await turn();
  // Stopped before the sentinel below: the loop's own subscription hears the sentinel too, and a
  // wake-up arriving after the second pass would (rightly) start a third one.
  await loop.stop(); // waits for the pass in progress
  t.equal(loop.passes, 2, 'the wake-ups during the pass cost exactly one more pass');
  await channel.mark(redis, 'sentinel');
  t.same(calls, [100, 100], 'each pass starts with the small first batch');
  t.same(channel.got, ['sentinel'], 'a relay in this process is woken directly: nothing published');
});

t.test('without a relay in this process (or with a paused one), one PUBLISH per turn wakes the others', async (t) => {
  const redis = new Redis(testConfig().redisUrl);
  const prefix = `orq_test_relaypub_${Math.random().toString(36).slice(2, 8)}`;
  const channel = await listen(relayWakeChannel(prefix));
  const paused = new RelayLoop({ redis, prefix, log, intervalMs: Number(OFF), accepting: () => false, relayOnce: async () => 0 });
  t.teardown(async () => {
    await paused.stop();
    channel.close();
    redis.disconnect();
  });
  for (let i = 0; i < 20; i++) wakeRelay(redis, prefix);
  await channel.mark(redis, 'one');
  t.same(channel.got, ['', 'one'], 'twenty calls in one turn: one publish');
  await paused.start();
  wakeRelay(redis, prefix);
  await channel.mark(redis, 'two');
  t.same(channel.got, ['', 'one', '', 'two'], 'a paused relay here leaves the wake-up to the other workers');
  t.equal(paused.passes, 0, 'the paused relay ran no pass (nor for its own wake-up over Redis)');
});

/** Waits until the event is relayed (relayed_at set). */
async function relayed(a: TestApp, eventId: string) {
  const end = Date.now() + 30_000;
  while (Date.now() < end) {
    const [e] = await a.app.deps.sql`select relayed_at from outbox_events where event_id = ${eventId}`;
    if (e?.relayed_at) return;
    await sleep(50);
  }
  throw new Error(`event ${eventId} was not relayed`);
}

t.test('after a commit the relay delivers at once, with its poll an hour away: in process and from another process', async (t) => {
  const rx = await startReceiver();
  const knobs = { DATABASE_URL: scratch, WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1', RELAY_INTERVAL_MS: OFF, SWEEP_INTERVAL_MS: OFF, RECONCILE_INTERVAL_MS: OFF };
  const api = await startTestApp({ ROLE: 'api', ...knobs });
  const workers = serviceProcesses({ ...knobs, ...sharedWith(api), ROLE: 'worker' });
  let all: TestApp | undefined;
  t.teardown(async () => {
    workers.killAll();
    await all?.stop();
    await api.stop();
    await rx.close();
  });
  // A relay runs one pass when it starts (the worker's first tick). A probe committed before it
  // starts is relayed by that pass; once it is, that pass is over, and with the poll an hour
  // away only a wake-up relays anything more.
  const probes = await api.newTenant();
  const probe1 = await commitEvent(api, probes.id);
  all = await startTestApp({ ROLE: 'all', ...knobs });
  await relayed(api, probe1);

  // In process (ROLE=all): the committing process runs the relay.
  const ten = await all.newTenant();
  await endpoint(all, ten.testKey, `${rx.url}/in-process`);
  const channel = await listen(relayWakeChannel(all.config.redisPrefix));
  t.teardown(() => channel.close());
  const e1 = await commitEvent(all, ten.id);
  wakeRelay(all.app.deps.redis, all.config.redisPrefix);
  const got = await rx.waitFor((r) => r.some((x) => x.path === '/in-process'), 20_000);
  t.equal(got.find((x) => x.path === '/in-process')!.json.event_id, e1, 'delivered without waiting for the poll');
  await channel.mark(all.app.deps.redis, 'after');
  t.same(channel.got, ['after'], 'woken in process: nothing published');

  // From an API process to a worker process (Redis pub/sub).
  const ten2 = await api.newTenant();
  await endpoint(api, ten2.testKey, `${rx.url}/cross-process`);
  const probe2 = await commitEvent(api, probes.id);
  const w = workers.start();
  const wakeChannel = relayWakeChannel(api.config.redisPrefix);
  const end = Date.now() + 30_000;
  while (Number(((await api.app.deps.redis.pubsub('NUMSUB', wakeChannel)) as [string, number])[1]) < 1) {
    if (Date.now() > end || w.exitCode !== null) throw new Error('the worker process did not subscribe to the wake-up channel');
    await sleep(50);
  }
  await relayed(api, probe2);
  const e2 = await commitEvent(api, ten2.id);
  wakeRelay(api.app.deps.redis, api.config.redisPrefix);
  const got2 = await rx.waitFor((r) => r.some((x) => x.path === '/cross-process'), 20_000);
  t.equal(got2.find((x) => x.path === '/cross-process')!.json.event_id, e2, 'the worker process relayed it on the wake-up');
});

/** A receiver that holds its answers until told (to place a clock advance while a POST is in flight). */
async function heldReceiver() {
  const requests: Array<{ path: string; answer: (status: number) => void }> = [];
  const server = createServer((req, res: ServerResponse) => {
    req.resume();
    req.on('end', () => requests.push({ path: req.url ?? '/', answer: (status) => res.writeHead(status).end() }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async next(n: number) {
      while (requests.length < n) await sleep(20);
      return requests[n - 1];
    },
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

t.test('the next wait counts from the answer on the tenant clock: an advance right after a failure does not shift it', async (t) => {
  const rx: Receiver = await startReceiver();
  const held = await heldReceiver();
  // An API process (no worker of its own) and this test's dispatcher, whose outcome batches wait
  // until flushed: the test places the clock advance between a failed answer and its batch.
  const a = await startTestApp({ ROLE: 'api', DATABASE_URL: scratch, WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1' });
  const wd = new WebhookDelivery({ sql: a.app.deps.sql, redis: a.app.deps.redis, config: a.config, log, flushMs: Number(OFF) });
  t.teardown(async () => {
    await wd.close();
    await a.stop();
    await rx.close();
    await held.close();
  });
  await wd.start('retry-clock');
  const sql = a.app.deps.sql;
  const tenantClock = async (ten: { testKey: string }) => Date.parse((await a.call('GET', '/v1/test/clock', { key: ten.testKey })).body.now);
  const advance = async (ten: { id: string; testKey: string }, seconds: number) => {
    const r = await a.call('POST', '/v1/test/clock/advance', { key: ten.testKey, body: { seconds } });
    t.equal(r.status, 200);
  };
  const delivery = async (endpointId: string) => {
    const [d] = await sql`
      select d.attempts, d.status, (extract(epoch from d.next_attempt_at) * 1000)::float8 as next_ms,
             d.next_attempt_at <= now() + make_interval(secs => coalesce(c.offset_ms, 0) / 1000.0) as due
        from webhook_deliveries d left join test_clocks c on c.tenant_id = d.tenant_id
       where d.endpoint_id = ${endpointId}`;
    return d as { attempts: number; status: string; next_ms: number; due: boolean };
  };

  // 1. The answer (500) comes back; the clock moves 60 s; only then is the batch written.
  const ten = await a.newTenant();
  rx.script('/after', [500], 200);
  const ep = await endpoint(a, ten.testKey, `${rx.url}/after`);
  const eventId = await commitEvent(a, ten.id);
  t.equal(await wd.relayOnce(100), 1, 'relayed by this dispatcher');
  await rx.waitFor((r) => r.some((x) => x.path === '/after'));
  await wd.idle(); // the 500 is back: its outcome waits in memory
  await advance(ten, 60);
  await wd.flush();
  const d = await delivery(ep.id);
  t.equal(d.attempts, 1);
  t.equal(d.due, true, '60 s of tenant clock after the failed answer, the retry is due');
  await wd.sweepOnce();
  const again = await rx.waitFor((r) => r.filter((x) => x.path === '/after').length === 2);
  t.same(again.filter((x) => x.path === '/after').map((x) => x.json.event_id), [eventId, eventId], 'the retry went out, same event_id');

  // 2. The clock moves while the POST is in flight: the answer comes back on the new clock, and the wait counts from there.
  const ten2 = await a.newTenant();
  const ep2 = await endpoint(a, ten2.testKey, `${held.url}/during`);
  await commitEvent(a, ten2.id);
  t.equal(await wd.relayOnce(100), 1);
  const req = await held.next(1);
  await advance(ten2, 60); // the API process publishes the wake-up; the sweep below has taken the new clock when it resolves
  await wd.sweepOnce({ tenantId: ten2.id });
  const before = await tenantClock(ten2);
  req.answer(503);
  await wd.idle();
  await wd.flush();
  const d2 = await delivery(ep2.id);
  t.equal(d2.attempts, 1);
  t.ok(d2.next_ms >= before + 60_000, 'due 1 min after the answer on the advanced clock');
  t.equal(d2.due, false, 'not due yet: the advance came before the answer');
  await advance(ten2, 60);
  t.equal((await delivery(ep2.id)).due, true, 'due after another minute of tenant clock');
});

t.test('deliveries: one row per matching endpoint and none for the internal sink; an account without endpoints has its events relayed with no insert (issue 26)', async (t) => {
  const rx: Receiver = await startReceiver();
  const a = await startTestApp({ ROLE: 'api', DATABASE_URL: scratch, WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1' });
  const wd = new WebhookDelivery({ sql: a.app.deps.sql, redis: a.app.deps.redis, config: a.config, log, flushMs: 20 });
  t.teardown(async () => {
    await wd.close();
    await a.stop();
    await rx.close();
  });
  await wd.start('deliveries');
  const sql = a.app.deps.sql;
  const rows = (tenantId: string) => sql`select endpoint_key, endpoint_id, status from webhook_deliveries where tenant_id = ${tenantId} order by id`;
  const relayed = async (eventId: string) => (await sql`select relayed_at from outbox_events where event_id = ${eventId}`)[0].relayed_at as Date | null;

  const lone = await a.newTenant();
  const e1 = await commitEvent(a, lone.id);
  t.equal(await wd.relayOnce(100), 1, 'relayed');
  t.ok(await relayed(e1), 'marked relayed');
  t.same(await rows(lone.id), [], 'no delivery row: no endpoint, and the sink has none');

  const ten = await a.newTenant();
  const ep1 = await endpoint(a, ten.testKey, `${rx.url}/one`);
  const ep2 = await endpoint(a, ten.testKey, `${rx.url}/two`);
  const e2 = await commitEvent(a, ten.id);
  t.equal(await wd.relayOnce(100), 1);
  const got = await rows(ten.id);
  t.same(got.map((r) => r.endpoint_id).sort(), [ep1.id, ep2.id].sort(), 'one row per endpoint, nothing else');
  t.ok(got.every((r) => r.endpoint_key === r.endpoint_id), 'keyed by the endpoint');
  await rx.waitFor((r) => r.filter((x) => x.json?.event_id === e2).length === 2, 20_000);
  await wd.idle();
  await wd.flush();
  const ev = await a.call('GET', '/v1/events', { key: ten.testKey });
  t.equal(ev.status, 200);
  const mine = ev.body.data.find((e: { event_id: string }) => e.event_id === e2);
  t.equal(mine?.delivered, true, 'delivered once both endpoints answered 2xx');
});

t.test('per tenant (Citus: FOR UPDATE only in single-shard queries): a wake-up relays its tenant only; the sweep finds every tenant, each in turn', async (t) => {
  const rx: Receiver = await startReceiver();
  const a = await startTestApp({ ROLE: 'api', DATABASE_URL: scratch, WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1' });
  const wd = new WebhookDelivery({ sql: a.app.deps.sql, redis: a.app.deps.redis, config: a.config, log });
  t.teardown(async () => {
    await wd.close();
    await a.stop();
    await rx.close();
  });
  await wd.start('per-tenant');
  const sql = a.app.deps.sql;
  // Whatever earlier tests of this file left unrelayed is relayed first.
  while ((await wd.relayOnce(500)) > 0);
  const big = await a.newTenant();
  const small = await a.newTenant();
  await endpoint(a, big.testKey, `${rx.url}/big`);
  await endpoint(a, small.testKey, `${rx.url}/small`);
  for (let i = 0; i < 30; i++) await commitEvent(a, big.id);
  const smallEvent = await commitEvent(a, small.id);
  const unrelayed = async (tenantId: string) => Number((await sql`select count(*)::int as n from outbox_events where tenant_id = ${tenantId} and relayed_at is null`)[0].n);

  t.equal(await wd.relayOnce(10, small.id), 1, "the wake-up of the small tenant's commit relays its one event");
  t.equal(await unrelayed(big.id), 30, "and none of the other tenant's: its statements name the tenant");
  await rx.waitFor((r) => r.some((x) => x.path === '/small' && x.json.event_id === smallEvent));

  // The big tenant's backlog, relayed by sweeps of 10 events: a third tenant's event committed now
  // is relayed by the next sweep, not after the whole backlog (one share per tenant per round).
  t.equal(await wd.relayOnce(10), 10, 'a sweep relays up to its batch');
  const late = await a.newTenant();
  await endpoint(a, late.testKey, `${rx.url}/late`);
  await commitEvent(a, late.id);
  t.equal(await wd.relayOnce(10), 10, 'the next sweep');
  t.equal(await unrelayed(late.id), 0, "the late tenant's event went out with it, ahead of the big backlog");
  t.ok((await unrelayed(big.id)) > 0, 'while the big tenant still has events waiting');
  while ((await wd.relayOnce(10)) > 0);
  t.equal(await unrelayed(big.id), 0, 'sweeps relay the rest');
  await rx.waitFor((r) => r.filter((x) => x.path === '/big').length === 30);
  t.pass('every event of every tenant delivered');
});
