// Runs the card connector conformance suite (card-conformance.ts) against `sim` and `sim_b` (their
// book in the real Postgres) and the Conekta and Openpay adapters (against their local fakes).
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { SimAcquirer } from '../../connectors/sim.js';
import { ConektaAcquirer } from '../../connectors/card/conekta.js';
import { OpenpayAcquirer } from '../../connectors/card/openpay.js';
import { MemoryKeyBook } from '../../connectors/card/http.js';
import { createSql, ensureDatabase } from '../../kernel/db.js';
import { migrate } from '../../ops/migrate.js';
import { testConfig } from '../helpers/app.js';
import { FakeConekta } from '../fakes/conekta.js';
import { FakeOpenpay } from '../fakes/openpay.js';
import { cardConformance } from './card-conformance.js';

const config = testConfig();
await ensureDatabase(config.databaseUrl);
const sql = createSql(config.databaseUrl, 4);
await migrate(sql);
t.teardown(() => sql.end({ timeout: 2 }));

const simMoved = async (key: string) => {
  const [r] = await sql`select coalesce(sum(charges), 0)::int as n from sim_provider_calls where idempotency_key = ${key}`;
  return r.n as number;
};

for (const key of ['sim', 'sim_b'] as const) {
  t.test(key, async (t) => {
    cardConformance(t, {
      name: key,
      acquirer: new SimAcquirer(sql, 'http://127.0.0.1', async () => {}, key),
      tenantId: randomUUID(),
      livemode: false,
      tokens: {
        ok: 'tok_sim_ok',
        hard: ['tok_sim_insufficient', 'insufficient_funds'],
        soft: key === 'sim' ? 'tok_sim_issuer_down' : 'tok_simb_issuer_down',
        fault: key === 'sim' ? 'tok_sim_provider_500' : 'tok_simb_provider_500',
        preauth: 'tok_sim_auth',
      },
      moved: simMoved,
    });
  });
}

t.test('conekta (against the fake)', async (t) => {
  const fake = await new FakeConekta().start();
  fake.slowMs = 3000; // past the adapter's deadline below, with room for a loaded machine
  t.teardown(() => fake.stop());
  cardConformance(t, {
    name: 'conekta',
    acquirer: new ConektaAcquirer({ baseUrl: fake.url, timeoutMs: 1500, book: new MemoryKeyBook(), credentials: async () => ({ private_key: fake.privateKey }) }),
    tenantId: randomUUID(),
    livemode: false,
    tokens: {
      ok: 'tok_test_visa_4242',
      hard: ['tok_test_insufficient_funds', 'insufficient_funds'],
      fault: 'tok_test_500',
      faultCharged: 'tok_test_500_charged',
      timeout: 'tok_test_timeout',
      malformed: 'tok_test_malformed',
      preauth: 'tok_test_preauth',
    },
    moved: async (key) => fake.paidFor(key),
  });
  t.test('conekta: every request and answer matched Conekta\'s published schema', async (t) => t.same(fake.violations, []));
});

t.test('openpay (against the fake)', async (t) => {
  const fake = await new FakeOpenpay().start();
  fake.slowMs = 3000;
  t.teardown(() => fake.stop());
  cardConformance(t, {
    name: 'openpay',
    acquirer: new OpenpayAcquirer({ baseUrl: fake.url, timeoutMs: 1500, book: new MemoryKeyBook(), credentials: async () => ({ merchant_id: fake.merchantId, private_key: fake.privateKey }) }),
    tenantId: randomUUID(),
    livemode: false,
    tokens: {
      ok: 'tok_ok#dsess_conf',
      hard: ['tok_insufficient#dsess_conf', 'insufficient_funds'],
      soft: 'tok_unavailable#dsess_conf',
      fault: 'tok_500#dsess_conf',
      faultCharged: 'tok_500_charged#dsess_conf',
      timeout: 'tok_timeout#dsess_conf',
      malformed: 'tok_malformed#dsess_conf',
      preauth: 'tok_preauth#dsess_conf',
    },
    moved: async (key) => fake.completedFor(key),
  });
});
