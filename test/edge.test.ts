// The HTTP edge: body caps, malformed JSON, disconnects, request ids, rate limits, shutdown.
import { request } from 'node:http';
import { connect } from 'node:net';
import t from 'tap';
import { httpCall, startTestApp, until } from './helpers/app.js';
import { createEdge } from '../api/edge.js';
import { defineRoute } from '../api/route.js';

function rawPost(url: string, path: string, headers: Record<string, string | number>, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url + path, { method: 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

t.test('edge', async (t) => {
  const a = await startTestApp({ RATE_LIMIT_V1_PER_MIN: '100000' });
  t.teardown(() => a.stop());
  const ten = await a.newTenant();
  const auth = { authorization: `Bearer ${ten.testKey}`, 'content-type': 'application/json' };

  t.test('a 6 MB body is refused with 413 before it is read', async (t) => {
    const big = Buffer.alloc(6 * 1024 * 1024, 0x20);
    const r = await rawPost(a.url, '/v1/customers', { ...auth, 'content-length': big.length }, big).catch((e) => ({ status: -1, text: String(e) }));
    // The server answers 413 and closes; the client may see the answer or a reset while still sending.
    if (r.status !== -1) {
      t.equal(r.status, 413);
      const body = JSON.parse(r.text);
      t.equal(body.error.code, 'request.too_large');
      t.match(body.error.doc_url, /#err-request\.too_large$/);
    } else t.pass('connection closed while sending');
    t.equal((await a.call('GET', '/health/live')).status, 200, 'the server is fine afterwards');
  });

  t.test('a chunked body over the cap is refused with 413', async (t) => {
    const r = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(a.url + '/v1/customers', { method: 'POST', headers: { ...auth, 'transfer-encoding': 'chunked' } }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      });
      req.on('error', (e) => resolve({ status: -1, text: String(e) }));
      const chunk = Buffer.alloc(256 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent < 8 && req.write(chunk)) sent++;
        if (sent < 8) req.once('drain', () => { sent++; pump(); });
        else req.end();
      };
      pump();
      void reject;
    });
    t.ok(r.status === 413 || r.status === -1, `status ${r.status}`);
    if (r.status === 413) t.equal(JSON.parse(r.text).error.code, 'request.too_large');
  });

  t.test('malformed JSON: 400 in the envelope', async (t) => {
    for (const raw of ['{"name": "Ana"', 'nope', '[1,2]', '"str"']) {
      const r = await a.call('POST', '/v1/customers', { key: ten.testKey, raw, headers: { 'content-type': 'application/json' } });
      t.equal(r.status, 400, raw);
      t.equal(r.body.error.code, 'request.malformed_json');
      t.equal(r.body.error.request_id, r.headers.get('x-request-id'));
    }
  });

  t.test('unknown fields and wrong types name the field', async (t) => {
    const r = await a.call('POST', '/v1/customers', { key: ten.testKey, body: { nmae: 'x' } });
    t.equal(r.status, 400);
    t.equal(r.body.error.code, 'request.invalid_body');
    t.match(r.body.error.message, /nmae/);
    const r2 = await a.call('POST', '/v1/customers', { key: ten.testKey, body: { metadata: { a: 1 } } });
    t.match(r2.body.error.message, /metadata\.a/);
    const q = await a.call('GET', '/v1/customers?limit=abc', { key: ten.testKey });
    t.equal(q.status, 400);
    t.equal(q.body.error.code, 'request.invalid_query');
    t.equal((await a.call('GET', '/v1/customers?limit=100000', { key: ten.testKey })).status, 200, 'large limits are clamped');
  });

  t.test('every response has X-Request-Id', async (t) => {
    for (const p of ['/health', '/status', '/openapi/v1.json', '/metrics', '/nope', '/v1/customers']) {
      const r = await a.call('GET', p);
      t.match(r.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, p);
    }
  });

  t.test('a client that disconnects mid-body does not crash or leak', async (t) => {
    for (let i = 0; i < 20; i++) {
      await new Promise<void>((resolve) => {
        const s = connect(new URL(a.url).port as unknown as number, '127.0.0.1', () => {
          s.write(`POST /v1/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ten.testKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":`);
          setTimeout(() => {
            s.destroy();
            resolve();
          }, 20);
        });
        s.on('error', () => resolve());
      });
    }
    // Disconnect while the handler is running (after the body arrived).
    await new Promise<void>((resolve) => {
      const s = connect(Number(new URL(a.url).port), '127.0.0.1', () => {
        const body = '{"name":"gone"}';
        s.write(`POST /v1/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ten.testKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
        s.destroy();
        resolve();
      });
    });
    await new Promise((r) => setTimeout(r, 300));
    t.equal((await a.call('GET', '/health/live')).status, 200);
    const m = await a.call('GET', '/metrics');
    t.match(m.text, /orquesta_http_requests_total/);
  });
});

t.test('rate limits: 429 with Retry-After and no X-RateLimit headers', async (t) => {
  const a = await startTestApp({ RATE_LIMIT_V1_PER_MIN: '5' });
  t.teardown(() => a.stop());
  const ten = await a.newTenant();
  // Align with the window so the 6 calls cannot straddle two windows.
  const msLeft = 60_000 - (Date.now() % 60_000);
  if (msLeft < 3000) await new Promise((r) => setTimeout(r, msLeft + 50));
  const statuses: number[] = [];
  let last;
  for (let i = 0; i < 7; i++) {
    last = await a.call('GET', '/v1/customers', { key: ten.testKey });
    statuses.push(last.status);
  }
  t.same(statuses, [200, 200, 200, 200, 200, 429, 429]);
  t.equal(last!.body.error.code, 'rate_limit_exceeded');
  t.equal(last!.body.error.type, 'rate_limit_error');
  const ra = Number(last!.headers.get('retry-after'));
  t.ok(ra >= 1 && ra <= 60, `Retry-After ${ra}`);
  for (const h of last!.headers.keys()) t.notMatch(h, /^x-ratelimit/i);
  // Per key: another key of the same tenant has its own window.
  t.equal((await a.call('GET', '/v1/customers', { key: ten.liveKey })).status, 200);
  // Exempt paths are never limited.
  for (let i = 0; i < 8; i++) t.equal((await a.call('GET', '/health')).status, 200);
});

t.test('a burst of concurrent requests is counted exactly (batched counting)', async (t) => {
  const a = await startTestApp({ RATE_LIMIT_V1_PER_MIN: '5' });
  t.teardown(() => a.stop());
  const ten = await a.newTenant();
  const msLeft = 60_000 - (Date.now() % 60_000);
  if (msLeft < 3000) await new Promise((r) => setTimeout(r, msLeft + 50));
  const rs = await Promise.all(Array.from({ length: 12 }, () => a.call('GET', '/v1/customers', { key: ten.testKey })));
  t.equal(rs.filter((r) => r.status === 200).length, 5, 'exactly the limit passes');
  t.equal(rs.filter((r) => r.status === 429).length, 7);
});

t.test('the limit is shared by every API process', async (t) => {
  const a = await startTestApp({ RATE_LIMIT_V1_PER_MIN: '4' });
  const { startApp } = await import('../ops/app.js');
  const { createLogger } = await import('../kernel/log.js');
  const b = await startApp({ ...a.config, port: 0 }, createLogger('silent'));
  t.teardown(async () => {
    await b.stop();
    await a.stop();
  });
  const ten = await a.newTenant();
  const msLeft = 60_000 - (Date.now() % 60_000);
  if (msLeft < 3000) await new Promise((r) => setTimeout(r, msLeft + 50));
  const s: number[] = [];
  for (let i = 0; i < 3; i++) s.push((await a.call('GET', '/v1/customers', { key: ten.testKey })).status);
  for (let i = 0; i < 3; i++) s.push((await httpCall(`${b.url}/v1/customers`, 'GET', { authorization: `Bearer ${ten.testKey}` })).status);
  t.same(s, [200, 200, 200, 200, 429, 429]);
});

t.test('graceful shutdown finishes in-flight requests and refuses new ones', async (t) => {
  const a = await startTestApp();
  t.teardown(() => a.stop());
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const slow = defineRoute({
    method: 'GET',
    path: '/slow',
    auth: 'none',
    summary: 'test',
    tags: [],
    responses: {},
    handler: async () => {
      await gate;
      return { status: 200, body: { done: true } };
    },
  });
  const edge = createEdge(a.app.deps, [slow]);
  const port = await edge.listen('127.0.0.1', 0);
  const pending = httpCall(`http://127.0.0.1:${port}/slow`, 'GET', {}).then((r) => ({ status: r.status, body: JSON.parse(r.text) }));
  // The request is in flight once the handler holds it (waited for: a fixed sleep lost the race on a
  // loaded machine, where the request had not arrived 100 ms later).
  t.equal(await until(async () => edge.inFlight(), (n) => n === 1, 30_000), 1);
  const closing = edge.close(5000);
  await new Promise((r) => setTimeout(r, 50));
  const refused = await httpCall(`http://127.0.0.1:${port}/slow`, 'GET', {}).then((r) => r.status).catch(() => 'refused');
  t.ok(refused === 'refused' || refused === 503, `no new requests once closing (${refused})`);
  release();
  const done = await pending;
  t.equal(done.status, 200, 'the in-flight request completed');
  t.same(done.body, { done: true });
  await closing;
  t.equal(edge.inFlight(), 0);
});
