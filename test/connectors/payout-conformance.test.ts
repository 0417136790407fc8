// Runs the payout-rail conformance suite (payout-conformance.ts) against the `sim` rail (its book
// in the real Postgres) and the `stp` adapter (against the local fake of STP's API).
import t from 'tap';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { SimPayoutRail } from '../../connectors/payout/sim.js';
import { StpPayoutRail } from '../../connectors/payout/stp.js';
import { makeClabe } from '../../formats/clabe.js';
import { createSql, ensureDatabase } from '../../kernel/db.js';
import { migrate } from '../../ops/migrate.js';
import { testConfig } from '../helpers/app.js';
import { FakeStp } from '../fakes/stp.js';
import { payoutConformance } from './payout-conformance.js';

const config = testConfig();
await ensureDatabase(config.databaseUrl);
const sql = createSql(config.databaseUrl, 4);
await migrate(sql);
t.teardown(() => sql.end({ timeout: 2 }));

t.test('sim', async (t) => {
  const rail = new SimPayoutRail(sql);
  payoutConformance(t, {
    name: 'sim',
    rail,
    tenantId: randomUUID(),
    livemode: false,
    failing: (o) => ({ ...o, beneficiaryName: 'FAIL' }),
    settle: async () => {},
    returnPaid: async (o, sent) => {
      t.ok(await rail.returnOrder(o.tenantId, (sent as { providerRef: string }).providerRef));
    },
    registered: async (o) => {
      const [r] = await sql`select count(*)::int as n from sim_payout_orders where key = ${o.key}`;
      return r.n as number;
    },
    callbackBody: async (o) => (await rail.callbackFor(o.key))!,
  });
});

t.test('stp (against the fake)', async (t) => {
  const passphrase = 'correct horse battery staple';
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase },
  });
  const fake = await new FakeStp({ empresa: 'ORQUESTA', publicKey }).start();
  t.teardown(() => fake.stop());
  fake.initialEstado = 'E'; // accepted, settled later: the adapter sees in_flight first
  const tenantId = randomUUID();
  const rail = new StpPayoutRail({
    baseUrl: fake.url,
    timeoutMs: 1500,
    credentials: async (tid) => (tid === tenantId ? { empresa: 'ORQUESTA', cuentaOrdenante: '646180110400000007', nombreOrdenante: 'Mercado Uno', privateKeyPem: privateKey, passphrase } : null),
  });
  const unknownAccount = makeClabe('012', '180', '01500000000');
  fake.nonexistentAccounts.add(unknownAccount);
  payoutConformance(t, {
    name: 'stp',
    rail,
    tenantId,
    livemode: true,
    failing: (o) => ({ ...o, clabe: unknownAccount }),
    settle: async (o) => {
      if (fake.orderByKey(o.trackingKey)?.estado !== 'LQ') fake.settle(o.trackingKey, 'LQ');
    },
    returnPaid: async (o) => {
      fake.settle(o.trackingKey, 'D', 1);
    },
    registered: async (o) => [...fake.orders.values()].filter((x) => x.body.claveRastreo === o.trackingKey).length,
    callbackBody: async (o) => fake.callbackBody(o.trackingKey),
    faults: {
      next: (kind) => fake.fail(kind),
      registerThenFail: () => fake.fail('register_then_500'),
    },
  });
});
