// The Conekta adapter against its local fake: each decline family, every documented code mapped
// (a code the fake documents without a mapping fails here), an unknown code never falls into a
// success or a soft decline, bad credentials, and the webhook signature (DIGEST).
import t from 'tap';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { CONEKTA_ERROR_CODES, CONEKTA_FAILURE_CODES, ConektaAcquirer, verifyConektaWebhook } from '../../connectors/card/conekta.js';
import { MemoryKeyBook } from '../../connectors/card/http.js';
import { CONEKTA_DOCUMENTED_CODES, CONEKTA_DOCUMENTED_FAILURE_CODES, FakeConekta } from '../fakes/conekta.js';

const fake = await new FakeConekta().start();
t.teardown(() => fake.stop());
const conekta = new ConektaAcquirer({ baseUrl: fake.url, timeoutMs: 400, book: new MemoryKeyBook(), credentials: async (tenant) => (tenant === 'none' ? null : { private_key: tenant === 'bad' ? 'key_wrong' : fake.privateKey }) });
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

t.test('webhook: DIGEST is an RSA-SHA256 signature over the raw body', async (t) => {
  const o = [...fake.orders.values()][0]!;
  const [body, digest] = fake.event('order.paid', o);
  t.match(verifyConektaWebhook(body, digest, fake.publicKeyPem), { type: 'order.paid', object: { id: o.id } });
  t.equal(verifyConektaWebhook(body + ' ', digest, fake.publicKeyPem), null, 'a changed body fails');
  t.equal(verifyConektaWebhook(body, undefined, fake.publicKeyPem), null, 'no signature fails');
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
  t.equal(verifyConektaWebhook(body, digest, other), null, 'another key fails');
  t.equal(verifyConektaWebhook(body, 'not base64 at all', fake.publicKeyPem), null);
});
