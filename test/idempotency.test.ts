// spec: Errors > Idempotency. Replays, reuse with another body, in-progress, concurrency.
import t from 'tap';
import { startTestApp } from './helpers/app.js';

t.test('idempotency', async (t) => {
  const a = await startTestApp();
  t.teardown(() => a.stop());
  const ten = await a.newTenant();
  const count = async () => (await a.app.deps.sql`select count(*)::int as n from customers where tenant_id = ${ten.id}`)[0].n as number;

  t.test('same key, same body: replayed with Idempotency-Replayed', async (t) => {
    const key = crypto.randomUUID();
    const first = await a.call('POST', '/v1/customers', { key: ten.testKey, body: { name: 'Ana', metadata: { a: '1', b: '2' } }, headers: { 'idempotency-key': key } });
    t.equal(first.status, 201);
    t.equal(first.headers.get('idempotency-replayed'), null, 'the original is not marked');
    // Same JSON with other key order and spacing is the same request.
    const second = await a.call('POST', '/v1/customers', { key: ten.testKey, raw: '{ "metadata": {"b":"2","a":"1"}, "name": "Ana" }', headers: { 'idempotency-key': key } });
    t.equal(second.status, 201);
    t.equal(second.headers.get('idempotency-replayed'), 'true');
    t.same(second.body, first.body);
    t.not(second.headers.get('x-request-id'), first.headers.get('x-request-id'), 'a fresh request id');
  });

  t.test('same key, other body: 422 idempotency_key_reused', async (t) => {
    const key = crypto.randomUUID();
    await a.call('POST', '/v1/customers', { key: ten.testKey, body: { name: 'One' }, headers: { 'idempotency-key': key } });
    const r = await a.call('POST', '/v1/customers', { key: ten.testKey, body: { name: 'Two' }, headers: { 'idempotency-key': key } });
    t.equal(r.status, 422);
    t.equal(r.body.error.code, 'idempotency_key_reused');
    t.equal(r.body.error.type, 'idempotency_error');
  });

  t.test('a key is scoped to its tenant and mode', async (t) => {
    const other = await a.newTenant();
    const key = crypto.randomUUID();
    const r1 = await a.call('POST', '/v1/customers', { key: ten.testKey, body: { name: 'A' }, headers: { 'idempotency-key': key } });
    const r2 = await a.call('POST', '/v1/customers', { key: other.testKey, body: { name: 'B' }, headers: { 'idempotency-key': key } });
    const r3 = await a.call('POST', '/v1/customers', { key: ten.liveKey, body: { name: 'C' }, headers: { 'idempotency-key': key } });
    t.equal(r1.status, 201);
    t.equal(r2.status, 201);
    t.equal(r3.status, 201);
    t.not(r1.body.id, r2.body.id);
  });

  t.test('a key that is not a UUID', async (t) => {
    const r = await a.call('POST', '/v1/customers', { key: ten.testKey, body: {}, headers: { 'idempotency-key': 'abc' } });
    t.equal(r.status, 400);
    t.equal(r.body.error.code, 'idempotency_key_required');
  });

  t.test('a failed request stores nothing: the retry runs', async (t) => {
    const key = crypto.randomUUID();
    const bad = await a.call('POST', '/v1/customers', { key: ten.testKey, body: { email: 'not-an-email' }, headers: { 'idempotency-key': key } });
    t.equal(bad.status, 400);
    const rows = await a.app.deps.sql`select 1 from idempotency_keys where tenant_id = ${ten.id} and key = ${key}`;
    t.equal(rows.length, 0, 'no record without effect');
    const marker = `${a.config.redisPrefix}:idem:${ten.id}:test:${key}`;
    t.equal(await a.app.deps.redis.exists(marker), 0, 'the failed request deleted its marker: the retry may run at once');
    const good = await a.call('POST', '/v1/customers', { key: ten.testKey, body: { email: 'ana@example.com' }, headers: { 'idempotency-key': key } });
    t.equal(good.status, 201);
  });

  // A request that committed its record leaves the key's Redis marker to expire (one round trip less
  // per request, api/idempotency.ts Begin): a repeat fails the marker, finds the record and replays it,
  // on a lookup-first route and on a lookup-at-commit one.
  t.test('a committed request leaves its marker to expire; repeats still replay', async (t) => {
    for (const [path, body] of [['/v1/customers', { name: 'Kept' }], ['/v1/payment_intents', { amount_minor: 700, currency: 'MXN' }]] as const) {
      const key = crypto.randomUUID();
      const marker = `${a.config.redisPrefix}:idem:${ten.id}:test:${key}`;
      const first = await a.call('POST', path, { key: ten.testKey, body, headers: { 'idempotency-key': key } });
      t.equal(first.status, 201);
      const ttl = await a.app.deps.redis.pttl(marker);
      t.ok(ttl > 0 && ttl <= 60_000, `${path}: the marker stays until it expires (pttl ${ttl})`);
      const again = await a.call('POST', path, { key: ten.testKey, body, headers: { 'idempotency-key': key } });
      t.same([again.status, again.headers.get('idempotency-replayed'), again.text], [201, 'true', first.text], `${path}: replayed`);
      const other = await a.call('POST', path, { key: ten.testKey, body: { ...body, metadata: { x: '1' } }, headers: { 'idempotency-key': key } });
      t.same([other.status, other.body.error?.code], [422, 'idempotency_key_reused'], `${path}: another body is still refused`);
    }
  });

  t.test('the record commits with the effect', async (t) => {
    const key = crypto.randomUUID();
    const r = await a.call('POST', '/v1/customers', { key: ten.testKey, body: { name: 'Tx' }, headers: { 'idempotency-key': key } });
    const rows = await a.app.deps.sql`
      select i.status_code, i.response_body, c.id from idempotency_keys i join customers c on c.id = (i.response_body::jsonb->>'id')::uuid
      where i.tenant_id = ${ten.id} and i.key = ${key}`;
    t.equal(rows.length, 1);
    t.equal(rows[0].id, r.body.id);
    t.equal(rows[0].status_code, 201);
  });

  t.test('a request still running: 409 with Retry-After: 2', async (t) => {
    const key = crypto.randomUUID();
    // Hold the key's lock the way a running request does.
    const lock = `${a.config.redisPrefix}:idem:${ten.id}:test:${key}`;
    await a.app.deps.redis.set(lock, 'someone-else', 'PX', 10_000);
    const r = await a.call('POST', '/v1/customers', { key: ten.testKey, body: {}, headers: { 'idempotency-key': key } });
    t.equal(r.status, 409);
    t.equal(r.body.error.code, 'idempotency_key_in_progress');
    t.equal(r.headers.get('retry-after'), '2');
    await a.app.deps.redis.del(lock);
    t.equal((await a.call('POST', '/v1/customers', { key: ten.testKey, body: {}, headers: { 'idempotency-key': key } })).status, 201, 'then it runs');
  });

  t.test('ten identical requests at once create exactly one resource', async (t) => {
    for (let round = 0; round < 3; round++) {
      const before = await count();
      const key = crypto.randomUUID();
      const rs = await Promise.all(
        Array.from({ length: 10 }, () => a.call('POST', '/v1/customers', { key: ten.testKey, body: { name: `burst ${round}` }, headers: { 'idempotency-key': key } })),
      );
      t.equal((await count()) - before, 1, `round ${round}: one customer`);
      const created = rs.filter((r) => r.status === 201);
      t.ok(created.length >= 1);
      t.equal(new Set(created.map((r) => r.body.id)).size, 1, 'every 201 carries the same resource');
      for (const r of rs) t.ok(r.status === 201 || (r.status === 409 && r.body.error.code === 'idempotency_key_in_progress'), `status ${r.status}`);
    }
  });

  t.test('the Postgres key alone prevents a second effect when the Redis lock is lost', async (t) => {
    const before = await count();
    const key = crypto.randomUUID();
    // Two requests race with the lock disabled (as if Redis lost it): the loser rolls back and replays.
    const idem = a.app.deps.idempotency as unknown as { redis: { set: (...args: unknown[]) => Promise<string> } };
    const realSet = idem.redis.set.bind(idem.redis);
    idem.redis.set = async () => 'OK';
    try {
      const rs = await Promise.all(Array.from({ length: 6 }, () => a.call('POST', '/v1/customers', { key: ten.testKey, body: { name: 'race' }, headers: { 'idempotency-key': key } })));
      t.equal((await count()) - before, 1);
      t.equal(new Set(rs.map((r) => r.body.id)).size, 1, 'all answer the winner');
      t.ok(rs.every((r) => r.status === 201));
    } finally {
      idem.redis.set = realSet;
    }
  });

  // POST /v1/payment_intents looks the key up at commit (route option idempotencyLookup: 'at_commit'):
  // the same promises must hold without the lookup before the handler.
  t.test('payment intent create (lookup at commit): replay, reuse, burst, lost lock', async (t) => {
    const intents = async () => (await a.app.deps.sql`select count(*)::int as n from payment_intents where tenant_id = ${ten.id}`)[0].n as number;
    const body = { amount_minor: 1234, currency: 'MXN', metadata: { order: '7' } };
    const key = crypto.randomUUID();
    const before = await intents();
    const first = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body, headers: { 'idempotency-key': key } });
    t.equal(first.status, 201);
    t.equal(first.headers.get('idempotency-replayed'), null, 'the first answer is not a replay');
    const again = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body, headers: { 'idempotency-key': key } });
    t.equal(again.status, 201);
    t.equal(again.headers.get('idempotency-replayed'), 'true');
    t.equal(again.text, first.text, 'the stored answer, byte for byte');
    t.equal((await intents()) - before, 1, 'one intent');
    const other = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { ...body, amount_minor: 999 }, headers: { 'idempotency-key': key } });
    t.same([other.status, other.body.error.code], [422, 'idempotency_key_reused']);
    t.equal((await intents()) - before, 1, 'still one intent');

    const burstKey = crypto.randomUUID();
    const b0 = await intents();
    const rs = await Promise.all(Array.from({ length: 10 }, () => a.call('POST', '/v1/payment_intents', { key: ten.testKey, body, headers: { 'idempotency-key': burstKey } })));
    t.equal((await intents()) - b0, 1, 'ten at once: one intent');
    const created = rs.filter((r) => r.status === 201);
    t.equal(new Set(created.map((r) => r.body.id)).size, 1, 'every 201 carries the same intent');
    for (const r of rs) t.ok(r.status === 201 || (r.status === 409 && r.body.error.code === 'idempotency_key_in_progress'), `status ${r.status}`);

    const idem = a.app.deps.idempotency as unknown as { redis: { set: (...args: unknown[]) => Promise<string> } };
    const realSet = idem.redis.set.bind(idem.redis);
    idem.redis.set = async () => 'OK';
    try {
      const raceKey = crypto.randomUUID();
      const r0 = await intents();
      const race = await Promise.all(Array.from({ length: 6 }, () => a.call('POST', '/v1/payment_intents', { key: ten.testKey, body, headers: { 'idempotency-key': raceKey } })));
      t.equal((await intents()) - r0, 1, 'lock lost: the primary key alone keeps one intent');
      t.ok(race.every((r) => r.status === 201));
      t.equal(new Set(race.map((r) => r.body.id)).size, 1, 'all answer the winner');
    } finally {
      idem.redis.set = realSet;
    }
  });
});
