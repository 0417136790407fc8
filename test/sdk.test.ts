// The SDK (sdk/index.ts, typed from the OpenAPI document at build time) against the real service:
// typed calls, the Idempotency-Key it adds and keeps across retries (a lost answer is replayed, not
// repeated), which errors it retries (and which it does not: a POST that takes no key), the
// envelope as OrquestaError, both paginations, the test helpers, and webhook signature checks.
import t from 'tap';
import { constructEvent, Orquesta, OrquestaConnectionError, OrquestaError, takesIdempotencyKey, WebhookSignatureError } from '../sdk/index.js';
import { generateTestHeaderString, signatureHeader } from '../kernel/signing.js';
import { startTestApp, type TestApp } from './helpers/app.js';

let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', NODE_ENV: 'development', SWEEP_INTERVAL_MS: '200', RATE_LIMIT_V1_PER_MIN: '100000' });
  ten = await a.newTenant('Cliente del SDK');
});
t.teardown(() => a.stop());

/** A fetch that lets the request reach the service but loses the first answer(s), as a reset would. */
function losingFetch(lose: number, seen: Array<{ method: string; url: string; key: string | null }>): typeof fetch {
  let lost = 0;
  return (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const h = new Headers(init?.headers);
    seen.push({ method: init?.method ?? 'GET', url: String(input), key: h.get('idempotency-key') });
    const res = await fetch(input, init);
    if (lost < lose) {
      lost++;
      await res.arrayBuffer();
      throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
    }
    return res;
  }) as typeof fetch;
}

t.test('typed calls against the service: create, confirm, follow; the envelope as OrquestaError', async (t) => {
  const orq = new Orquesta({ apiKey: ten.testKey, baseUrl: a.url });
  const pi = await orq.paymentIntents.create({ amount_minor: 15000, currency: 'MXN', metadata: { pedido: '77' } });
  t.equal(pi.status, 'requires_payment_method');
  t.equal(pi.amount_minor, 15000);
  await orq.paymentIntents.confirm(pi.id, { payment_token: 'tok_sim_ok', payment_method: 'card' });
  const done = await orq.paymentIntents.waitFor(pi.id, { until: ['succeeded', 'failed'], intervalMs: 100 });
  t.equal(done.status, 'succeeded');
  const { data, response } = await orq.api.GET('/v1/payment_intents/{id}', { params: { path: { id: pi.id }, query: { expand: 'attempts' } } });
  t.equal(response.status, 200);
  t.equal(data?.attempts?.[0]?.status, 'captured', 'the generated client is typed from the OpenAPI paths');
  const err = await orq.paymentIntents.create({ amount_minor: 150.5, currency: 'MXN' }).catch((e: unknown) => e);
  t.ok(err instanceof OrquestaError);
  t.match(err, { status: 400, code: 'payment_intent.invalid_amount', type: 'invalid_request_error' });
  t.match((err as OrquestaError).docUrl, /#err-payment_intent\.invalid_amount$/);
  t.match((err as OrquestaError).requestId, /^[0-9a-f-]{36}$/);
  const bad = new Orquesta({ apiKey: 'sk_test_nope', baseUrl: a.url });
  await t.rejects(bad.paymentIntents.retrieve(pi.id), { code: 'api_key.missing_or_invalid', status: 401 });
});

t.test('Idempotency-Key: added to the POSTs that take one, the same on a retry: a lost answer is replayed', async (t) => {
  t.ok(takesIdempotencyKey('POST', '/v1/payment_intents'));
  t.ok(takesIdempotencyKey('POST', `/v1/payment_intents/${crypto.randomUUID()}/confirm`));
  t.notOk(takesIdempotencyKey('POST', '/v1/webhook_endpoints'), 'read from the OpenAPI document: webhook registration takes none');
  const seen: Array<{ method: string; url: string; key: string | null }> = [];
  const orq = new Orquesta({ apiKey: ten.testKey, baseUrl: a.url, fetch: losingFetch(1, seen) });
  const before = Number((await a.app.deps.sql`select count(*)::int as n from payment_intents where tenant_id = ${ten.id}`)[0].n);
  const pi = await orq.paymentIntents.create({ amount_minor: 4321, currency: 'MXN' });
  t.equal(seen.length, 2, 'the lost answer was retried');
  t.match(seen[0].key, /^[0-9a-f-]{36}$/, 'with an Idempotency-Key');
  t.equal(seen[1].key, seen[0].key, 'the same key on the retry');
  const after = Number((await a.app.deps.sql`select count(*)::int as n from payment_intents where tenant_id = ${ten.id}`)[0].n);
  t.equal(after - before, 1, 'one intent: the retry replayed the first answer');
  t.equal(pi.amount_minor, 4321);
  // A POST whose outcome is unknown and that takes no key is not retried (it could register twice).
  const seen2: typeof seen = [];
  const once = new Orquesta({ apiKey: ten.testKey, baseUrl: a.url, fetch: losingFetch(1, seen2) });
  const lost = await once.api.POST('/v1/webhook_endpoints', { body: { url: 'http://localhost:3000/sdk' } }).catch((e: unknown) => e);
  t.ok(lost instanceof OrquestaConnectionError, 'the reset is reported');
  t.equal(seen2.length, 1, 'not retried');
  t.equal(seen2[0].key, null, 'and sent without a key it would ignore');
});

t.test('safe errors are retried: 429 after its Retry-After, a refused connection; a 400 is not', async (t) => {
  let calls = 0;
  const limited = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    calls++;
    if (calls === 1) return new Response(JSON.stringify({ error: { type: 'rate_limit_error', code: 'rate_limit_exceeded', message: 'x' } }), { status: 429, headers: { 'retry-after': '1' } });
    return fetch(input, init);
  }) as typeof fetch;
  const orq = new Orquesta({ apiKey: ten.testKey, baseUrl: a.url, fetch: limited });
  const t0 = Date.now();
  const list = await orq.api.GET('/v1/payment_links');
  t.equal(list.response.status, 200);
  t.equal(calls, 2);
  t.ok(Date.now() - t0 >= 900, 'it waited the Retry-After');
  calls = 0;
  const counting = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    calls++;
    return fetch(input, init);
  }) as typeof fetch;
  await t.rejects(new Orquesta({ apiKey: ten.testKey, baseUrl: a.url, fetch: counting }).paymentIntents.create({ amount_minor: -1, currency: 'MXN' }), { status: 400 } as never);
  t.equal(calls, 1, 'a 400 is final');
  const dead = new Orquesta({ apiKey: ten.testKey, baseUrl: 'http://127.0.0.1:9', maxRetries: 1 });
  await t.rejects(dead.paymentIntents.retrieve(crypto.randomUUID()), OrquestaConnectionError);
});

t.test('pagination: the event stream by cursor, report listings by next_cursor', async (t) => {
  const tenant = await a.newTenant('Paginas');
  const orq = new Orquesta({ apiKey: tenant.testKey, baseUrl: a.url });
  await orq.api.POST('/v1/webhook_endpoints', { body: { url: 'http://localhost:3000/pages' } });
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const pi = await orq.paymentIntents.create({ amount_minor: 1000 + i, currency: 'MXN' });
    await orq.paymentIntents.confirm(pi.id, { payment_token: 'tok_sim_ok', payment_method: 'card' });
    await orq.paymentIntents.waitFor(pi.id, { until: ['succeeded'], intervalMs: 100 });
    ids.push(pi.id);
  }
  let events: Array<Record<string, any>> = [];
  for (let i = 0; i < 50 && events.length < 5; i++) {
    events = [];
    for await (const e of orq.events({ limit: 2 })) events.push(e);
    if (events.length < 5) await new Promise((r) => setTimeout(r, 100));
  }
  t.equal(events.length, 5, 'five events over three pages of two');
  t.same(events.map((e) => e.data.data.id).sort(), [...ids].sort());
  t.ok(events.every((e, i) => i === 0 || e.id > events[i - 1].id), 'ascending, no repeats');
  const rows: Array<Record<string, any>> = [];
  for await (const r of orq.list('/v1/reports/payments', { limit: 2 })) rows.push(r);
  t.equal(rows.length, 5, 'the payments report, page after page');
});

t.test("test helpers through the SDK; a live key's refusal is an OrquestaError", async (t) => {
  const orq = new Orquesta({ apiKey: ten.testKey, baseUrl: a.url });
  const pi = await orq.paymentIntents.create({ amount_minor: 25000, currency: 'MXN' });
  await orq.paymentIntents.confirm(pi.id, { payment_token: 'spei', payment_method: 'spei' });
  await orq.paymentIntents.waitFor(pi.id, { until: ['requires_action'], intervalMs: 100 });
  t.match(await orq.testHelpers.pay(pi.id), { object: 'test_helper_result', action: 'pay' });
  t.equal((await orq.paymentIntents.waitFor(pi.id, { until: ['succeeded'], intervalMs: 100 })).status, 'succeeded');
  const live = new Orquesta({ apiKey: ten.liveKey, baseUrl: a.url });
  await t.rejects(live.testHelpers.threeDSecure(pi.id, 'approve'), { status: 403, code: 'test_helpers.unauthorized' });
});

const reasonOf = (f: () => unknown) => {
  try {
    f();
    return 'accepted';
  } catch (e) {
    return e instanceof WebhookSignatureError ? e.reason : String(e);
  }
};

t.test('webhooks: constructEvent verifies the raw body, the tolerance and both secrets of a rotation', async (t) => {
  const secret = 'whsec_test_sdk';
  const body = JSON.stringify({ event_id: crypto.randomUUID(), event_type: 'payment_intent.succeeded', created_at: new Date().toISOString(), api_version: '2026-07-01', livemode: false, data: { id: 'x' } });
  const header = generateTestHeaderString({ payload: body, secret });
  t.equal(constructEvent(body, header, secret).event_type, 'payment_intent.succeeded');
  t.equal(constructEvent(Buffer.from(body), header, ['whsec_new', secret]).event_type, 'payment_intent.succeeded', 'either secret of a rotation');
  t.equal(reasonOf(() => constructEvent(body.replace('"x"', '"y"'), header, secret)), 'no_match', 'a changed body');
  t.equal(reasonOf(() => constructEvent(body, header, 'whsec_other')), 'no_match');
  const old = signatureHeader([secret], Math.floor(Date.now() / 1000) - 301, body);
  t.equal(reasonOf(() => constructEvent(body, old, secret)), 'outside_tolerance', 'older than 5 minutes');
  t.equal(reasonOf(() => constructEvent(body, 'v1=abc', secret)), 'malformed');
  t.equal(reasonOf(() => constructEvent(body, undefined, secret)), 'malformed');
});
