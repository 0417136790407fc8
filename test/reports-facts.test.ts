// Reports whose inputs other capabilities will provide (savings_facts, fee_facts, cfdi_facts),
// checked with rows: a session-local view of the same name shadows the empty contract view on one
// connection, and the report runs on that connection. Also: the rate-spike anomaly rules over a
// seeded history plus today's activity through the API, and reads going to the replica pool.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp, testConfig, type TestApp } from './helpers/app.js';
import { activity, inBatches } from './helpers/activity.js';
import { savings, feeLeakage } from '../actors/reports/contracts.js';
import { polizas } from '../actors/reports/ledger.js';
import { anomalies } from '../actors/reports/anomalies.js';
import { addDays, localDate, startOfLocalDate } from '../actors/reports/period.js';
import { parseRecord } from '../formats/polizas/contpaqi.js';
import { createSql, ensureDatabase, type Sql } from '../kernel/db.js';
import { migrate } from '../ops/migrate.js';
import type { Principal } from '../kernel/principal.js';

let a: TestApp;
let sql: Sql;
t.before(async () => {
  a = await startTestApp({ ROLE: 'all', SWEEP_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500', RATE_LIMIT_V1_PER_MIN: '100000' });
  sql = a.app.deps.sql;
});
t.teardown(() => a.stop());

const principal = (tenantId: string): Principal => ({ tenantId, livemode: false, keyId: 'test', scopes: ['*'] });

/** Runs fn on one connection where `view` is replaced, for this session only, by the given rows. */
async function withFacts<T>(view: string, select: string, fn: (db: Sql) => Promise<T>): Promise<T> {
  const conn = await sql.reserve();
  try {
    await conn.unsafe(`create temp view ${view} as ${select}`);
    return await fn(conn as unknown as Sql);
  } finally {
    await conn.unsafe(`drop view if exists pg_temp.${view}`);
    conn.release();
  }
}

t.test('savings: sums the facts of the window, by connector', async (t) => {
  const ten = randomUUID();
  const now = new Date();
  const rows = `
    select '${ten}'::uuid as tenant_id, false as livemode, gen_random_uuid() as payment_intent_id, c as connector_key,
           now() - (d || ' days')::interval as occurred_at, cur as currency, r::bigint as routing_saved_minor, y::bigint as retry_recovered_minor, u::bigint as dunning_recovered_minor
      from (values ('sim', 1, 'MXN', 100, 0, 0), ('stp', 2, 'MXN', 50, 700, 0), ('sim', 3, 'MXN', 0, 0, 300), ('sim', 40, 'MXN', 9999, 0, 0), ('sim', 1, 'USD', 5, 5, 5)) v(c, d, cur, r, y, u)
    union all select gen_random_uuid(), false, gen_random_uuid(), 'sim', now(), 'MXN', 1, 1, 1`;
  const s = await withFacts('savings_facts', rows, (db) => savings({ readSql: db }, principal(ten), {}));
  t.match(s, { routing_saved_minor: 150, retry_recovered_minor: 700, dunning_recovered_minor: 300, total_minor: 1150 }, 'the last 30 days, MXN, this tenant only');
  t.same(s.by_connector, [
    { connector_key: 'sim', routing_saved_minor: 100, retry_recovered_minor: 0, dunning_recovered_minor: 300, total_minor: 400 },
    { connector_key: 'stp', routing_saved_minor: 50, retry_recovered_minor: 700, dunning_recovered_minor: 0, total_minor: 750 },
  ]);
  const usd = await withFacts('savings_facts', rows, (db) => savings({ readSql: db }, principal(ten), { currency: 'USD' }));
  t.equal(usd.total_minor, 15);
  const wide = await withFacts('savings_facts', rows, (db) => savings({ readSql: db }, principal(ten), { from: new Date(now.getTime() - 50 * 86_400_000).toISOString() }));
  t.equal(wide.routing_saved_minor, 150 + 9999, 'a wider window');
});

t.test('fee leakage: overcharges per connector, the largest listed with a reason', async (t) => {
  const ten = randomUUID();
  const rows = `
    select '${ten}'::uuid as tenant_id, false as livemode, gen_random_uuid() as attempt_id, c as connector_key, now() - interval '1 day' as occurred_at,
           'MXN' as currency, e::bigint as expected_fee_minor, ch::bigint as charged_fee_minor
      from (values ('sim', 100, 100), ('sim', 100, 130), ('stp', 500, 450), ('stp', 200, 260)) v(c, e, ch)`;
  const f = await withFacts('fee_facts', rows, (db) => feeLeakage({ readSql: db }, principal(ten), {}));
  t.match(f, { expected_fee_minor: 900, charged_fee_minor: 940, leakage_minor: 90 }, 'an undercharge is not leakage');
  t.same(f.by_connector.map((c) => [c.connector_key, c.attempt_count, c.overcharged_count, c.leakage_minor]), [['sim', 2, 1, 30], ['stp', 2, 1, 60]]);
  t.same(f.data.map((d) => [d.connector_key, d.leakage_minor]), [['stp', 60], ['sim', 30]], 'largest first');
  t.match(f.data[0].reason, /stp charged a fee of 260 MXN minor units where its fee table says 200: 60 over/);
});

t.test('pólizas carry the CFDIs of the day: CONTPAQi AM/AD, Aspel COI CFDI block', async (t) => {
  const ten = await a.newTenant();
  const act = activity(a, ten.testKey);
  const c = await act.card(11600);
  const uuid = randomUUID().toUpperCase();
  const rows = `select '${ten.id}'::uuid as tenant_id, false as livemode, '${c.intent.id}'::uuid as payment_intent_id, '${uuid}' as uuid_fiscal, now() as issued_at,
                       'A' as serie, '77' as folio, 'AAA010101AAA' as rfc_emisor, 'XAXX010101000' as rfc_receptor, 11600::bigint as total_minor, 'MXN' as currency`;
  const today = localDate(new Date());
  const q = { from: today, to: addDays(today, 1) };
  const cp = await withFacts('cfdi_facts', rows, (db) => polizas({ readSql: db }, principal(ten.id), { format: 'contpaqi', ...q }));
  const lines = (cp.body as string).split('\r\n').slice(0, -1);
  const recs = lines.map(parseRecord);
  const salesAt = recs.findIndex((r) => r.rec === 'M1' && r.fields.IdCuenta === '401.01');
  t.ok(salesAt > 0);
  t.same(recs[salesAt + 1], { rec: 'AM', fields: { token: 'AM', UUID: uuid } }, 'AM right after the income movement');
  t.same(recs[recs.length - 1], { rec: 'AD', fields: { token: 'AD', UUID: uuid } }, 'AD after the last movement');
  const coi = await withFacts('cfdi_facts', rows, (db) => polizas({ readSql: db }, principal(ten.id), { format: 'aspel_coi', ...q }));
  const grid = (coi.body as string).split('\r\n').map((l) => l.split('\t'));
  const at = grid.findIndex((r) => r[1] === '401.01');
  t.same(grid[at + 1][2], 'INICIO_CFDI');
  t.same(grid[at + 2], ['', '', `${today.slice(8)}/${today.slice(5, 7)}/${today.slice(0, 4)}`, 'A', '77', 'AAA010101AAA', 'XAXX010101000', '116.00', uuid]);
  t.same(grid[at + 3][2], 'FIN_CFDI');
  const plain = await polizas({ readSql: sql }, principal(ten.id), { format: 'contpaqi', ...q });
  t.notOk((plain.body as string).includes('AM '), 'no CFDI, no AM/AD (the contract view is empty)');
});

/** Seeds 28 days of history for a tenant straight into the tables (intents, attempts, ledger entries dated then). */
async function seedHistory(tenantId: string, today: string) {
  await sql.begin(async (tx) => {
    for (let d = 1; d <= 28; d++) {
      const day = addDays(today, -d);
      const at = new Date(startOfLocalDate(day).getTime() + 12 * 3600_000);
      for (let i = 0; i < 5; i++) {
        const pi = randomUUID();
        const att = randomUUID();
        const failed = i === 0 && d % 4 === 0; // 7 of 140 declined
        await tx`insert into payment_intents (id, tenant_id, livemode, amount_minor, currency, status, client_secret, receipt_code, created_at, updated_at)
                 values (${pi}, ${tenantId}, false, 1000, 'MXN', ${failed ? 'failed' : 'succeeded'}, ${'pi_secret_' + pi}, ${'H-' + pi.slice(0, 8)}, ${at}, ${at})`;
        await tx`insert into attempts (id, tenant_id, livemode, payment_intent_id, status, connector_key, method, amount_minor, currency, provider_key, created_at, updated_at)
                 values (${att}, ${tenantId}, false, ${pi}, ${failed ? 'failed' : 'captured'}, 'sim', 'card', 1000, 'MXN', ${'hist_' + att}, ${at}, ${at})`;
        if (failed) continue;
        const e = randomUUID();
        await tx`insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id, occurred_at) values (${e}, ${tenantId}, false, 'charge.captured', 'attempt', ${att}, ${at})`;
        await tx`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (${e}, ${tenantId}, false, 'connector_receivable:sim', 'MXN', 1000), (${e}, ${tenantId}, false, 'sales', 'MXN', -1000)`;
        if (i === 1 && d % 14 === 0) {
          const r = randomUUID();
          await tx`insert into refunds (id, tenant_id, livemode, attempt_id, payment_intent_id, amount_minor, currency, status, requested_by, created_at, updated_at)
                   values (${r}, ${tenantId}, false, ${att}, ${pi}, 1000, 'MXN', 'succeeded', 'history', ${at}, ${at})`;
          const re = randomUUID();
          await tx`insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id, occurred_at) values (${re}, ${tenantId}, false, 'refund.succeeded', 'refund', ${r}, ${at})`;
          await tx`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (${re}, ${tenantId}, false, 'refunds', 'MXN', 1000), (${re}, ${tenantId}, false, 'connector_receivable:sim', 'MXN', -1000)`;
        }
      }
    }
  });
}

t.test('anomalies: a day of declines and refunds far above its usual', async (t) => {
  const ten = await a.newTenant();
  const today = localDate(new Date());
  await seedHistory(ten.id, today);
  const quiet = await anomalies({ readSql: sql }, principal(ten.id), {});
  t.same(quiet.data.filter((x) => x.rule.endsWith('_spike')), [], 'history alone: nothing unusual');
  const act = activity(a, ten.testKey);
  const ok = await inBatches(6, Array.from({ length: 20 }, (_, i) => () => act.card(1500 + i * 10)));
  await inBatches(6, Array.from({ length: 14 }, (_, i) => () => act.card(1700 + i * 10, { token: 'tok_sim_insufficient' })));
  await inBatches(3, ok.slice(0, 6).map((c) => () => act.refund(c.attempt.id)));
  const r = await a.call('GET', '/v1/reports/anomalies', { key: ten.testKey });
  t.equal(r.status, 200);
  const decline = r.body.data.find((x: any) => x.rule === 'decline_rate_spike');
  t.match(decline, { day: today, sample_size: 34, observed_rate: 0.4118, usual_rate: 0.05 });
  t.equal(decline.reason, `On ${today}, 14 of 34 card attempts were declined (41.2%); over the 28 days before, 5.0% of 140 were.`);
  const refund = r.body.data.find((x: any) => x.rule === 'refund_rate_spike');
  t.match(refund, { day: today, sample_size: 20, observed_rate: 0.3, usual_rate: 0.0150 });
  t.match(refund.reason, /6 refunds succeeded against 20 captured charges \(30\.0%\); over the 28 days before, the ratio was 1\.5% over 133 charges/);
  t.equal(r.body.data.filter((x: any) => x.rule.endsWith('_spike')).length, 2, 'the history days themselves are not flagged');
});

t.test('reads go to the replica pool when REPLICA_DATABASE_URL is set', async (t) => {
  const base = new URL(testConfig().databaseUrl);
  const replicaUrl = new URL(base);
  replicaUrl.pathname = `${base.pathname}_replica`;
  await ensureDatabase(replicaUrl.toString());
  const rsql = createSql(replicaUrl.toString(), 2);
  t.teardown(() => rsql.end());
  await migrate(rsql);
  const b = await startTestApp({ ROLE: 'all', REPLICA_DATABASE_URL: replicaUrl.toString(), RATE_LIMIT_V1_PER_MIN: '100000' });
  t.teardown(() => b.stop());
  const ten = await b.newTenant();
  const c = await activity(b, ten.testKey).card(3300);
  t.equal(c.intent.status, 'succeeded', 'the charge is on the primary');
  const q = `from=${encodeURIComponent(new Date(Date.now() - 3600_000).toISOString())}&to=${encodeURIComponent(new Date(Date.now() + 3600_000).toISOString())}`;
  const before = await b.call('GET', `/v1/reports/cash-cut?${q}`, { key: ten.testKey });
  t.equal(before.body.totals.operation_count, 0, 'the cash cut reads the replica (which has not got it)');
  await rsql`insert into cash_facts (kind, source_id, entry_id, tenant_id, livemode, occurred_at, currency, method, connector_key, payment_intent_id, attempt_id, amount_minor, tip_minor)
             values ('charge', ${randomUUID()}, ${randomUUID()}, ${ten.id}, false, now(), 'MXN', 'card', 'sim', ${randomUUID()}, ${randomUUID()}, 123, 0)`;
  const after = await b.call('GET', `/v1/reports/cash-cut?${q}`, { key: ten.testKey });
  t.same(after.body.totals, { charged_minor: 123, tip_minor: 0, total_minor: 123, operation_count: 1 }, 'what the replica has');
  const pay = await b.call('GET', '/v1/reports/payments', { key: ten.testKey });
  t.same(pay.body.data, [], 'the payments report too');
  const close = await b.call('POST', `/v1/reports/periods/${localDate(new Date()).slice(0, 4)}/${Number(localDate(new Date()).slice(5, 7))}/close`, { key: ten.testKey, headers: { 'idempotency-key': randomUUID() } });
  t.equal(close.status, 200);
  // sales net of IVA (issue 27): round(3300 / 1.16)
  t.match(close.body.balances.find((x: any) => x.account === 'sales'), { credits_minor: 2845 }, 'the period close reads and writes the primary');
});
