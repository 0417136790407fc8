// Period close: the month's balances frozen; a posting dated in a closed month is carried to the
// first open month by the ledger itself (a trigger: every writer, API or raw SQL); a close racing
// postings includes exactly the postings committed before it. Against the running service.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from './helpers/app.js';
import { activity, idem, inBatches } from './helpers/activity.js';
import { addMonths, firstOfMonth, localDate } from '../actors/reports/period.js';
import type { Sql } from '../kernel/db.js';

let a: TestApp;
let sql: Sql;
t.before(async () => {
  a = await startTestApp({ ROLE: 'all', SWEEP_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500', RATE_LIMIT_V1_PER_MIN: '100000' });
  sql = a.app.deps.sql;
});
t.teardown(() => a.stop());

const month = () => firstOfMonth(localDate(new Date()));
const closePath = (period: string) => `/v1/reports/periods/${period.slice(0, 4)}/${Number(period.slice(5, 7))}/close`;

/** A balanced entry written straight to the ledger (as any writer could), optionally dated. */
function rawPosting(db: Sql, tenantId: string, amount: number, occurredAt?: Date) {
  const id = randomUUID();
  return db.begin(async (tx) => {
    await tx`insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id, memo, occurred_at)
             values (${id}, ${tenantId}, false, 'test.adjustment', 'test', ${randomUUID()}, 'raw posting', ${occurredAt ?? null})`;
    await tx`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor)
             values (${id}, ${tenantId}, false, 'adjustments', 'MXN', ${amount}), (${id}, ${tenantId}, false, 'sales', 'MXN', ${-amount})`;
    return id;
  });
}

/** Per account: debits/credits of entries whose accounting date is in [from, to), from the raw lines. */
async function rawMonth(tenantId: string, from: string, to: string) {
  const rows = await sql`
    select l.account, sum(greatest(l.amount_minor, 0))::bigint as d, sum(greatest(-l.amount_minor, 0))::bigint as c
      from journal_lines l join journal_entries e on e.id = l.entry_id
     where e.tenant_id = ${tenantId} and not e.livemode and e.accounting_date >= ${from}::date and e.accounting_date < ${to}::date
     group by l.account order by l.account`;
  return rows.map((r) => [r.account as string, Number(r.d), Number(r.c)]);
}

t.test('close the month: frozen balances, idempotency, codes; later postings carried', async (t) => {
  const ten = await a.newTenant();
  const act = activity(a, ten.testKey);
  const first = await act.card(10000, { tip: 1000 });
  t.equal(first.intent.status, 'succeeded');
  const m = month();
  const next = addMonths(m, 1);

  const noKey = await a.call('POST', closePath(m), { key: ten.testKey });
  t.same([noKey.status, noKey.body.error.code], [400, 'idempotency_key_required']);
  const key = idem();
  const c = await a.call('POST', closePath(m), { key: ten.testKey, headers: key });
  t.equal(c.status, 200, c.text);
  t.match(c.body, { object: 'period_close', status: 'closed', year: Number(m.slice(0, 4)), month: Number(m.slice(5, 7)), period_from: m, period_to: next, livemode: false });
  const frozen = c.body.balances.map((b: any) => [b.account, b.debits_minor, b.credits_minor]);
  t.same(frozen, await rawMonth(ten.id, m, next), 'frozen balances = the month\'s lines');
  t.match(c.body.balances.find((b: any) => b.account === 'sales'), { opening_balance_minor: 0, credits_minor: 8621, closing_balance_minor: -8621 }, 'sales net of IVA: 100.00 / 1.16 (the tip is not a sale)');
  t.same(c.body.totals.MXN.debits_minor, c.body.totals.MXN.credits_minor);
  const replay = await a.call('POST', closePath(m), { key: ten.testKey, headers: key });
  t.equal(replay.headers.get('idempotency-replayed'), 'true');
  t.same(replay.body, c.body);
  const again = await a.call('POST', closePath(m), { key: ten.testKey, headers: idem() });
  t.equal(again.status, 200, 'closing a closed month answers the first close');
  t.equal(again.body.closed_at, c.body.closed_at);
  t.same(again.body.balances, c.body.balances);

  // A charge captured now is dated in the closed month: carried to the first day of the next.
  const late = await act.card(5000);
  const [e] = await sql`select accounting_date::text as d, carried_from::text as f from journal_entries where ref_id = ${late.attempt.id}`;
  t.same([e.d, e.f], [next, localDate(new Date())], 'the capture is carried to the next month, its own day kept');
  // A raw writer backdating into an earlier month: carried too.
  const old = await rawPosting(sql, ten.id, 777, new Date(Date.now() - 100 * 86_400_000));
  const [o] = await sql`select accounting_date::text as d, carried_from is not null as carried from journal_entries where id = ${old}`;
  t.same([o.d, o.carried], [next, true]);
  t.same((await rawMonth(ten.id, m, next)).map((r) => [r[0], r[1], r[2]]), frozen, 'the closed month did not move');
  const bal = await a.call('GET', `/v1/reports/balanza?from=${m}&to=${next}`, { key: ten.testKey });
  t.same(bal.body.accounts.map((b: any) => [b.account, b.debits_minor, b.credits_minor]), frozen, 'its trial balance neither');
  t.equal(bal.body.closed, true);
  t.equal(bal.body.closed_through, next);
  const nb = await a.call('GET', `/v1/reports/balanza?from=${next}&to=${addMonths(next, 1)}`, { key: ten.testKey });
  t.match(nb.body.accounts.find((b: any) => b.account === 'sales'), { opening_balance_minor: -8621, credits_minor: 4310 + 777 }, 'the next month has the carried postings (50.00 / 1.16 and the raw 7.77)');
  t.equal(nb.body.totals.debits_minor, nb.body.totals.credits_minor);

  // Lines added later to an entry of the closed month are refused by the database.
  const [closedEntry] = await sql`select id from journal_entries where ref_id = ${first.attempt.id}`;
  await t.rejects(
    sql`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (${closedEntry.id}, ${ten.id}, false, 'a', 'MXN', 5), (${closedEntry.id}, ${ten.id}, false, 'b', 'MXN', -5)`,
    /closed period/,
  );

  const future = await a.call('POST', closePath(addMonths(next, 1)), { key: ten.testKey, headers: idem() });
  t.same([future.status, future.body.error.code], [400, 'reports.period_not_closable']);
  for (const path of ['/v1/reports/periods/2026/13/close', '/v1/reports/periods/2026/0/close', '/v1/reports/periods/26/3/close', '/v1/reports/periods/abcd/3/close']) {
    const r = await a.call('POST', path, { key: ten.testKey, headers: idem() });
    t.same([r.status, r.body.error?.code], [400, 'reports.invalid_period'], path);
  }
  const earlier = await a.call('POST', closePath(addMonths(m, -2)), { key: ten.testKey, headers: idem() });
  t.equal(earlier.status, 200, 'a month before the last close is closed by it');
  t.same(earlier.body.balances, []);
});

t.test('months close in order; the test clock drives the month', async (t) => {
  const ten = await a.newTenant();
  await rawPosting(sql, ten.id, 100, new Date(Date.now() - 40 * 86_400_000));
  const m = month();
  const prev = firstOfMonth(localDate(new Date(Date.now() - 40 * 86_400_000)));
  const r = await a.call('POST', closePath(m), { key: ten.testKey, headers: idem() });
  t.same([r.status, r.body.error.code], [400, 'reports.period_not_closable']);
  t.match(r.body.error.message, new RegExp(`${prev.slice(0, 7)} has postings and is still open`));
  // On a clock 40 days ahead, postings are dated then, and next month can be closed.
  await a.call('POST', '/v1/test/clock/advance', { key: ten.testKey, body: { seconds: 40 * 86_400 }, headers: idem() });
  const id = await rawPosting(sql, ten.id, 50);
  const [e] = await sql`select accounting_date::text as d from journal_entries where id = ${id}`;
  t.equal(e.d, localDate(new Date(Date.now() + 40 * 86_400_000)), 'a posting is dated by the tenant\'s clock');
});

t.test('ledger postings outside READ COMMITTED are refused', async (t) => {
  const ten = await a.newTenant();
  await t.rejects(
    sql.begin('isolation level repeatable read', async (tx) => {
      await tx`insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id) values (${randomUUID()}, ${ten.id}, false, 'x', 'x', ${randomUUID()})`;
    }),
    /READ COMMITTED/,
  );
});

t.test('a close racing postings: the postings before it are in it, the ones after are carried', async (t) => {
  const ten = await a.newTenant();
  const act = activity(a, ten.testKey);
  await act.card(1000);
  const m = month();
  const next = addMonths(m, 1);
  // T1 posts into the month and holds its transaction open: the close must wait for it.
  const t1 = await sql.reserve();
  await t1`begin`;
  const t1Entry = randomUUID();
  await t1`insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id) values (${t1Entry}, ${ten.id}, false, 'test.race', 'test', ${randomUUID()})`;
  await t1`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (${t1Entry}, ${ten.id}, false, 'adjustments', 'MXN', 4242), (${t1Entry}, ${ten.id}, false, 'sales', 'MXN', -4242)`;
  const close = a.call('POST', closePath(m), { key: ten.testKey, headers: idem() });
  const waiting = async (n: number) => {
    for (let i = 0; i < 400; i++) {
      const [w] = await sql`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted and objid = (orq_book_lock_key(${ten.id}, false) & 4294967295)::oid`;
      if (w.n >= n) return true;
      await new Promise((r) => setTimeout(r, 25));
    }
    return false;
  };
  t.ok(await waiting(1), 'the close waits for the open posting');
  // T2 starts while the close waits: it queues behind the close.
  const t2 = rawPosting(sql, ten.id, 999);
  t.ok(await waiting(2), 'a posting that starts during the close waits for it');
  // Captures through the API race it too.
  const captures = inBatches(4, Array.from({ length: 8 }, (_, i) => () => act.card(2000 + i)));
  await t1`commit`;
  t1.release();
  const closed = await close;
  t.equal(closed.status, 200, closed.text);
  const t2Entry = await t2;
  await captures;
  const [e1] = await sql`select accounting_date::text as d from journal_entries where id = ${t1Entry}`;
  const [e2] = await sql`select accounting_date::text as d, carried_from::text as f from journal_entries where id = ${t2Entry}`;
  t.equal(e1.d, localDate(new Date()), 'the posting committed before the close stays in the month');
  t.same([e2.d, e2.f], [next, localDate(new Date())], 'the posting that waited for the close is carried');
  const frozen = closed.body.balances.map((b: any) => [b.account, b.debits_minor, b.credits_minor]);
  t.same(frozen, await rawMonth(ten.id, m, next), 'frozen balances = exactly the lines dated in the month, after every racer committed');
  t.match(closed.body.balances.find((b: any) => b.account === 'adjustments'), { debits_minor: 4242 });
  const [{ n }] = await sql`select count(*)::int as n from journal_entries where tenant_id = ${ten.id} and kind = 'charge.captured'`;
  t.equal(n, 9, 'every capture posted once');
  const [{ bad }] = await sql`select count(*)::int as bad from journal_entries where tenant_id = ${ten.id} and accounting_date < ${next}::date and created_at > ${closed.body.closed_at}::timestamptz`;
  t.equal(bad, 0, 'nothing committed after the close is dated in the month');
  const cut = await a.call('GET', `/v1/reports/balanza?from=${m}&to=${addMonths(next, 1)}`, { key: ten.testKey });
  t.equal(cut.body.totals.debits_minor, cut.body.totals.credits_minor);
  t.equal(cut.body.totals.closing_balance_minor, 0, 'the trial balance over both months sums to zero');
});
