// The trial balance of the whole ledger is zero: every line of every entry, whatever test or
// process wrote it, sums to zero per currency (entries are atomic, so this holds at any instant).
import t from 'tap';
import { createSql } from '../kernel/db.js';
import { migrate } from '../ops/migrate.js';
import { testConfig } from './helpers/app.js';

t.test('trial balance is zero, and every entry balances', async (t) => {
  const sql = createSql(testConfig().databaseUrl, 2);
  t.teardown(() => sql.end());
  await migrate(sql);
  const totals = await sql`select currency, sum(amount_minor)::bigint as total, count(*)::int as lines from journal_lines group by currency`;
  for (const r of totals) t.equal(Number(r.total), 0, `${r.currency}: ${r.lines} lines sum to zero`);
  const unbalanced = await sql`select entry_id from journal_lines group by entry_id, currency having sum(amount_minor) <> 0`;
  t.same(unbalanced, [], 'no unbalanced entry');
});
