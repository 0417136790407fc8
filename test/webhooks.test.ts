// Webhooks against a real local HTTP receiver: registration rules, signatures verified as a
// receiver written to the spec would, retries on the tenant's clock, the 72-hour disable, the
// allow-list, secret rotation, the polling stream.
import { createHmac, timingSafeEqual } from 'node:crypto';
import t from 'tap';
import { guardedLookup, isPrivateAddress } from '../actors/net-guard.js';
import { retryWaitSeconds } from '../actors/webhook-delivery.js';
import { verifySignature } from '../kernel/signing.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestApp, type TestApp } from './helpers/app.js';

let a: TestApp;
let rx: Receiver;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });

/** A receiver's verification written from the spec alone (not our module): raw body, HMAC, constant time, 5 min. */
function specVerify(raw: Buffer, header: string, secret: string, nowS = Math.floor(Date.now() / 1000)): boolean {
  const parts = header.split(',').map((p) => p.split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  const expected = createHmac('sha256', secret).update(Buffer.concat([Buffer.from(`${t}.`), raw])).digest();
  const ok = parts.filter(([k]) => k === 'v1').some(([, v]) => v.length === 64 && timingSafeEqual(expected, Buffer.from(v, 'hex')));
  return ok && Math.abs(nowS - t) <= 300;
}

async function paidIntent(key: string, token = 'tok_sim_ok', body: object = { amount_minor: 12345, currency: 'MXN' }) {
  const pi = await a.call('POST', '/v1/payment_intents', { key, body, headers: idem() });
  await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key, body: { payment_token: token, payment_method: 'card' }, headers: idem() });
  return pi.body.id as string;
}

async function endpoint(key: string, path: string, events?: string[]) {
  const r = await a.call('POST', '/v1/webhook_endpoints', { key, body: { url: `${rx.url}${path}`, ...(events ? { events } : {}) } });
  if (r.status !== 201) throw new Error(`endpoint: ${r.status} ${r.text}`);
  return r.body as { id: string; secret: string };
}

t.before(async () => {
  rx = await startReceiver();
  a = await startTestApp({ ROLE: 'all', WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1', SWEEP_INTERVAL_MS: '200', RELAY_INTERVAL_MS: '50', RECONCILE_INTERVAL_MS: '500', RATE_LIMIT_V1_PER_MIN: '100000' });
});
t.teardown(async () => {
  await a.stop();
  await rx.close();
});

t.test('registration: https only, public addresses only, secret shown once', async (t) => {
  const ten = await a.newTenant();
  const ok = await a.call('POST', '/v1/webhook_endpoints', { key: ten.testKey, body: { url: `${rx.url}/reg` }, headers: idem() });
  t.equal(ok.status, 201);
  t.match(ok.body.secret, /^whsec_/);
  t.equal(ok.body.object, 'webhook_endpoint');
  t.equal(ok.body.active, true);
  const list = await a.call('GET', '/v1/webhook_endpoints', { key: ten.testKey });
  t.equal(list.status, 200);
  t.equal(list.body.data.length, 1);
  t.notOk('secret' in list.body.data[0], 'listings never carry the secret');
  t.notMatch(list.text, /whsec_/);
  t.equal(list.body.data[0].active, true);
  const refused: string[] = [
    'http://example.com/hook', // plain http, host not allowed
    'https://10.1.2.3/hook',
    'https://192.168.0.10/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/hook',
    'https://localhost/hook', // resolves to loopback; only 127.0.0.1 is allowed in this test
    'ftp://example.com/x',
    'not a url',
  ];
  for (const url of refused) {
    const r = await a.call('POST', '/v1/webhook_endpoints', { key: ten.testKey, body: { url } });
    t.equal(r.status, 400, url);
    t.equal(r.body.error.code, 'webhook_endpoint.invalid_url', url);
  }
  const badEvents = await a.call('POST', '/v1/webhook_endpoints', { key: ten.testKey, body: { url: `${rx.url}/x`, events: ['payment_intent.created'] } });
  t.equal(badEvents.body.error.code, 'webhook_endpoint.invalid_events');
  const ro = await a.admin('POST', `/admin/tenants/${ten.id}/api_keys`, { livemode: false, scopes: ['payments:read'] });
  const forbidden = await a.call('POST', '/v1/webhook_endpoints', { key: ro.body.key, body: { url: `${rx.url}/x` } });
  t.equal(forbidden.status, 403);
  t.equal(forbidden.body.error.code, 'insufficient_scope');
});

t.test('the address is checked again at delivery time', async (t) => {
  t.ok(isPrivateAddress('127.0.0.1'));
  t.ok(isPrivateAddress('10.0.0.1'));
  t.ok(isPrivateAddress('::ffff:192.168.1.1'));
  t.ok(isPrivateAddress('fe80::1'));
  t.notOk(isPrivateAddress('8.8.8.8'));
  const lookup = guardedLookup({ webhookAllowHttpHosts: [], env: 'test' });
  const err = await new Promise<NodeJS.ErrnoException | null>((r) => lookup('localhost', {}, (e) => r(e)));
  t.equal(err?.code, 'EPRIVATE', 'a name that resolves to loopback is refused when the socket connects');
  const allowed = guardedLookup({ webhookAllowHttpHosts: ['localhost'], env: 'test' });
  const ok = await new Promise<NodeJS.ErrnoException | null>((r) => allowed('localhost', {}, (e) => r(e)));
  t.equal(ok, null);
});

t.test('delivery: envelope, data projection, signature verified from the raw body', async (t) => {
  const ten = await a.newTenant();
  const ep = await endpoint(ten.testKey, '/sig');
  const id = await paidIntent(ten.testKey);
  const got = await rx.waitFor((r) => r.some((x) => x.path === '/sig'));
  const d = got.find((x) => x.path === '/sig')!;
  const header = d.headers['gateway-signature'] as string;
  t.match(header, /^t=\d+,v1=[0-9a-f]{64}$/);
  t.ok(specVerify(d.raw, header, ep.secret), 'verifies as the spec says');
  t.same(verifySignature(d.raw, header, ep.secret), { ok: true, t: Number(/t=(\d+)/.exec(header)![1]) });
  t.notOk(specVerify(Buffer.concat([d.raw, Buffer.from(' ')]), header, ep.secret), 'one byte more and it fails');
  t.notOk(specVerify(d.raw, header, 'whsec_other'), 'another secret fails');
  t.notOk(specVerify(d.raw, header, ep.secret, Math.floor(Date.now() / 1000) + 301), 'outside the 5-minute tolerance');
  t.equal(verifySignature(d.raw, header, ep.secret, { nowSeconds: Math.floor(Date.now() / 1000) - 400 }).ok, false);
  const env = d.json;
  t.same(Object.keys(env).sort(), ['api_version', 'created_at', 'data', 'event_id', 'event_type', 'livemode']);
  t.equal(env.api_version, '2026-07-01');
  t.equal(env.event_type, 'payment_intent.succeeded');
  t.equal(env.livemode, false);
  t.same(env.data, { id, object: 'payment_intent', status: 'succeeded', amount_minor: 12345, tip_minor: 0, total_minor: 12345, currency: 'MXN', metadata: null });
  t.equal(d.headers['content-type'], 'application/json');
  const evs = await a.call('GET', '/v1/events', { key: ten.testKey });
  t.equal(evs.body.data[0].event_id, env.event_id, 'the stream carries the same event_id');
  t.same(evs.body.data[0].data, env, 'the full envelope in data');
});

t.test('retries on the tenant clock: failing twice, then the same event_id after 1 min and 5 min', async (t) => {
  const ten = await a.newTenant();
  rx.script('/flaky', [500, 503], 200);
  await endpoint(ten.testKey, '/flaky');
  await paidIntent(ten.testKey);
  const first = await rx.waitFor((r) => r.filter((x) => x.path === '/flaky').length === 1);
  const eventId = first.find((x) => x.path === '/flaky')!.json.event_id;
  await sleep(700);
  t.equal(rx.received.filter((x) => x.path === '/flaky').length, 1, 'no retry before 1 minute of the tenant clock');
  await a.call('POST', '/v1/test/clock/advance', { key: ten.testKey, body: { seconds: 60 } });
  await rx.waitFor((r) => r.filter((x) => x.path === '/flaky').length === 2);
  await sleep(700);
  t.equal(rx.received.filter((x) => x.path === '/flaky').length, 2, 'the next wait is 5 minutes');
  await a.call('POST', '/v1/test/clock/advance', { key: ten.testKey, body: { seconds: 240 } });
  await sleep(700);
  t.equal(rx.received.filter((x) => x.path === '/flaky').length, 2, 'not after 4');
  await a.call('POST', '/v1/test/clock/advance', { key: ten.testKey, body: { seconds: 60 } });
  const all = await rx.waitFor((r) => r.filter((x) => x.path === '/flaky').length === 3);
  t.same(all.filter((x) => x.path === '/flaky').map((x) => x.json.event_id), [eventId, eventId, eventId], 'the same event_id each time');
  await sleep(300);
  const evs = await a.call('GET', '/v1/events', { key: ten.testKey });
  t.equal(evs.body.data[0].delivered, true, 'delivered once the third attempt succeeded');
  t.same([1, 2, 3, 4, 5, 6, 7, 8, 9].map(retryWaitSeconds), [60, 300, 1800, 7200, 21600, 43200, 86400, 86400, 86400], 'the schedule');
});

t.test('72 hours of failures disable the endpoint; it receives nothing new', async (t) => {
  const ten = await a.newTenant();
  rx.script('/down', [], 500);
  const ep = await endpoint(ten.testKey, '/down');
  const good = await endpoint(ten.testKey, '/fine');
  await paidIntent(ten.testKey);
  await rx.waitFor((r) => r.some((x) => x.path === '/down'));
  // Walk the tenant clock through the retry schedule up to 72 h.
  for (const s of [60, 300, 1800, 7200, 21600, 43200, 86400, 86400]) {
    await a.call('POST', '/v1/test/clock/advance', { key: ten.testKey, body: { seconds: s } });
    await sleep(250);
  }
  await a.call('POST', '/v1/test/clock/advance', { key: ten.testKey, body: { seconds: 6 * 3600 } });
  const end = Date.now() + 8000;
  let active = true;
  while (active && Date.now() < end) {
    const list = await a.call('GET', '/v1/webhook_endpoints', { key: ten.testKey });
    active = list.body.data.find((e: { id: string }) => e.id === ep.id).active;
    if (active) await sleep(200);
  }
  t.equal(active, false, 'disabled');
  const list = await a.call('GET', '/v1/webhook_endpoints', { key: ten.testKey });
  t.match(list.body.data.find((e: { id: string }) => e.id === ep.id).disabled_reason, /72 hours/);
  t.equal(list.body.data.find((e: { id: string }) => e.id === good.id).active, true, 'the healthy endpoint stays');
  const before = rx.received.filter((x) => x.path === '/down').length;
  t.ok(before >= 8, `attempts made: ${before}`);
  await paidIntent(ten.testKey);
  await rx.waitFor((r) => r.filter((x) => x.path === '/fine').length === 2);
  await sleep(400);
  t.equal(rx.received.filter((x) => x.path === '/down').length, before, 'a disabled endpoint receives nothing new');
  const discarded = await a.app.deps.sql`select status from webhook_deliveries where endpoint_id = ${ep.id}`;
  t.ok(discarded.every((d) => d.status === 'discarded'), 'its deliveries are discarded, not resent');
});

t.test('the allow-list filters event types', async (t) => {
  const ten = await a.newTenant();
  await endpoint(ten.testKey, '/only-failed', ['payment_intent.failed']);
  await endpoint(ten.testKey, '/all');
  await paidIntent(ten.testKey, 'tok_sim_ok');
  await paidIntent(ten.testKey, 'tok_sim_fraud');
  await rx.waitFor((r) => r.filter((x) => x.path === '/all').length === 2);
  await sleep(300);
  const only = rx.received.filter((x) => x.path === '/only-failed');
  t.equal(only.length, 1);
  t.equal(only[0].json.event_type, 'payment_intent.failed');
});

t.test('secret rotation: new and previous secrets both verify for 24 h', async (t) => {
  const ten = await a.newTenant();
  const ep = await endpoint(ten.testKey, '/rot');
  const rot = await a.call('POST', `/v1/webhook_endpoints/${ep.id}/rotate_secret`, { key: ten.testKey });
  t.equal(rot.status, 200);
  t.match(rot.body.secret, /^whsec_/);
  t.not(rot.body.secret, ep.secret);
  await paidIntent(ten.testKey);
  const got = await rx.waitFor((r) => r.some((x) => x.path === '/rot'));
  const d = got.find((x) => x.path === '/rot')!;
  const header = d.headers['gateway-signature'] as string;
  t.match(header, /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/, 'two signatures during the overlap');
  t.ok(specVerify(d.raw, header, rot.body.secret), 'the new secret verifies');
  t.ok(specVerify(d.raw, header, ep.secret), 'the previous secret verifies');
  t.equal(verifySignature(d.raw, header, [ep.secret, rot.body.secret]).ok, true);
  const other = await a.newTenant();
  t.equal((await a.call('POST', `/v1/webhook_endpoints/${ep.id}/rotate_secret`, { key: other.testKey })).status, 404, 'another tenant');
});

t.test('delete: logical; nothing more is delivered', async (t) => {
  const ten = await a.newTenant();
  const ep = await endpoint(ten.testKey, '/gone');
  const del = await a.call('DELETE', `/v1/webhook_endpoints/${ep.id}`, { key: ten.testKey });
  t.equal(del.status, 200);
  t.same(del.body, { id: ep.id, object: 'webhook_endpoint', deleted: true });
  t.equal((await a.call('DELETE', `/v1/webhook_endpoints/${ep.id}`, { key: ten.testKey })).status, 404);
  const row = await a.app.deps.sql`select active from webhook_endpoints where id = ${ep.id}`;
  t.equal(row[0].active, false, 'the row is kept');
  // spec: "Delete makes `active: false` (logical removal, row kept)", and listings carry `active` (decisions §7).
  const listed = (await a.call('GET', '/v1/webhook_endpoints', { key: ten.testKey })).body.data.find((e: { id: string }) => e.id === ep.id);
  t.match(listed, { id: ep.id, active: false, disabled_reason: 'deleted' }, 'the deleted endpoint stays listed, inactive');
  t.notOk('secret' in listed, 'without its secret');
  t.match((await a.call('GET', `/v1/webhook_endpoints/${ep.id}`, { key: ten.testKey })).body, { id: ep.id, active: false }, 'and reads as listed');
  await paidIntent(ten.testKey);
  await sleep(600);
  t.equal(rx.received.filter((x) => x.path === '/gone').length, 0);
});

t.test('the event stream: cursor, clamp, only with an active endpoint', async (t) => {
  const ten = await a.newTenant();
  const id1 = await paidIntent(ten.testKey);
  await sleep(400);
  const none = await a.call('GET', '/v1/events', { key: ten.testKey });
  t.same(none.body.data, [], 'no rows while the tenant has no active endpoint');
  await endpoint(ten.testKey, '/stream');
  await paidIntent(ten.testKey, 'tok_sim_fraud');
  await paidIntent(ten.testKey);
  await rx.waitFor((r) => r.filter((x) => x.path === '/stream').length === 2);
  const all = await a.call('GET', '/v1/events?limit=1000', { key: ten.testKey });
  t.equal(all.status, 200, 'a large limit is clamped, not refused');
  t.equal(all.body.data.length, 3, 'events committed before the endpoint existed are in the stream too');
  const ids = all.body.data.map((e: { id: number }) => e.id);
  t.same(ids, [...ids].sort((x: number, y: number) => x - y), 'ascending');
  t.equal(all.body.data[0].data.data.id, id1);
  for (const e of all.body.data) {
    t.equal(e.object, 'event');
    t.equal(typeof e.id, 'number');
    t.equal(typeof e.delivered, 'boolean');
  }
  const after = await a.call('GET', `/v1/events?after_id=${ids[0]}&limit=1`, { key: ten.testKey });
  t.same(after.body.data.map((e: { id: number }) => e.id), [ids[1]], 'after_id is exclusive');
  t.equal(after.body.has_more, true);
  const other = await a.newTenant();
  await endpoint(other.testKey, '/other');
  t.same((await a.call('GET', '/v1/events', { key: other.testKey })).body.data, [], "another tenant's events are not visible");
  t.same((await a.call('GET', '/v1/events', { key: ten.liveKey })).body.data, [], 'nor the other mode');
  t.equal((await a.call('GET', '/v1/events?after_id=-1', { key: ten.testKey })).status, 400);
});
