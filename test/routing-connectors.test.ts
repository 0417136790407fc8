// Real card connectors end to end against their local fakes: a tenant enables Conekta and Openpay
// with credentials (sealed, never answered), charges are routed to the cheaper one, a soft decline
// on Openpay is recovered on Conekta, and both providers' webhooks are verified at
// POST /webhooks/in/{provider}/{tenantId} (notices, chargebacks → disputes).
import t from 'tap';
import type { TestApp } from './helpers/app.js';
import { idem, until } from './helpers/activity.js';
import { chargeCard, startWithCardFakes, type CardFakes } from './helpers/card-fakes.js';
import type { FakeConekta } from './fakes/conekta.js';
import type { FakeOpenpay } from './fakes/openpay.js';

let fakes: CardFakes;
let a: TestApp;
let conekta: FakeConekta;
let openpay: FakeOpenpay;
t.before(async () => {
  ({ a, conekta, openpay } = fakes = await startWithCardFakes(2000));
});
t.teardown(() => fakes.stop());

type Ten = Awaited<ReturnType<TestApp['newTenant']>>;
async function enable(ten: Ten) {
  const c = await a.call('PUT', '/v1/routing/connectors/conekta', {
    key: ten.testKey,
    body: { default: true, fees: { card: { bps: 290, fixed_minor: 250 } }, credentials: { private_key: conekta.privateKey, webhook_public_key: conekta.publicKeyPem } },
  });
  const o = await a.call('PUT', '/v1/routing/connectors/openpay', {
    key: ten.testKey,
    body: { fees: { card: { bps: 250, fixed_minor: 250 } }, credentials: { merchant_id: openpay.merchantId, private_key: openpay.privateKey, webhook_user: 'orq', webhook_password: 'hook-pass' } },
  });
  return { c, o };
}
const charge = (key: string, amount: number, token: string) => chargeCard(a, key, amount, token);

t.test('credentials are stored sealed and never answered', async (t) => {
  const ten = await a.newTenant('Creds');
  const { c, o } = await enable(ten);
  t.equal(c.status, 200, c.text);
  t.equal(o.status, 200, o.text);
  t.same(c.body.credentials, { configured: true, hint: 'key_…vate' });
  const listed = await a.call('GET', '/v1/routing/connectors', { key: ten.testKey });
  t.notMatch(listed.text, conekta.privateKey);
  t.notMatch(listed.text, openpay.privateKey);
  t.notMatch(listed.text, 'hook-pass');
  const [row] = await a.app.deps.sql`select credentials_sealed from routing_connectors where tenant_id = ${ten.id} and connector_key = 'openpay'`;
  t.notMatch(row.credentials_sealed, openpay.privateKey, 'not in clear in the database');
  const missing = await a.call('PUT', '/v1/routing/connectors/openpay', { key: ten.liveKey, body: { fees: { card: { bps: 1, fixed_minor: 1 } } } });
  t.equal(missing.body.error.code, 'routing.credentials_required');
  const bad = await a.call('PUT', '/v1/routing/connectors/openpay', { key: ten.liveKey, body: { fees: { card: { bps: 1, fixed_minor: 1 } }, credentials: { private_key: 'x' } } });
  t.equal(bad.body.error.code, 'routing.invalid_credentials', 'merchant_id is required');
  const keep = await a.call('PUT', '/v1/routing/connectors/openpay', { key: ten.testKey, body: { fees: { card: { bps: 250, fixed_minor: 250 } } } });
  t.equal(keep.status, 200, 'a later PUT without credentials keeps them');
  t.equal(keep.body.credentials.configured, true);
});

t.test('routed to the cheaper real connector; a soft decline on Openpay is recovered on Conekta', async (t) => {
  const ten = await a.newTenant('Real routing');
  await enable(ten);
  const ok = await charge(ten.testKey, 50000, 'tok_ok');
  t.equal(ok.status, 'succeeded');
  t.match(ok.attempts, [{ connector_key: 'openpay', status: 'captured' }], 'openpay is cheaper (2.50% + 2.50)');
  t.equal(openpay.completedFor(`orq_att_${ok.attempts[0].id}`), 1, 'charged once at the provider, with our key as order_id');
  const rec = await charge(ten.testKey, 50000, 'tok_unavailable');
  t.equal(rec.status, 'succeeded');
  t.match(rec.attempts, [{ connector_key: 'openpay', status: 'failed', failure_code: 'provider_unavailable' }, { connector_key: 'conekta', status: 'captured' }]);
  const hardOne = await charge(ten.testKey, 50000, 'tok_declined');
  t.equal(hardOne.status, 'failed');
  t.equal(hardOne.attempts.length, 1, 'a hard decline (3001) is not retried');
  const s = await a.call('GET', '/v1/reports/savings', { key: ten.testKey });
  t.match(s.body, { routing_saved_minor: 0 + (1450 + 250) - (1250 + 250), retry_recovered_minor: 50000 });
});

t.test('webhooks: Conekta signature, Openpay Basic, chargebacks open disputes', async (t) => {
  const ten = await a.newTenant('Hooks');
  await enable(ten);
  // Conekta only, so the charge goes there.
  await a.call('DELETE', '/v1/routing/connectors/openpay', { key: ten.testKey });
  const pi = await charge(ten.testKey, 30000, 'tok_test_visa_4242');
  t.equal(pi.attempts[0].connector_key, 'conekta');
  const order = conekta.orders.get(pi.attempts[0].provider_ref)!;
  t.ok(order, 'the provider_ref is the Conekta order id');
  const [body, digest] = conekta.event('order.paid', order);
  const ok = await a.call('POST', `/webhooks/in/conekta/${ten.id}`, { raw: body, headers: { 'content-type': 'application/json', digest } });
  t.equal(ok.status, 200, ok.text);
  t.match(ok.body, { received: true, matched: true, type: 'order.paid' });
  const [inbox] = await a.app.deps.sql`select source from inbox where subject_id = ${pi.attempts[0].id}`;
  t.equal(inbox.source, 'webhook:conekta', 'stored as a notice about the attempt');
  const forged = await a.call('POST', `/webhooks/in/conekta/${ten.id}`, { raw: body.replace('order.paid', 'order.canceled'), headers: { 'content-type': 'application/json', digest } });
  t.equal(forged.status, 400);
  t.equal(forged.body.error.code, 'webhook_in.invalid_signature');
  // Conekta's chargeback object names the charge (charge_id), not the order (issue 28.1).
  const [cb, cbDigest] = conekta.event('charge.chargeback.created', conekta.chargeback(order, 'fraudulent'));
  t.equal((await a.call('POST', `/webhooks/in/conekta/${ten.id}`, { raw: cb, headers: { 'content-type': 'application/json', digest: cbDigest } })).status, 200);
  const disputes = await a.call('GET', '/v1/disputes', { key: ten.testKey });
  t.match(disputes.body.data, [{ payment_intent_id: pi.id, attempt_id: pi.attempts[0].id, reason: 'fraudulent', status: 'needs_response', amount_minor: 30000 }]);

  const ten2 = await a.newTenant('Hooks openpay');
  await enable(ten2);
  const op = await charge(ten2.testKey, 30000, 'tok_ok');
  t.equal(op.attempts[0].connector_key, 'openpay');
  const note = { type: 'charge.succeeded', event_date: new Date().toISOString(), transaction: { id: op.attempts[0].provider_ref, order_id: `orq_att_${op.attempts[0].id}`, status: 'completed' } };
  const basic = `Basic ${Buffer.from('orq:hook-pass').toString('base64')}`;
  const r = await a.call('POST', `/webhooks/in/openpay/${ten2.id}`, { body: note, headers: { authorization: basic } });
  t.match(r.body, { received: true, matched: true });
  const noAuth = await a.call('POST', `/webhooks/in/openpay/${ten2.id}`, { body: note });
  t.equal(noAuth.body.error.code, 'webhook_in.invalid_signature');
  const ping = await a.call('POST', `/webhooks/in/openpay/${ten2.id}`, { body: { type: 'verification', verification_code: 'Xy12' }, headers: { authorization: basic } });
  t.match(ping.body, { type: 'verification', matched: false });
  const cb2 = await a.call('POST', `/webhooks/in/openpay/${ten2.id}`, { body: { ...note, type: 'chargeback.created', transaction: { ...note.transaction, reason: 'product_not_received' } }, headers: { authorization: basic } });
  t.equal(cb2.status, 200);
  t.match((await a.call('GET', '/v1/disputes', { key: ten2.testKey })).body.data, [{ attempt_id: op.attempts[0].id, reason: 'product_not_received' }]);
});

t.test('GET one connector: what the provider needs from the tenant (webhook key, verification code) and a state; never a secret (issue 28.2)', async (t) => {
  const ten = await a.newTenant('Connector detail');
  await enable(ten);
  const basic = `Basic ${Buffer.from('orq:hook-pass').toString('base64')}`;
  const ping = await a.call('POST', `/webhooks/in/openpay/${ten.id}`, { body: { type: 'verification', verification_code: 'Zq81xT' }, headers: { authorization: basic } });
  t.equal(ping.status, 200, ping.text);
  const op = await a.call('GET', '/v1/routing/connectors/openpay', { key: ten.testKey });
  t.equal(op.status, 200, op.text);
  t.match(op.body, { object: 'routing_connector', connector_key: 'openpay', webhook: { url: `/webhooks/in/openpay/${ten.id}`, user: 'orq', verification_code: 'Zq81xT' }, status: { state: 'unused' } });
  t.notMatch(op.text, openpay.privateKey);
  t.notMatch(op.text, 'hook-pass');
  const live = await a.call('GET', '/v1/routing/connectors/openpay', { key: ten.liveKey });
  t.equal(live.body.error?.code, 'routing.connector_not_found', 'the other mode has its own table');
  const ck = await a.call('GET', '/v1/routing/connectors/conekta', { key: ten.testKey });
  t.match(ck.body, { connector_key: 'conekta', webhook: { url: `/webhooks/in/conekta/${ten.id}`, public_key: conekta.publicKeyPem } });
  t.notMatch(ck.text, conekta.privateKey);
  // Wrong credentials: the provider refuses them and the connector says so.
  await a.call('DELETE', '/v1/routing/connectors/openpay', { key: ten.testKey });
  await a.call('PUT', '/v1/routing/connectors/conekta', { key: ten.testKey, body: { default: true, fees: { card: { bps: 290, fixed_minor: 250 } }, credentials: { private_key: 'key_wrong_one_1234' } } });
  const pi = await charge(ten.testKey, 10000, 'tok_test_visa_4242');
  t.match(pi.attempts, [{ connector_key: 'conekta', failure_code: 'invalid_credentials' }]);
  const bad = await a.call('GET', '/v1/routing/connectors/conekta', { key: ten.testKey });
  t.match(bad.body.status, { state: 'invalid_credentials' });
  t.notMatch(bad.text, 'key_wrong_one_1234');
});

t.test('Openpay gets the shopper\'s IP: the confirm\'s payer_ip, or the browser\'s address at the public checkout (issue 28.2)', async (t) => {
  const ten = await a.newTenant('Payer IP');
  await enable(ten);
  const ok = await charge(ten.testKey, 20000, 'tok_ok');
  t.match(ok.attempts, [{ connector_key: 'openpay', status: 'captured' }]);
  t.equal(openpay.forwardedFor[openpay.forwardedFor.length - 1], '203.0.113.50', 'the confirm\'s payer_ip as X-Forwarded-For');
  const pi = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 20000, currency: 'MXN' }, headers: idem() });
  const r = await a.call('POST', `/public/payment_intents/${pi.body.id}/confirm`, { body: { client_secret: pi.body.client_secret, payment_token: 'tok_ok#dsess_pub', payment_method: 'card' } });
  t.equal(r.status, 200, r.text);
  const done = (await until(() => a.call('GET', `/v1/payment_intents/${pi.body.id}?expand=attempts`, { key: ten.testKey }), (x) => ['succeeded', 'failed'].includes(x.body.status))).body;
  t.match(done.attempts, [{ connector_key: 'openpay', status: 'captured' }]);
  t.match(openpay.forwardedFor[openpay.forwardedFor.length - 1], /^(127\.0\.0\.1|::1)$/, 'the browser\'s address (here the test client\'s loopback)');
  const none = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 20000, currency: 'MXN' }, headers: idem() });
  await a.call('POST', `/v1/payment_intents/${none.body.id}/confirm`, { key: ten.testKey, body: { payment_token: 'tok_ok#dsess_x', payment_method: 'card' }, headers: idem() });
  const rec = (await until(() => a.call('GET', `/v1/payment_intents/${none.body.id}?expand=attempts`, { key: ten.testKey }), (x) => ['succeeded', 'failed'].includes(x.body.status))).body;
  t.match(rec.attempts, [{ connector_key: 'openpay', status: 'failed', failure_code: 'payer_ip_required' }, { connector_key: 'conekta', status: 'captured' }], 'no IP: not sent to Openpay, taken by Conekta');
});

t.test('Conekta orders name the intent\'s customer as buyer, read with the intent (issue 28.4)', async (t) => {
  const ten = await a.newTenant('Buyer');
  await enable(ten);
  await a.call('DELETE', '/v1/routing/connectors/openpay', { key: ten.testKey }); // Conekta only
  const c = await a.call('POST', '/v1/customers', { key: ten.testKey, body: { name: 'Ana Pérez', email: 'ana.perez@example.com' }, headers: idem() });
  t.equal(c.status, 201, c.text);
  const pay = async (body: Record<string, unknown>) => {
    const pi = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 12000, currency: 'MXN', ...body }, headers: idem() });
    t.equal(pi.status, 201, pi.text);
    await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key: ten.testKey, body: { payment_token: 'tok_test_visa_4242', payment_method: 'card' }, headers: idem() });
    const done = (await until(() => a.call('GET', `/v1/payment_intents/${pi.body.id}?expand=attempts`, { key: ten.testKey }), (x) => ['succeeded', 'failed'].includes(x.body.status))).body;
    t.match(done.attempts, [{ connector_key: 'conekta', status: 'captured' }]);
    // The buyer goes to Conekta only: not in the intent's answer, nor in its events.
    const [ev] = await a.app.deps.sql`select coalesce(string_agg(data::text, ' '), '') as text from outbox_events where entity_id = ${pi.body.id}`;
    for (const text of [JSON.stringify(done), ev.text as string]) {
      t.notMatch(text, '5500000000', 'no phone');
      t.notMatch(text, 'ana.perez@example.com', 'no buyer email');
    }
    return conekta.orders.get(done.attempts[0].provider_ref)!.customer_info;
  };
  t.match(await pay({ customer_id: c.body.id }), { name: 'Ana Pérez', email: 'ana.perez@example.com' }, 'the customer is the buyer');
  t.match(await pay({}), { name: 'Cliente', email: 'pagos@orquesta.invalid' }, 'no customer: the documented placeholder');
  t.same(conekta.violations, [], 'valid against Conekta\'s schema');
});

t.test('a tokenizer-bound token (<connector>:<token>) is charged on that connector only; live checkout config names the tokenizer', async (t) => {
  const ten = await a.newTenant('Bound tokens');
  await enable(ten); // openpay is the cheaper
  const bound = await charge(ten.testKey, 50000, 'conekta:tok_test_visa_4242');
  t.match(bound.attempts, [{ connector_key: 'conekta', status: 'captured' }], 'routed to the token\'s connector, not the cheapest');
  t.equal(conekta.paidFor(`orq_att_${bound.attempts[0].id}`), 1, 'charged with the bare token');
  const declined = await charge(ten.testKey, 50000, 'conekta:tok_test_card_declined');
  t.equal(declined.attempts.length, 1);
  const d = (await a.call('GET', `/v1/routing/decisions?payment_intent=${bound.id}`, { key: ten.testKey })).body.data[0];
  t.match(d, { chosen: 'conekta', saved_minor: 0, default_connector: undefined }, 'no saving claimed: routing had no choice');
  // live: the checkout config names the tokenizer with public keys only
  await a.call('PUT', '/v1/routing/connectors/openpay', { key: ten.liveKey, body: { fees: { card: { bps: 250, fixed_minor: 250 } }, credentials: { merchant_id: openpay.merchantId, private_key: openpay.privateKey, public_key: 'pk_fake_public' } } });
  const pi = await a.call('POST', '/v1/payment_intents', { key: ten.liveKey, body: { amount_minor: 1000, currency: 'MXN' }, headers: idem() });
  const cfg = await a.call('GET', `/public/payment_intents/${pi.body.id}/checkout-config`, { headers: { 'x-service-client-secret': pi.body.client_secret } });
  t.equal(cfg.status, 200, cfg.text);
  t.same(cfg.body.card_tokenizer, { connector: 'openpay', public_key: 'pk_fake_public', merchant_id: openpay.merchantId, sandbox: false });
  t.notMatch(cfg.text, openpay.privateKey);
  const testPi = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 1000, currency: 'MXN' }, headers: idem() });
  const testCfg = await a.call('GET', `/public/payment_intents/${testPi.body.id}/checkout-config`, { headers: { 'x-service-client-secret': testPi.body.client_secret } });
  t.equal(testCfg.body.card_tokenizer, undefined, 'test mode keeps the sim token list');
});

t.test('saving a card with a real connector is refused at once (not wired yet)', async (t) => {
  const ten = await a.newTenant('No save');
  await enable(ten);
  const c = await a.call('POST', '/v1/customers', { key: ten.testKey, body: {} });
  const r = await a.call('POST', `/v1/customers/${c.body.id}/payment_methods`, { key: ten.testKey, body: { payment_token: 'tok_test_visa_4242', connector: 'conekta' }, headers: idem() });
  t.equal(r.status, 400);
  t.equal(r.body.error.code, 'payment_method.no_route');
});
