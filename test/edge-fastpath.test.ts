// The edge's hot-path shortcuts give exactly what the plain forms give: pre-serialised error
// envelopes, JSON answers written without a replacer when there is no null field, rate-limit counts
// when hits queue behind a script call in flight, and the abort of a request waiting for its body.
import t from 'tap';
import { connect } from 'node:net';
import { Redis } from 'ioredis';
import { ERROR_CODES } from '../kernel/error-catalog.js';
import { ApiError, envelope, envelopeJson } from '../kernel/errors.js';
import { answerJson } from '../kernel/json.js';
import { RateLimiter, type Verdict } from '../api/rate-limit.js';
import { startTestApp, testConfig } from './helpers/app.js';

const dropNulls = (_k: string, v: unknown) => (v === null ? undefined : v);

t.test('envelopeJson is the JSON of envelope(), byte for byte', async (t) => {
  const messages = [undefined, 'plain', 'with "quotes" and \\ backslash', 'unicode: ñ € 😀 \u2028', 'control \u0000 \n \t', '":null'];
  const ids = ['0af76519-16cd-43dd-8448-eb211c80319c', 'req_abc', 'weird "id"\n'];
  for (const base of ['https://api.example.com', 'http://127.0.0.1:3000']) {
    for (const code of ERROR_CODES) {
      for (const m of messages) {
        const err = new ApiError(code, m);
        for (const id of ids) {
          const s = envelopeJson(err, id, base);
          if (s !== JSON.stringify(envelope(err, id, base), dropNulls)) t.fail(`${code} ${JSON.stringify(m)} ${id}: ${s}`);
        }
      }
    }
  }
  t.pass('all codes, messages and ids');
});

t.test('answerJson drops null fields exactly as the replacer does', async (t) => {
  const bodies: unknown[] = [
    { object: 'health', status: 'ok' },
    { a: null, b: 1 },
    { a: { b: { c: null, d: [1, null, { e: null, f: 'x' }] } } },
    [null, 1, { a: null }],
    [1, 2, null],
    { s: '":null inside a string', n: 0, f: false, u: undefined },
    { d: new Date(0), bad: new Date(NaN) },
    { nested: [[{ x: null }]], empty: {}, list: [] },
    'a string',
    42,
    null,
  ];
  for (const b of bodies) t.equal(answerJson(b), JSON.stringify(b, dropNulls), JSON.stringify(b));
});

t.test('rate-limit counts stay exact when hits queue behind a call in flight', async (t) => {
  const config = testConfig();
  const redis = new Redis(config.redisUrl, { enableAutoPipelining: true });
  const prefix = config.redisPrefix;
  t.teardown(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });
  const revoked = `${prefix}:{rl}:keys:revoked`;
  await redis.sadd(revoked, 'gone');
  // A fixed clock in the middle of a window: every hit falls in the same window.
  const now = () => 1_000_000 * 60_000 + 30_000;
  const limiter = new RateLimiter(redis, prefix, revoked, now);
  const hits: Array<Promise<Verdict>> = [];
  // Three waves: the first goes out at once, the next two queue behind it.
  for (let wave = 0; wave < 3; wave++) {
    for (let i = 0; i < 40; i++) hits.push(limiter.hit('k:a', 100, 'a'));
    hits.push(limiter.hit('k:gone', 100, 'gone'));
    hits.push(limiter.hit('ip:1.2.3.4', 1000));
    await new Promise((r) => setImmediate(r));
  }
  const v = await Promise.all(hits);
  const forA = v.filter((_, i) => i % 42 < 40);
  t.equal(forA.filter((x) => x.allowed).length, 100, 'exactly the limit of 120 hits passes');
  t.equal(forA.filter((x) => !x.allowed && !x.revoked).length, 20);
  t.ok(v.filter((_, i) => i % 42 === 40).every((x) => x.revoked && !x.allowed), 'a revoked key is refused');
  t.ok(v.filter((_, i) => i % 42 === 41).every((x) => x.allowed && !x.revoked), 'an IP bucket');
  t.ok(v.every((x) => x.retryAfter === 30), 'Retry-After is the rest of the window');
  t.equal(await redis.get(`${prefix}:{rl}:k:a:1000000`), '120', 'every hit counted in Redis');
});

t.test('rate limiter unreachable: every waiting hit gets the error', async (t) => {
  const config = testConfig();
  const redis = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false });
  t.teardown(() => redis.disconnect());
  const limiter = new RateLimiter(redis, config.redisPrefix, 'x');
  const r = await Promise.allSettled([limiter.hit('k:a', 10, 'a'), limiter.hit('k:b', 10, 'b')]);
  t.same(r.map((x) => x.status), ['rejected', 'rejected']);
});

t.test('a client gone while its request waits for the body is counted as 499, not answered', async (t) => {
  const a = await startTestApp();
  t.teardown(() => a.stop());
  const ten = await a.newTenant();
  await new Promise<void>((resolve) => {
    const s = connect(Number(new URL(a.url).port), '127.0.0.1', () => {
      s.write(`POST /v1/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ten.testKey}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":`);
      // Long enough for auth and the rate limit to finish and wait for the rest of the body.
      setTimeout(() => {
        s.destroy();
        resolve();
      }, 200);
    });
  });
  await new Promise((r) => setTimeout(r, 100));
  const m = await a.call('GET', '/metrics');
  t.match(m.text, /orquesta_http_requests_total\{method="POST",route="\/v1\/customers",status="499"\} 1/);
  t.equal((await a.call('GET', '/health/live')).status, 200);
});
