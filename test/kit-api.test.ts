// Issue 25 over HTTP: /public answers CORS (preflights, Access-Control-Allow-Origin on answers and
// refusals) unless the merchant lists its origins (decisions §7); a confirm's return_url is where
// the 3-D Secure page sends the shopper back; the tip chooser can be turned off and is off on a
// receivable; the merchant's own test helpers (/v1/test_helpers/…) pay push payments and decide
// 3-D Secure challenges in test mode only.
import t from 'tap';
import { httpCall, startTestApp, until, type TestApp } from './helpers/app.js';

let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', SWEEP_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500', RATE_LIMIT_V1_PER_MIN: '100000', RATE_LIMIT_PUBLIC_PER_MIN: '100000' });
  ten = await a.newTenant('Ferretería La Tuerca');
});
t.teardown(() => a.stop());

async function intent(key = ten.testKey, amount = 15000, metadata?: Record<string, string>) {
  const r = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: amount, currency: 'MXN', ...(metadata ? { metadata } : {}) }, headers: idem() });
  if (r.status !== 201) throw new Error(r.text);
  return r.body as { id: string; client_secret: string };
}
const confirm = (id: string, body: object, key = ten.testKey) => a.call('POST', `/v1/payment_intents/${id}/confirm`, { key, body, headers: idem() });
const status = (id: string, want: string, key = ten.testKey) =>
  until(() => a.call('GET', `/v1/payment_intents/${id}?expand=attempts`, { key }), (r) => r.body.status === want, 15_000).then((r) => r.body);
const pub = (id: string, secret: string, origin?: string) =>
  a.call('GET', `/public/payment_intents/${id}`, { headers: { 'x-service-client-secret': secret, ...(origin ? { origin } : {}) } });

t.test('CORS on /public: preflight, allow-origin on answers and refusals, none on /v1', async (t) => {
  const pi = await intent();
  const pre = await httpCall(`${a.url}/public/payment_intents/${pi.id}`, 'OPTIONS', {
    origin: 'https://tienda.example.mx',
    'access-control-request-method': 'GET',
    'access-control-request-headers': 'x-service-client-secret',
  });
  t.equal(pre.status, 204, 'a preflight is answered (it was 404)');
  t.equal(pre.headers.get('access-control-allow-origin'), '*');
  t.match(pre.headers.get('access-control-allow-methods'), /GET, POST/);
  t.match(pre.headers.get('access-control-allow-headers'), /X-Service-Client-Secret/i);
  t.match(pre.headers.get('access-control-allow-headers'), /Content-Type/i);
  t.notOk(pre.headers.get('access-control-allow-credentials'), 'no cookies: the client secret is the credential');
  const preConfirm = await httpCall(`${a.url}/public/payment_intents/${pi.id}/confirm`, 'OPTIONS', { origin: 'https://tienda.example.mx', 'access-control-request-method': 'POST' });
  t.equal(preConfirm.status, 204);

  const ok = await pub(pi.id, pi.client_secret, 'https://tienda.example.mx');
  t.equal(ok.status, 200);
  t.equal(ok.headers.get('access-control-allow-origin'), '*', 'answers carry Access-Control-Allow-Origin');
  t.match(ok.headers.get('access-control-expose-headers'), /X-Request-Id/);
  const wrong = await pub(pi.id, 'pi_secret_wrong', 'https://tienda.example.mx');
  t.equal(wrong.status, 404);
  t.equal(wrong.headers.get('access-control-allow-origin'), '*', 'so do refusals: the page can read why');
  const v1 = await a.call('GET', `/v1/payment_intents/${pi.id}`, { key: ten.testKey, headers: { origin: 'https://tienda.example.mx' } });
  t.equal(v1.status, 200);
  t.notOk(v1.headers.get('access-control-allow-origin'), 'the secret-key API is not for browsers');
  t.equal((await httpCall(`${a.url}/v1/customers`, 'OPTIONS', { origin: 'https://tienda.example.mx' })).status, 404, 'no preflight for /v1');
});

t.test('allowed_origins: a merchant restricts the pages; its own pages and non-browser calls stay served', async (t) => {
  const tenant = await a.newTenant('Origen restringido');
  const bad = await a.call('PUT', '/v1/checkout_settings', { key: tenant.testKey, body: { allowed_origins: ['https://tienda.example.mx/pagar'] } });
  t.equal(bad.status, 400);
  t.equal(bad.body.error.code, 'checkout.invalid_settings');
  const put = await a.call('PUT', '/v1/checkout_settings', { key: tenant.testKey, body: { allowed_origins: ['https://Tienda.Example.mx/', 'http://localhost:3000'] } });
  t.equal(put.status, 200);
  t.same(put.body.allowed_origins, ['https://tienda.example.mx', 'http://localhost:3000'], 'stored as browsers send Origin');
  const pi = await intent(tenant.testKey);
  t.equal((await pub(pi.id, pi.client_secret, 'https://tienda.example.mx')).status, 200, 'a listed origin');
  t.equal((await pub(pi.id, pi.client_secret, 'http://localhost:3000')).status, 200);
  const other = await pub(pi.id, pi.client_secret, 'https://phishing.example.com');
  t.equal(other.status, 403, 'another page is refused');
  t.equal(other.body.error.code, 'checkout.origin_unauthorized');
  t.equal(other.headers.get('access-control-allow-origin'), '*');
  const host = new URL(a.url).host;
  t.equal((await pub(pi.id, pi.client_secret, `http://${host}`)).status, 200, "Orquesta's own pages (same origin)");
  t.equal((await pub(pi.id, pi.client_secret)).status, 200, 'no Origin: not a browser cross-origin call');
  const conf = await a.call('POST', `/public/payment_intents/${pi.id}/confirm`, {
    body: { client_secret: pi.client_secret, payment_token: 'tok_sim_ok', payment_method: 'card' },
    headers: { origin: 'https://phishing.example.com' },
  });
  t.equal(conf.body.error?.code, 'checkout.origin_unauthorized', 'nor may it confirm');
  t.equal((await a.call('GET', `/v1/payment_intents/${pi.id}`, { key: tenant.testKey })).body.status, 'requires_payment_method', 'nothing happened');
  const link = await a.call('POST', '/v1/payment_links', { key: tenant.testKey, body: { amount_minor: 100, currency: 'MXN', concepto: 'x', reusable: true } });
  const li = await a.call('POST', `/public/payment_links/${link.body.slug}/intent`, { headers: { origin: 'https://phishing.example.com' } });
  t.equal(li.body.error?.code, 'checkout.origin_unauthorized', "a link's intent too");
  // return_url must be on a listed origin (or Orquesta's own pages): no open redirect.
  const off = await confirm(pi.id, { payment_token: 'tok_sim_3ds', payment_method: 'card', return_url: 'https://phishing.example.com/x' }, tenant.testKey);
  t.equal(off.status, 400);
  t.equal(off.body.error.code, 'payment_intent.invalid_return_url');
  const on = await confirm(pi.id, { payment_token: 'tok_sim_3ds', payment_method: 'card', return_url: 'https://tienda.example.mx/pedido/7' }, tenant.testKey);
  t.equal(on.status, 200);
  const cleared = await a.call('PUT', '/v1/checkout_settings', { key: tenant.testKey, body: {} });
  t.equal(cleared.body.allowed_origins, undefined, 'omitted: any origin again (null fields are omitted)');
  t.equal((await pub(pi.id, pi.client_secret, 'https://phishing.example.com')).status, 200);
});

t.test('return_url: the 3-D Secure page sends the shopper back to it', async (t) => {
  const pi = await intent();
  const junk = await confirm(pi.id, { payment_token: 'tok_sim_3ds', payment_method: 'card', return_url: 'javascript:alert(1)' });
  t.equal(junk.body.error.code, 'payment_intent.invalid_return_url');
  const r = await a.call('POST', `/public/payment_intents/${pi.id}/confirm`, {
    body: { client_secret: pi.client_secret, payment_token: 'tok_sim_3ds', payment_method: 'card', return_url: 'http://localhost:3000/orden/15' },
    headers: { origin: 'http://localhost:3000' },
  });
  t.equal(r.status, 200);
  t.equal(r.headers.get('access-control-allow-origin'), '*');
  const body = await status(pi.id, 'requires_action');
  t.equal(body.next_action.type, 'redirect');
  t.notOk('return_url' in body.next_action, "next_action keeps the spec's fields");
  const page = await httpCall(a.url + new URL(body.next_action.redirect_url).pathname, 'GET', {});
  t.match(page.text, /data-return-to="http:\/\/localhost:3000\/orden\/15"/, 'the 3-D Secure page returns to the return_url');
  // Without one, the page offers no way back but its own message (the legacy return_to stays for /pay pages).
  const bare = await intent();
  await confirm(bare.id, { payment_token: 'tok_sim_3ds', payment_method: 'card' });
  const b2 = await status(bare.id, 'requires_action');
  t.match((await httpCall(a.url + new URL(b2.next_action.redirect_url).pathname + '?return_to=https://evil.example/pay/x', 'GET', {})).text, /data-return-to=""/, 'no open redirect through return_to');
});

t.test("tips: the merchant can turn them off; a receivable's page never offers one", async (t) => {
  const pi = await intent();
  const cfg = await a.call('GET', `/public/payment_intents/${pi.id}/checkout-config`, { headers: { 'x-service-client-secret': pi.client_secret } });
  t.equal(cfg.body.tips_enabled, true, 'on by default');
  t.equal(cfg.body.tip_suggestions.length, 3);
  const rec = await a.call('POST', '/v1/receivables', {
    key: ten.testKey,
    headers: idem(),
    body: { customer_name: 'Constructora Norte', customer_email: 'pagos@norte.mx', concepto: 'Factura 88', amount_minor: 1_250_000, currency: 'MXN', due_date: new Date(Date.now() + 30 * 864e5).toISOString() },
  });
  t.equal(rec.status, 201);
  const slug = rec.body.payment_link_url.split('/').pop();
  const recIntent = await a.call('POST', `/public/payment_links/${slug}/intent`);
  const rcfg = await a.call('GET', `/public/payment_intents/${recIntent.body.id}/checkout-config`, { headers: { 'x-service-client-secret': recIntent.body.client_secret } });
  t.equal(rcfg.body.tips_enabled, false, 'a receivable (B2B): no tip chooser');
  t.same(rcfg.body.tip_suggestions, []);
  const tipped = await a.call('POST', `/public/payment_intents/${recIntent.body.id}/confirm`, { body: { client_secret: recIntent.body.client_secret, payment_token: 'tok_sim_ok', payment_method: 'card', tip_minor: 1000 } });
  t.equal(tipped.status, 400);
  t.equal(tipped.body.error.code, 'payment_intent.invalid_tip', 'and no tip is taken');
  const off = await a.call('PUT', '/v1/checkout_settings', { key: ten.testKey, body: { tips_enabled: false } });
  t.equal(off.body.tips_enabled, false);
  const cfg2 = await a.call('GET', `/public/payment_intents/${pi.id}/checkout-config`, { headers: { 'x-service-client-secret': pi.client_secret } });
  t.equal(cfg2.body.tips_enabled, false, 'the merchant turned tips off');
  t.same(cfg2.body.tip_suggestions, []);
  const zero = await a.call('POST', `/public/payment_intents/${pi.id}/confirm`, { body: { client_secret: pi.client_secret, payment_token: 'tok_sim_ok', payment_method: 'card', tip_minor: 0 } });
  t.equal(zero.status, 200, 'a zero tip is no tip');
  await a.call('PUT', '/v1/checkout_settings', { key: ten.testKey, body: {} });
});

t.test("test helpers: the merchant's test key pays push payments and decides 3-D Secure", async (t) => {
  const helper = (id: string, what: string, key = ten.testKey) => a.call('POST', `/v1/test_helpers/payment_intents/${id}/${what}`, { key });
  for (const method of ['spei', 'oxxo', 'codi']) {
    const pi = await intent();
    await confirm(pi.id, { payment_token: method, payment_method: method });
    await status(pi.id, 'requires_action');
    const r = await helper(pi.id, 'pay');
    t.equal(r.status, 200, `${method}: paid`);
    t.match(r.body, { object: 'test_helper_result', action: 'pay', payment_intent_id: pi.id, livemode: false });
    const done = await status(pi.id, 'succeeded');
    t.equal(done.attempts[0].status, 'captured', `${method}: the worker took the sim provider's word`);
    const again = await helper(pi.id, 'pay');
    t.equal(again.body.error.code, 'test_helpers.state_conflict', `${method}: a paid intent is not paid twice`);
  }
  const ok3 = await intent();
  await confirm(ok3.id, { payment_token: 'tok_sim_3ds', payment_method: 'card' });
  await status(ok3.id, 'requires_action');
  t.equal((await helper(ok3.id, 'pay')).body.error.code, 'test_helpers.state_conflict', 'pay is for push payments');
  const approved = await helper(ok3.id, 'three_d_secure/approve');
  t.match(approved.body, { action: 'three_d_secure.approve', payment_intent_id: ok3.id });
  await status(ok3.id, 'succeeded');
  const no3 = await intent();
  await confirm(no3.id, { payment_token: 'tok_sim_3ds', payment_method: 'card' });
  await status(no3.id, 'requires_action');
  t.equal((await helper(no3.id, 'three_d_secure/fail')).status, 200);
  const failed = await status(no3.id, 'failed');
  t.equal(failed.last_payment_error.code, 'authentication_failed');
  const spei = await intent();
  await confirm(spei.id, { payment_token: 'spei', payment_method: 'spei' });
  await status(spei.id, 'requires_action');
  t.equal((await helper(spei.id, 'three_d_secure/approve')).body.error.code, 'test_helpers.state_conflict', '3-D Secure is for cards');
  const fresh = await intent();
  const notYet = await helper(fresh.id, 'pay');
  t.equal(notYet.status, 409);
  t.match(notYet.body.error.message, /requires_payment_method/, 'the message says what the intent is');
  const other = await a.newTenant('Otro');
  t.equal((await helper(spei.id, 'pay', other.testKey)).body.error.code, 'payment_intent.not_found', "another tenant's intent");
  const live = await intent(ten.liveKey);
  const refused = await helper(live.id, 'pay', ten.liveKey);
  t.equal(refused.status, 403, 'live keys: 403, as the test clock answers them');
  t.equal(refused.body.error.code, 'test_helpers.unauthorized');
  t.equal((await helper(crypto.randomUUID(), 'three_d_secure/approve', ten.liveKey)).body.error.code, 'test_helpers.unauthorized');
  // The operator's route stays.
  const op = await intent();
  await confirm(op.id, { payment_token: 'oxxo', payment_method: 'oxxo' });
  const waiting = await status(op.id, 'requires_action');
  const sim = await a.admin('POST', `/admin/tenants/${ten.id}/simulate-inbound`, { provider_ref: waiting.attempts[0].provider_ref });
  t.equal(sim.status, 200, "the operator's simulate-inbound");
  await status(op.id, 'succeeded');
});
