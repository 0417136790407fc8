// The Conekta adapter against its local fake: each decline family, every documented code mapped
// (a code the fake documents without a mapping fails here), an unknown code never falls into a
// success or a soft decline, bad credentials, the webhook signature (DIGEST) as Conekta makes it,
// lost answers recovered without spending the single-use token twice, and every request and answer
// checked against Conekta's published schema (the fake records violations).
import t from 'tap';
import { generateKeyPairSync, privateEncrypt, createHash, randomUUID } from 'node:crypto';
import { CONEKTA_ACCEPT, CONEKTA_ERROR_CODES, CONEKTA_FAILURE_CODES, CONEKTA_UNKNOWN_BUYER, ConektaAcquirer, verifyConektaWebhook } from '../../connectors/card/conekta.js';
import { MemoryKeyBook } from '../../connectors/card/http.js';
import { OutcomeUnknown } from '../../kernel/outbound.js';
import { CONEKTA_DOCUMENTED_CODES, CONEKTA_DOCUMENTED_FAILURE_CODES, FakeConekta } from '../fakes/conekta.js';

const fake = await new FakeConekta().start();
fake.slowMs = 3000; // past the adapter's deadline below, with room for a loaded machine
t.teardown(() => fake.stop());
const book = new MemoryKeyBook();
const conekta = new ConektaAcquirer({ baseUrl: fake.url, timeoutMs: 1500, book, credentials: async (tenant) => (tenant === 'none' ? null : { private_key: tenant === 'bad' ? 'key_wrong' : fake.privateKey }) });
const charge = (token: string, tenantId: string = randomUUID()) => {
  const attemptId = randomUUID();
  return conekta.charge({ idempotencyKey: `orq_att_${attemptId}`, attemptId, tenantId, livemode: false, method: 'card', amountMinor: 20000, currency: 'MXN', paymentToken: token, now: new Date() });
};

t.test('the decline-code maps are exhaustive over what Conekta documents', async (t) => {
  t.same(Object.keys(CONEKTA_ERROR_CODES).sort(), [...CONEKTA_DOCUMENTED_CODES].sort(), 'details codes: mapped = documented');
  t.same(Object.keys(CONEKTA_FAILURE_CODES).sort(), [...CONEKTA_DOCUMENTED_FAILURE_CODES].sort(), 'charge failure codes: mapped = documented');
  for (const code of CONEKTA_DOCUMENTED_CODES) {
    const o = await charge(`tok_test_code:${code}`);
    t.not((o as { code?: string }).code, 'unmapped_decline', code);
    t.equal(o.kind, CONEKTA_ERROR_CODES[code]!.kind, `${code}: ${o.kind}`);
    t.equal((o as { code: string }).code, CONEKTA_ERROR_CODES[code]!.code);
  }
  for (const f of CONEKTA_DOCUMENTED_FAILURE_CODES) {
    const o = await charge(`tok_test_failure:${f}`);
    t.match(o, { kind: 'hard_decline', code: CONEKTA_FAILURE_CODES[f]!.code }, `failure_code ${f}`);
  }
});

t.test('decline families', async (t) => {
  t.match(await charge('tok_test_card_declined'), { kind: 'hard_decline', code: 'card_declined' });
  t.match(await charge('tok_test_insufficient_funds'), { kind: 'hard_decline', code: 'insufficient_funds' });
  const declined = await charge('tok_test_card_declined');
  t.match((declined as { providerRef?: string }).providerRef, /^ord_/, 'the declined order is referenced');
  t.match(await charge('tok_test_code:conekta.errors.parameter_validation.payment_method.token_id.nonexistent_token'), { kind: 'hard_decline', code: 'invalid_token' });
});

t.test('an unknown code is a hard decline named unmapped_decline, never a success or a retry', async (t) => {
  const o = await charge('tok_test_unknown_code');
  t.match(o, { kind: 'hard_decline', code: 'unmapped_decline' });
  t.match((o as { message: string }).message, /brand_new_reason/, 'the provider code is kept for the operator');
});

t.test('credentials: wrong ones are a hard decline; none stored is a configuration decline', async (t) => {
  t.match(await charge('tok_test_visa_4242', 'bad'), { kind: 'hard_decline', code: 'invalid_credentials' });
  t.match(await charge('tok_test_visa_4242', 'none'), { kind: 'hard_decline', code: 'invalid_credentials' });
});

t.test('webhook: DIGEST is the RSA encryption (Conekta\'s private key) of the body\'s hex SHA-256, base64 (issue 28.1)', async (t) => {
  const o = [...fake.orders.values()][0]!;
  const [body, digest] = fake.event('order.paid', o);
  // Independent of the fake: Conekta's documented construction, made here by hand.
  const hex = createHash('sha256').update(body, 'utf8').digest('hex');
  const byHand = privateEncrypt(fake.keys.privateKey, Buffer.from(hex)).toString('base64');
  t.match(verifyConektaWebhook(body, byHand, fake.publicKeyPem), { type: 'order.paid', object: { id: o.id } }, 'privateEncrypt(hex sha256) is accepted');
  t.match(verifyConektaWebhook(body, digest, fake.publicKeyPem), { type: 'order.paid' });
  t.match(verifyConektaWebhook(body, encodeURIComponent(byHand), fake.publicKeyPem), { type: 'order.paid' }, 'a URL-encoded header too');
  t.match(verifyConektaWebhook(body, fake.pkcs1Signature(body), fake.publicKeyPem), { type: 'order.paid' }, 'a PKCS#1 v1.5 signature is as unforgeable: accepted');
  t.equal(verifyConektaWebhook(body + ' ', digest, fake.publicKeyPem), null, 'a changed body fails');
  t.equal(verifyConektaWebhook(body, undefined, fake.publicKeyPem), null, 'no signature fails');
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  t.equal(verifyConektaWebhook(body, digest, other.publicKey.export({ type: 'spki', format: 'pem' }).toString()), null, 'another key fails');
  t.equal(verifyConektaWebhook(body, privateEncrypt(other.privateKey, Buffer.from(hex)).toString('base64'), fake.publicKeyPem), null, 'encrypted with another private key fails');
  t.equal(verifyConektaWebhook(body, 'not base64 at all', fake.publicKeyPem), null);
  t.equal(verifyConektaWebhook(body, Buffer.from(hex).toString('base64'), fake.publicKeyPem), null, 'the bare digest (no RSA) fails');
});

t.test('the API version is v2.3.0, as the official SDK sends (issue 28.4)', async (t) => {
  t.equal(CONEKTA_ACCEPT, 'application/vnd.conekta-v2.3.0+json');
  await charge('tok_test_visa_4242');
  t.equal(fake.accepts[fake.accepts.length - 1], 'application/vnd.conekta-v2.3.0+json');
});

t.test('a lost answer is found without search covering metadata; the single-use token is never spent twice (issue 28.4)', async (t) => {
  const token = fake.issueToken('timeout');
  const attemptId = randomUUID();
  const req = { idempotencyKey: `orq_att_${attemptId}`, attemptId, tenantId: randomUUID(), livemode: false, method: 'card' as const, amountMinor: 20000, currency: 'MXN', paymentToken: token, now: new Date() };
  await t.rejects(conekta.charge(req), OutcomeUnknown, 'the answer came too late: unknown');
  t.equal(fake.paidFor(req.idempotencyKey), 1, 'Conekta charged it');
  const found = await conekta.retrieve(req.idempotencyKey, req);
  t.match(found, { kind: 'captured' }, 'retrieve finds the order by listing the orders created around the send');
  const again = await conekta.charge(req);
  t.match(again, { kind: 'captured' }, 'a repeat of the key reads the order back, no token_used decline');
  t.equal(fake.paidWithToken(token), 1, 'charged once');

  // The listing has not caught up (or the order is older than the window) and Conekta does not honour
  // the Idempotency-Key (a key it no longer keeps): the repeat spends no money and records no decline
  // against a paid order.
  fake.honorsIdempotencyKey = false;
  t.teardown(() => {
    fake.honorsIdempotencyKey = true;
  });
  const token2 = fake.issueToken('timeout');
  const req2 = { ...req, idempotencyKey: `orq_att_${randomUUID()}`, paymentToken: token2 };
  await t.rejects(conekta.charge(req2), OutcomeUnknown);
  const order = [...fake.orders.values()].find((o) => o.metadata.orquesta_key === req2.idempotencyKey)!;
  const saved = order.created_at;
  order.created_at = saved - 7200; // outside the window the adapter lists
  await t.rejects(conekta.charge(req2), OutcomeUnknown, 'token used by our own earlier send: unknown, not a hard decline');
  order.created_at = saved;
  t.match(await conekta.charge(req2), { kind: 'captured' });
  t.equal(fake.paidWithToken(token2), 1);
});

t.test('createOrder carries Idempotency-Key = our key: a resend the lookup cannot place gets the first order back (issue 28.4)', async (t) => {
  const token = fake.issueToken('timeout');
  const attemptId = randomUUID();
  const req = { idempotencyKey: `orq_att_${attemptId}`, attemptId, tenantId: randomUUID(), livemode: false, method: 'card' as const, amountMinor: 20000, currency: 'MXN', paymentToken: token, now: new Date() };
  await t.rejects(conekta.charge(req), OutcomeUnknown, 'the answer came too late: unknown');
  const order = [...fake.orders.values()].find((o) => o.metadata.orquesta_key === req.idempotencyKey)!;
  order.created_at -= 7200; // outside the window the adapter lists, and search does not cover metadata
  const again = await conekta.charge(req);
  t.match(again, { kind: 'captured', providerRef: order.id }, 'Conekta answered the original order to the repeated key');
  t.equal(fake.paidWithToken(token), 1, 'the single-use token was spent once');
  t.equal(fake.orders.size, new Set([...fake.orders.values()].map((o) => o.id)).size);
  t.same(fake.idempotencyKeys.filter((k) => k === req.idempotencyKey).length, 2, 'both sends carried our key as Idempotency-Key');
});

t.test('a chargeback names the charge: the adapter books charge id → order id', async (t) => {
  const token = fake.issueToken('ok');
  const attemptId = randomUUID();
  const o = await conekta.charge({ idempotencyKey: `orq_att_${attemptId}`, attemptId, tenantId: randomUUID(), livemode: false, method: 'card', amountMinor: 5000, currency: 'MXN', paymentToken: token, now: new Date() });
  const order = fake.orders.get((o as { providerRef: string }).providerRef)!;
  const cb = fake.chargeback(order);
  t.equal(await conekta.orderOfCharge(cb.charge_id as string), order.id);
});

t.test('the order names the intent\'s customer as its buyer; what is not known is the documented placeholder (issue 28.4)', async (t) => {
  const send = async (buyer?: { name?: string; email?: string }) => {
    const attemptId = randomUUID();
    const o = await conekta.charge({ idempotencyKey: `orq_att_${attemptId}`, attemptId, tenantId: randomUUID(), livemode: false, method: 'card', amountMinor: 7000, currency: 'MXN', paymentToken: fake.issueToken('ok'), now: new Date(), ...(buyer ? { buyer } : {}) });
    t.match(o, { kind: 'captured' });
    return fake.orders.get((o as { providerRef: string }).providerRef)!.customer_info;
  };
  t.match(await send({ name: 'Ana Pérez', email: 'ana@example.com' }), { name: 'Ana Pérez', email: 'ana@example.com', phone: CONEKTA_UNKNOWN_BUYER.phone }, 'the customer\'s name and email');
  t.match(await send({ email: 'solo@example.com' }), { name: CONEKTA_UNKNOWN_BUYER.name, email: 'solo@example.com' }, 'an email without a name');
  t.match(await send({ name: 'Sin Correo', email: 'not an email' }), { name: 'Sin Correo', email: CONEKTA_UNKNOWN_BUYER.email }, 'an email Conekta would refuse (format: email) is not sent');
  t.match(await send(), { name: CONEKTA_UNKNOWN_BUYER.name, email: CONEKTA_UNKNOWN_BUYER.email, phone: CONEKTA_UNKNOWN_BUYER.phone }, 'no customer: the placeholder buyer');
  t.match(CONEKTA_UNKNOWN_BUYER.email, /\.invalid$/, 'the placeholder email reaches nobody (RFC 2606)');
});

t.test('every request the adapter sent and every answer the fake gave matched Conekta\'s published schema', async (t) => {
  t.same(fake.violations, []);
});
