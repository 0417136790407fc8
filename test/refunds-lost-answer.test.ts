// Refunds whose answer is lost after the money moved (issue 24 part 1, issue 28 point 3): the real
// Conekta and Openpay adapters against their local fakes, which make the refund and answer after
// the adapter's deadline. The refund job sees an unknown outcome, retries, asks the provider first
// (Acquirer.lookupRefund) and records what it finds: 0 double refunds on Conekta (which would take
// a second partial refund of the same order), and a refund that succeeded is never recorded
// `failed` on Openpay (which refuses a second refund of a charge).
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
  // The adapters give up after 400 ms; the fakes answer a lost refund after 1500 ms (the refund is made at once).
  ({ a, conekta, openpay } = fakes = await startWithCardFakes(400));
});
t.teardown(() => fakes.stop());

type Ten = Awaited<ReturnType<TestApp['newTenant']>>;
const charge = (ten: Ten, amount: number, token: string) => chargeCard(a, ten.testKey, amount, token);
async function refund(ten: Ten, attemptId: string, amount?: number) {
  const r = await a.call('POST', '/v1/refunds', { key: ten.testKey, body: { attempt_id: attemptId, ...(amount ? { amount_minor: amount } : {}) }, headers: idem() });
  if (r.status !== 201) throw new Error(`refund: ${r.status} ${r.text}`);
  return (await until(() => a.call('GET', `/v1/refunds/${r.body.id}`, { key: ten.testKey }), (x) => x.body.status !== 'requested', 30_000)).body;
}
const entries = async (refundId: string) =>
  (await a.app.deps.sql`select count(*)::int as n from journal_entries where kind = 'refund.succeeded' and ref_id = ${refundId}`)[0].n as number;

t.test('Conekta: two partial refunds whose answers are lost are each made once and recorded succeeded', async (t) => {
  const ten = await a.newTenant('Conekta lost refunds');
  const c = await a.call('PUT', '/v1/routing/connectors/conekta', {
    key: ten.testKey,
    body: { default: true, fees: { card: { bps: 290, fixed_minor: 250 } }, credentials: { private_key: conekta.privateKey, webhook_public_key: conekta.publicKeyPem } },
  });
  t.equal(c.status, 200, c.text);
  const pi = await charge(ten, 10_000, 'tok_test_visa_4242');
  t.equal(pi.status, 'succeeded');
  const attempt = pi.attempts[0];
  t.equal(attempt.connector_key, 'conekta');
  const order = attempt.provider_ref as string;

  conekta.loseRefundAnswers = true;
  t.teardown(() => {
    conekta.loseRefundAnswers = false;
  });
  const first = await refund(ten, attempt.id, 2000);
  const second = await refund(ten, attempt.id, 3000);
  t.equal(first.status, 'succeeded', 'the lost answer was found by asking');
  t.equal(second.status, 'succeeded');
  const made = conekta.refundsOn(order);
  t.same(made.map((r) => r.amount), [2000, 3000], 'Conekta made exactly the two refunds: 0 double refunds');
  t.same([first.provider_ref, second.provider_ref], made.map((r) => r.id), 'each refund recorded the provider refund it is');
  const posts = conekta.calls.filter((x) => x.method === 'POST' && x.path === `/orders/${order}/refunds`).length;
  t.equal(posts, 2, 'one refund call each: the retry asked instead of sending');
  t.equal(await entries(first.id), 1, 'one ledger entry per refund');
  t.equal(await entries(second.id), 1);
  const [mark] = await a.app.deps.sql`select send_started_at from refunds where id = ${first.id}`;
  t.ok(mark.send_started_at instanceof Date, 'the mark was committed before the call');
  const after = await until(() => a.call('GET', `/v1/payment_intents/${pi.id}?expand=attempts`, { key: ten.testKey }), (r) => r.body.attempts[0].status === 'partially_refunded');
  t.equal(after.body.attempts[0].status, 'partially_refunded', 'the attempt follows its refunds');
});

t.test('Openpay: a full refund whose answer is lost is recorded succeeded, never failed, and made once', async (t) => {
  const ten = await a.newTenant('Openpay lost refund');
  const o = await a.call('PUT', '/v1/routing/connectors/openpay', {
    key: ten.testKey,
    body: { default: true, fees: { card: { bps: 250, fixed_minor: 250 } }, credentials: { merchant_id: openpay.merchantId, private_key: openpay.privateKey } },
  });
  t.equal(o.status, 200, o.text);
  const pi = await charge(ten, 8_000, 'tok_ok');
  t.equal(pi.status, 'succeeded');
  const attempt = pi.attempts[0];
  t.equal(attempt.connector_key, 'openpay');

  openpay.loseRefundAnswers = true;
  t.teardown(() => {
    openpay.loseRefundAnswers = false;
  });
  const r = await refund(ten, attempt.id);
  t.equal(r.status, 'succeeded', 'asked, not resent (a resend is refused with 1003 and would record failed)');
  const ch = openpay.charges.get(attempt.provider_ref)!;
  t.equal(ch.status, 'refunded');
  t.equal(r.provider_ref, ch.refund.id, 'the refund Openpay made');
  const posts = openpay.calls.filter((x) => x.method === 'POST' && x.path.endsWith(`/charges/${attempt.provider_ref}/refund`)).length;
  t.equal(posts, 1, 'one refund call: 0 double refunds');
  t.equal(await entries(r.id), 1);
});
