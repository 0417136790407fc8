// Public checkout and payment links over HTTP: the public projection never leaks, a wrong secret
// and an unknown id are indistinguishable, links create/reuse their intent and show as paid.
import t from 'tap';
import { startTestApp, type TestApp } from './helpers/app.js';

let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PRIVATE = ['client_secret', 'attempts', 'provider_ref', 'metadata', 'livemode'];

function leaks(v: unknown): string[] {
  const found: string[] = [];
  const walk = (x: unknown) => {
    if (Array.isArray(x)) x.forEach(walk);
    else if (x && typeof x === 'object') for (const [k, val] of Object.entries(x)) {
      if (PRIVATE.includes(k)) found.push(k);
      walk(val);
    }
  };
  walk(v);
  return found;
}

async function intent(body: object = { amount_minor: 25000, currency: 'MXN', metadata: { order: 'A-1' } }) {
  return (await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body, headers: idem() })).body;
}

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', RATE_LIMIT_PUBLIC_PER_MIN: '100000', RATE_LIMIT_V1_PER_MIN: '100000', SWEEP_INTERVAL_MS: '200' });
  ten = await a.newTenant('Taquería El Güero');
});
t.teardown(() => a.stop());

t.test('the public projection never carries private fields', async (t) => {
  const pi = await intent();
  const g = await a.call('GET', `/public/payment_intents/${pi.id}`, { headers: { 'x-service-client-secret': pi.client_secret } });
  t.equal(g.status, 200);
  t.same(Object.keys(g.body).sort(), ['amount_minor', 'currency', 'id', 'object', 'status', 'tip_minor', 'total_minor']);
  t.same(leaks(g.body), []);
  const legacy = await a.call('GET', `/public/payment_intents/${pi.id}?client_secret=${pi.client_secret}`);
  t.equal(legacy.status, 200, 'the legacy query parameter still works');
  const c = await a.call('POST', `/public/payment_intents/${pi.id}/confirm`, { body: { client_secret: pi.client_secret, payment_token: 'x', payment_method: 'spei', tip_minor: 2500 } });
  t.equal(c.status, 200);
  t.equal(c.body.status, 'processing');
  t.equal(c.body.total_minor, 27500);
  t.same(leaks(c.body), []);
  let ra;
  for (let i = 0; i < 100; i++) {
    ra = await a.call('GET', `/public/payment_intents/${pi.id}`, { headers: { 'x-service-client-secret': pi.client_secret } });
    if (ra.body.status === 'requires_action') break;
    await sleep(50);
  }
  t.equal(ra!.body.status, 'requires_action');
  t.equal(ra!.body.next_action.type, 'bank_transfer');
  t.match(ra!.body.next_action.clabe, /^\d{18}$/);
  t.same(leaks(ra!.body), [], 'not even with next_action');
  t.notMatch(ra!.text, /sim_spei_|pi_secret_|A-1/);
  const cfg = await a.call('GET', `/public/payment_intents/${pi.id}/checkout-config`, { headers: { 'x-service-client-secret': pi.client_secret } });
  t.equal(cfg.status, 200);
  t.equal(cfg.body.merchant_display_name, 'Taquería El Güero');
  t.same(cfg.body.allowed_methods, ['card', 'spei', 'codi', 'oxxo']);
  t.same(cfg.body.tip_suggestions.map((s: { percent: number }) => s.percent), [10, 15, 20]);
  t.equal(cfg.body.tip_suggestions[0].amount_minor, 2500);
  t.equal(cfg.body.test_mode, true);
  t.same(leaks(cfg.body), []);
});

t.test('a wrong secret and an unknown id are indistinguishable', async (t) => {
  const pi = await intent();
  const strip = (r: { status: number; headers: Headers; body: any }) => ({
    status: r.status,
    body: { ...r.body, error: { ...r.body.error, request_id: 'x' } },
    headers: [...r.headers.entries()].filter(([k]) => !['x-request-id', 'date'].includes(k)).sort(),
  });
  const probes = {
    wrongSecret: await a.call('GET', `/public/payment_intents/${pi.id}`, { headers: { 'x-service-client-secret': 'pi_secret_wrongwrongwrongwrongwrongw' } }),
    noSecret: await a.call('GET', `/public/payment_intents/${pi.id}`),
    unknownId: await a.call('GET', `/public/payment_intents/${crypto.randomUUID()}`, { headers: { 'x-service-client-secret': pi.client_secret } }),
    malformedId: await a.call('GET', `/public/payment_intents/nope`, { headers: { 'x-service-client-secret': pi.client_secret } }),
    otherIntentsSecret: await a.call('GET', `/public/payment_intents/${pi.id}`, { headers: { 'x-service-client-secret': (await intent()).client_secret } }),
  };
  const ref = strip(probes.unknownId);
  t.equal(ref.status, 404);
  t.equal(ref.body.error.code, 'payment_intent.not_found');
  for (const [name, r] of Object.entries(probes)) t.same(strip(r), ref, `${name}: same status, body and headers`);
  const confirmWrong = await a.call('POST', `/public/payment_intents/${pi.id}/confirm`, { body: { client_secret: 'pi_secret_x', payment_token: 'tok_sim_ok', payment_method: 'card' } });
  const confirmUnknown = await a.call('POST', `/public/payment_intents/${crypto.randomUUID()}/confirm`, { body: { client_secret: pi.client_secret, payment_token: 'tok_sim_ok', payment_method: 'card' } });
  t.same(strip(confirmWrong), strip(confirmUnknown), 'confirm too');
  const cfgWrong = await a.call('GET', `/public/payment_intents/${pi.id}/checkout-config`, { headers: { 'x-service-client-secret': 'nope' } });
  t.same(strip(cfgWrong), ref, 'checkout-config too');
  t.equal((await a.call('GET', `/v1/payment_intents/${pi.id}`, { key: ten.testKey })).body.status, 'requires_payment_method', 'nothing happened to it');
});

t.test('the public rate limit is per client IP', async (t) => {
  const b = await startTestApp({ RATE_LIMIT_PUBLIC_PER_MIN: '3' });
  t.teardown(() => b.stop());
  const msLeft = 60_000 - (Date.now() % 60_000);
  if (msLeft < 3000) await sleep(msLeft + 50);
  const s: number[] = [];
  for (let i = 0; i < 5; i++) s.push((await b.call('GET', `/public/payment_intents/${crypto.randomUUID()}`)).status);
  t.same(s, [404, 404, 404, 429, 429]);
  // X-Forwarded-For is ignored unless the peer is a trusted proxy (off by default).
  const spoof = await b.call('GET', `/public/payment_intents/${crypto.randomUUID()}`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
  t.equal(spoof.status, 429, 'a forged X-Forwarded-For does not buy a new window');
  t.equal((await b.call('GET', '/js/checkout.js')).status, 200, '/js/* is exempt');
});

t.test('payment links: create, read, pay, shown as paid', async (t) => {
  const bad = await a.call('POST', '/v1/payment_links', { key: ten.testKey, body: { amount_minor: 0, currency: 'MXN', concepto: 'x' } });
  t.equal(bad.body.error.code, 'payment_intent.invalid_amount');
  const r = await a.call('POST', '/v1/payment_links', { key: ten.testKey, body: { amount_minor: 18000, currency: 'MXN', concepto: 'Orden 42', metadata: { branch: 'norte' } } });
  t.equal(r.status, 201);
  const link = r.body;
  t.equal(link.object, 'payment_link');
  t.equal(link.url, `/pay/${link.slug}`);
  t.equal(link.reusable, false);
  t.equal(link.active, true);
  t.notOk('paid_at' in link);
  t.equal((await a.call('GET', `/v1/payment_links/${link.id}`, { key: ten.testKey })).body.slug, link.slug);
  t.ok((await a.call('GET', '/v1/payment_links', { key: ten.testKey })).body.data.some((l: { id: string }) => l.id === link.id));
  const other = await a.newTenant();
  t.equal((await a.call('GET', `/v1/payment_links/${link.id}`, { key: other.testKey })).status, 404);

  const i1 = await a.call('POST', `/public/payment_links/${link.slug}/intent`);
  const i2 = await a.call('POST', `/public/payment_links/${link.slug}/intent`);
  t.equal(i1.status, 200);
  t.equal(i1.body.id, i2.body.id, 'a single-use link reuses its intent while unpaid');
  t.match(i1.body.client_secret, /^pi_secret_/);
  t.equal(i1.body.amount_minor, 18000);
  const page = await a.call('GET', link.url);
  t.equal(page.status, 200);
  t.match(page.headers.get('content-type'), /text\/html/);
  t.match(page.text, new RegExp(`data-payment-intent="${i1.body.id}"`), 'the page carries the intent it pays');
  t.match(page.headers.get('content-security-policy'), /script-src 'self'/);
  const full = await a.call('GET', `/v1/payment_intents/${i1.body.id}`, { key: ten.testKey });
  t.equal(full.body.metadata.payment_link_id, link.id);
  t.equal(full.body.metadata.branch, 'norte');

  await a.call('POST', `/public/payment_intents/${i1.body.id}/confirm`, { body: { client_secret: i1.body.client_secret, payment_token: 'tok_sim_ok', payment_method: 'card' } });
  for (let i = 0; i < 100 && !(await a.call('GET', `/v1/payment_links/${link.id}`, { key: ten.testKey })).body.paid_at; i++) await sleep(50);
  const paid = await a.call('GET', `/v1/payment_links/${link.id}`, { key: ten.testKey });
  t.ok(paid.body.paid_at, 'paid');
  t.equal(paid.body.active, false);
  const after = await a.call('GET', link.url);
  t.match(after.text, /data-testid="link-paid"/, 'a paid single-use link shows as paid');
  t.equal((await a.call('POST', `/public/payment_links/${link.slug}/intent`)).status, 404);

  const reusable = (await a.call('POST', '/v1/payment_links', { key: ten.testKey, body: { amount_minor: 5000, currency: 'MXN', concepto: 'Donativo', reusable: true } })).body;
  const r1 = await a.call('POST', `/public/payment_links/${reusable.slug}/intent`);
  const r2 = await a.call('POST', `/public/payment_links/${reusable.slug}/intent`);
  t.not(r1.body.id, r2.body.id, 'a reusable link gives a new intent each time');
  t.equal((await a.call('GET', '/pay/unknown-slug')).status, 404);
});

t.test('kit assets and pages are served', async (t) => {
  const js = await a.call('GET', '/js/checkout.js');
  t.equal(js.status, 200);
  t.match(js.headers.get('content-type'), /javascript/);
  t.match(js.text, /OrquestaCheckout/);
  t.notMatch(js.text, /\brequire\(|\bimport\s/, 'dependency-free');
  t.equal((await a.call('GET', '/js/checkout.css')).status, 200);
  const demo = await a.call('GET', '/demo');
  t.equal(demo.status, 200);
  t.match(demo.text, /demo-unavailable/, 'no demo tenant in tests: the page says so');
  const qr = await a.call('GET', '/public/qr.svg?data=codi%3A%2F%2Fsim');
  t.equal(qr.status, 200);
  t.match(qr.text, /^<svg/);
});
