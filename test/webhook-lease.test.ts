// Deliveries are claimed from Postgres with a lease (actors/webhook-delivery.ts): a slow receiver
// never gets a second concurrent copy from another worker while the holder renews its lease, and a
// test-clock advance in an API process wakes the workers (Redis pub/sub) so due retries go out.
import t from 'tap';
import { Redis } from 'ioredis';
import { startReceiver } from './helpers/receiver.js';
import { startTestApp } from './helpers/app.js';
import { WebhookDelivery } from '../actors/webhook-delivery.js';
import { createLogger } from '../kernel/log.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('a slow receiver gets one copy: the lease is renewed while the POST is in flight', async (t) => {
  const rx = await startReceiver();
  // Longer than twice the 3 s lease below, shorter than the delivery window. Both apps and the test
  // share one event loop: a renewal (every third of the lease) delayed past the lease by a stall of
  // the loaded machine lets `b` claim a second copy. With a 1.5 s lease a 1 s stall was enough (a
  // full run saw two copies); 3 s leaves 2 s.
  rx.delayMs = 7000;
  const knobs = { JOB_LOCK_MS: '3000', WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1' };
  // `a` relays (and so leases the delivery to itself); `b` only looks every 100 ms for deliveries
  // whose lease lapsed, and would send a second copy if `a` stopped renewing.
  const a = await startTestApp({ ROLE: 'all', RELAY_INTERVAL_MS: '50', SWEEP_INTERVAL_MS: '3600000', ...knobs });
  const b = await startTestApp({ ROLE: 'all', RELAY_INTERVAL_MS: '3600000', SWEEP_INTERVAL_MS: '100', ...knobs });
  t.teardown(async () => {
    await a.stop();
    await b.stop();
    await rx.close();
  });
  const ten = await a.newTenant();
  const ep = await a.call('POST', '/v1/webhook_endpoints', { key: ten.testKey, body: { url: `${rx.url}/slow` } });
  t.equal(ep.status, 201);
  const sql = a.app.deps.sql;
  await sql`insert into outbox_events (event_id, tenant_id, livemode, event_type, entity_id, data)
            values (${crypto.randomUUID()}, ${ten.id}, false, 'payment_intent.succeeded', ${crypto.randomUUID()}, ${sql.json({ metadata: null })})`;
  await rx.waitFor((r) => r.some((x) => x.path === '/slow'));
  const end = Date.now() + 20_000;
  let status = 'pending';
  while (status === 'pending' && Date.now() < end) {
    const [d] = await sql`select status from webhook_deliveries where endpoint_id = ${ep.body.id}`;
    status = d.status;
    if (status === 'pending') await sleep(100);
  }
  t.equal(status, 'succeeded', 'delivered once the slow answer came');
  t.equal(rx.received.filter((x) => x.path === '/slow').length, 1, 'one request, though the POST outlived the lease twice');
});

t.test('a clock advance in an API process wakes the workers; the due retry goes out', async (t) => {
  const rx = await startReceiver();
  rx.script('/retry', [500], 200);
  const api = await startTestApp({ ROLE: 'api', WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1' });
  // The worker's own sweep is an hour apart: only a wake-up makes it look again soon.
  const worker = await startTestApp({ ROLE: 'worker', REDIS_PREFIX: api.config.redisPrefix, SWEEP_INTERVAL_MS: '3600000', RELAY_INTERVAL_MS: '50', WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1' });
  const sub = new Redis(api.config.redisUrl);
  const wakes: string[] = [];
  await sub.subscribe(`${api.config.redisPrefix}:wh:wake`);
  sub.on('message', (_c, m) => wakes.push(m));
  t.teardown(async () => {
    sub.disconnect();
    await worker.stop();
    await api.stop();
    await rx.close();
  });
  const ten = await api.newTenant();
  t.equal((await api.call('POST', '/v1/webhook_endpoints', { key: ten.testKey, body: { url: `${rx.url}/retry` } })).status, 201);
  const sql = api.app.deps.sql;
  const eventId = crypto.randomUUID();
  await sql`insert into outbox_events (event_id, tenant_id, livemode, event_type, entity_id, data)
            values (${eventId}, ${ten.id}, false, 'payment_intent.succeeded', ${crypto.randomUUID()}, ${sql.json({ metadata: null })})`;
  await rx.waitFor((r) => r.filter((x) => x.path === '/retry').length === 1);
  await sleep(500);
  t.equal(rx.received.filter((x) => x.path === '/retry').length, 1, 'no retry before the wait');
  const adv = await api.call('POST', '/v1/test/clock/advance', { key: ten.testKey, body: { seconds: 60 } });
  t.equal(adv.status, 200);
  const got = await rx.waitFor((r) => r.filter((x) => x.path === '/retry').length === 2);
  t.same(got.filter((x) => x.path === '/retry').map((x) => x.json.event_id), [eventId, eventId], 'the same event_id');
  t.same(wakes, [ten.id], 'the API process published one wake-up, naming the tenant');
});

t.test('relay backpressure: a full dispatcher takes no new events; they wait in the outbox and none is lost', async (t) => {
  const rx = await startReceiver();
  // ROLE=api: no worker of this app relays. The test database is shared with other test files,
  // whose workers relay any tenant's events, so the paused dispatcher is made deterministic: with a
  // fill of 0 it is always at its pause threshold (half the fill).
  const a = await startTestApp({ ROLE: 'api', WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1' });
  const deps = { sql: a.app.deps.sql, redis: a.app.deps.redis, config: a.config, log: createLogger('silent') };
  const full = new WebhookDelivery({ ...deps, maxHeld: 0 });
  const normal = new WebhookDelivery(deps);
  t.teardown(async () => {
    await full.stop();
    await normal.stop();
    await a.stop();
    await rx.close();
  });
  await full.start('backpressure-full');
  const ten = await a.newTenant();
  const ep = await a.call('POST', '/v1/webhook_endpoints', { key: ten.testKey, body: { url: `${rx.url}/bp` } });
  t.equal(ep.status, 201);
  const sql = a.app.deps.sql;
  const want: string[] = [];
  for (let i = 0; i < 5; i++) {
    const id = crypto.randomUUID();
    want.push(id);
    await sql`insert into outbox_events (event_id, tenant_id, livemode, event_type, entity_id, data)
              values (${id}, ${ten.id}, false, 'payment_intent.succeeded', ${crypto.randomUUID()}, ${sql.json({ metadata: null })})`;
  }
  t.equal(await full.relayOnce(100), 0, 'a dispatcher at its fill relays nothing: the events wait, committed, in the outbox');
  // A dispatcher with room (here a second one; in production the same one once it drains) takes them.
  await normal.start('backpressure-normal');
  const got = () => new Set(rx.received.filter((x) => x.path === '/bp').map((x) => (x.json as { event_id: string }).event_id));
  const end = Date.now() + 20_000;
  while (Date.now() < end && want.some((id) => !got().has(id))) {
    await normal.relayOnce(100);
    await sleep(100);
  }
  t.same(want.filter((id) => !got().has(id)), [], 'every waiting event is delivered later, none lost');
});
