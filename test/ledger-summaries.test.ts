// The reports' summaries (ledger_daily per account and day, cash_facts per captured charge and
// succeeded refund) are written by the journal lines' trigger in the posting's own transaction
// (migrations 0050, 0110). After postings on many connections at once (single entries, several
// entries in one statement, charges and refunds, two tenants, both modes) they equal a
// recomputation from the journal; lines on an entry of a closed month, or naming another tenant
// than their entry, are refused.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { createSql, type Sql } from '../kernel/db.js';
import { migrate } from '../ops/migrate.js';
import { captureLines, postEntry } from '../kernel/ledger.js';
import type { Account } from '../kernel/accounts.js';
import { testConfig } from './helpers/app.js';

let sql: Sql;
t.before(async () => {
  sql = createSql(testConfig().databaseUrl, 12);
  await migrate(sql);
});
t.teardown(() => sql.end());

async function charge(tenant: string, livemode: boolean, amount: number, tip: number, branch: string | null) {
  const pi = randomUUID();
  const att = randomUUID();
  await sql`insert into payment_intents (id, tenant_id, livemode, amount_minor, tip_minor, currency, status, client_secret, receipt_code, metadata)
    values (${pi}, ${tenant}, ${livemode}, ${amount}, ${tip}, 'MXN', 'succeeded', ${'pi_secret_' + pi}, ${'S-' + pi.slice(0, 8)}, ${branch ? sql.json({ branch }) : null})`;
  await sql`insert into attempts (id, tenant_id, livemode, payment_intent_id, status, connector_key, method, amount_minor, currency, provider_key, payment_token)
    values (${att}, ${tenant}, ${livemode}, ${pi}, 'captured', 'sim', 'card', ${amount + tip}, 'MXN', ${'sum_' + att}, 'tok_sim_ok')`;
  return { pi, att, amount, tip };
}

/** ledger_daily summed over its stripes, against the same sums recomputed from the lines. */
async function dailyDiff(tenants: string[]) {
  return sql`
    with summary as (
      select tenant_id, livemode, currency, day, account, sum(debit_minor)::bigint as d, sum(credit_minor)::bigint as c, sum(line_count)::bigint as n
        from ledger_daily where tenant_id = any(${tenants}::uuid[]) group by 1, 2, 3, 4, 5),
    recomputed as (
      select e.tenant_id, e.livemode, l.currency, e.accounting_date as day, l.account,
             sum(greatest(l.amount_minor, 0))::bigint as d, sum(greatest(-l.amount_minor, 0))::bigint as c, count(*)::bigint as n
        from journal_lines l join journal_entries e on e.id = l.entry_id where e.tenant_id = any(${tenants}::uuid[]) group by 1, 2, 3, 4, 5)
    select * from ((table summary except table recomputed) union all (table recomputed except table summary)) x`;
}

async function cashDiff(tenants: string[]) {
  return sql`
    with recomputed as (
      select 'charge' as kind, a.id as source_id, e.id as entry_id, e.tenant_id, e.livemode, e.occurred_at, pi.currency, a.method, a.connector_key,
             pi.metadata->>'branch' as branch, pi.metadata->>'register' as register, pi.id as payment_intent_id, a.id as attempt_id, pi.amount_minor, pi.tip_minor, a.card_fingerprint
        from journal_entries e join attempts a on a.id = e.ref_id join payment_intents pi on pi.id = a.payment_intent_id
       where e.kind = 'charge.captured' and e.ref_type = 'attempt' and e.tenant_id = any(${tenants}::uuid[])
      union all
      select 'refund', r.id, e.id, e.tenant_id, e.livemode, e.occurred_at, r.currency, a.method, a.connector_key,
             pi.metadata->>'branch', pi.metadata->>'register', pi.id, a.id, r.amount_minor, 0, a.card_fingerprint
        from journal_entries e join refunds r on r.id = e.ref_id join attempts a on a.id = r.attempt_id join payment_intents pi on pi.id = a.payment_intent_id
       where e.kind = 'refund.succeeded' and e.ref_type = 'refund' and e.tenant_id = any(${tenants}::uuid[])),
    summary as (
      select kind, source_id, entry_id, tenant_id, livemode, occurred_at, currency, method, connector_key, branch, register, payment_intent_id, attempt_id, amount_minor, tip_minor, card_fingerprint
        from cash_facts where tenant_id = any(${tenants}::uuid[]))
    select * from ((table summary except table recomputed) union all (table recomputed except table summary)) x`;
}

t.test('summaries equal a recomputation from the journal after concurrent postings', async (t) => {
  const tenants = [randomUUID(), randomUUID()];
  for (const id of tenants) await sql`insert into tenants (id, name) values (${id}, 'summaries')`;
  const charges: Array<Awaited<ReturnType<typeof charge>>> = [];
  for (let i = 0; i < 60; i++) charges.push(await charge(tenants[i % 2], i % 3 === 0, 1000 + i, i % 4 === 0 ? 150 : 0, i % 5 === 0 ? `b${i % 3}` : null));

  // Captures, each in its own transaction, 12 connections at once.
  await Promise.all(
    charges.map((c, i) =>
      sql.begin((tx) =>
        postEntry(tx, { tenantId: tenants[i % 2], livemode: i % 3 === 0, kind: 'charge.captured', refType: 'attempt', refId: c.att, lines: captureLines(i % 7 === 0 ? 'sim_b' : 'sim', 'MXN', c.amount, c.tip, 30 + i) }),
      ),
    ),
  );
  // Refunds of a third of them, concurrently with more captures' sibling postings (payouts of fees).
  const refunds = charges.filter((_, i) => i % 3 === 1);
  await Promise.all([
    ...refunds.map(async (c) => {
      const i = charges.indexOf(c);
      const r = randomUUID();
      await sql.begin(async (tx) => {
        await tx`insert into refunds (id, tenant_id, livemode, attempt_id, payment_intent_id, amount_minor, currency, status, requested_by)
          values (${r}, ${tenants[i % 2]}, ${i % 3 === 0}, ${c.att}, ${c.pi}, ${Math.floor(c.amount / 2)}, 'MXN', 'succeeded', 'test')`;
        await postEntry(tx, {
          tenantId: tenants[i % 2],
          livemode: i % 3 === 0,
          kind: 'refund.succeeded',
          refType: 'refund',
          refId: r,
          lines: [
            { account: 'sales_returns' as Account, currency: 'MXN', amountMinor: Math.floor(c.amount / 2) },
            { account: 'connector_receivable:sim', currency: 'MXN', amountMinor: -Math.floor(c.amount / 2) },
          ],
        });
      });
    }),
    ...Array.from({ length: 20 }, (_, k) =>
      sql.begin((tx) =>
        postEntry(tx, { tenantId: tenants[k % 2], livemode: false, kind: 'adjustment', refType: 'test', refId: randomUUID(), lines: [{ account: 'cash' as Account, currency: k % 4 === 0 ? 'USD' : 'MXN', amountMinor: 10 + k }, { account: 'sales', currency: k % 4 === 0 ? 'USD' : 'MXN', amountMinor: -(10 + k) }] }),
      ),
    ),
  ]);
  // Several entries (two tenants) in one statement of lines.
  await sql.begin(async (tx) => {
    const [e1, e2] = [randomUUID(), randomUUID()];
    const c = await charge(tenants[1], false, 10, 0, 'b9');
    charges.push(c);
    await tx`insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id) values (${e1}, ${tenants[0]}, false, 'adjustment', 'test', ${randomUUID()}), (${e2}, ${tenants[1]}, false, 'charge.captured', 'attempt', ${c.att})`;
    await tx`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values
      (${e1}, ${tenants[0]}, false, 'cash', 'MXN', 500), (${e1}, ${tenants[0]}, false, 'sales', 'MXN', -500),
      (${e2}, ${tenants[1]}, false, 'cash', 'MXN', 7), (${e2}, ${tenants[1]}, false, 'sales', 'MXN', -7), (${e2}, ${tenants[1]}, false, 'cash', 'MXN', 3), (${e2}, ${tenants[1]}, false, 'sales', 'MXN', -3)`;
  });

  t.same(await dailyDiff(tenants), [], 'ledger_daily (summed over stripes) = the lines grouped by tenant, mode, currency, accounting day and account');
  t.same(await cashDiff(tenants), [], 'cash_facts = one row per captured charge and succeeded refund, recomputed from the journal');
  const [n] = await sql`select count(*)::int as n from cash_facts where tenant_id = any(${tenants}::uuid[])`;
  t.equal(n.n, charges.length + refunds.length, 'one cash fact per charge and per refund');
  const [lines] = await sql`select sum(line_count)::int as n from ledger_daily where tenant_id = any(${tenants}::uuid[])`;
  const [real] = await sql`select count(*)::int as n from journal_lines where tenant_id = any(${tenants}::uuid[])`;
  t.equal(lines.n, real.n, 'every line counted once');
});

t.test('lines on an entry of a closed month, or naming another tenant, are refused', async (t) => {
  const tenant = randomUUID();
  const other = randomUUID();
  for (const id of [tenant, other]) await sql`insert into tenants (id, name) values (${id}, 'summaries-refusals')`;
  const entry = await sql.begin((tx) => postEntry(tx, { tenantId: tenant, livemode: false, kind: 'adjustment', refType: 'test', refId: randomUUID(), lines: [{ account: 'cash' as Account, currency: 'MXN', amountMinor: 5 }, { account: 'sales', currency: 'MXN', amountMinor: -5 }] }));
  await t.rejects(
    sql`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (${entry}, ${other}, false, 'cash', 'MXN', 1), (${entry}, ${other}, false, 'sales', 'MXN', -1)`,
    // the key (entry_id, tenant_id) of migration 0160 (checked by the trigger itself since 0179, same code and name) refuses it before the tenant/mode check
    { code: '23503', message: /journal_lines_entry_id_fkey/ },
    'another tenant than the entry',
  );
  await t.rejects(
    // several entries in one statement (the bank import posts thousands so): one of them names the other mode
    sql.begin(async (tx) => {
      const second = await postEntry(tx, { tenantId: tenant, livemode: false, kind: 'adjustment', refType: 'test', refId: randomUUID(), lines: [{ account: 'cash' as Account, currency: 'MXN', amountMinor: 7 }, { account: 'sales', currency: 'MXN', amountMinor: -7 }] });
      await tx`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor)
               values (${entry}, ${tenant}, false, 'cash', 'MXN', 1), (${entry}, ${tenant}, false, 'sales', 'MXN', -1),
                      (${second}, ${tenant}, true, 'cash', 'MXN', 1), (${second}, ${tenant}, true, 'sales', 'MXN', -1)`;
    }),
    { code: '23514', message: /another tenant or mode/ },
    'another mode than the entry',
  );
  const [{ day }] = await sql`select accounting_date::text as day from journal_entries where id = ${entry}`;
  await sql`insert into ledger_period_closes (tenant_id, livemode, period, closed_at_tenant, closed_by, balances) values (${tenant}, false, date_trunc('month', ${day}::date)::date, now(), 'test', '[]')`;
  await t.rejects(
    sql`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (${entry}, ${tenant}, false, 'cash', 'MXN', 1), (${entry}, ${tenant}, false, 'sales', 'MXN', -1)`,
    { code: '23514', message: /closed period/ },
    'an entry dated in a closed month',
  );
  t.same(await dailyDiff([tenant, other]), [], 'nothing of the refused lines in ledger_daily');
});
