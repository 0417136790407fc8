// The reports' summaries (ledger_daily per account and day, cash_facts per captured charge and
// succeeded refund). Since migration 0180 the posting's transaction only lists its entry in
// ledger_pending; summarizers (the worker's job, or a book's own transaction) write the summaries
// and delete the pending rows in one transaction. After postings on many connections at once (single
// entries, several entries in one statement, charges and refunds, two tenants, both modes) with
// summarizers running concurrently, the views cash_facts_now and ledger_daily_now equal a
// recomputation from the journal at every check, and once the list is drained so do the tables;
// lines on an entry of a closed month, or naming another tenant than their entry, are refused.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { createSql, ensureDatabase, type Sql } from '../kernel/db.js';
import { migrate } from '../ops/migrate.js';
import { captureLines, postEntry, summarizeAll, summarizeBook, summarizePending } from '../kernel/ledger.js';
import type { Account } from '../kernel/accounts.js';
import { scratchDatabase } from './helpers/db.js';

// A database of its own: the other test files' workers run the summarizing job every second on the
// shared one, and the checks below need to know who summarizes what.
const scratch = scratchDatabase('orq_summaries');
let sql: Sql;
t.before(async () => {
  await ensureDatabase(scratch.url);
  sql = createSql(scratch.url, 12);
  await migrate(sql);
});
t.teardown(async () => {
  await sql.end();
  await scratch.drop();
});

async function charge(tenant: string, livemode: boolean, amount: number, tip: number, branch: string | null) {
  const pi = randomUUID();
  const att = randomUUID();
  await sql`insert into payment_intents (id, tenant_id, livemode, amount_minor, tip_minor, currency, status, client_secret, receipt_code, metadata)
    values (${pi}, ${tenant}, ${livemode}, ${amount}, ${tip}, 'MXN', 'succeeded', ${'pi_secret_' + pi}, ${'S-' + pi.slice(0, 8)}, ${branch ? sql.json({ branch }) : null})`;
  await sql`insert into attempts (id, tenant_id, livemode, payment_intent_id, status, connector_key, method, amount_minor, currency, provider_key, payment_token)
    values (${att}, ${tenant}, ${livemode}, ${pi}, 'captured', 'sim', 'card', ${amount + tip}, 'MXN', ${'sum_' + att}, 'tok_sim_ok')`;
  return { pi, att, amount, tip };
}

/** ledger_daily (or the view ledger_daily_now) summed over its stripes, against the same sums recomputed from the lines. */
async function dailyDiff(tenants: string[], from: 'ledger_daily' | 'ledger_daily_now' = 'ledger_daily_now') {
  return sql`
    with summary as (
      select tenant_id, livemode, currency, day, account, sum(debit_minor)::bigint as d, sum(credit_minor)::bigint as c, sum(line_count)::bigint as n
        from ${sql(from)} where tenant_id = any(${tenants}::uuid[]) group by 1, 2, 3, 4, 5),
    recomputed as (
      select e.tenant_id, e.livemode, l.currency, e.accounting_date as day, l.account,
             sum(greatest(l.amount_minor, 0))::bigint as d, sum(greatest(-l.amount_minor, 0))::bigint as c, count(*)::bigint as n
        from journal_lines l join journal_entries e on e.id = l.entry_id where e.tenant_id = any(${tenants}::uuid[]) group by 1, 2, 3, 4, 5)
    select * from ((table summary except table recomputed) union all (table recomputed except table summary)) x`;
}

async function cashDiff(tenants: string[], from: 'cash_facts' | 'cash_facts_now' = 'cash_facts_now') {
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
        from ${sql(from)} where tenant_id = any(${tenants}::uuid[]))
    select * from ((table summary except table recomputed) union all (table recomputed except table summary)) x`;
}

t.test('summaries equal a recomputation from the journal after concurrent postings and summarizers', async (t) => {
  const tenants = [randomUUID(), randomUUID()];
  for (const id of tenants) await sql`insert into tenants (id, name) values (${id}, 'summaries')`;
  const charges: Array<Awaited<ReturnType<typeof charge>>> = [];
  for (let i = 0; i < 60; i++) charges.push(await charge(tenants[i % 2], i % 3 === 0, 1000 + i, i % 4 === 0 ? 150 : 0, i % 5 === 0 ? `b${i % 3}` : null));

  // A few captures before any summarizer runs: pending, so the tables lack them and the views do not.
  for (const [i, c] of charges.slice(0, 4).entries()) {
    await sql.begin((tx) => postEntry(tx, { tenantId: tenants[i % 2], livemode: i % 3 === 0, kind: 'charge.captured', refType: 'attempt', refId: c.att, lines: captureLines('sim', 'MXN', c.amount, c.tip, 30 + i) }));
  }
  // Held (FOR UPDATE) while this looks: a summarizer skips rows another transaction holds.
  await sql.begin(async (hold) => {
    const held = await hold`select entry_id from ledger_pending where tenant_id = any(${tenants}::uuid[]) for update`;
    t.equal(held.length, 4, 'each posting listed its entry as pending and wrote no summary');
    t.not((await cashDiff(tenants, 'cash_facts')).length, 0, 'cash_facts lacks the pending charges');
    t.not((await dailyDiff(tenants, 'ledger_daily')).length, 0, 'ledger_daily lacks the pending lines');
    t.same(await dailyDiff(tenants), [], 'ledger_daily_now counts the pending entries from the journal');
    t.same(await cashDiff(tenants), [], 'cash_facts_now computes the pending charges from the journal');
    t.equal(await summarizePending(sql, 1000).then(() => hold`select count(*)::int as n from ledger_pending where tenant_id = any(${tenants}::uuid[])`).then((r) => r[0].n), 4, 'a summarizer skips the rows another transaction holds');
  });

  // Summarizers from now on, beside the postings: two workers taking small batches (skipping rows the
  // other holds) and the books' own transactions taking all of a book (waiting for held rows).
  let posting = true;
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const worker = async () => {
    let n = 0;
    while (posting) {
      n += await summarizePending(sql, 7);
      await pause(1);
    }
    return n;
  };
  const books = async () => {
    for (let k = 0; posting; k++) {
      await sql.begin((tx) => summarizeBook(tx, tenants[k % 2], k % 3 === 0));
      await pause(3);
    }
    return 0;
  };
  const running = [worker(), worker(), books()];

  // Captures, each in its own transaction, 12 connections at once.
  await Promise.all(
    charges.slice(4).map((c, j) =>
      sql.begin((tx, i = j + 4) =>
        postEntry(tx, { tenantId: tenants[i % 2], livemode: i % 3 === 0, kind: 'charge.captured', refType: 'attempt', refId: c.att, lines: captureLines(i % 7 === 0 ? 'sim_b' : 'sim', 'MXN', c.amount, c.tip, 30 + i) }),
      ),
    ),
  );
  t.same(await dailyDiff(tenants), [], 'ledger_daily_now exact while summarizers run');
  t.same(await cashDiff(tenants), [], 'cash_facts_now exact while summarizers run');
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

  t.same(await dailyDiff(tenants), [], 'ledger_daily_now = the lines grouped by tenant, mode, currency, accounting day and account');
  t.same(await cashDiff(tenants), [], 'cash_facts_now = one row per captured charge and succeeded refund, recomputed from the journal');
  posting = false;
  const [w1, w2] = await Promise.all(running);
  t.ok(w1 + w2 > 0, `the concurrent summarizers wrote summaries (${w1} + ${w2} entries)`);

  await summarizeAll(sql);
  const [left] = await sql`select count(*)::int as n from ledger_pending where tenant_id = any(${tenants}::uuid[])`;
  t.equal(left.n, 0, 'nothing left pending');
  t.same(await dailyDiff(tenants, 'ledger_daily'), [], 'ledger_daily (summed over stripes) = the recomputation, once drained');
  t.same(await cashDiff(tenants, 'cash_facts'), [], 'cash_facts = the recomputation, once drained');
  t.same(await dailyDiff(tenants), [], 'ledger_daily_now still = the recomputation');
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

t.test("the worker's maintenance job writes the pending summaries, every second", async (t) => {
  const { maintenanceCapability, LEDGER_SUMMARY_EVERY_MS } = await import('../ops/maintenance.js');
  const { createLogger } = await import('../kernel/log.js');
  const cap = maintenanceCapability({ sql, log: createLogger('silent'), retentionHours: 24, healRevokedKeys: async () => 0 });
  const schedule = cap.schedules?.find((s) => s.name === 'summarize-ledger');
  t.equal(schedule?.everyMs, LEDGER_SUMMARY_EVERY_MS, 'scheduled');
  t.equal(LEDGER_SUMMARY_EVERY_MS, 1000);
  const tenant = randomUUID();
  await sql`insert into tenants (id, name) values (${tenant}, 'summaries-job')`;
  // more than one batch (1,000 entries): 1,100 entries posted by one statement each of entries and lines
  const ids = Array.from({ length: 1100 }, () => randomUUID());
  await sql.begin(async (tx) => {
    await tx`insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id) select id, ${tenant}, false, 'adjustment', 'test', gen_random_uuid() from unnest(${ids}::uuid[]) id`;
    await tx`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor)
             select id, ${tenant}, false, x.account, 'MXN', x.amount from unnest(${ids}::uuid[]) id cross join (values ('cash', 3::bigint), ('sales', -3::bigint)) x(account, amount)`;
  });
  const job = cap.jobs?.find((j) => j.name === 'summarize-ledger');
  const out = (await job!.run(schedule!.job.data as never, { attemptsMade: 0, stalled: false })) as { summarized: number };
  t.ok(out.summarized >= 1100, `one run took every pending entry, over several batches (${out.summarized})`);
  const [left] = await sql`select count(*)::int as n from ledger_pending where tenant_id = ${tenant}`;
  t.equal(left.n, 0, 'nothing left pending');
  const [d] = await sql`select sum(line_count)::int as n, sum(debit_minor)::int as d from ledger_daily where tenant_id = ${tenant}`;
  t.same(d, { n: 2200, d: 3300 }, 'ledger_daily has them');
  // the first run of a worker also vacuums the pending list (statistics reach the view within a second or so)
  let vacuums = 0;
  for (let i = 0; i < 50 && vacuums === 0; i++) {
    [{ vacuums }] = await sql`select vacuum_count::int as vacuums from pg_stat_user_tables where relname = 'ledger_pending'`;
    if (vacuums === 0) await new Promise((r) => setTimeout(r, 100));
  }
  t.ok(vacuums >= 1, 'ledger_pending vacuumed');
});

t.test("the bank reconciliation's transaction summarizes its book before matching (it reads cash_facts by index)", async (t) => {
  const { importStatement } = await import('../actors/bank-statements.js');
  const tenant = randomUUID();
  await sql`insert into tenants (id, name) values (${tenant}, 'summaries-bank')`;
  const pi = randomUUID();
  const att = randomUUID();
  await sql`insert into payment_intents (id, tenant_id, livemode, amount_minor, currency, status, client_secret, receipt_code)
    values (${pi}, ${tenant}, false, 15000, 'MXN', 'succeeded', ${'pi_secret_' + pi}, ${'B-' + pi.slice(0, 8)})`;
  await sql`insert into attempts (id, tenant_id, livemode, payment_intent_id, status, connector_key, method, amount_minor, currency, provider_key, provider_ref)
    values (${att}, ${tenant}, false, ${pi}, 'captured', 'sim', 'spei', 15000, 'MXN', ${'sum_' + att}, 'RASTREO77')`;
  await sql.begin((tx) => postEntry(tx, { tenantId: tenant, livemode: false, kind: 'charge.captured', refType: 'attempt', refId: att, lines: captureLines('sim', 'MXN', 15000, 0, 0) }));
  const [pending] = await sql`select count(*)::int as n from ledger_pending where tenant_id = ${tenant}`;
  t.equal(pending.n, 1, 'the capture is pending: no cash fact yet (no worker runs on this database)');
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Mexico_City', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
  const csv = `Fecha,Concepto,Referencia,Abono,Cargo\n${today},SPEI RECIBIDO,RASTREO77,150.00,\n`;
  const r = await importStatement({ sql }, { tenantId: tenant, livemode: false }, {
    bytes: Buffer.from(csv),
    fields: { bank: 'BBVA 0123', period_start: today, period_end: today, date_column: '0', description_column: '1', reference_column: '2', credit_column: '3', debit_column: '4' },
  });
  t.equal(r.status, 201);
  t.match(r.body, { matched: 1, unmatched: 0 }, 'the line matched the charge captured a moment ago');
  const [left] = await sql`select count(*)::int as n from ledger_pending where tenant_id = ${tenant} and entry_id in (select id from journal_entries where kind = 'charge.captured')`;
  t.equal(left.n, 0, 'the import summarized the book');
});

t.test('the reports count an entry still pending (they read the *_now views)', async (t) => {
  const { cashCut } = await import('../actors/reports/cash-cut.js');
  const { trialBalance } = await import('../actors/reports/ledger.js');
  const tenant = randomUUID();
  await sql`insert into tenants (id, name) values (${tenant}, 'summaries-reports')`;
  const c = await charge(tenant, false, 11600, 0, 'centro');
  await sql.begin((tx) => postEntry(tx, { tenantId: tenant, livemode: false, kind: 'charge.captured', refType: 'attempt', refId: c.att, lines: captureLines('sim', 'MXN', 11600, 0, 0) }));
  const [pending] = await sql`select count(*)::int as n from ledger_pending where tenant_id = ${tenant}`;
  t.equal(pending.n, 1, 'pending (no worker runs on this database)');
  const p = { tenantId: tenant, livemode: false, keyId: 'test', scopes: [] };
  const cut = await cashCut({ readSql: sql }, p, { from: new Date(Date.now() - 3600_000).toISOString(), to: new Date(Date.now() + 3600_000).toISOString() });
  t.match(cut.totals, { charged_minor: 11600, operation_count: 1 }, 'the cash cut has the charge');
  const tb = await trialBalance({ readSql: sql }, p, {});
  t.equal(tb.totals.debits_minor, 11600, 'the trial balance has its lines');
  t.equal(tb.balanced, true);
});
