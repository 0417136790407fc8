// The Openpay adapter against its local fake: every documented error code mapped (a code the fake
// documents without a mapping fails here), the decline families, order_id idempotency (1006), an
// unknown code, bad credentials, and the webhook's HTTP Basic check.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { OPENPAY_CODE_SOURCES, OPENPAY_CODES, OpenpayAcquirer, readOpenpayWebhook } from '../../connectors/card/openpay.js';
import { MemoryKeyBook } from '../../connectors/card/http.js';
import { FakeOpenpay, OPENPAY_DOCUMENTED_CODES } from '../fakes/openpay.js';
import { OutcomeUnknown } from '../../kernel/outbound.js';

const fake = await new FakeOpenpay().start();
fake.slowMs = 3000; // past the adapter's deadline below, with room for a loaded machine
t.teardown(() => fake.stop());
const book = new MemoryKeyBook();
const openpay = new OpenpayAcquirer({ baseUrl: fake.url, timeoutMs: 1500, book, credentials: async (tenant) => (tenant === 'none' ? null : { merchant_id: fake.merchantId, private_key: tenant === 'bad' ? 'sk_wrong' : fake.privateKey }) });
const req = (token: string, tenantId: string = randomUUID()) => {
  const attemptId = randomUUID();
  // The token as the browser tokenizer packs it (`<token>#<device_session_id>`), the shopper's IP as confirm passes it.
  return { idempotencyKey: `orq_att_${attemptId}`, attemptId, tenantId, livemode: false, method: 'card' as const, amountMinor: 12345, currency: 'MXN', paymentToken: token.includes('#') ? token : `${token}#dsess_test`, payerIp: '198.51.100.23', now: new Date() };
};

t.test('the error-code map is exhaustive over Openpay\'s errors table', async (t) => {
  t.same(Object.keys(OPENPAY_CODES).map(Number).sort(), OPENPAY_DOCUMENTED_CODES.map(([c]) => c).sort(), 'mapped = documented');
  for (const [code] of OPENPAY_DOCUMENTED_CODES) {
    const m = OPENPAY_CODES[code]!;
    if (code === 1006) continue; // idempotency: below
    const p = openpay.charge(req(`tok_code_${code}`));
    if (m.kind === 'fault') await t.rejects(p, OutcomeUnknown, `${code}: a fault (unknown outcome)`);
    else t.match(await p, { kind: m.kind, code: m.code }, `${code} → ${m.kind} ${m.code}`);
  }
});

t.test('each code is marked with the material that documents it; the confirmed ones are exactly the reference\'s table (issue 28.2)', async (t) => {
  t.same(Object.keys(OPENPAY_CODE_SOURCES).map(Number).sort(), Object.keys(OPENPAY_CODES).map(Number).sort(), 'every mapped code has a source mark');
  for (const [code, http, source] of OPENPAY_DOCUMENTED_CODES) t.equal(OPENPAY_CODE_SOURCES[code], source, `${code} (HTTP ${http}): ${source}`);
  const confirmed = OPENPAY_DOCUMENTED_CODES.filter(([, , s]) => s === 'openpay_docs').map(([c]) => c);
  t.same(confirmed, [1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 2001, 2002, 2003, 2004, 2005, 2006, 2007, 2008, 2009, 3001, 3002, 3003, 3004, 3005, 3006, 3008, 3009, 3010, 3011, 3012, 4001], 'open-pay/slate errors.md');
  // The reference gives 412 (not 402) to 3006, 3008 and 3012: the mapping goes by code, whatever the status.
  for (const code of [3006, 3008, 3012]) {
    const a = await fetch(`${fake.url}/v1/${fake.merchantId}/charges`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from(`${fake.privateKey}:`).toString('base64')}`, 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.23' }, body: JSON.stringify({ method: 'card', source_id: `tok_code_${code}`, amount: 1, currency: 'MXN', description: 'x', order_id: `o_${randomUUID()}`, device_session_id: 'd' }) });
    t.equal(a.status, 412, `the fake answers ${code} with HTTP 412, as documented`);
    t.match(await openpay.charge(req(`tok_code_${code}`)), { kind: OPENPAY_CODES[code]!.kind, code: OPENPAY_CODES[code]!.code });
  }
});

t.test('amounts go as decimal pesos', async (t) => {
  const r = req('tok_ok');
  await openpay.charge(r);
  const c = [...fake.charges.values()].find((x) => x.order_id === r.idempotencyKey)!;
  t.equal(c.amount, 123.45);
});

t.test('the shopper IP goes as X-Forwarded-For, with device_session_id and a description (issue 28.2)', async (t) => {
  const r = req('tok_ok#dsess_ip');
  t.equal((await openpay.charge(r)).kind, 'captured');
  t.equal(fake.forwardedFor[fake.forwardedFor.length - 1], '198.51.100.23', 'X-Forwarded-For is the shopper\'s IP, as the official PHP SDK sends it');
  const c = [...fake.charges.values()].find((x) => x.order_id === r.idempotencyKey)!;
  t.equal(c.device_session_id, 'dsess_ip');
  t.ok(c.description, 'a description');
  const calls = fake.calls.length;
  t.match(await openpay.charge({ ...req('tok_ok'), payerIp: undefined }), { kind: 'soft_decline', code: 'payer_ip_required' }, 'without the shopper\'s IP it is not sent (another connector may take it)');
  t.match(await openpay.charge({ ...req('tok_ok'), paymentToken: 'tok_ok' }), { kind: 'soft_decline', code: 'device_session_required' }, 'without a device session id it is not sent');
  t.equal(fake.calls.length, calls, 'no call to Openpay for either');
});

t.test('a failed charge\'s text is its error_message; error answers are the documented envelope (issue 28.2)', async (t) => {
  const r = req('tok_declined');
  t.match(await openpay.charge(r), { kind: 'hard_decline', code: 'card_declined', message: 'The card was declined' }, 'the envelope\'s description');
  const read = await openpay.retrieve(r.idempotencyKey, r);
  t.match(read, { kind: 'hard_decline', code: 'card_declined', message: 'The card was declined' }, 'the failed charge read back: its error_message');
});

t.test('a browser token carries the device session id (token#device)', async (t) => {
  const r = req('tok_ok#dsess_123');
  t.equal((await openpay.charge(r)).kind, 'captured');
  const c = [...fake.charges.values()].find((x) => x.order_id === r.idempotencyKey)!;
  t.equal(c.device_session_id, 'dsess_123');
});

t.test('decline families and the soft decline', async (t) => {
  t.match(await openpay.charge(req('tok_declined')), { kind: 'hard_decline', code: 'card_declined' });
  t.match(await openpay.charge(req('tok_insufficient')), { kind: 'hard_decline', code: 'insufficient_funds' });
  t.match(await openpay.charge(req('tok_unavailable')), { kind: 'soft_decline', code: 'provider_unavailable' }, '1004: Openpay did not process it');
});

t.test('order_id is Openpay\'s idempotency: a repeat (1006) reads the first charge back', async (t) => {
  const r = req('tok_ok');
  const first = await openpay.charge(r);
  book.m.clear(); // as if our first answer was lost
  const again = await openpay.charge(r);
  t.same(again, first);
  t.equal(fake.completedFor(r.idempotencyKey), 1);
});

t.test('an unknown code is unmapped_decline (hard)', async (t) => {
  t.match(await openpay.charge(req('tok_unknown_code')), { kind: 'hard_decline', code: 'unmapped_decline' });
});

t.test('credentials', async (t) => {
  t.match(await openpay.charge(req('tok_ok', 'bad')), { kind: 'hard_decline', code: 'invalid_credentials' });
  t.match(await openpay.charge(req('tok_ok', 'none')), { kind: 'hard_decline', code: 'invalid_credentials' });
});

t.test('webhook: Basic user/password when the tenant set them', async (t) => {
  const body = { type: 'charge.succeeded', event_date: '2026-11-26T10:00:00-06:00', transaction: { id: 'tr1', order_id: 'orq_att_x', status: 'completed' } };
  const creds = { merchant_id: 'm', private_key: 'k', webhook_user: 'orq', webhook_password: 'pw' };
  const basic = `Basic ${Buffer.from('orq:pw').toString('base64')}`;
  t.match(readOpenpayWebhook(body, basic, creds), { type: 'charge.succeeded', transaction: { id: 'tr1' } });
  t.equal(readOpenpayWebhook(body, undefined, creds), null, 'no credentials → refused');
  t.equal(readOpenpayWebhook(body, `Basic ${Buffer.from('orq:no').toString('base64')}`, creds), null);
  t.match(readOpenpayWebhook({ type: 'verification', verification_code: 'AbC123' }, basic, creds), { type: 'verification', verificationCode: 'AbC123' });
});
