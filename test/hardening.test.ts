// Issue 12 (items 1, 3, 4, 5, 6, 8, 9) and the edge parts of issues 13 and 21: hostile or odd input
// gets a clean 4xx with the envelope, and nothing a client sends can end the process.
import { connect } from 'node:net';
import t from 'tap';
import { freePort, httpCall, serviceProcesses, startTestApp, uuid, waitReady } from './helpers/app.js';
import { addressRefusal, assertSafeWebhookUrl, guardedLookup } from '../actors/net-guard.js';
import { jsonContentType, jsonDepthExceeds } from '../api/body.js';
import { closestName } from '../api/validation.js';
import { bannerLines } from '../ops/banner.js';
import { testConfig } from './helpers/app.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Bytes on a fresh socket; resolves with what came back once the server closes or `idleMs` pass quietly. */
function raw(port: number, payload: string | Buffer, idleMs = 1500): Promise<{ text: string; error?: string }> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    const done = (error?: string) => {
      clearTimeout(timer);
      s.destroy();
      resolve({ text, error });
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => done(), idleMs);
    };
    s.on('data', (d) => {
      text += d.toString('latin1');
      arm();
    });
    s.on('error', (e: NodeJS.ErrnoException) => done(e.code));
    s.on('close', () => done());
    s.on('connect', () => {
      s.write(payload);
      arm();
    });
  });
}

/** A request whose body is written in 64 KiB pieces as the socket takes them (as an HTTP client does). */
function streamed(port: number, head: string, body: Buffer): Promise<{ text: string; error?: string }> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let text = '';
    let settled = false;
    const done = (error?: string) => {
      if (settled) return;
      settled = true;
      s.destroy();
      resolve({ text, error });
    };
    s.on('data', (d) => (text += d.toString('latin1')));
    s.on('error', (e: NodeJS.ErrnoException) => done(e.code));
    s.on('close', () => done());
    s.on('connect', () => {
      s.write(head);
      let off = 0;
      const pump = () => {
        while (off < body.length && !s.destroyed) {
          const piece = body.subarray(off, off + 65536);
          off += piece.length;
          if (!s.write(piece)) return void s.once('drain', pump);
        }
      };
      pump();
    });
  });
}

function envelopeOk(t: { equal(a: unknown, b: unknown, m: string): unknown }, r: { status: number; body: any; headers: Headers }, status: number, code: string, label: string) {
  t.equal(r.status, status, `${label}: status`);
  t.equal(r.body?.error?.code, code, `${label}: code`);
  t.equal(r.body?.error?.request_id, r.headers.get('x-request-id'), `${label}: request_id = X-Request-Id`);
}

t.test('item 1: malformed percent-encoding in a path parameter never ends a real service process', async (t) => {
  const port = String(await freePort());
  const adminKey = `adm_${uuid()}`;
  const procs = serviceProcesses({ ROLE: 'api', PORT: port, ADMIN_KEY: adminKey, RATE_LIMIT_V1_PER_MIN: '100000', REDIS_PREFIX: `orq_test_${uuid().slice(0, 8)}` });
  t.teardown(() => procs.killAll());
  const p = procs.start();
  let exited: number | null | undefined;
  p.on('exit', (code) => (exited = code));
  const base = `http://127.0.0.1:${port}`;
  await waitReady(base, p);
  const paths = [
    ['GET', '/public/payment_intents/%E0%A4%A'],
    ['GET', '/public/payment_intents/%ZZ'],
    ['POST', '/public/payment_intents/%E0%A4%A/confirm'],
    ['GET', '/v1/customers/%ZZ'],
    ['GET', '/pay/%E0%A4%A'],
    ['GET', '/pay/a%00b'],
    ['POST', '/public/payment_links/%ZZ/intent'],
    ['GET', '/sim/3ds/%C0'],
    ['POST', '/admin/tenants/%ZZ/api_keys'],
  ];
  for (const [method, path] of paths) {
    const r = await httpCall(base + path, method, { 'content-type': 'application/json' }, method === 'POST' ? '{}' : undefined);
    t.ok(r.status >= 400 && r.status < 500, `${method} ${path} → ${r.status}`);
    const body = JSON.parse(r.text);
    t.equal(body.error.request_id, r.headers.get('x-request-id'), `${path}: envelope`);
  }
  t.equal(exited, undefined, 'the process is still running');
  t.equal((await httpCall(`${base}/health/live`, 'GET', {})).status, 200, 'and still answering');

  // Item 8, here because the client must not share the server's event loop: a body twice the
  // 1 MiB limit, written as an HTTP client writes it, always gets its 413 and a clean close.
  const tenant = await httpCall(`${base}/admin/tenants`, 'POST', { 'x-admin-key': adminKey, 'content-type': 'application/json' }, '{"name":"413"}');
  const key = JSON.parse(tenant.text).api_keys[0].key as string;
  const body = Buffer.alloc(2 * 1024 * 1024, 0x20);
  const head = `POST /v1/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  let got413 = 0;
  const outcomes: Record<string, number> = {};
  for (let i = 0; i < 20; i++) {
    const r = await streamed(Number(port), head, body);
    const o = r.error ?? r.text.slice(0, 12);
    outcomes[o] = (outcomes[o] ?? 0) + 1;
    if (!r.error && r.text.startsWith('HTTP/1.1 413') && r.text.includes('"request.too_large"')) got413++;
  }
  t.equal(got413, 20, `every one of 20 got its 413 envelope and a clean close: ${JSON.stringify(outcomes)}`);
  t.equal(exited, undefined, 'still running');
});

t.test('the edge, in process', async (t) => {
  const a = await startTestApp({ RATE_LIMIT_V1_PER_MIN: '100000', AUTH_FAILURES_PER_MIN: '5', WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1' });
  t.teardown(() => a.stop());
  const ten = await a.newTenant();
  const key = ten.testKey;
  const port = Number(new URL(a.url).port);
  const idem = () => ({ 'idempotency-key': uuid() });

  t.test('item 4: input that gave 500s gets a 400 naming the field', async (t) => {
    const cases: Array<[string, string, string, Record<string, string>, string]> = [
      ['POST', '/v1/customers', '{"name":"a\\u0000b"}', {}, 'name'],
      ['POST', '/v1/customers', '{"name":"ab","metadata":{"a":"\\ud800"}}', {}, 'metadata.a'],
      ['POST', '/v1/customers', '{"name":"ab","metadata":{"\\udc00x":"a"}}', {}, 'metadata'],
      ['POST', '/v1/payment_intents', '{"amount_minor":100,"currency":"MXN","metadata":{"k":"\\u0000"}}', idem(), 'metadata.k'],
      ['POST', '/v1/payment_links', '{"amount_minor":100,"currency":"MXN","concepto":"x\\u0000"}', {}, 'concepto'],
    ];
    for (const [method, path, raw, headers, field] of cases) {
      const r = await a.call(method, path, { key, raw, headers: { 'content-type': 'application/json', ...headers } });
      envelopeOk(t, r, 400, 'request.invalid_body', raw);
      t.ok(r.body.error.message.includes(`\`${field}`), `${raw}: names ${field}: ${r.body.error.message}`);
    }
    const adminNul = await a.call('POST', '/admin/tenants', { raw: '{"name":"a\\u0000b"}', headers: { 'x-admin-key': a.adminKey, 'content-type': 'application/json' } });
    envelopeOk(t, adminNul, 400, 'request.invalid_body', 'admin tenant name');
    const inbound = await a.call('POST', `/admin/tenants/${ten.id}/simulate-inbound`, { raw: '{"provider_ref":"sim\\u0000"}', headers: { 'x-admin-key': a.adminKey, 'content-type': 'application/json' } });
    envelopeOk(t, inbound, 400, 'request.invalid_body', 'simulate-inbound');

    const deep = `{"name":"x","metadata":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`;
    const d = await a.call('POST', '/v1/customers', { key, raw: deep, headers: { 'content-type': 'application/json', ...idem() } });
    envelopeOk(t, d, 400, 'request.invalid_body', '100,000 levels');
    t.match(d.body.error.message, /32 levels/);
    const deepArr = await a.call('POST', '/v1/payment_intents', { key, raw: `{"payment_method_types":${'['.repeat(50_000)}${']'.repeat(50_000)}}`, headers: { 'content-type': 'application/json', ...idem() } });
    envelopeOk(t, deepArr, 400, 'request.invalid_body', 'nested arrays');

    // The events stream answers only with an endpoint; register one so the query reaches Postgres.
    await a.call('POST', '/v1/webhook_endpoints', { key, body: { url: 'http://127.0.0.1:9/x' } });
    for (const q of ['after_id=1e400', 'after_id=1e300', 'after_id=99999999999999999999', 'limit=1e400', 'after_id=NaN', 'after_id=-1']) {
      const r = await a.call('GET', `/v1/events?${q}`, { key });
      envelopeOk(t, r, 400, 'request.invalid_query', q);
    }
    t.equal((await a.call('GET', '/v1/events?after_id=0&limit=5', { key })).status, 200, 'a normal cursor still works');
    const qNul = await a.call('GET', '/public/payment_intents/00000000-0000-4000-8000-000000000000?client_secret=a%00b');
    envelopeOk(t, qNul, 400, 'request.invalid_query', 'NUL in a query value');

    const pay = await a.call('GET', '/pay/a%00b');
    envelopeOk(t, pay, 404, 'payment_link.not_found', '/pay/a%00b');
    const link = await a.call('POST', '/public/payment_links/a%00b/intent', { body: {} });
    envelopeOk(t, link, 404, 'payment_link.not_found', '/public/payment_links/a%00b/intent');
    const malformedId = await a.call('GET', '/v1/customers/%E0%A4%A', { key });
    envelopeOk(t, malformedId, 404, 'customer.not_found', 'undecodable id answers like an unknown one');
  });

  t.test('item 5: __proto__ is a plain unknown field, refused and named', async (t) => {
    const sql = a.app.deps.sql;
    const before = await sql`select count(*)::int as n from payment_intents where tenant_id = ${ten.id}`;
    const bodies = [
      '{"currency":"MXN","__proto__":{"amount_minor":5000}}',
      '{"currency":"MXN","tip_minor":null,"__proto__":{"amount_minor":5000}}',
      '{"currency":"MXN","tip_minor":null,"\\u005f_proto__":{"amount_minor":5000}}',
      '{"amount_minor":100,"currency":"MXN","metadata":{"__proto__":"x"}}',
    ];
    const k = uuid();
    for (const raw of bodies) {
      const r = await a.call('POST', '/v1/payment_intents', { key, raw, headers: { 'content-type': 'application/json', 'idempotency-key': k } });
      envelopeOk(t, r, 400, 'request.invalid_body', raw);
      t.match(r.body.error.message, /__proto__/, 'the message names it');
    }
    const after = await sql`select count(*)::int as n from payment_intents where tenant_id = ${ten.id}`;
    t.equal(after[0].n, before[0].n, 'no intent was created through the prototype');
    // The same key is still free: nothing was stored for it, and a real body gets its own answer.
    const ok = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: 100, currency: 'MXN' }, headers: { 'idempotency-key': k } });
    t.equal(ok.status, 201);
    t.equal(ok.body.amount_minor, 100);
    const reused = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: 100, currency: 'MXN', metadata: { a: 'b' } }, headers: { 'idempotency-key': k } });
    t.equal(reused.status, 422, 'another body under the same key is 422');
  });

  t.test('item 3 and issue 13: webhook URLs', async (t) => {
    for (const host of ['192.0.2.1', '198.51.100.1', '203.0.113.1', '[::127.0.0.1]', '[64:ff9b::7f00:1]', '[2002:7f00:1::1]', '[::ffff:0:7f00:1]', '[100::1]', '[2001:db8::1]', '0x7f.2', '2130706434', '[::ffff:127.0.0.1]', '[fe80::1]', '169.254.169.254', 'localhost', 'api.localhost', 'redis']) {
      const r = await a.call('POST', '/v1/webhook_endpoints', { key, body: { url: `https://${host}/hook` } });
      envelopeOk(t, r, 400, 'webhook_endpoint.invalid_url', host);
    }
    const offline = await a.call('POST', '/v1/webhook_endpoints', { key, body: { url: 'https://hooks.not-yet-live.invalid/orquesta' } });
    t.equal(offline.status, 201, 'a host that does not resolve (yet) is registered: no DNS at registration');
    const pub = await a.call('POST', '/v1/webhook_endpoints', { key, body: { url: 'https://[64:ff9b::808:808]/hook' } });
    t.equal(pub.status, 201, 'NAT64 of a public IPv4 address is a public destination');
  });

  t.test('item 6: failed credentials are throttled per IP; a valid key is never locked out', async (t) => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await a.call('GET', '/v1/customers', { key: `sk_test_${'x'.repeat(30)}${i}` })).status);
    t.same(statuses.slice(0, 5), [401, 401, 401, 401, 401], 'the first five failures: 401');
    const limited = await a.call('GET', '/v1/customers', { key: 'sk_test_wrongwrongwrongwrongwrongwr' });
    envelopeOk(t, limited, 429, 'rate_limit_exceeded', 'wrong key over the limit');
    t.match(limited.headers.get('retry-after'), /^\d+$/);
    t.equal((await a.call('GET', '/v1/customers', { headers: { authorization: 'garbage' } })).status, 429, 'a malformed header counts too');
    t.equal((await a.call('GET', '/v1/customers', { key })).status, 200, 'the valid key from the same address is served');
    const adm = await a.call('POST', '/admin/tenants', { body: { name: 'x' }, headers: { 'x-admin-key': 'wrong-admin-key-0000' } });
    envelopeOk(t, adm, 429, 'rate_limit_exceeded', 'wrong admin key over the limit');
    t.equal((await a.admin('POST', '/admin/tenants', { name: 'Throttled neighbour' })).status, 201, 'the real admin key is served');
  });

  t.test('item 8: heads over 4 KiB get 414/431 with the envelope', async (t) => {
    const longQ = await a.call('GET', `/v1/customers?x=${'a'.repeat(70_000)}`, { key });
    envelopeOk(t, longQ, 414, 'request.uri_too_long', '70 KB query');
    const bigH = await a.call('GET', '/v1/customers', { key, headers: { 'x-big': 'a'.repeat(5000) } });
    envelopeOk(t, bigH, 431, 'request.headers_too_large', '5 KB header');
    t.equal((await a.call('GET', '/health/live')).status, 200);
  });

  // issue 25: a 100 kB query gets 414 when its head arrives in one read (above); in two reads uWS
  // v20.43 closes the socket before any JavaScript runs (docs/edge.md). Kept as a todo: the day a
  // uWS that answers it is pinned, this passes and the doc changes with it.
  t.test('issue 25: a 100 kB query arriving in two reads gets 414 too', { todo: 'uWS v20.43 drops a head over 4 KiB that arrives in pieces (docs/edge.md)' }, async (t) => {
    const head = `GET /v1/customers?x=${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;
    const r = await new Promise<string>((resolve) => {
      const s = connect(port, '127.0.0.1');
      let text = '';
      s.on('data', (d) => (text += d.toString('latin1')));
      s.on('error', () => resolve(text));
      s.on('close', () => resolve(text));
      s.on('connect', () => {
        s.write(head.slice(0, 1000));
        setTimeout(() => s.write(head.slice(1000)), 20);
      });
    });
    t.match(r, /^HTTP\/1\.1 414/, 'answered 414');
  });

  t.test('item 9 and issue 21: content types, repeated headers, messages, index pages', async (t) => {
    for (const type of ['application/xml', 'multipart/form-data; boundary=x', 'text/html', 'application/json; charset=utf-16']) {
      const r = await a.call('POST', '/v1/customers', { key, raw: '{"name":"x"}', headers: { 'content-type': type } });
      envelopeOk(t, r, 415, 'request.unsupported_media_type', type);
    }
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'application/json; charset=UTF-8', 'application/merge-patch+json']) {
      const r = await a.call('POST', '/v1/customers', { key, raw: '{"name":"x"}', headers: { 'content-type': type } });
      t.equal(r.status, 201, `${type} is read as JSON`);
    }
    const noType = await httpCall(`${a.url}/v1/customers`, 'POST', { authorization: `Bearer ${key}` }, '{"name":"x"}');
    t.equal(noType.status, 201, 'no Content-Type at all is read as JSON');

    const twoAuth = await raw(port, `GET /v1/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nAuthorization: Bearer sk_test_other\r\nConnection: close\r\n\r\n`);
    t.match(twoAuth.text, /^HTTP\/1\.1 400/);
    t.match(twoAuth.text, /"request\.duplicate_header"/);
    const twoKeys = await raw(port, `POST /v1/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nIdempotency-Key: ${uuid()}\r\nIdempotency-Key: ${uuid()}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
    t.match(twoKeys.text, /^HTTP\/1\.1 400/);
    t.match(twoKeys.text, /idempotency-key was sent more than once/);

    const amount = await a.call('POST', '/v1/payment_intents', { key, body: { amount: 100 }, headers: idem() });
    t.equal(amount.status, 400);
    t.match(amount.body.error.message, /^`amount` is not a field; did you mean `amount_minor`\?/);
    const noCurrency = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: 100 }, headers: idem() });
    t.equal(noCurrency.body.error.code, 'payment_intent.invalid_amount', 'the spec files a missing currency under invalid_amount');
    t.match(noCurrency.body.error.message, /amount has no currency/, 'and the message says it is the amount that is incomplete');
    const pub404 = await a.call('GET', `/public/payment_intents/${uuid()}`);
    t.equal(pub404.status, 404);
    t.notMatch(pub404.body.error.message, /key/i, 'the /public 404 does not mention keys');
    const malformed404 = await a.call('GET', '/public/payment_intents/nope');
    t.equal(malformed404.body.error.message, pub404.body.error.message, 'a malformed id answers exactly like an unknown one');
    for (const p of ['/', '/docs']) {
      const r = await a.call('GET', p);
      t.equal(r.status, 200, p);
      t.match(r.headers.get('content-type'), /text\/html/);
      for (const href of ['/openapi/v1.json', '/docs/errors', '/demo']) t.ok(r.text.includes(`href="${href}"`), `${p} links ${href}`);
    }
  });

  t.test('item 8: malformed header bytes (measured, see docs/edge.md) leave the server healthy', async (t) => {
    const r = await raw(port, 'GET /health HTTP/1.1\r\nHost: x\r\nX-\u0001Bad: v\r\n\r\n', 300);
    t.equal(r.text, '', 'uWS answers nothing to a malformed head (it cannot tell it from an incomplete one)');
    t.equal((await a.call('GET', '/health/live')).status, 200);
  });
});

t.test('units', async (t) => {
  t.test('address classification covers the IANA special-purpose registries', async (t) => {
    for (const ip of ['192.0.2.1', '198.51.100.1', '203.0.113.1', '::7f00:1', '64:ff9b::7f00:1', '2002:7f00:1::1', '::ffff:0:7f00:1', '100::1', '2001:db8::1', '10.0.0.1', '100.64.0.1', '127.0.0.1', '169.254.1.1', '172.16.0.1', '192.0.0.9', '192.88.99.1', '192.168.1.1', '198.18.0.1', '224.0.0.1', '240.0.0.1', '255.255.255.255', '0.0.0.0', '::', '::1', '::ffff:10.0.0.1', 'fc00::1', 'fe80::1', 'ff02::1', 'fec0::1', '2001::1', '2001:2::1', '2001:10::1', '3fff::1', '5f00::1', '64:ff9b:1::1', '100:0:0:1::1', '192.31.196.1', '192.52.193.1', '192.175.48.1', '2620:4f:8000::1']) {
      t.ok(addressRefusal(ip), `${ip} refused: ${addressRefusal(ip)}`);
    }
    for (const ip of ['8.8.8.8', '1.1.1.1', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::808:808', '2606:4700::1111']) t.equal(addressRefusal(ip), undefined, `${ip} is public`);
  });

  t.test('WEBHOOK_ALLOW_HTTP_HOSTS never opens private addresses in production', async (t) => {
    const dev = { webhookAllowHttpHosts: ['127.0.0.1', 'localhost'], env: 'development' };
    const prod = { webhookAllowHttpHosts: ['127.0.0.1', 'localhost', 'partner.example.mx'], env: 'production' };
    t.ok(assertSafeWebhookUrl('http://127.0.0.1:4242/x', dev), 'development: a local receiver over plain http');
    t.ok(assertSafeWebhookUrl('http://partner.example.mx/x', prod), 'production: plain http to a listed public name');
    t.throws(() => assertSafeWebhookUrl('http://127.0.0.1:4242/x', prod), /public addresses only/);
    t.throws(() => assertSafeWebhookUrl('https://127.0.0.1/x', prod), /public addresses only/);
    t.throws(() => assertSafeWebhookUrl('https://localhost/x', prod), /loopback/);
    t.throws(() => assertSafeWebhookUrl('http://example.mx/x', prod), /https/);
    const lookup = guardedLookup(prod);
    const err = await new Promise<NodeJS.ErrnoException | null>((r) => lookup('localhost', {}, (e) => r(e)));
    t.equal(err?.code, 'EPRIVATE', 'production: a listed name that resolves to loopback is refused at connect');
    const devLookup = guardedLookup(dev);
    t.equal(await new Promise((r) => devLookup('localhost', {}, (e) => r(e))), null, 'development: allowed');
  });

  t.test('body helpers', async (t) => {
    t.ok(jsonDepthExceeds('['.repeat(40) + ']'.repeat(40)));
    t.notOk(jsonDepthExceeds(`{"a":"${'['.repeat(100)}"}`), 'brackets inside strings do not count');
    t.notOk(jsonDepthExceeds(`{"a":"\\"${'{'.repeat(100)}"}`), 'an escaped quote does not end the string');
    t.ok(jsonContentType(undefined));
    t.notOk(jsonContentType('application/xml'));
    t.equal(closestName('amount', ['amount_minor', 'currency', 'metadata', 'tip_minor']), 'amount_minor');
    t.equal(closestName('nmae', ['name', 'email', 'metadata']), 'name');
    t.equal(closestName('zzzz', ['name', 'email']), undefined);
  });

  t.test('the start banner prints keys in full only when they are made', async (t) => {
    const config = testConfig({ STATE_DIR: '.orquesta' });
    const demo = { tenant_id: 't1', name: 'Demo', test_key: 'sk_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAWBDG', live_key: 'sk_live_BBBBBBBBBBBBBBBBBBBBBBBBBBBBLIVE', portal_email: 'demo+t1@example.com', portal_password: 'PortalPassword123' };
    const admin = { hash: 'h', plain: 'adm_CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC', source: 'state' as const };
    const later = bannerLines(config, { url: 'http://127.0.0.1:1', admin, demo: { ...demo, created: false } }).join('\n');
    t.notOk(later.includes(demo.live_key), 'no full live key on a later start');
    t.notOk(later.includes(demo.test_key), 'no full test key on a later start');
    t.notOk(later.includes(admin.plain), 'no full admin key on a later start');
    t.notOk(later.includes(demo.portal_password), 'no portal password on a later start');
    t.match(later, /demo\+t1@example\.com .*portal_password/, 'the portal email, and where its password is kept');
    t.match(later, /sk_live_…LIVE/);
    t.match(later, /demo-tenant\.json/);
    t.match(later, /export KEY=\$\(node -p "require\('.*demo-tenant\.json'\)\.test_key"\)/);
    t.match(later, /\/demo/);
    const first = bannerLines(config, { url: 'http://127.0.0.1:1', admin: { ...admin, source: 'generated' }, demo: { ...demo, created: true } }).join('\n');
    t.ok(first.includes(demo.live_key) && first.includes(demo.test_key) && first.includes(admin.plain), 'in full once, at creation');
    t.ok(first.includes(`${demo.portal_email} / ${demo.portal_password}`), 'the portal sign-in in full once, at creation');
  });
});

