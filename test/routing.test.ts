// Routing over two simulated card connectors against the running service (issue 20): the cheapest
// eligible connector per charge with its decision recorded, cross-connector retry of a soft decline
// (and of a provider fault once settled as not charged) as a second attempt of the same intent, a
// hard decline never retried, the savings report fed, scores, and the table's API rules.
import t from 'tap';
import { startTestApp, type TestApp } from './helpers/app.js';
import { idem, until } from './helpers/activity.js';

let a: TestApp;
t.before(async () => {
  a = await startTestApp({ ROLE: 'all', RECONCILE_INTERVAL_MS: '500', RATE_LIMIT_V1_PER_MIN: '100000' });
});
t.teardown(() => a.stop());

type Ten = Awaited<ReturnType<TestApp['newTenant']>>;

async function twoConnectors(ten: Ten) {
  // sim: 2.90% + 2.50 (the default, put first); sim_b: 2.50% + 3.00 (its published fees).
  const s = await a.call('PUT', '/v1/routing/connectors/sim', { key: ten.testKey, body: { default: true, fees: { card: { bps: 290, fixed_minor: 250 }, spei: { bps: 0, fixed_minor: 500 } } } });
  if (s.status !== 200) throw new Error(s.text);
  const b = await a.call('PUT', '/v1/routing/connectors/sim_b', { key: ten.testKey, body: {} });
  if (b.status !== 200) throw new Error(b.text);
  return b.body;
}

async function charge(key: string, amount: number, token: string) {
  const pi = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: amount, currency: 'MXN' }, headers: idem() });
  const c = await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key, body: { payment_token: token, payment_method: 'card' }, headers: idem() });
  if (c.status !== 200) throw new Error(c.text);
  const done = await until(() => a.call('GET', `/v1/payment_intents/${pi.body.id}?expand=attempts`, { key }), (r) => ['succeeded', 'failed'].includes(r.body.status));
  return done.body;
}

const decisionsOf = async (key: string, intentId: string) =>
  (await a.call('GET', `/v1/routing/decisions?payment_intent=${intentId}`, { key })).body.data.reverse();

t.test('the routing table: default, published fees, API rules', async (t) => {
  const ten = await a.newTenant('Routing table');
  const before = await a.call('GET', '/v1/routing/connectors', { key: ten.testKey });
  t.equal(before.status, 200);
  t.equal(before.body.configured, false, 'no table of its own: the deployment default');
  t.same(before.body.data.map((c: any) => c.connector_key), ['sim']);
  const live = await a.call('GET', '/v1/routing/connectors', { key: ten.liveKey });
  t.same(live.body.data, [], 'live mode: no simulator in the default table');
  const b = await twoConnectors(ten);
  t.match(b, { object: 'routing_connector', connector_key: 'sim_b', enabled: true, default: false, fees: { card: { bps: 250, fixed_minor: 300 } }, credentials: { configured: false } });
  const after = await a.call('GET', '/v1/routing/connectors', { key: ten.testKey });
  t.equal(after.body.configured, true);
  t.same(after.body.data.map((c: any) => [c.connector_key, c.default]), [['sim', true], ['sim_b', false]]);
  const simLive = await a.call('PUT', '/v1/routing/connectors/sim', { key: ten.liveKey, body: {} });
  t.equal(simLive.status, 400);
  t.equal(simLive.body.error.code, 'routing.invalid_connector', 'a live key never routes to a simulator');
  const unknown = await a.call('PUT', '/v1/routing/connectors/paypal', { key: ten.testKey, body: {} });
  t.equal(unknown.body.error.code, 'routing.invalid_connector');
  const spei = await a.call('PUT', '/v1/routing/connectors/sim_b', { key: ten.testKey, body: { fees: { spei: { bps: 0, fixed_minor: 1 } } } });
  t.equal(spei.body.error.code, 'routing.invalid_fees', 'sim_b takes cards only');
  const neg = await a.call('PUT', '/v1/routing/connectors/sim_b', { key: ten.testKey, body: { fees: { card: { bps: -1, fixed_minor: 1 } } } });
  t.equal(neg.status, 400);
  t.equal(neg.body.error.code, 'routing.invalid_fees');
  const creds = await a.call('PUT', '/v1/routing/connectors/sim_b', { key: ten.testKey, body: { credentials: { private_key: 'x' } } });
  t.equal(creds.body.error.code, 'routing.invalid_credentials', 'a simulator takes no credentials');
  const gone = await a.call('DELETE', '/v1/routing/connectors/sim_b', { key: ten.liveKey });
  t.equal(gone.status, 404, 'the other mode has no such connector');
  t.equal(gone.body.error.code, 'routing.connector_not_found');
});

t.test('each charge goes to the cheapest eligible connector; the decision is recorded; savings are counted', async (t) => {
  const ten = await a.newTenant('Routing cheapest');
  await twoConnectors(ten);
  // 1,000.00 MXN: sim 2900 + 250 = 3150, sim_b 2500 + 300 = 2800 → sim_b saves 350.
  const big = await charge(ten.testKey, 100000, 'tok_sim_ok');
  t.equal(big.status, 'succeeded');
  t.equal(big.attempts.length, 1);
  t.equal(big.attempts[0].connector_key, 'sim_b', 'the larger charge goes to sim_b');
  // 50.00 MXN: sim 145 + 250 = 395, sim_b 125 + 300 = 425 → sim (the default: no saving).
  const small = await charge(ten.testKey, 5000, 'tok_sim_ok');
  t.equal(small.attempts[0].connector_key, 'sim', 'the smaller charge stays on sim');

  const [d] = await decisionsOf(ten.testKey, big.id);
  t.match(d, {
    object: 'routing_decision', payment_intent_id: big.id, attempt_id: big.attempts[0].id, method: 'card', amount_minor: 100000, currency: 'MXN',
    chosen: 'sim_b', reason: 'cheapest', default_connector: 'sim', default_fee_minor: 3150, chosen_fee_minor: 2800, saved_minor: 350, outcome: 'captured',
  });
  t.same(d.candidates, [
    { connector_key: 'sim_b', fee_minor: 2800, eligible: true },
    { connector_key: 'sim', fee_minor: 3150, eligible: true },
  ], 'candidates in ranking order with their fees');
  t.ok(d.latency_ms >= 0, 'the first answer and its latency are recorded');
  const [ds] = await decisionsOf(ten.testKey, small.id);
  t.match(ds, { chosen: 'sim', saved_minor: 0, chosen_fee_minor: 395 });

  const [att] = await a.app.deps.sql`select fee_minor from attempts where id = ${big.attempts[0].id}`;
  t.equal(Number(att.fee_minor), 2800, 'the fee posted is the chosen connector\'s');
  const s = await a.call('GET', '/v1/reports/savings', { key: ten.testKey });
  t.equal(s.status, 200);
  t.match(s.body, { routing_saved_minor: 350, retry_recovered_minor: 0, total_minor: 350 });
  t.match(s.body.by_connector, [{ connector_key: 'sim', routing_saved_minor: 0 }, { connector_key: 'sim_b', routing_saved_minor: 350 }]);
  const other = await a.newTenant('Other');
  t.equal((await a.call('GET', '/v1/reports/savings', { key: other.testKey })).body.routing_saved_minor, 0, 'another tenant sees none of it');

  const page = await a.call('GET', '/v1/routing/decisions?limit=1', { key: ten.testKey });
  t.equal(page.body.data.length, 1);
  t.equal(page.body.has_more, true);
  t.equal(page.body.data[0].payment_intent_id, small.id, 'newest first');
  const bad = await a.call('GET', '/v1/routing/decisions?limit=0', { key: ten.testKey });
  t.equal(bad.body.error.code, 'routing.invalid_query');
});

t.test('a soft decline on the first connector succeeds on the second as a second attempt; the savings report counts it', async (t) => {
  const ten = await a.newTenant('Routing retry');
  await twoConnectors(ten);
  // tok_simb_issuer_down: a soft decline on sim_b only (its issuer path), success on sim.
  const pi = await charge(ten.testKey, 100000, 'tok_simb_issuer_down');
  t.equal(pi.status, 'succeeded', 'recovered');
  t.equal(pi.attempts.length, 2, 'two attempts in the same intent');
  t.match(pi.attempts[0], { connector_key: 'sim_b', status: 'failed', failure_code: 'issuer_unavailable' });
  t.match(pi.attempts[1], { connector_key: 'sim', status: 'captured' });
  const ds = await decisionsOf(ten.testKey, pi.id);
  t.match(ds, [{ chosen: 'sim_b', reason: 'cheapest', outcome: 'soft_decline' }, { chosen: 'sim', reason: 'retry', outcome: 'captured' }]);
  t.match(ds[1].candidates, [{ connector_key: 'sim', eligible: true }, { connector_key: 'sim_b', eligible: false, reason: 'already_tried' }]);
  const events = (await a.app.deps.sql`select event_type from outbox_events where entity_id = ${pi.id} order by id`).map((r) => r.event_type);
  t.same(events, ['payment_intent.succeeded'], 'no failed event in between');
  const s = await a.call('GET', '/v1/reports/savings', { key: ten.testKey });
  t.match(s.body, { routing_saved_minor: 0, retry_recovered_minor: 100000, total_minor: 100000 }, 'the recovered charge, and no routing saving for the declined choice');

  // Both connectors soft-decline: the intent fails only when no retry is left.
  const ten2 = await a.newTenant('Routing retry both');
  await twoConnectors(ten2);
  await a.call('PUT', '/v1/routing/connectors/sim', { key: ten2.testKey, body: { default: true, fees: { card: { bps: 100, fixed_minor: 0 } } } });
  const both = await charge(ten2.testKey, 20000, 'tok_sim_issuer_down');
  t.equal(both.attempts[0].connector_key, 'sim', 'sim is now the cheaper');
  t.equal(both.status, 'succeeded', 'tok_sim_issuer_down succeeds on sim_b');
  t.equal(both.attempts.length, 2);
});

t.test('a hard decline is never retried on another connector', async (t) => {
  const ten = await a.newTenant('Routing hard');
  await twoConnectors(ten);
  for (const token of ['tok_sim_insufficient', 'tok_sim_fraud']) {
    const pi = await charge(ten.testKey, 100000, token);
    t.equal(pi.status, 'failed');
    t.equal(pi.attempts.length, 1, `${token}: one attempt`);
    t.equal(pi.attempts[0].connector_key, 'sim_b');
  }
  const cents99 = await charge(ten.testKey, 100099, 'tok_simb_issuer_down');
  t.equal(cents99.attempts.length, 1, 'cents 99: do_not_retry is hard');
  t.equal((await a.call('GET', '/v1/reports/savings', { key: ten.testKey })).body.total_minor, 0);
});

t.test('an unknown outcome is settled (retrieve) before any retry', async (t) => {
  const ten = await a.newTenant('Routing unknown');
  await twoConnectors(ten);
  // tok_simb_provider_500: sim_b answers HTTP 500 (outcome unknown); asked again, it says declined.
  const pi = await charge(ten.testKey, 100000, 'tok_simb_provider_500');
  t.equal(pi.status, 'succeeded');
  t.equal(pi.attempts.length, 2);
  t.match(pi.attempts[0], { connector_key: 'sim_b', status: 'failed', failure_code: 'provider_error' });
  const [first] = await a.app.deps.sql`select retrievals, charges from sim_provider_calls where idempotency_key = ${'orq_att_' + pi.attempts[0].id}`;
  t.ok(first.retrievals >= 1, 'the first attempt was asked about before the retry');
  t.equal(first.charges, 0, 'and it moved no money');
  const [times] = await a.app.deps.sql`
    select (select updated_at from sim_provider_calls where idempotency_key = ${'orq_att_' + pi.attempts[0].id}) as settled,
           (select created_at from attempts where id = ${pi.attempts[1].id}) as retried`;
  t.ok(times.settled <= times.retried, 'the retry was opened after the outcome was settled');
});

t.test('without a table of its own a tenant routes to sim only (no retry)', async (t) => {
  const ten = await a.newTenant('Routing default');
  const pi = await charge(ten.testKey, 100000, 'tok_sim_issuer_down');
  t.equal(pi.status, 'failed');
  t.equal(pi.attempts.length, 1);
  const [d] = await decisionsOf(ten.testKey, pi.id);
  t.match(d, { chosen: 'sim', reason: 'cheapest', default_connector: 'sim', saved_minor: 0 });
});

t.test('scores: authorization rate and latency per connector', async (t) => {
  const ten = await a.newTenant('Routing scores');
  await twoConnectors(ten);
  await charge(ten.testKey, 100000, 'tok_sim_ok');
  await charge(ten.testKey, 100000, 'tok_simb_issuer_down');
  await charge(ten.testKey, 5000, 'tok_sim_ok');
  const s = await a.call('GET', '/v1/routing/scores', { key: ten.testKey });
  t.equal(s.status, 200);
  t.equal(s.body.window_hours, 24);
  const by = Object.fromEntries(s.body.data.map((x: any) => [x.connector_key, x]));
  t.match(by.sim_b, { object: 'routing_score', attempts: 2, approved: 1, soft_declines: 1, authorization_rate: 0.5 });
  t.match(by.sim, { attempts: 2, approved: 2, authorization_rate: 1 });
  t.ok(by.sim.latency_p50_ms >= 0 && by.sim.latency_p95_ms >= by.sim.latency_p50_ms);
  const live = await a.call('GET', '/v1/routing/scores', { key: ten.liveKey });
  t.same(live.body.data, [], 'the other mode sees nothing');
});

t.test('balance: what each connector owes, pending then available on its schedule (tenant clock)', async (t) => {
  const ten = await a.newTenant('Routing balance');
  await twoConnectors(ten);
  await charge(ten.testKey, 100000, 'tok_sim_ok'); // sim_b: 100000 - 2800
  await charge(ten.testKey, 5000, 'tok_sim_ok'); // sim: 5000 - 395
  await charge(ten.testKey, 100000, 'tok_sim_insufficient'); // declined: nothing owed
  const b0 = await a.call('GET', '/v1/balance', { key: ten.testKey });
  t.equal(b0.status, 200, b0.text);
  t.match(b0.body, { object: 'balance', livemode: false, available: [], pending: [{ currency: 'MXN', amount_minor: 97200 + 4605 }] });
  t.same(b0.body.by_connector, [
    { connector_key: 'sim', currency: 'MXN', available_minor: 0, pending_minor: 4605, settlement_delay_days: 1 },
    { connector_key: 'sim_b', currency: 'MXN', available_minor: 0, pending_minor: 97200, settlement_delay_days: 2 },
  ]);
  await a.call('POST', '/v1/test/clock/advance', { key: ten.testKey, body: { seconds: 86400 + 60 } });
  const b1 = await a.call('GET', '/v1/balance', { key: ten.testKey });
  t.match(b1.body, { available: [{ currency: 'MXN', amount_minor: 4605 }], pending: [{ currency: 'MXN', amount_minor: 97200 }] }, 'sim pays after one day');
  await a.call('POST', '/v1/test/clock/advance', { key: ten.testKey, body: { seconds: 86400 } });
  const b2 = await a.call('GET', '/v1/balance', { key: ten.testKey });
  t.match(b2.body, { available: [{ currency: 'MXN', amount_minor: 101805 }], pending: [{ currency: 'MXN', amount_minor: 0 }] });
  t.same((await a.call('GET', '/v1/balance?currency=USD', { key: ten.testKey })).body.by_connector, []);
  const bad = await a.call('GET', '/v1/balance?currency=usd', { key: ten.testKey });
  t.equal(bad.status, 400);
  t.equal(bad.body.error.code, 'balance.invalid_currency');
  t.same((await a.call('GET', '/v1/balance', { key: ten.liveKey })).body.by_connector, [], 'live mode owes nothing');
});
