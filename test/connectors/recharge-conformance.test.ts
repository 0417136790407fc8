// Runs the recharge-aggregator and biller-aggregator conformance suites (recharge-conformance.ts)
// against the `sim` implementations (their books in the real Postgres).
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { SimRechargeAggregator } from '../../connectors/recharge/sim.js';
import { SimBillerGateway } from '../../connectors/billers/sim.js';
import { createSql, ensureDatabase } from '../../kernel/db.js';
import { migrate } from '../../ops/migrate.js';
import { testConfig } from '../helpers/app.js';
import { aggregatorConformance, billerConformance } from './recharge-conformance.js';

const config = testConfig();
await ensureDatabase(config.databaseUrl);
const sql = createSql(config.databaseUrl, 4);
await migrate(sql);
t.teardown(() => sql.end({ timeout: 2 }));

t.test('sim recharge aggregator', async (t) => {
  aggregatorConformance(t, {
    name: 'sim',
    aggregator: new SimRechargeAggregator(sql),
    tenantId: randomUUID(),
    livemode: false,
    okPhone: '5512345678',
    failingPhone: '5512340000',
    timeoutPhone: '5512341111',
    registered: async (key) => Number((await sql`select count(*)::int as n from sim_recharge_orders where key = ${key}`)[0].n),
  });
});

t.test('sim biller aggregator', async (t) => {
  billerConformance(t, {
    name: 'sim',
    gateway: new SimBillerGateway(sql),
    tenantId: randomUUID(),
    known: { billerCode: 'cfe', reference: '123456789012' },
    unknown: { billerCode: 'cfe', reference: '000000000000' },
    failing: { billerCode: 'cfe', reference: '123456780000' },
    paid: async (key) => Number((await sql`select count(*)::int as n from sim_biller_payments where key = ${key}`)[0].n),
  });
});
