// Dunning against the running service: an off-session charge of a saved card (confirm with
// `off_session: true`) that soft-declines is retried 1, 3 and 5 days later by the tenant's test
// clock, as new attempts of the same intent; a recovery feeds dunning_recovered_minor; with no
// retry left the intent fails; an on-session charge fails at once; a waiting intent can be canceled.
import t from 'tap';
import { startTestApp, type TestApp } from './helpers/app.js';
import { idem, until } from './helpers/activity.js';

let a: TestApp;
t.before(async () => {
  a = await startTestApp({ ROLE: 'all', SWEEP_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500', RATE_LIMIT_V1_PER_MIN: '100000' });
});
t.teardown(() => a.stop());

type Ten = Awaited<ReturnType<TestApp['newTenant']>>;
const DAY = 86400;

async function savedCard(ten: Ten, token: string) {
  const c = await a.call('POST', '/v1/customers', { key: ten.testKey, body: { email: 'sub@example.mx' } });
  const pm = await a.call('POST', `/v1/customers/${c.body.id}/payment_methods`, { key: ten.testKey, body: { payment_token: token }, headers: idem() });
  const active = await until(() => a.call('GET', `/v1/customers/${c.body.id}/payment_methods`, { key: ten.testKey }), (r) => r.body.data?.[0]?.status === 'active');
  return { customer: c.body.id as string, pm: pm.body.id as string, ref: active.body.data[0].provider_ref as string | undefined };
}

async function offSession(ten: Ten, pm: string, amount: number, off = true) {
  const pi = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: amount, currency: 'MXN' }, headers: idem() });
  const c = await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key: ten.testKey, body: { payment_method_id: pm, ...(off ? { off_session: true } : {}) }, headers: idem() });
  if (c.status !== 200) throw new Error(c.text);
  return pi.body.id as string;
}
const get = (ten: Ten, id: string) => a.call('GET', `/v1/payment_intents/${id}?expand=attempts`, { key: ten.testKey });
const advance = (ten: Ten, seconds: number) => a.call('POST', '/v1/test/clock/advance', { key: ten.testKey, body: { seconds } });
const attemptsOf = (ten: Ten, id: string, n: number) => until(() => get(ten, id), (r) => r.body.attempts?.length === n && !['pending'].includes(r.body.attempts[n - 1].status));
/** The sim's saved card starts charging like another token (the issuer came back). */
const issuerBack = (providerRefOfMethod: string) => a.app.deps.sql`update sim_provider_calls set token = 'tok_sim_ok' where kind = 'save' and provider_ref = ${providerRefOfMethod}`;

t.test('a soft-declined off-session charge is retried on days 1 and 3 and recovered', async (t) => {
  const ten = await a.newTenant('Dunning recovered');
  const card = await savedCard(ten, 'tok_sim_issuer_down');
  const [saved] = await a.app.deps.sql`select provider_ref from payment_methods where id = ${card.pm}`;
  const id = await offSession(ten, card.pm, 19900 + 1);
  const first = await attemptsOf(ten, id, 1);
  t.equal(first.body.status, 'processing', 'waiting for the next dunning day, not failed');
  t.match(first.body.attempts, [{ status: 'failed', failure_code: 'issuer_unavailable' }]);
  const [timer] = await a.app.deps.sql`select due_at from timers where entity_id = ${id} and kind = 'payment_intent.dunning'`;
  t.ok(timer, 'a dunning timer');
  await advance(ten, DAY - 600);
  t.equal((await get(ten, id)).body.attempts.length, 1, 'not before day 1');
  await advance(ten, 700);
  const second = await attemptsOf(ten, id, 2);
  t.match(second.body.attempts[1], { status: 'failed', connector_key: 'sim' }, 'day 1: a second attempt, still declined');
  t.equal(second.body.status, 'processing');
  await issuerBack(saved.provider_ref);
  await advance(ten, 2 * DAY + 60);
  const done = await until(() => get(ten, id), (r) => r.body.status === 'succeeded');
  t.equal(done.body.attempts.length, 3, 'day 3: recovered on the third attempt');
  const ds = (await a.call('GET', `/v1/routing/decisions?payment_intent=${id}`, { key: ten.testKey })).body.data.reverse();
  t.same(ds.map((d: any) => d.reason), ['cheapest', 'dunning', 'dunning']);
  const events = (await a.app.deps.sql`select event_type from outbox_events where entity_id = ${id} order by id`).map((r) => r.event_type);
  t.same(events, ['payment_intent.succeeded'], 'no failed event while dunning');
  const s = await a.call('GET', '/v1/reports/savings', { key: ten.testKey });
  t.match(s.body, { dunning_recovered_minor: 19901, retry_recovered_minor: 0 });
});

t.test('with no dunning retry left (days 1, 3, 5) the intent fails', async (t) => {
  const ten = await a.newTenant('Dunning exhausted');
  const card = await savedCard(ten, 'tok_sim_issuer_down');
  const id = await offSession(ten, card.pm, 5000);
  await attemptsOf(ten, id, 1);
  for (const [n, days] of [[2, 1], [3, 2], [4, 2]] as const) {
    await advance(ten, days * DAY + 60);
    await attemptsOf(ten, id, n);
  }
  const done = await until(() => get(ten, id), (r) => r.body.status === 'failed');
  t.equal(done.body.attempts.length, 4, 'the first try and three dunning retries');
  t.equal((await a.app.deps.sql`select count(*)::int as n from timers where entity_id = ${id} and kind = 'payment_intent.dunning' and fired_at is null`)[0].n, 0, 'no timer left');
});

t.test('on-session charges and hard declines are not dunned; a waiting intent can be canceled', async (t) => {
  const ten = await a.newTenant('Dunning rules');
  const card = await savedCard(ten, 'tok_sim_issuer_down');
  const on = await offSession(ten, card.pm, 5000, false);
  t.equal((await until(() => get(ten, on), (r) => r.body.status !== 'processing')).body.status, 'failed', 'on session: fails at once');
  const hardCard = await savedCard(ten, 'tok_sim_insufficient');
  const hard = await offSession(ten, hardCard.pm, 5000);
  t.equal((await until(() => get(ten, hard), (r) => r.body.status !== 'processing')).body.status, 'failed', 'a hard decline is final');
  const waiting = await offSession(ten, card.pm, 5000);
  await attemptsOf(ten, waiting, 1);
  const c = await a.call('POST', `/v1/payment_intents/${waiting}/cancel`, { key: ten.testKey, headers: idem() });
  t.equal(c.status, 200, c.text);
  t.equal(c.body.status, 'canceled');
  await advance(ten, 2 * DAY);
  const after = await get(ten, waiting);
  t.equal(after.body.attempts.length, 1, 'no retry after the cancel');
  const noSaved = await a.call('POST', `/v1/payment_intents/${waiting}/confirm`, { key: ten.testKey, body: { payment_token: 'tok_sim_ok', payment_method: 'card', off_session: true }, headers: idem() });
  t.equal(noSaved.status, 400, 'off_session needs a saved card');
});
