// Migration 0179: the journal lines' foreign key to their entry is checked by the statement trigger
// journal_lines_summarize (the key journal_lines_entry_id_fkey is dropped), TRUNCATE of the ledger is
// refused (entries are append-only, so existence at insert is the key's whole guarantee), and the
// attempts' card fingerprint and funding come from one trigger. The accounting date (test clock,
// closed period) is checked unchanged beside them. Behaviour kept: the refusal's class (23503)
// and constraint name, the dates (test clock, closed period carried), the card columns.
import t from 'tap';
import { createHash, randomUUID } from 'node:crypto';
import type { Sql } from '../kernel/db.js';
import { migratedDb } from './helpers/db.js';

let sql: Sql;
let tenant: string;
t.before(async () => {
  ({ sql, tenant } = await migratedDb('ledger-entry-checks'));
});
t.teardown(() => sql.end());

async function entry(opts: { occurredAt?: Date; livemode?: boolean } = {}): Promise<string> {
  const id = randomUUID();
  await sql.begin(async (tx) => {
    await tx`insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id, occurred_at)
             values (${id}, ${tenant}, ${opts.livemode ?? false}, 'adjustment', 'test', ${randomUUID()}, ${opts.occurredAt ?? null})`;
    await tx`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor)
             values (${id}, ${tenant}, ${opts.livemode ?? false}, 'cash', 'MXN', 5), (${id}, ${tenant}, ${opts.livemode ?? false}, 'sales', 'MXN', -5)`;
  });
  return id;
}

t.test('lines whose entry does not exist are refused as a foreign-key violation, naming the entry', async (t) => {
  const missing = randomUUID();
  const err: any = await sql`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor)
      values (${missing}, ${tenant}, false, 'cash', 'MXN', 1), (${missing}, ${tenant}, false, 'sales', 'MXN', -1)`.catch((e) => e);
  t.equal(err?.code, '23503', 'foreign_key_violation');
  t.match(err?.message, new RegExp(`journal_lines_entry_id_fkey.*${missing}`), 'the message names the constraint and the entry');
  t.equal(err?.constraint_name, 'journal_lines_entry_id_fkey', 'and the error names the constraint');

  // One statement of lines for an existing entry and a missing one (the bank import's shape): refused whole,
  // naming the missing one; the missing entry wins over the closed period or the balance.
  const ok = await entry();
  const other = randomUUID();
  const err2: any = await sql`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor)
      values (${ok}, ${tenant}, false, 'cash', 'MXN', 2), (${ok}, ${tenant}, false, 'sales', 'MXN', -2), (${other}, ${tenant}, false, 'cash', 'MXN', 3)`.catch((e) => e);
  t.equal(err2?.code, '23503');
  t.match(err2?.message, new RegExp(other), 'names the missing entry, not the unbalanced line');
  const [n] = await sql`select count(*)::int as n from journal_lines where entry_id = ${ok}`;
  t.equal(n.n, 2, 'nothing of the refused statement stays');

  // The entry exists, but for another tenant: refused the same way (the key was on (entry_id, tenant_id)).
  const stranger = randomUUID();
  await sql`insert into tenants (id, name) values (${stranger}, 'ledger-entry-checks-other')`;
  await t.rejects(
    sql`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (${ok}, ${stranger}, false, 'cash', 'MXN', 1), (${ok}, ${stranger}, false, 'sales', 'MXN', -1)`,
    { code: '23503', message: new RegExp(`${ok} of tenant ${stranger}`) },
    'another tenant than the entry',
  );

  // Lines for an entry inserted earlier in the same statement's transaction pass.
  await sql.begin(async (tx) => {
    const id = randomUUID();
    await tx`insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id) values (${id}, ${tenant}, false, 'adjustment', 'test', ${randomUUID()})`;
    await tx`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (${id}, ${tenant}, false, 'cash', 'MXN', 9), (${id}, ${tenant}, false, 'sales', 'MXN', -9)`;
  });
  t.pass('lines of an entry of the same transaction are accepted');
});

t.test('TRUNCATE of journal_entries or journal_lines is refused', async (t) => {
  await entry();
  for (const stmt of ['truncate journal_lines', 'truncate journal_entries cascade', 'truncate journal_lines, journal_entries']) {
    // inside a transaction rolled back whatever happens: on a database without the refusal nothing is lost either
    const err: any = await sql
      .begin(async (tx) => {
        await tx.unsafe(stmt);
        throw new Error('not refused');
      })
      .catch((e) => e);
    t.equal(err?.code, '23001', `${stmt}: restrict_violation`);
    t.match(err?.message, /append-only/, stmt);
  }
  const [n] = await sql`select count(*)::int as n from journal_entries where tenant_id = ${tenant}`;
  t.ok(n.n > 0, 'the entries are still there');
});

t.test('accounting date: the test clock moves a test-mode entry; a closed period carries it', async (t) => {
  const ten = randomUUID();
  await sql`insert into tenants (id, name) values (${ten}, 'ledger-entry-checks-clock')`;
  const day = (d: Date) => new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Mexico_City' }).format(d);
  const post = async (livemode: boolean, occurredAt: Date | null = null) => {
    const id = randomUUID();
    await sql.begin(async (tx) => {
      await tx`insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id, occurred_at) values (${id}, ${ten}, ${livemode}, 'adjustment', 'test', ${randomUUID()}, ${occurredAt})`;
      await tx`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (${id}, ${ten}, ${livemode}, 'cash', 'MXN', 1), (${id}, ${ten}, ${livemode}, 'sales', 'MXN', -1)`;
    });
    const [e] = await sql`select occurred_at, accounting_date::text as d, carried_from::text as f from journal_entries where id = ${id}`;
    return e;
  };
  const tenDays = 10 * 86_400_000;
  await sql`insert into test_clocks (tenant_id, offset_ms) values (${ten}, ${tenDays})`;
  const before = Date.now();
  const test = await post(false);
  const shift = new Date(test.occurred_at).getTime() - before;
  t.ok(shift >= tenDays && shift < tenDays + 60_000, 'a test-mode entry is dated by its tenant\'s test clock');
  t.same([test.d, test.f], [day(new Date(test.occurred_at)), null]);
  const live = await post(true);
  t.ok(Math.abs(new Date(live.occurred_at).getTime() - Date.now()) < 60_000, 'a live entry ignores the test clock');
  const given = new Date(Date.now() - 86_400_000);
  const explicit = await post(false, given);
  t.equal(new Date(explicit.occurred_at).getTime(), given.getTime(), 'an occurred_at given is kept (no clock)');

  // Close the month of the clock's date (test mode): a test-mode entry is carried to the next month's first day.
  const clockDay = day(new Date(Date.now() + tenDays));
  const period = `${clockDay.slice(0, 7)}-01`;
  await sql`insert into ledger_period_closes (tenant_id, livemode, period, closed_at_tenant, closed_by, balances) values (${ten}, false, ${period}, now(), 'test', '{}'::jsonb)`;
  const [next] = await sql`select (${period}::date + interval '1 month')::date::text as d`;
  const carried = await post(false);
  t.same([carried.d, carried.f], [next.d, day(new Date(carried.occurred_at))], 'carried out of the closed period, its own day kept');
  const stillLive = await post(true);
  t.equal(stillLive.f, null, 'the other mode\'s book is not closed');
});

t.test('attempts: card fingerprint and funding set on insert as before', async (t) => {
  const attempt = async (o: { method?: string; token?: string | null; livemode?: boolean; fingerprint?: string; funding?: string }) => {
    const pi = randomUUID();
    const att = randomUUID();
    const livemode = o.livemode ?? false;
    await sql`insert into payment_intents (id, tenant_id, livemode, amount_minor, currency, status, client_secret, receipt_code)
      values (${pi}, ${tenant}, ${livemode}, 100, 'MXN', 'requires_payment_method', ${'pi_secret_' + pi}, ${'E-' + pi.slice(0, 8)})`;
    await sql`insert into attempts (id, tenant_id, livemode, payment_intent_id, status, connector_key, method, amount_minor, currency, provider_key, payment_token, card_fingerprint, card_funding)
      values (${att}, ${tenant}, ${livemode}, ${pi}, 'pending', 'sim', ${o.method ?? 'card'}, 100, 'MXN', ${'ec_' + att}, ${o.token ?? null}, ${o.fingerprint ?? null}, ${o.funding ?? null})`;
    const [a] = await sql`select card_fingerprint as fp, card_funding as fu from attempts where id = ${att}`;
    return [a.fp, a.fu];
  };
  const fp = (token: string) => createHash('sha256').update(`${tenant}:${token}`).digest('hex');
  t.same(await attempt({ token: 'tok_sim_debit_1' }), [fp('tok_sim_debit_1'), 'debit']);
  t.same(await attempt({ token: 'tok_sim_prepaid' }), [fp('tok_sim_prepaid'), 'prepaid']);
  t.same(await attempt({ token: 'tok_sim_ok' }), [fp('tok_sim_ok'), null], 'other simulator tokens: no funding');
  t.same(await attempt({ token: 'tok_sim_debit', livemode: true }), [fp('tok_sim_debit'), null], 'live mode: fingerprint, never a simulated funding');
  t.same(await attempt({ token: 'tok_sim_debit', fingerprint: 'given', funding: 'credit' }), ['given', 'credit'], 'values given are kept');
  t.same(await attempt({ token: null }), [null, null], 'no token: nothing');
  t.same(await attempt({ method: 'spei', token: 'tok_sim_debit' }), [null, null], 'not a card: nothing');
  const [trg] = await sql`select array_agg(tgname::text order by tgname) as names from pg_trigger where tgrelid = 'attempts'::regclass and not tgisinternal and tgname like 'attempts_card%'`;
  t.same(trg.names, ['attempts_card'], 'one BEFORE INSERT trigger does both');
});
