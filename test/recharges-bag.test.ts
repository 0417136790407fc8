// The recharge bag reader: each movement of the aggregator's reports of today and yesterday is
// stored once, and a credit movement seen for the first time creates one
// `recharge.deposit.detected` event (id derived from the movement) in the same transaction: a
// second run over the same days, and two readers at the same moment, make no second event. The
// sim reports one deposit late (first seen in yesterday's report). Also the listing, the balance
// refresh, the schedule, and the event's shape in /v1/events.
import t from 'tap';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { createServer, type Server } from 'node:http';
import { startTestApp, type TestApp, until } from './helpers/app.js';
import { createSql } from '../kernel/db.js';
import { Recharges, BAG_READ_EVERY_MS, depositEventId } from '../actors/recharges.js';
import { SimRechargeAggregator, SIM_BAG_START_MINOR } from '../connectors/recharge/sim.js';
import { reportDay } from '../connectors/recharge/aggregator.js';
import { EVENT_CATALOG } from '../schemas/events.js';
import { jobRequest } from '../kernel/jobs.js';

let a: TestApp;
let receiver: Server;
let hookUrl: string;
const received: any[] = [];
t.before(async () => {
  a = await startTestApp({ ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000', WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1' });
  receiver = createServer((req, res) => {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      received.push({ ...JSON.parse(b), at: req.url });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
});
t.teardown(async () => {
  await a.stop();
  receiver.close();
});

/** A reader as another worker process would build it (its own pool), with a clock of its own. */
function reader(clock: () => Date, sql = a.app.deps.sql) {
  const d = a.app.deps;
  return new Recharges({ sql, actor: d.runtime.actor, log: d.log, secrets: d.secrets, aggregator: new SimRechargeAggregator(sql, clock), clock });
}
const events = (tenantId: string) => a.app.deps.sql`
  select event_id, event_type, livemode, entity_id, data from outbox_events where tenant_id = ${tenantId} and event_type = 'recharge.deposit.detected' order by id`;

t.test('two runs, and two readers at once, over the same days: each deposit once, one event each', async (t) => {
  const ten = await a.newTenant();
  // A sale of today appears in today's report as a debit movement.
  await a.call('POST', '/v1/recharge-carriers/telcel/enable', { key: ten.testKey });
  const sale = await a.call('POST', '/v1/recharges', { key: ten.testKey, body: { product_code: 'telcel_50', phone_number: '5512345678' }, headers: { 'idempotency-key': crypto.randomUUID() } });
  t.equal(sale.body.status, 'delivered');
  // Disabled again, so that the app's own scheduled reader (which reads accounts with an enabled carrier) leaves it to this test.
  await a.call('POST', '/v1/recharge-carriers/telcel/enable', { key: ten.testKey, body: { active: false } });
  const hook = await a.call('POST', '/v1/webhook_endpoints', { key: ten.testKey, body: { url: hookUrl, events: ['recharge.deposit.detected'] } });
  t.equal(hook.status, 201);
  // An account-level endpoint registered with the live key in Service-Account-Key: it gets the (test-mode) deposits too.
  const acct = await a.call('POST', '/v1/account/webhook_endpoints', { body: { url: `${hookUrl}/account` }, headers: { 'service-account-key': ten.liveKey } });
  t.equal(acct.status, 201);
  t.match(acct.body, { object: 'webhook_endpoint', events: ['recharge.deposit.detected'], livemode: true, secret: /^whsec_/ });
  const now = new Date();
  const acc = [{ tenantId: ten.id, livemode: false }];
  const sim = new SimRechargeAggregator(a.app.deps.sql, () => now);
  const days = [reportDay(new Date(now.getTime() - 86_400_000)), reportDay(now)];
  const report = [...(await sim.movements(acc[0], days[0])), ...(await sim.movements(acc[0], days[1]))];
  const deposits = report.filter((m) => m.isDeposit);
  t.ok(deposits.length >= 2, `${deposits.length} deposits in the two reports`);
  t.ok(report.some((m) => !m.isDeposit && m.amountMinor === -5000), 'the sale is a debit movement');

  const other = createSql(a.config.databaseUrl, 4);
  t.teardown(() => other.end({ timeout: 5 }));
  const [x, y] = await Promise.all([reader(() => now).readBags(acc), reader(() => now, other).readBags(acc)]);
  t.equal(x.stored + y.stored, report.length, 'each movement stored by exactly one of two concurrent readers');
  t.equal(x.deposits + y.deposits, deposits.length);
  const again = await reader(() => now).readBags(acc);
  t.same(again, { accounts: 1, stored: 0, deposits: 0 }, 'a second run over the same days stores nothing');
  // The scheduled reader of the app itself may also have run: the counts below hold whoever read.
  const ev = await events(ten.id);
  t.equal(ev.length, deposits.length, 'one event per deposit');
  t.same(ev.map((e) => e.event_id).sort(), deposits.map((m) => depositEventId(acc[0], 'sim', m.movementId)).sort(), 'event ids derived from the movements');
  const [n] = await a.app.deps.sql`select count(*)::int as n from recharge_bag_movements where tenant_id = ${ten.id}`;
  t.equal(n.n, report.length);
  // The event: the account's, a recharge_bag_movement as data (schema of the catalog).
  const ajv = new Ajv({ strict: false });
  (addFormatsModule as unknown as (a: Ajv) => Ajv)(ajv);
  const valid = ajv.compile(EVENT_CATALOG['recharge.deposit.detected'].data);
  for (const e of ev) {
    t.equal(e.livemode, false);
    t.ok(valid(e.data), `data matches the catalog schema ${JSON.stringify(valid.errors)}`);
    t.match(e.data, { object: 'recharge_bag_movement', account_id: ten.id, provider_key: 'sim', is_deposit: true, currency: 'MXN', raw_amount: /^\d+\.\d{2}$/ });
  }
  // The listing: newest first, the same movements.
  const list = await a.call('GET', '/v1/recharges/bag-movements', { key: ten.testKey });
  t.equal(list.status, 200);
  t.equal(list.body.data.length, report.length);
  const times = list.body.data.map((m: any) => m.registered_at);
  t.same(times, [...times].sort().reverse(), 'newest first');
  t.ok(list.body.data.some((m: any) => m.movement_type === 'venta' && m.amount_minor === -5000 && !m.is_deposit));
  t.equal((await a.call('GET', '/v1/recharges/bag-movements?limit=1', { key: ten.testKey })).body.data.length, 1);
  t.same((await a.call('GET', '/v1/recharges/bag-movements', { key: ten.liveKey })).body.data, [], 'per mode');
  // The event reaches the account's endpoint, once per deposit, with the derived event_id.
  const got = await until(async () => received.filter((e) => e.data?.account_id === ten.id), (l) => l.length >= 2 * deposits.length);
  for (const at of ['/hook', '/hook/account']) {
    t.same(got.filter((e) => e.at === at).map((e) => e.event_id).sort(), ev.map((e) => e.event_id).sort(), `delivered to ${at}, one per deposit`);
  }
  t.ok(got.every((e) => e.event_type === 'recharge.deposit.detected' && e.livemode === false), 'livemode on the envelope: the receiver checks it before crediting');
  const stream = await a.call('GET', '/v1/events?limit=200', { key: ten.testKey });
  t.equal(stream.body.data.filter((e: any) => e.data?.event_type === 'recharge.deposit.detected').length, deposits.length, 'in /v1/events');
});

t.test('account-level registration: Service-Account-Key only', async (t) => {
  const ten = await a.newTenant();
  const reg = (headers: Record<string, string>, body: object = { url: `${hookUrl}/x` }) => a.call('POST', '/v1/account/webhook_endpoints', { body, headers });
  for (const h of [{}, { authorization: `Bearer ${ten.testKey}` }, { 'service-account-key': 'sk_test_nope' }] as Array<Record<string, string>>) {
    const r = await reg(h);
    t.equal(r.status, 401, JSON.stringify(Object.keys(h)));
    t.equal(r.body.error.code, 'api_key.missing_or_invalid');
  }
  const scoped = await a.admin('POST', `/admin/tenants/${ten.id}/api_keys`, { livemode: false, scopes: ['payments:read'] });
  const s = await reg({ 'service-account-key': scoped.body.key });
  t.equal(s.status, 403);
  t.equal(s.body.error.code, 'insufficient_scope');
  t.equal((await reg({ 'service-account-key': ten.testKey }, { url: `${hookUrl}/x`, events: ['payment_intent.succeeded'] })).body.error.code, 'webhook_endpoint.invalid_events');
  const ok = await reg({ 'service-account-key': ten.testKey });
  t.equal(ok.status, 201);
  const listed = await a.call('GET', '/v1/webhook_endpoints', { key: ten.testKey });
  t.ok(listed.body.data.some((e: any) => e.id === ok.body.id), "one of the account's endpoints");
});

t.test('a deposit reported late is first seen in yesterday\'s report, and emitted once', async (t) => {
  const ten = await a.newTenant(); // no carrier enabled: the app's own scheduled reader never reads it
  const acc = [{ tenantId: ten.id, livemode: false }];
  const now = new Date();
  const yesterday = reportDay(new Date(now.getTime() - 86_400_000));
  // Yesterday at 23:55 Mexico City (05:55 UTC today): the late deposit is not in the report yet.
  const lateEvening = new Date(`${yesterday}T06:00:00Z`).getTime() + 86_400_000 - 300_000;
  await reader(() => new Date(lateEvening)).readBags(acc);
  const lateId = `dep-${yesterday}-late`;
  const before = await events(ten.id);
  t.notOk(before.some((e) => e.data.movement_id === lateId), 'not reported on its own day');
  t.ok(before.some((e) => e.data.movement_id === `dep-${yesterday}-0900`), 'the on-time deposit was');
  // Today: yesterday's report now lists it; it is seen for the first time and emitted once.
  await reader(() => now).readBags(acc);
  await reader(() => now).readBags(acc);
  const after = await events(ten.id);
  t.equal(after.filter((e) => e.data.movement_id === lateId).length, 1, 'the late deposit: one event');
  t.match(after.find((e) => e.data.movement_id === lateId)!.data, { amount_minor: 50_000, via: 'ventanilla', source_id: `sim-report:${yesterday}` });
  t.equal(new Set(after.map((e) => e.data.movement_id)).size, after.length, 'no movement twice');
});

t.test('balance refresh; live keys refused; the reader is a 15-minute job scheduler', async (t) => {
  const ten = await a.newTenant();
  await a.call('POST', '/v1/recharge-carriers/att/enable', { key: ten.testKey });
  const b0 = await a.call('POST', '/v1/recharge-balance/refresh', { key: ten.testKey });
  t.equal(b0.status, 200);
  t.match(b0.body, { object: 'recharge_balance', account_id: ten.id, provider_key: 'sim', balance_minor: SIM_BAG_START_MINOR, currency: 'MXN', livemode: false });
  await a.call('POST', '/v1/recharges', { key: ten.testKey, body: { product_code: 'att_100', phone_number: '8112345678' }, headers: { 'idempotency-key': crypto.randomUUID() } });
  const b1 = await a.call('POST', '/v1/recharge-balance/refresh', { key: ten.testKey });
  t.equal(b1.body.balance_minor, SIM_BAG_START_MINOR - 10_000, 'a delivered sale draws on the bag');
  const [row] = await a.app.deps.sql`select balance_minor from recharge_bag_balances where tenant_id = ${ten.id}`;
  t.equal(Number(row.balance_minor), SIM_BAG_START_MINOR - 10_000, 'stored');
  const live = await a.call('POST', '/v1/recharge-balance/refresh', { key: ten.liveKey });
  t.equal(live.body.error.code, 'recharge.livemode_unsupported');
  const cap = a.app.deps.recharges.capability();
  t.same(cap.schedules?.map((s) => [s.name, s.everyMs, s.job.def.name]), [['recharge-bag-reader', BAG_READ_EVERY_MS, 'recharge.bag.read']]);
  t.equal(BAG_READ_EVERY_MS, 15 * 60_000);
});

t.test('the reader as a worker job: an account that enabled a carrier gets its deposits', async (t) => {
  const ten = await a.newTenant();
  await a.call('POST', '/v1/recharge-carriers/bait/enable', { key: ten.testKey });
  const r = a.app.deps.recharges;
  await a.app.deps.runtime.jobs.enqueue(jobRequest(r.bagJob, {}, { idSuffix: `test-${ten.id}` }));
  const yesterday = reportDay(new Date(Date.now() - 86_400_000));
  const ev = await until(() => events(ten.id), (l) => l.filter((e) => e.data.movement_id.startsWith(`dep-${yesterday}`)).length === 2, 20_000);
  t.same(ev.filter((e) => e.data.movement_id.startsWith(`dep-${yesterday}`)).map((e) => e.data.movement_id).sort(), [`dep-${yesterday}-0900`, `dep-${yesterday}-late`]);
});
