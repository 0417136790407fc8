// An entry balances per currency over all its lines, checked after each insert statement of lines by
// the statement trigger journal_lines_summarize (migration 0178; before it, a deferred per-row
// constraint trigger checked at commit). Each statement must leave every entry it touches balanced:
// an unbalanced statement is refused at the statement (the transaction could go on after a savepoint),
// also when a later statement of the same transaction would have balanced it. Since migration 0180 an
// entry's lines are one statement's: a later statement adding lines to an entry that has lines is
// refused, balanced or not. Balanced statements of many entries (the bank import's shape) pass, and
// the summaries (ledger_daily_now: written or pending) stay equal to the lines.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import type { Db, Sql } from '../kernel/db.js';
import { postEntry } from '../kernel/ledger.js';
import type { Account } from '../kernel/accounts.js';
import { migratedDb } from './helpers/db.js';

let sql: Sql;
let tenant: string;
t.before(async () => {
  ({ sql, tenant } = await migratedDb('ledger-balance'));
});
t.teardown(() => sql.end());

const unbalanced = (entry: string, cur: string, total: number) => ({ code: '23514', message: `journal entry ${entry} does not balance in ${cur}: lines sum to ${total}` });

async function entry(tx: Db, id: string = randomUUID()): Promise<string> {
  await tx`insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id) values (${id}, ${tenant}, false, 'adjustment', 'test', ${randomUUID()})`;
  return id;
}

async function daily() {
  const [r] = await sql`select coalesce(sum(line_count), 0)::int as n, coalesce(sum(debit_minor), 0)::bigint::text as d from ledger_daily_now where tenant_id = ${tenant}`;
  const [l] = await sql`select count(*)::int as n, coalesce(sum(greatest(amount_minor, 0)), 0)::bigint::text as d from journal_lines where tenant_id = ${tenant}`;
  return { summary: r, lines: l };
}

t.test('a statement of lines that leaves its entry unbalanced is refused at the statement', async (t) => {
  let id = '';
  await sql.begin(async (tx) => {
    id = await entry(tx);
    await t.rejects(
      tx.savepoint((sp) => sp`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (${id}, ${tenant}, false, 'cash', 'MXN', 100), (${id}, ${tenant}, false, 'sales', 'MXN', -60)`),
      unbalanced(id, 'MXN', 40),
      'refused by the statement itself, not at commit',
    );
    // the transaction goes on: the entry's lines, balanced this time, in one statement
    await tx`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (${id}, ${tenant}, false, 'cash', 'MXN', 100), (${id}, ${tenant}, false, 'sales', 'MXN', -100)`;
  });
  const lines = await sql`select amount_minor::int as a from journal_lines where entry_id = ${id} order by amount_minor`;
  t.same(lines.map((l) => l.a), [-100, 100], 'only the balanced statement landed');

  // one currency balanced, the other not: the error names the unbalanced one
  await t.rejects(
    sql.begin(async (tx) => {
      const e = await entry(tx);
      await tx`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor)
               values (${e}, ${tenant}, false, 'cash', 'MXN', 10), (${e}, ${tenant}, false, 'sales', 'MXN', -10), (${e}, ${tenant}, false, 'cash', 'USD', 5)`;
    }),
    { code: '23514', message: /does not balance in USD: lines sum to 5$/ },
  );
});

t.test('lines split over two statements must balance in each (stricter than the commit-time check)', async (t) => {
  const id = randomUUID();
  await t.rejects(
    sql.begin(async (tx) => {
      await entry(tx, id);
      await tx`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (${id}, ${tenant}, false, 'cash', 'MXN', 70)`;
      await tx`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (${id}, ${tenant}, false, 'sales', 'MXN', -70)`;
    }),
    unbalanced(id, 'MXN', 70),
  );
  t.same(await sql`select 1 from journal_entries where id = ${id}`, [], 'nothing of that transaction landed');
});

t.test('a later statement adding lines to an entry that has lines is refused, balanced or not (0180)', async (t) => {
  const id = await sql.begin((tx) => postEntry(tx, { tenantId: tenant, livemode: false, kind: 'adjustment', refType: 'test', refId: randomUUID(), lines: [{ account: 'cash' as Account, currency: 'MXN', amountMinor: 500 }, { account: 'sales', currency: 'MXN', amountMinor: -500 }] }));
  const reposted = { code: '23514', message: `journal lines refused: entry ${id} already has lines from an earlier statement; an entry's lines are inserted together, in one statement (post a new entry instead)` };
  await sql.begin(async (tx) => {
    await t.rejects(
      tx.savepoint((sp) => sp`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (${id}, ${tenant}, false, 'cash', 'MXN', 9), (${id}, ${tenant}, false, 'sales', 'MXN', -9)`),
      reposted,
      'a balanced pair on an entry posted by an earlier transaction',
    );
    await t.rejects(
      tx.savepoint((sp) => sp`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (${id}, ${tenant}, false, 'cash', 'MXN', 3)`),
      reposted,
      'an unbalanced line on it: the same refusal (it comes before the balance check)',
    );
  });
  // inside one transaction too: the entry and its lines, then more lines
  const other = randomUUID();
  await t.rejects(
    sql.begin(async (tx) => {
      await entry(tx, other);
      await tx`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (${other}, ${tenant}, false, 'cash', 'MXN', 4), (${other}, ${tenant}, false, 'sales', 'MXN', -4)`;
      await tx`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (${other}, ${tenant}, false, 'cash', 'MXN', 5), (${other}, ${tenant}, false, 'sales', 'MXN', -5)`;
    }),
    { code: '23514', message: new RegExp(`entry ${other} already has lines`) },
  );
  const [s] = await sql`select sum(amount_minor)::int as s, count(*)::int as n from journal_lines where entry_id = ${id}`;
  t.same(s, { s: 0, n: 2 }, 'the entry kept its two lines');
  const [p] = await sql`select count(*)::int as n from ledger_pending where entry_id = ${id}`;
  t.ok(p.n <= 1, 'listed as pending at most once');
});

t.test('a balanced statement of many entries passes; one unbalanced entry among them refuses it all', async (t) => {
  const before = await daily();
  const ids: string[] = [];
  await sql.begin(async (tx) => {
    for (let i = 0; i < 40; i++) ids.push(await entry(tx));
    // the bank import's shape: three lines per entry, all in one statement
    await tx`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor)
             select id, ${tenant}, false, x.account, 'MXN', x.amount
               from unnest(${ids}::uuid[]) with ordinality as e(id, i)
               cross join lateral (values ('bank:test', 1000 + i), ('connector_receivable:sim', -(990 + i)), ('connector_fees_payable:sim', -10::bigint)) x(account, amount)`;
  });
  const after = await daily();
  t.equal(after.lines.n - before.lines.n, 120, '120 lines landed');
  t.same(after.summary, after.lines, 'ledger_daily counts and sums the lines');

  const more = Array.from({ length: 5 }, () => randomUUID());
  await t.rejects(
    sql.begin(async (tx) => {
      for (const id of more) await entry(tx, id);
      await tx`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor)
               select id, ${tenant}, false, x.account, 'MXN', case when id = ${more[3]}::uuid and x.account = 'sales' then x.amount - 1 else x.amount end
                 from unnest(${more}::uuid[]) as e(id)
                 cross join lateral (values ('cash', 50::bigint), ('sales', -50::bigint)) x(account, amount)`;
    }),
    unbalanced(more[3], 'MXN', -1),
  );
  t.same(await daily(), after, 'nothing of the refused statement in the lines or ledger_daily');
});

t.test('a statement both unbalanced and in a closed period reports the closed period', async (t) => {
  const other = randomUUID();
  await sql`insert into tenants (id, name) values (${other}, 'ledger-balance-closed')`;
  const id = randomUUID();
  await sql`insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id) values (${id}, ${other}, false, 'adjustment', 'test', ${randomUUID()})`;
  const [{ day }] = await sql`select accounting_date::text as day from journal_entries where id = ${id}`;
  await sql`insert into ledger_period_closes (tenant_id, livemode, period, closed_at_tenant, closed_by, balances) values (${other}, false, date_trunc('month', ${day}::date)::date, now(), 'test', '[]')`;
  await t.rejects(
    sql`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (${id}, ${other}, false, 'cash', 'MXN', 1)`,
    { code: '23514', message: /closed period/ },
  );
});
