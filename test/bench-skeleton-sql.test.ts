// bench/confirm-sql.ts: the statements pgbench's chain-full-sql and the bare stack (bench/skeleton-app)
// send for one create → confirm → execute, read as the bare stack reads them (skeletonSteps) and run
// against today's schema, so that a migration the bench's SQL no longer matches fails here rather
// than in a bench run.
import t from 'tap';
import { createSql, ensureDatabase } from '../kernel/db.js';
import { migrate } from '../ops/migrate.js';
import { confirmWrites, skeletonChain, skeletonSteps, TENANT, type SkeletonStep } from '../bench/confirm-sql.js';
import { ownDatabase } from './helpers/db.js';

const shape = (steps: SkeletonStep[]) => steps.map((s) => ('statement' in s ? 'statement' : `transaction of ${s.transaction.length}`));

t.test('the chain as the bare stack sends it: statements awaited alone, transactions pipelined', async (t) => {
  const c = skeletonChain();
  t.same(shape(c.create), ['statement'], 'create: one statement (intent, history, idempotency record)');
  t.same(shape(c.confirm), ['statement', 'statement', 'transaction of 4'], 'confirm: idempotency lookup, hydrate, then attempt + fenced update + history + idempotency record');
  t.same(shape(c.execute), ['statement', 'statement', 'transaction of 6'], "execute: hydrate, the provider's book, then the evidence transaction");
  for (const s of [...c.create, ...c.confirm, ...c.execute]) {
    for (const text of 'statement' in s ? [s.statement] : s.transaction) {
      t.notMatch(text, /(?<!:):n\b/, 'no pgbench variable left');
      t.notMatch(text, /;\s*$/, 'no trailing semicolon');
    }
  }
  t.throws(() => skeletonSteps(confirmWrites()), /pgbench variable :v/, 'a variable other than n is refused, not sent');
  t.throws(() => skeletonSteps('begin;\nselect 1;'), /begin without commit/);
});

t.test('the chain runs on the schema: the intent succeeds, its ledger entry balances', async (t) => {
  const url = ownDatabase(t, 'orq_bench_sql');
  await ensureDatabase(url);
  const sql = createSql(url, 2);
  t.teardown(() => sql.end({ timeout: 2 }));
  await migrate(sql);
  await sql`insert into tenants (id, name) values (${TENANT}, 'skeleton')`;
  const n = String(0x1000001);
  const c = skeletonChain();
  for (const s of [...c.create, ...c.confirm, ...c.execute]) {
    if ('statement' in s) await sql.unsafe(s.statement, [n], { prepare: true });
    else await sql.begin(async (tx) => {
      for (const text of s.transaction) await tx.unsafe(text, [n], { prepare: true });
    });
  }
  const [pi] = await sql`select id, status, version from payment_intents where tenant_id = ${TENANT}`;
  t.equal(pi.id, '00000000-0000-0000-0000-000001000001', 'the id bench/skeleton-app computes for n');
  t.same([pi.status, pi.version], ['succeeded', 2]);
  const [a] = await sql`select status, fee_minor from attempts where payment_intent_id = ${pi.id}`;
  t.same([a.status, a.fee_minor], ['captured', 435]);
  const history = await sql`select event from payment_intent_history where payment_intent_id = ${pi.id} order by id`;
  t.same(history.map((h) => h.event), ['create', 'confirm', 'evidence.captured']);
  const [lines] = await sql`select count(*)::int as n, sum(amount_minor)::int as total from journal_lines where tenant_id = ${TENANT}`;
  t.same([lines.n, lines.total], [4, 0], 'four lines that balance');
  const [outbox] = await sql`select count(*)::int as n from outbox_events where tenant_id = ${TENANT}`;
  t.equal(outbox.n, 1);
  // A second execution of the same n is refused by the fence, as a duplicate job would be.
  await t.rejects(
    sql.begin(async (tx) => {
      for (const text of (c.execute[2] as { transaction: string[] }).transaction) await tx.unsafe(text, [n], { prepare: true });
    }),
  );
});
