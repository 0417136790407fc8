// Payment intents against the running service (API + workers, real Postgres and Redis):
// spec "States and transitions > payment_intent", "Test mode", "Endpoints > Payment intents",
// "Operator simulation of incoming payments" and the payment-intent error table.
import t from 'tap';
import { isValidClabe } from '../connectors/clabe.js';
import { startTestApp, type TestApp } from './helpers/app.js';

let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;

const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function create(body: object = { amount_minor: 15000, currency: 'MXN' }, key = ten.testKey) {
  const r = await a.call('POST', '/v1/payment_intents', { key, body, headers: idem() });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
  return r.body;
}
const confirm = (id: string, body: object, key = ten.testKey) => a.call('POST', `/v1/payment_intents/${id}/confirm`, { key, body, headers: idem() });
const get = (id: string, key = ten.testKey) => a.call('GET', `/v1/payment_intents/${id}?expand=attempts`, { key });

async function waitStatus(id: string, want: string | string[], key = ten.testKey, ms = 8000) {
  const wants = Array.isArray(want) ? want : [want];
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    last = await get(id, key);
    if (wants.includes(last.body.status)) return last.body;
    await sleep(60);
  }
  throw new Error(`intent ${id} did not reach ${wants.join('|')}; last ${last?.body.status} ${JSON.stringify(last?.body.attempts)}`);
}
async function waitAttempt(id: string, want: string, key = ten.testKey) {
  const end = Date.now() + 8000;
  while (Date.now() < end) {
    const r = await get(id, key);
    if (r.body.attempts?.[0]?.status === want) return r.body;
    await sleep(60);
  }
  throw new Error(`attempt of ${id} did not reach ${want}`);
}
const events = async (intentId: string) =>
  (await a.app.deps.sql`select event_type, data from outbox_events where entity_id = ${intentId} order by id`).map((r) => ({ type: r.event_type as string, data: r.data as Record<string, unknown> }));

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', SWEEP_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500', RATE_LIMIT_V1_PER_MIN: '100000' });
  ten = await a.newTenant();
});
t.teardown(() => a.stop());

t.test('create', async (t) => {
  const r = await a.call('POST', '/v1/payment_intents', {
    key: ten.testKey,
    body: { amount_minor: 15000, currency: 'MXN', tip_minor: 0, metadata: { branch: 'centro' }, payment_method_types: ['card', 'spei'] },
    headers: idem(),
  });
  t.equal(r.status, 201);
  const pi = r.body;
  t.equal(pi.object, 'payment_intent');
  t.equal(pi.status, 'requires_payment_method');
  t.equal(pi.amount_minor, 15000);
  t.equal(pi.tip_minor, 0);
  t.equal(pi.total_minor, 15000);
  t.equal(pi.livemode, false);
  t.match(pi.client_secret, /^pi_secret_[A-Za-z0-9]{24}$/);
  t.match(pi.receipt_code, /^W-[0-9A-Z]{5}$/);
  t.same(pi.metadata, { branch: 'centro' });
  t.notOk('attempts' in pi, 'no attempts without expand');
  t.notOk('payment_method_types' in pi, 'informational only, not stored on the intent');
  const hist = await a.app.deps.sql`select event, to_status, data from payment_intent_history where payment_intent_id = ${pi.id}`;
  t.equal(hist.length, 1);
  t.equal(hist[0].event, 'create');
  t.same(hist[0].data.payment_method_types, ['card', 'spei'], 'recorded in the history');
  t.same(await events(pi.id), [], 'creation is not dispatched as an event');
  const other = await create();
  t.not(other.client_secret, pi.client_secret, 'a new client_secret per intent');
  t.not(other.receipt_code, pi.receipt_code);
  const live = await create({ amount_minor: 100, currency: 'MXN' }, ten.liveKey);
  t.equal(live.livemode, true);
});

t.test('create: validation codes of the spec', async (t) => {
  const cases: Array<[object, string]> = [
    [{ amount_minor: 0, currency: 'MXN' }, 'payment_intent.invalid_amount'],
    [{ amount_minor: -5, currency: 'MXN' }, 'payment_intent.invalid_amount'],
    [{ amount_minor: 10.5, currency: 'MXN' }, 'payment_intent.invalid_amount'],
    [{ amount_minor: '100', currency: 'MXN' }, 'payment_intent.invalid_amount'],
    [{ currency: 'MXN' }, 'payment_intent.invalid_amount'],
    [{ amount_minor: 100 }, 'payment_intent.invalid_amount'],
    [{ amount_minor: 100, currency: 'XYZ' }, 'payment_intent.invalid_currency'],
    [{ amount_minor: 100, currency: 'mxn' }, 'payment_intent.invalid_currency'],
    [{ amount_minor: 100, currency: 'MXN', tip_minor: -1 }, 'payment_intent.invalid_tip'],
    [{ amount_minor: 100, currency: 'MXN', metadata: { a: 1 } }, 'request.invalid_body'],
  ];
  for (const [body, code] of cases) {
    const r = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body, headers: idem() });
    t.equal(r.status, 400, JSON.stringify(body));
    t.equal(r.body.error.code, code, JSON.stringify(body));
  }
  // Each mistake is named for what it is (issue 25: 150.50 answered "`amount_minor` is required").
  const messages: Array<[object, RegExp]> = [
    [{ amount_minor: 150.5, currency: 'MXN' }, /^`amount_minor` must be an integer number of centavos \(minor units\); 150\.5 has a fraction\. For 150\.50 pesos send 15050\.$/],
    [{ amount_minor: '15050', currency: 'MXN' }, /^`amount_minor` must be a positive integer of minor units/],
    [{ amount_minor: -5, currency: 'MXN' }, /^`amount_minor` must be a positive integer of minor units/],
    [{ currency: 'MXN' }, /^`amount_minor` is required/],
    [{ amount_minor: 100, currency: 'MXN', tip_minor: 10.25 }, /^`tip_minor` must be an integer number of centavos \(minor units\); 10\.25 has a fraction\. For 10\.25 pesos send 1025\.$/],
  ];
  for (const [body, msg] of messages) {
    const r = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body, headers: idem() });
    t.match(r.body.error.message, msg, JSON.stringify(body));
  }
  const noKey = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 100, currency: 'MXN' } });
  t.equal(noKey.status, 400);
  t.equal(noKey.body.error.code, 'idempotency_key_required');
  const nullTip = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 100, currency: 'MXN', tip_minor: null }, headers: idem() });
  t.equal(nullTip.status, 201);
  t.equal(nullTip.body.tip_minor, 0, 'null tip = 0');
});

t.test('read: expand, tenancy', async (t) => {
  const pi = await create();
  const plain = await a.call('GET', `/v1/payment_intents/${pi.id}`, { key: ten.testKey });
  t.equal(plain.status, 200);
  t.notOk('attempts' in plain.body);
  const other = await a.newTenant();
  const foreign = await a.call('GET', `/v1/payment_intents/${pi.id}`, { key: other.testKey });
  t.equal(foreign.status, 404);
  t.equal(foreign.body.error.code, 'payment_intent.not_found');
  t.equal((await a.call('GET', `/v1/payment_intents/${pi.id}`, { key: ten.liveKey })).status, 404, 'other mode');
  const c = await confirm(pi.id, { payment_token: 'tok_sim_ok', payment_method: 'card' }, other.testKey);
  t.equal(c.status, 404, 'another tenant cannot confirm it');
});

t.test('confirm answers processing with a pending attempt; tip replaces, omitted keeps', async (t) => {
  const pi = await create({ amount_minor: 10000, currency: 'MXN', tip_minor: 300 });
  const r = await confirm(pi.id, { payment_token: 'tok_sim_slow', payment_method: 'card', tip_minor: 1500 });
  t.equal(r.status, 200);
  t.equal(r.body.status, 'processing');
  t.equal(r.body.tip_minor, 1500);
  t.equal(r.body.total_minor, 11500);
  t.equal(r.body.attempts.length, 1);
  t.equal(r.body.attempts[0].status, 'pending');
  t.equal(r.body.attempts[0].connector_key, 'sim');
  t.equal(r.body.attempts[0].method, 'card');
  t.notOk('provider_ref' in r.body.attempts[0], 'omitted until the provider answers');
  const done = await waitStatus(pi.id, 'succeeded');
  t.equal(done.attempts[0].amount_minor, 11500, 'total_minor is what is captured');
  const kept = await create({ amount_minor: 10000, currency: 'MXN', tip_minor: 300 });
  const r2 = await confirm(kept.id, { payment_token: 'tok_sim_ok', payment_method: 'card' });
  t.equal(r2.body.tip_minor, 300, 'omitted tip keeps the existing one');
  const bad = await confirm((await create()).id, { payment_token: 'tok_sim_ok', payment_method: 'card', tip_minor: -1 });
  t.equal(bad.body.error.code, 'payment_intent.invalid_tip');
  const missing = await confirm((await create()).id, { payment_method: 'card' });
  t.equal(missing.status, 400);
  t.equal(missing.body.error.code, 'request.invalid_body');
});

t.test('sim tokens (spec: Test mode)', async (t) => {
  const table: Array<[string, string, string | undefined, string]> = [
    ['tok_sim_ok', 'succeeded', undefined, 'captured'],
    ['tok_sim_anything_else', 'succeeded', undefined, 'captured'],
    ['tok_sim_insufficient', 'failed', 'insufficient_funds', 'failed'],
    ['tok_sim_fraud', 'failed', 'suspected_fraud', 'failed'],
    ['tok_sim_badcreds', 'failed', 'invalid_credentials', 'failed'],
    // spec: a soft decline (or a provider error once the provider is asked and answers) with no retry left fails the intent.
    ['tok_sim_issuer_down', 'failed', 'issuer_unavailable', 'failed'],
    ['tok_sim_provider_500', 'failed', 'provider_error', 'failed'],
  ];
  await Promise.all(
    table.map(async ([token, status, code, attemptStatus]) => {
      const pi = await create();
      t.equal((await confirm(pi.id, { payment_token: token, payment_method: 'card' })).body.status, 'processing');
      const done = await waitStatus(pi.id, status);
      t.equal(done.attempts[0].status, attemptStatus, `${token}: attempt ${attemptStatus}`);
      t.ok(done.attempts[0].provider_ref, `${token}: provider_ref once answered`);
      if (code) {
        t.equal(done.attempts[0].failure_code, code, `${token}: failure code`);
        t.equal(done.last_payment_error.code, code);
      }
    }),
  );
});

t.test('cents 99 is a hard decline do_not_retry whatever the token', async (t) => {
  const pi = await create({ amount_minor: 10099, currency: 'MXN' });
  await confirm(pi.id, { payment_token: 'tok_sim_ok', payment_method: 'card' });
  const done = await waitStatus(pi.id, 'failed');
  t.equal(done.attempts[0].failure_code, 'do_not_retry');
  t.same((await events(pi.id)).map((e) => e.type), ['payment_intent.failed']);
});

t.test('a soft decline with no retry left fails the intent, with payment_intent.failed (spec: States)', async (t) => {
  for (const token of ['tok_sim_issuer_down', 'tok_sim_provider_500']) {
    const pi = await create();
    const r = await confirm(pi.id, { payment_token: token, payment_method: 'card' });
    t.equal(r.status, 200);
    const done = await waitStatus(pi.id, 'failed');
    t.equal(done.attempts.length, 1, `${token}: one attempt (a single connector: no cross-connector retry)`);
    t.equal(done.attempts[0].status, 'failed');
    t.same((await events(pi.id)).map((e) => e.type), ['payment_intent.failed'], `${token}: a merchant waiting for a webhook gets it`);
    const again = await confirm(pi.id, { payment_token: 'tok_sim_ok', payment_method: 'card' });
    t.equal(again.status, 409);
    t.equal(again.body.error.code, 'payment_intent.not_confirmable');
    t.match(again.body.error.message, /This one is failed/, 'not_confirmable names the current status');
  }
});

t.test('authorize then capture', async (t) => {
  const pi = await create();
  await confirm(pi.id, { payment_token: 'tok_sim_auth', payment_method: 'card' });
  const auth = await waitAttempt(pi.id, 'authorized');
  t.equal(auth.status, 'processing', 'authorized without capture stays processing');
  const cap = await a.call('POST', `/v1/payment_intents/${pi.id}/capture`, { key: ten.testKey, headers: idem() });
  t.equal(cap.status, 200);
  t.equal(cap.body.status, 'processing', 'capture answers processing');
  t.ok(cap.body.attempts, 'capture response carries attempts');
  const done = await waitStatus(pi.id, 'succeeded');
  t.equal(done.attempts[0].status, 'captured');
  t.same((await events(pi.id)).map((e) => e.type), ['payment_intent.succeeded']);
  const charges = await a.app.deps.sql`select charges from sim_provider_calls where provider_ref = ${done.attempts[0].provider_ref}`;
  t.equal(charges[0].charges, 1, 'the sim moved money once');
  const noAuth = await create();
  const bad = await a.call('POST', `/v1/payment_intents/${noAuth.id}/capture`, { key: ten.testKey, headers: idem() });
  t.equal(bad.status, 400, 'attempt.not_capturable is 400 (spec)');
  t.equal(bad.body.error.code, 'attempt.not_capturable');
});

t.test('3-D Secure: requires_action redirect, completed by provider evidence', async (t) => {
  const pi = await create();
  await confirm(pi.id, { payment_token: 'tok_sim_3ds', payment_method: 'card' });
  const ra = await waitStatus(pi.id, 'requires_action');
  t.equal(ra.next_action.type, 'redirect');
  t.match(ra.next_action.redirect_url, /^https?:\/\//);
  const sim = await a.admin('POST', `/admin/tenants/${ten.id}/simulate-inbound`, { provider_ref: ra.attempts[0].provider_ref });
  t.equal(sim.status, 200);
  const done = await waitStatus(pi.id, 'succeeded');
  t.notOk('next_action' in done, 'next_action cleared');
  t.same((await events(pi.id)).map((e) => e.type), ['payment_intent.requires_action', 'payment_intent.succeeded']);
});

t.test('push methods: SPEI, CoDi, OXXO', async (t) => {
  const now = Date.parse((await a.call('GET', '/v1/test/clock', { key: ten.testKey })).body.now);
  const spec: Array<[string, string, number]> = [
    ['spei', 'bank_transfer', 24 * 3600],
    ['codi', 'codi_qr', 30 * 60],
    ['oxxo', 'oxxo_voucher', 72 * 3600],
  ];
  for (const [method, type, secs] of spec) {
    const pi = await create();
    const r = await confirm(pi.id, { payment_token: 'n/a', payment_method: method });
    t.equal(r.body.status, 'processing');
    const ra = await waitStatus(pi.id, 'requires_action');
    t.equal(ra.next_action.type, type, method);
    const exp = Date.parse(ra.next_action.expires_at);
    t.ok(Math.abs(exp - now - secs * 1000) < 60_000, `${method} expires after ${secs} s`);
    if (method === 'spei') {
      t.match(ra.next_action.clabe, /^\d{18}$/);
      t.ok(isValidClabe(ra.next_action.clabe), 'the CLABE check digit is valid');
      t.ok(ra.next_action.beneficiary);
    }
    if (method === 'codi') t.match(ra.next_action.qr_payload, /^codi:\/\//);
    if (method === 'oxxo') t.match(ra.next_action.reference, /^\d{14}$/);
    const sim = await a.admin('POST', `/admin/tenants/${ten.id}/simulate-inbound`, { provider_ref: ra.attempts[0].provider_ref });
    t.equal(sim.status, 200);
    const done = await waitStatus(pi.id, 'succeeded');
    t.equal(done.attempts[0].status, 'captured');
    t.same((await events(pi.id)).map((e) => e.type), ['payment_intent.requires_action', 'payment_intent.succeeded'], `${method} events`);
    const timers = await a.app.deps.sql`select fired_at from timers where entity_id = ${pi.id}`;
    t.ok(timers[0].fired_at, 'the expiry timer is cancelled by the payment');
  }
  const unknown = await a.admin('POST', `/admin/tenants/${ten.id}/simulate-inbound`, { provider_ref: 'nope' });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error.code, 'attempt.not_found');
});

t.test('dimo fails at confirm; bnpl has no route', async (t) => {
  const pi = await create();
  t.equal((await confirm(pi.id, { payment_token: 'x', payment_method: 'dimo' })).body.status, 'processing');
  const done = await waitStatus(pi.id, 'failed');
  t.equal(done.attempts[0].failure_code, 'method_unavailable');
  const pi2 = await create();
  const r = await confirm(pi2.id, { payment_token: 'x', payment_method: 'bnpl' });
  t.equal(r.status, 400);
  t.equal(r.body.error.code, 'payment_intent.no_route');
  const after = (await get(pi2.id)).body;
  t.equal(after.status, 'requires_payment_method');
  t.same(after.attempts, [], 'no attempt');
});

t.test('expiry by the tenant test clock', async (t) => {
  const own = await a.newTenant();
  const c = await a.call('POST', '/v1/payment_intents', { key: own.testKey, body: { amount_minor: 5000, currency: 'MXN', metadata: { k: 'v' } }, headers: idem() });
  await a.call('POST', `/v1/payment_intents/${c.body.id}/confirm`, { key: own.testKey, body: { payment_token: 'x', payment_method: 'codi' }, headers: idem() });
  await waitStatus(c.body.id, 'requires_action', own.testKey);
  const early = await a.call('POST', '/v1/test/clock/advance', { key: own.testKey, body: { seconds: 60 } });
  t.equal(early.status, 200);
  await sleep(500);
  t.equal((await get(c.body.id, own.testKey)).body.status, 'requires_action', 'not yet due');
  const clock = await a.call('POST', '/v1/test/clock/advance', { key: own.testKey, body: { seconds: 30 * 60 } });
  t.equal(clock.body.object, 'test_clock');
  const done = await waitStatus(c.body.id, 'expired', own.testKey);
  t.equal(done.attempts[0].status, 'expired');
  const evs = await events(c.body.id);
  t.same(evs.map((e) => e.type), ['payment_intent.requires_action', 'payment_intent.expired']);
  t.same(evs[1].data, { id: c.body.id, object: 'payment_intent', status: 'expired', amount_minor: 5000, tip_minor: 0, total_minor: 5000, currency: 'MXN', metadata: { k: 'v' } });
  // Other tenants' clocks did not move.
  const mine = Date.parse((await a.call('GET', '/v1/test/clock', { key: ten.testKey })).body.now);
  t.ok(Math.abs(mine - Date.now()) < 5 * 60_000 || mine > Date.now(), 'each tenant has its own clock');
  // A late inbound payment after expiry changes nothing.
  await a.admin('POST', `/admin/tenants/${own.id}/simulate-inbound`, { provider_ref: done.attempts[0].provider_ref });
  await sleep(400);
  t.equal((await get(c.body.id, own.testKey)).body.status, 'expired');
});

t.test('test clock: test keys only, validated', async (t) => {
  const g = await a.call('GET', '/v1/test/clock', { key: ten.testKey });
  t.equal(g.status, 200);
  t.same(Object.keys(g.body).sort(), ['livemode', 'now', 'object']);
  t.equal(g.body.livemode, false);
  const live = await a.call('GET', '/v1/test/clock', { key: ten.liveKey });
  t.equal(live.status, 403);
  t.equal(live.body.error.code, 'test_clock.unauthorized');
  t.equal((await a.call('POST', '/v1/test/clock/advance', { key: ten.liveKey, body: { seconds: 5 } })).status, 403);
  for (const body of [{}, { seconds: 0 }, { seconds: -5 }, { seconds: 1, to: '2030-01-01T00:00:00Z' }, { to: 'yesterday' }]) {
    const r = await a.call('POST', '/v1/test/clock/advance', { key: ten.testKey, body });
    t.equal(r.status, 400, JSON.stringify(body));
    t.equal(r.body.error.code, 'test_clock.invalid_advance');
  }
  const past = await a.call('POST', '/v1/test/clock/advance', { key: ten.testKey, body: { to: '2001-01-01T00:00:00Z' } });
  t.equal(past.body.error.code, 'test_clock.invalid_advance');
  const to = new Date(Date.parse(g.body.now) + 3600_000).toISOString();
  const moved = await a.call('POST', '/v1/test/clock/advance', { key: ten.testKey, body: { to } });
  t.equal(moved.status, 200);
  t.ok(Date.parse(moved.body.now) >= Date.parse(to) - 1000);
});

t.test('cancel', async (t) => {
  const cancel = (id: string) => a.call('POST', `/v1/payment_intents/${id}/cancel`, { key: ten.testKey, headers: idem() });
  const fresh = await create();
  const c1 = await cancel(fresh.id);
  t.equal(c1.status, 200);
  t.equal(c1.body.status, 'canceled');
  const again = await cancel(fresh.id);
  t.equal(again.status, 200, 'cancel of canceled is a no-op 200');
  t.equal(again.body.status, 'canceled');
  t.same((await events(fresh.id)).map((e) => e.type), ['payment_intent.canceled'], 'one event only');
  t.equal((await confirm(fresh.id, { payment_token: 'tok_sim_ok', payment_method: 'card' })).body.error.code, 'payment_intent.not_confirmable');

  const paid = await create();
  await confirm(paid.id, { payment_token: 'tok_sim_ok', payment_method: 'card' });
  await waitStatus(paid.id, 'succeeded');
  const c2 = await cancel(paid.id);
  t.equal(c2.status, 409);
  t.equal(c2.body.error.code, 'payment_intent.cancel_conflict');

  const action = await create();
  await confirm(action.id, { payment_token: 'x', payment_method: 'oxxo' });
  await waitStatus(action.id, 'requires_action');
  t.equal((await cancel(action.id)).body.status, 'canceled');
  t.equal((await get(action.id)).body.attempts[0].status, 'canceled');

  const auth = await create();
  await confirm(auth.id, { payment_token: 'tok_sim_auth', payment_method: 'card' });
  await waitAttempt(auth.id, 'authorized');
  t.equal((await cancel(auth.id)).body.status, 'canceled', 'an authorization is voided');
  await sleep(300);
  const ref = (await get(auth.id)).body.attempts[0].provider_ref;
  const sim = await a.app.deps.sql`select outcome, charges from sim_provider_calls where provider_ref = ${ref}`;
  t.equal(sim[0].outcome.kind, 'voided');
  t.equal(sim[0].charges, 0, 'no money moved');
});

t.test('concurrent confirms: one attempt, the others 409', async (t) => {
  for (let round = 0; round < 3; round++) {
    const pi = await create();
    const rs = await Promise.all(Array.from({ length: 8 }, () => confirm(pi.id, { payment_token: 'tok_sim_ok', payment_method: 'card' })));
    const ok = rs.filter((r) => r.status === 200);
    t.equal(ok.length, 1, `round ${round}: one confirm wins`);
    for (const r of rs.filter((x) => x.status !== 200)) {
      t.equal(r.status, 409);
      t.ok(['payment_intent.concurrent_modification', 'payment_intent.not_confirmable'].includes(r.body.error.code), r.body.error.code);
    }
    const n = await a.app.deps.sql`select count(*)::int as n from attempts where payment_intent_id = ${pi.id}`;
    t.equal(n[0].n, 1, 'never two attempts');
  }
});

t.test('idempotent confirm replays and never makes a second attempt', async (t) => {
  const pi = await create();
  const key = crypto.randomUUID();
  const body = { payment_token: 'tok_sim_ok', payment_method: 'card' };
  const r1 = await a.call('POST', `/v1/payment_intents/${pi.id}/confirm`, { key: ten.testKey, body, headers: { 'idempotency-key': key } });
  await waitStatus(pi.id, 'succeeded');
  const r2 = await a.call('POST', `/v1/payment_intents/${pi.id}/confirm`, { key: ten.testKey, body, headers: { 'idempotency-key': key } });
  t.equal(r2.status, 200);
  t.equal(r2.headers.get('idempotency-replayed'), 'true');
  t.same(r2.body, r1.body, 'the original processing answer');
});

t.test('risk rules: block and review', async (t) => {
  const own = await a.newTenant();
  const rule = await a.admin('POST', `/admin/tenants/${own.id}/risk_rules`, { field: 'amount_minor', operator: 'gte', value: 5000000, action: 'block' });
  t.equal(rule.status, 201);
  t.equal(rule.body.object, 'risk_rule');
  const review = await a.admin('POST', `/admin/tenants/${own.id}/risk_rules`, { field: 'payment_method', operator: 'eq', value: 'oxxo', action: 'review' });
  t.equal(review.status, 201);
  t.equal((await a.admin('POST', `/admin/tenants/${own.id}/risk_rules`, { field: 'amount_minor', operator: 'gte', value: 'x', action: 'block' })).status, 400);
  t.equal((await a.admin('POST', `/admin/tenants/${own.id}/risk_rules`, { field: 'color', operator: 'eq', value: 'x', action: 'block' })).status, 400);

  const mk = async (amount: number) => (await a.call('POST', '/v1/payment_intents', { key: own.testKey, body: { amount_minor: amount, currency: 'MXN' }, headers: idem() })).body;
  const big = await mk(6_000_000);
  const blocked = await confirm(big.id, { payment_token: 'tok_sim_ok', payment_method: 'card' }, own.testKey);
  t.equal(blocked.status, 409);
  t.equal(blocked.body.error.code, 'payment_intent.blocked_by_risk');
  const after = (await get(big.id, own.testKey)).body;
  t.same(after.attempts, [], 'no attempt created');
  t.equal(after.status, 'requires_payment_method');

  const small = await mk(1000);
  const rv = await confirm(small.id, { payment_token: 'x', payment_method: 'oxxo', tip_minor: 100 }, own.testKey);
  t.equal(rv.status, 200);
  t.equal(rv.body.object, 'risk_review');
  t.equal(rv.body.status, 'pending');
  t.equal((await get(small.id, own.testKey)).body.status, 'requires_confirmation');
  const again = await confirm(small.id, { payment_token: 'x', payment_method: 'oxxo' }, own.testKey);
  t.equal(again.body.error.code, 'payment_intent.not_confirmable', 'waiting for the operator');
  const read = await a.call('GET', `/v1/risk_reviews/${rv.body.id}`, { key: own.testKey });
  t.equal(read.status, 200);
  t.equal(read.body.status, 'pending');
  const ok = await a.admin('POST', `/admin/tenants/${own.id}/risk_reviews/${rv.body.id}/approve`);
  t.equal(ok.status, 200);
  t.equal(ok.body.status, 'approved');
  const proceeded = await waitStatus(small.id, 'requires_action', own.testKey);
  t.equal(proceeded.tip_minor, 100, 'the tip of the reviewed confirm applies');
  t.equal((await a.admin('POST', `/admin/tenants/${own.id}/risk_reviews/${rv.body.id}/reject`)).status, 409, 'already resolved');

  const small2 = await mk(2000);
  const rv2 = await confirm(small2.id, { payment_token: 'x', payment_method: 'oxxo' }, own.testKey);
  const rej = await a.admin('POST', `/admin/tenants/${own.id}/risk_reviews/${rv2.body.id}/reject`);
  t.equal(rej.body.status, 'rejected');
  const failed = (await get(small2.id, own.testKey)).body;
  t.equal(failed.status, 'failed');
  t.same(failed.attempts, []);
  t.same((await events(small2.id)).map((e) => e.type), ['payment_intent.failed']);
  t.equal((await a.admin('POST', `/admin/tenants/${own.id}/risk_reviews/${crypto.randomUUID()}/approve`)).status, 404);
});

t.test('ledger: captures post balanced entries; the database refuses anything else', async (t) => {
  const pi = await create({ amount_minor: 20000, currency: 'MXN', tip_minor: 2000 });
  await confirm(pi.id, { payment_token: 'tok_sim_ok', payment_method: 'card' });
  const done = await waitStatus(pi.id, 'succeeded');
  const lines = await a.app.deps.sql`
    select l.account, l.amount_minor from journal_lines l join journal_entries e on e.id = l.entry_id
     where e.ref_id = ${done.attempts[0].id} order by l.id`;
  t.equal(lines.reduce((s, l) => s + Number(l.amount_minor), 0), 0, 'balanced');
  const by = (acct: string) => lines.filter((l) => l.account === acct).reduce((s, l) => s + Number(l.amount_minor), 0);
  // Issue 27 (defect 3): the sale net of IVA, the IVA trasladado cobrado apart; the fee net of its IVA acreditable.
  t.equal(by('sales'), -17241);
  t.equal(by('iva_trasladado_cobrado'), -2759);
  t.equal(by('tips_payable'), -2000);
  const fee = Math.round((22000 * 290) / 10000) + 250;
  t.equal(by('connector_fees:sim') + by('iva_acreditable'), fee, 'fee of the routing table');
  t.equal(by('connector_fees:sim'), Math.round(fee / 1.16), 'the fee net of IVA');
  t.equal(by('connector_receivable:sim'), 22000 - fee);
  const sql = a.app.deps.sql;
  await t.rejects(
    sql.begin(async (tx) => {
      const id = crypto.randomUUID();
      await tx`insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id) values (${id}, ${ten.id}, false, 'test', 'test', ${id})`;
      await tx`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (${id}, ${ten.id}, false, 'a', 'MXN', 100)`;
    }),
    /does not balance/,
  );
  await t.rejects(sql`update journal_lines set amount_minor = 1 where entry_id in (select id from journal_entries where ref_id = ${done.attempts[0].id})`, /append-only/);
  await t.rejects(sql`delete from journal_entries where ref_id = ${done.attempts[0].id}`, /append-only/);
});

t.test('live mode never routes to a simulator: no live connector, no route, nothing moves', async (t) => {
  const pi = await create({ amount_minor: 3000, currency: 'MXN' }, ten.liveKey);
  t.equal(pi.livemode, true);
  for (const method of ['card', 'spei', 'oxxo', 'codi']) {
    const c = await confirm(pi.id, { payment_token: 'tok_sim_ok', payment_method: method }, ten.liveKey);
    t.equal(c.status, 400, `${method}: refused`);
    t.equal(c.body.error.code, 'payment_intent.no_route');
  }
  const sql = a.app.deps.sql;
  t.same(await sql`select id from attempts where payment_intent_id = ${pi.id}`, [], 'no attempt');
  t.same(await sql`select idempotency_key from sim_provider_calls where tenant_id = ${ten.id} and livemode`, [], 'the simulator saw nothing');
  t.equal((await get(pi.id, ten.liveKey)).body.status, 'requires_payment_method');
  const saved = await a.call('POST', '/v1/customers', { key: ten.liveKey, body: {}, headers: { 'idempotency-key': crypto.randomUUID() } });
  const pm = await a.call('POST', `/v1/customers/${saved.body.id}/payment_methods`, { key: ten.liveKey, body: { payment_token: 'tok_sim_ok' }, headers: { 'idempotency-key': crypto.randomUUID() } });
  t.equal(pm.body.error?.code, 'payment_method.no_route', 'a card cannot be saved on the simulator in live mode either');
});

t.test('no null fields and no secrets leak in payment intent answers', async (t) => {
  const pi = await create();
  await confirm(pi.id, { payment_token: 'tok_sim_ok', payment_method: 'card' });
  const done = await waitStatus(pi.id, 'succeeded');
  const text = JSON.stringify(done);
  t.notMatch(text, /null/);
  t.notMatch(text, /tok_sim_ok/, 'the card token is never returned');
  const stored = await a.app.deps.sql`select payment_token from attempts where payment_intent_id = ${pi.id}`;
  t.equal(stored[0].payment_token, null, 'the single-use token is dropped once the attempt is settled');
});

// Confirm, capture and cancel look the Idempotency-Key up at commit (route option idempotencyLookup:
// 'at_commit', one query less per confirm): a repeat runs the command again and is answered with the
// stored response when the intent moved on (refused before the commit) or when the commit fails on
// the record (the intent is confirmable again after a soft decline). The promises of spec: Errors >
// Idempotency hold as with a lookup first.
t.test('confirm, capture, cancel look the key up at commit: replay, reuse, no second attempt', async (t) => {
  const sql = a.app.deps.sql;
  const attempts = async (id: string) => (await sql`select count(*)::int as n from attempts where payment_intent_id = ${id}`)[0].n as number;

  const own = await a.newTenant();
  const mk = async () => (await a.call('POST', '/v1/payment_intents', { key: own.testKey, body: { amount_minor: 5000, currency: 'MXN' }, headers: idem() })).body;
  const postOwn = (path: string, key: string, body?: object) => a.call('POST', path, { key: own.testKey, body, headers: { 'idempotency-key': key } });
  const okBody = { payment_token: 'tok_sim_ok', payment_method: 'card' };

  // A repeat after the intent moved on: refused before its commit, answered with the stored response.
  // The first confirm looks nothing up (the query this route option saves); only the repeat does.
  const store = a.app.deps.idempotency as unknown as { lookup: (...args: unknown[]) => Promise<unknown> };
  const realLookup = store.lookup;
  let lookups = 0;
  store.lookup = function (this: unknown, ...args: unknown[]) {
    lookups++;
    return realLookup.apply(this, args);
  };
  t.teardown(() => {
    store.lookup = realLookup;
  });
  const ok = await mk();
  const okKey = crypto.randomUUID();
  lookups = 0;
  const c1 = await postOwn(`/v1/payment_intents/${ok.id}/confirm`, okKey, okBody);
  t.same([c1.status, c1.headers.get('idempotency-replayed')], [200, null]);
  t.equal(lookups, 0, 'the first confirm made no idempotency lookup');
  await waitStatus(ok.id, 'succeeded', own.testKey);
  const c2 = await postOwn(`/v1/payment_intents/${ok.id}/confirm`, okKey, okBody);
  t.same([c2.status, c2.headers.get('idempotency-replayed'), c2.text], [200, 'true', c1.text], 'replayed after success, byte for byte');
  t.ok(lookups >= 1, 'the repeat looked the record up');
  const reused = await postOwn(`/v1/payment_intents/${ok.id}/confirm`, okKey, { ...okBody, payment_token: 'tok_sim_auth' });
  t.same([reused.status, reused.body.error?.code], [422, 'idempotency_key_reused'], 'same key, other body');
  const fresh = await postOwn(`/v1/payment_intents/${ok.id}/confirm`, crypto.randomUUID(), okBody);
  t.same([fresh.status, fresh.body.error?.code], [409, 'payment_intent.not_confirmable'], 'a new key is refused as before');
  t.equal(await attempts(ok.id), 1, 'one attempt');

  // Cancel: the repeat of a cancel is a replay (the stored answer), a new key the no-op 200.
  const c = await mk();
  const cKey = crypto.randomUUID();
  const k1 = await postOwn(`/v1/payment_intents/${c.id}/cancel`, cKey);
  t.same([k1.status, k1.body.status], [200, 'canceled']);
  const k2 = await postOwn(`/v1/payment_intents/${c.id}/cancel`, cKey);
  t.same([k2.status, k2.headers.get('idempotency-replayed'), k2.text], [200, 'true', k1.text]);
  const k3 = await postOwn(`/v1/payment_intents/${c.id}/cancel`, crypto.randomUUID());
  t.same([k3.status, k3.headers.get('idempotency-replayed'), k3.body.status], [200, null, 'canceled'], 'a new key: the no-op 200');

  // Capture asked for twice with one key: replayed, one capture.
  const m = await mk();
  t.equal((await postOwn(`/v1/payment_intents/${m.id}/confirm`, crypto.randomUUID(), { payment_token: 'tok_sim_auth', payment_method: 'card' })).status, 200);
  await waitAttempt(m.id, 'authorized', own.testKey);
  const capKey = crypto.randomUUID();
  const p1 = await postOwn(`/v1/payment_intents/${m.id}/capture`, capKey);
  t.equal(p1.status, 200);
  const p2 = await postOwn(`/v1/payment_intents/${m.id}/capture`, capKey);
  t.same([p2.status, p2.headers.get('idempotency-replayed'), p2.text], [200, 'true', p1.text]);
  await waitStatus(m.id, 'succeeded', own.testKey);

  // A confirm held for review (the intent waits in requires_confirmation, a confirm is refused while
  // the review is pending): the repeat is refused before its commit and answered with the stored review.
  t.equal((await a.admin('POST', `/admin/tenants/${own.id}/risk_rules`, { field: 'payment_method', operator: 'eq', value: 'oxxo', action: 'review' })).status, 201);
  const held = await mk();
  const heldKey = crypto.randomUUID();
  const h1 = await postOwn(`/v1/payment_intents/${held.id}/confirm`, heldKey, { payment_token: 'x', payment_method: 'oxxo' });
  t.same([h1.status, h1.body.object], [200, 'risk_review']);
  const h2 = await postOwn(`/v1/payment_intents/${held.id}/confirm`, heldKey, { payment_token: 'x', payment_method: 'oxxo' });
  t.same([h2.status, h2.headers.get('idempotency-replayed'), h2.text], [200, 'true', h1.text], 'requires_confirmation: replayed');
  t.equal((await sql`select count(*)::int as n from risk_reviews where payment_intent_id = ${held.id}`)[0].n, 1, 'one review');
  t.equal(await attempts(held.id), 0, 'no attempt');
  // Leave no review pending: the operator console lists every tenant's, and other test files share the database.
  t.equal((await a.admin('POST', `/admin/tenants/${own.id}/risk_reviews/${h1.body.id}/reject`)).status, 200);

  // Concurrent repeats of a confirm with the Redis key lock lost: one attempt, every 200 the same answer.
  const r = await mk();
  const rKey = crypto.randomUUID();
  const idemStore = a.app.deps.idempotency as unknown as { redis: { set: (...args: unknown[]) => Promise<string> } };
  const realSet = idemStore.redis.set.bind(idemStore.redis);
  idemStore.redis.set = async (...args: unknown[]) => (String(args[0]).includes(':idem:') ? 'OK' : realSet(...args));
  try {
    const race = await Promise.all(Array.from({ length: 5 }, () => postOwn(`/v1/payment_intents/${r.id}/confirm`, rKey, okBody)));
    t.equal(await attempts(r.id), 1, 'lock lost: one attempt');
    const answered = race.filter((x) => x.status === 200);
    t.ok(answered.length >= 1, 'the winner answered');
    t.equal(new Set(answered.map((x) => x.text)).size, 1, 'every 200 is the same answer');
    for (const x of race) t.ok(x.status === 200 || (x.status === 409 && x.body.error.code === 'payment_intent.concurrent_modification'), `status ${x.status} ${x.body.error?.code ?? ''}`);
  } finally {
    idemStore.redis.set = realSet;
  }
});

t.test('a receipt code taken in the tenant is refused by a constraint the create retry recognises', async (t) => {
  // The create draws again when the insert fails with 23505 on a constraint whose name says
  // "receipt" (actors/payment-intents.ts); 0182 rebuilt that constraint as (receipt_code, tenant_id).
  const first = await create();
  const sql = a.app.deps.sql;
  const err = await sql`
    insert into payment_intents (id, tenant_id, livemode, amount_minor, currency, status, client_secret, receipt_code)
    values (${crypto.randomUUID()}, ${ten.id}, false, 100, 'MXN', 'requires_payment_method', ${'pi_secret_' + crypto.randomUUID()}, ${first.receipt_code})`.then(
    () => null,
    (e: { code?: string; constraint_name?: string }) => e,
  );
  t.equal(err?.code, '23505', 'refused');
  t.match(err?.constraint_name, /receipt/, `constraint ${err?.constraint_name}`);
  const other = await a.newTenant();
  await sql`
    insert into payment_intents (id, tenant_id, livemode, amount_minor, currency, status, client_secret, receipt_code)
    values (${crypto.randomUUID()}, ${other.id}, false, 100, 'MXN', 'requires_payment_method', ${'pi_secret_' + crypto.randomUUID()}, ${first.receipt_code})`;
  t.pass('the same code in another tenant is accepted');
});
