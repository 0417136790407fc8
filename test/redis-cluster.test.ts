// Orquesta on a Redis Cluster (three local masters that `npm test` starts when absent; REDIS_CLUSTER_NODES
// switches). A workload that touches every kind of key Orquesta keeps in Redis (queues and job
// schedulers, entity locks, idempotency markers, rate limits, key revocations, worker heartbeats,
// relay and webhook wake-ups) runs on the cluster; afterwards the test walks every key of the
// deployment's prefix on every master: each key must match a known pattern, and the keys a single
// command or script touches together must share one hash slot (no CROSSSLOT possible). The crash
// tests (crash.test.ts, webhook-crash.test.ts) run on both deployments too.
import t from 'tap';
import { isCluster } from '../kernel/redis.js';
import { redisModes, scanPrefix, startTestApp, until, uuid } from './helpers/app.js';
import { startReceiver } from './helpers/receiver.js';

const cluster = redisModes.find((m) => m.name === 'Redis Cluster')!;

/** Key patterns (after the prefix) and the group whose keys must share a slot; null: a key alone. */
const PATTERNS: Array<{ re: RegExp; group: (m: RegExpExecArray) => string | null; what: string }> = [
  { re: /^\{rl\}:/, group: () => 'rate limiter and revoked keys', what: 'rate-limit counters and the revoked-keys set (one script)' },
  { re: /^lock:/, group: () => null, what: 'entity locks' },
  { re: /^idem:/, group: () => null, what: 'idempotency in-progress markers' },
  { re: /^workers$/, group: () => null, what: 'worker heartbeats' },
  { re: /^jobhist:/, group: () => null, what: 'job history per entity (one MULTI per key)' },
  { re: /^(\{[a-z_-]+-\d+\}):/, group: (m) => `queue ${m[1]}`, what: 'BullMQ queues, their jobs and job schedulers' },
];

// Service processes boot here: more than tap's default 120 s on a loaded machine.
t.setTimeout(300_000);

t.test('on a Redis Cluster: every key pattern known, every multi-key group in one slot, the money path and webhooks work', async (t) => {
  const rx = await startReceiver();
  const a = await startTestApp({ ...cluster.env, ROLE: 'all', WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1', RATE_LIMIT_V1_PER_MIN: '100000', SWEEP_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500' });
  t.teardown(async () => {
    await a.stop();
    await rx.close();
  });
  const redis = a.app.deps.redis;
  t.ok(isCluster(redis), 'the app runs on the Cluster client');

  const ten = await a.newTenant();
  const ep = await a.call('POST', '/v1/webhook_endpoints', { key: ten.testKey, body: { url: `${rx.url}/hook` } });
  t.equal(ep.status, 201, 'webhook endpoint');

  // Card payments, with Idempotency-Keys (markers), locks, queues and the relay.
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const c = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, headers: { 'idempotency-key': uuid() }, body: { amount_minor: 10000 + i, currency: 'MXN' } });
    t.equal(c.status, 201, 'created');
    const k = uuid();
    const body = { payment_token: 'tok_sim_ok', payment_method: 'card' };
    const f = await a.call('POST', `/v1/payment_intents/${c.body.id}/confirm`, { key: ten.testKey, headers: { 'idempotency-key': k }, body });
    t.equal(f.status, 200, 'confirmed');
    const again = await a.call('POST', `/v1/payment_intents/${c.body.id}/confirm`, { key: ten.testKey, headers: { 'idempotency-key': k }, body });
    t.equal(again.status, 200, 'the replay answers the same');
    ids.push(c.body.id);
  }
  for (const id of ids) await until(() => a.call('GET', `/v1/payment_intents/${id}`, { key: ten.testKey }), (r) => r.body?.status === 'succeeded', 30_000);
  t.pass('every card payment succeeded');

  // A SPEI payment paid by the operator's simulation (push path, timers), and a refund (refund queue).
  const spei = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, headers: { 'idempotency-key': uuid() }, body: { amount_minor: 250000, currency: 'MXN' } });
  await a.call('POST', `/v1/payment_intents/${spei.body.id}/confirm`, { key: ten.testKey, headers: { 'idempotency-key': uuid() }, body: { payment_token: '-', payment_method: 'spei' } });
  const att = await until(() => a.call('GET', `/v1/payment_intents/${spei.body.id}?expand=attempts`, { key: ten.testKey }), (r) => r.body?.status === 'requires_action', 30_000);
  const sim = await a.admin('POST', `/admin/tenants/${ten.id}/simulate-inbound`, { provider_ref: att.body.attempts[0].provider_ref });
  t.equal(sim.status, 200, 'simulated transfer');
  await until(() => a.call('GET', `/v1/payment_intents/${spei.body.id}`, { key: ten.testKey }), (r) => r.body?.status === 'succeeded', 30_000);
  const card = await a.call('GET', `/v1/payment_intents/${ids[0]}?expand=attempts`, { key: ten.testKey });
  const refund = await a.call('POST', '/v1/refunds', { key: ten.testKey, headers: { 'idempotency-key': uuid() }, body: { attempt_id: card.body.attempts[0].id, amount_minor: 500, reason: 'requested_by_customer' } });
  t.ok([200, 201].includes(refund.status), `refund accepted (${refund.status})`);
  await until(() => a.call('GET', `/v1/refunds/${refund.body.id}`, { key: ten.testKey }), (r) => r.body?.status === 'succeeded', 30_000);

  // A key revoked: the revocation set (shared slot with the counters) and the pub/sub notice.
  const k2 = await a.admin('POST', `/admin/tenants/${ten.id}/api_keys`, { livemode: false, scopes: ['payments:read'] });
  t.equal((await a.call('GET', '/v1/payment_intents', { key: k2.body.key })).status, 200, 'the narrow key works');
  await a.admin('DELETE', `/admin/tenants/${ten.id}/api_keys/${k2.body.id}`);
  await until(() => a.call('GET', '/v1/payment_intents', { key: k2.body.key }), (r) => r.status === 401, 10_000);
  t.pass('revoked on the cluster');

  // Webhooks: every succeeded payment's event reached the receiver (relay wake-ups over the cluster's pub/sub).
  const got = await rx.waitFor((r) => ids.every((id) => r.some((x) => x.json?.data?.id === id && x.json?.event_type === 'payment_intent.succeeded')), 30_000);
  t.ok(got.length >= ids.length, `webhooks delivered (${got.length})`);

  // The walk: every key on every master.
  const prefix = a.config.redisPrefix;
  const keys = await scanPrefix(redis, prefix);
  t.ok(keys.length > 0, `${keys.length} keys on the cluster`);
  const unknown: string[] = [];
  const groups = new Map<string, Set<number>>();
  const seen = new Set<string>();
  const masters = isCluster(redis) ? redis.nodes('master') : [];
  for (const key of keys) {
    const rest = key.slice(prefix.length + 1);
    const p = PATTERNS.find((x) => x.re.test(rest));
    if (!p) {
      unknown.push(key);
      continue;
    }
    seen.add(p.what);
    const g = p.group(p.re.exec(rest)!);
    if (!g) continue;
    const slot = Number(await masters[0].cluster('KEYSLOT', key));
    if (!groups.has(g)) groups.set(g, new Set());
    groups.get(g)!.add(slot);
  }
  t.same(unknown, [], 'no key outside the known patterns (a new pattern must say which keys it is used with)');
  for (const [g, slots] of groups) t.equal(slots.size, 1, `${g}: one hash slot`);
  // Entity locks and idempotency markers are released when their step ends, so the walk after the
  // workload finds none: their patterns are single keys (no group), checked when present, not required.
  for (const what of ['rate-limit counters and the revoked-keys set (one script)', 'worker heartbeats', 'BullMQ queues, their jobs and job schedulers']) {
    t.ok(seen.has(what), `the workload wrote ${what}`);
  }
  t.ok([...groups.keys()].filter((g) => g.startsWith('queue ')).length >= 3, 'several queues walked');
  // Keys land on more than one master: the cluster is really used.
  const perNode = await Promise.all(masters.map(async (m) => (await m.keys(`${prefix}:*`)).length));
  t.ok(perNode.filter((n) => n > 0).length >= 2, `keys on ${perNode.filter((n) => n > 0).length} of ${masters.length} masters (${perNode.join('/')})`);
});
