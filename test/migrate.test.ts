// Migrations: numbered files applied once, under an advisory lock, even when processes race; then the
// repeatable function files (functions/*.sql) whose content changed, all in one transaction.
import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSql, ensureDatabase } from '../kernel/db.js';
import { migrate } from '../ops/migrate.js';
import { testConfig } from './helpers/app.js';
import { scratchDatabase } from './helpers/db.js';

t.test('concurrent migrators apply each file once; edits are refused', async (t) => {
  const scratch = scratchDatabase('orq_mig');
  const url = scratch.url;
  t.equal(await ensureDatabase(url), true, 'created');
  t.equal(await ensureDatabase(url), false, 'exists now');
  const dir = mkdtempSync(join(tmpdir(), 'orq-mig-'));
  writeFileSync(join(dir, '0001_a.sql'), 'create table a (id int);');
  writeFileSync(join(dir, '0002_b.sql'), 'create table b (id int);');
  const pools = [createSql(url, 2), createSql(url, 2), createSql(url, 2)];
  try {
    const results = await Promise.all(pools.map((p) => migrate(p, dir)));
    t.same(results.flat().sort(), ['0001_a.sql', '0002_b.sql'], 'each applied exactly once overall');
    t.same(await migrate(pools[0], dir), [], 'nothing left to apply');
    writeFileSync(join(dir, '0002_b.sql'), 'create table b (id bigint);');
    await t.rejects(migrate(pools[0], dir), /edited after it was applied/);
    writeFileSync(join(dir, '0002_b.sql'), 'create table b (id int);');
    writeFileSync(join(dir, '0003_bad.sql'), 'create table c (id int); select * from nowhere;');
    await t.rejects(migrate(pools[0], dir), /0003_bad.sql failed/);
    const c = await pools[0]`select to_regclass('c') as c`;
    t.equal(c[0].c, null, 'a failed migration leaves nothing half-applied');
  } finally {
    await Promise.all(pools.map((p) => p.end()));
    await scratch.drop();
  }
});

t.test('repeatable function files: applied after the numbered ones, once across migrators, again only when changed, all or none', async (t) => {
  const scratch = scratchDatabase('orq_migfn');
  const url = scratch.url;
  await ensureDatabase(url);
  const dir = mkdtempSync(join(tmpdir(), 'orq-migfn-'));
  mkdirSync(join(dir, 'functions'));
  writeFileSync(join(dir, '0001_a.sql'), "create table a (id int); insert into a values (1), (2);");
  // language sql: its body is checked when created, so it needs table a (the numbered migration) first
  const fnA = (n: number) => `create or replace function fn_a() returns int language sql as $$ select ${n} + 0 * (select count(*)::int from a) $$;`;
  const fnB = (n: number) => `create or replace function fn_b() returns int language plpgsql as $$ begin return ${n}; end $$;\ncreate or replace function fn_b_helper() returns int language sql as $$ select fn_b() * 10 $$;`;
  writeFileSync(join(dir, 'functions', 'fn_a.sql'), fnA(1));
  writeFileSync(join(dir, 'functions', 'fn_b.sql'), fnB(1));
  writeFileSync(join(dir, 'functions', 'README.md'), 'not a function file');
  const pools = [createSql(url, 2), createSql(url, 2), createSql(url, 2)];
  const [sql] = pools as [typeof pools[0]];
  const value = async (fn: string) => (await sql.unsafe(`select ${fn}() as v`))[0]!.v as number;
  const records = async () => Object.fromEntries((await sql`select name, checksum from schema_repeatables order by name`).map((r) => [r.name, r.checksum]));
  try {
    const results = await Promise.all(pools.map((p) => migrate(p, dir)));
    t.same(results.flat().sort(), ['0001_a.sql', 'functions/fn_a.sql', 'functions/fn_b.sql'], 'each numbered and repeatable file applied exactly once overall');
    t.ok(results.some((r) => r.join() === '0001_a.sql,functions/fn_a.sql,functions/fn_b.sql'), 'numbered first, then the repeatables sorted by name');
    t.same([await value('fn_a'), await value('fn_b'), await value('fn_b_helper')], [1, 1, 10], 'the functions, with the helper in the same file');
    t.same(Object.keys(await records()), ['fn_a.sql', 'fn_b.sql'], 'recorded by file name; other files in functions/ are not run');

    // unchanged files are not run again: a change made by hand stays
    await sql`create or replace function fn_a() returns int language sql as $$ select 99 $$`;
    t.same(await migrate(sql, dir), [], 'nothing to apply');
    t.equal(await value('fn_a'), 99, 'an unchanged file is not run again');
    writeFileSync(join(dir, 'functions', 'fn_a.sql'), fnA(2));
    const before = await records();
    t.same(await migrate(sql, dir), ['functions/fn_a.sql'], 'the changed file only');
    t.equal(await value('fn_a'), 2, 'the changed file replaces the function');
    const after = await records();
    t.not(after['fn_a.sql'], before['fn_a.sql'], 'its new checksum is recorded');
    t.equal(after['fn_b.sql'], before['fn_b.sql']);

    // a failing repeatable: every repeatable of the run rolled back, the numbered migrations kept
    writeFileSync(join(dir, '0002_b.sql'), 'create table b (id int);');
    writeFileSync(join(dir, 'functions', 'fn_a.sql'), fnA(3));
    writeFileSync(join(dir, 'functions', 'fn_b.sql'), fnB(3));
    writeFileSync(join(dir, 'functions', 'fn_c.sql'), 'create or replace function fn_c() returns int language sql as $$ select * from nowhere $$;');
    await t.rejects(migrate(sql, dir), /^repeatable function functions\/fn_c\.sql failed: .*nowhere/);
    t.equal((await sql`select to_regclass('b')::text as b`)[0]!.b, 'b', 'the numbered migration of the run stays applied');
    t.same((await sql`select name from schema_migrations order by version`).map((r) => r.name), ['0001_a.sql', '0002_b.sql']);
    t.same([await value('fn_a'), await value('fn_b')], [2, 1], 'the repeatables before the failing one are rolled back');
    t.same(await records(), after, 'and not recorded');
    writeFileSync(join(dir, 'functions', 'fn_c.sql'), 'create or replace function fn_c() returns int language sql as $$ select count(*)::int from b $$;');
    t.same(await migrate(sql, dir), ['functions/fn_a.sql', 'functions/fn_b.sql', 'functions/fn_c.sql'], 'all three on the next run');
    t.same([await value('fn_a'), await value('fn_b'), await value('fn_b_helper'), await value('fn_c')], [3, 3, 30, 0]);

    // a removed file is ignored: its function and its record stay
    rmSync(join(dir, 'functions', 'fn_c.sql'));
    t.same(await migrate(sql, dir), [], 'nothing to apply');
    t.equal(await value('fn_c'), 0, 'the function stays');
    t.same(Object.keys(await records()), ['fn_a.sql', 'fn_b.sql', 'fn_c.sql'], 'its record stays');

    // without the functions/ directory (git keeps no empty directory) the numbered ones still run
    const bare = mkdtempSync(join(tmpdir(), 'orq-migfn-bare-'));
    writeFileSync(join(bare, '0001_a.sql'), "create table a (id int); insert into a values (1), (2);");
    writeFileSync(join(bare, '0002_b.sql'), 'create table b (id int);');
    writeFileSync(join(bare, '0003_c.sql'), 'create table c (id int);');
    t.same(await migrate(sql, bare), ['0003_c.sql'], 'no functions/ directory: no repeatables, none refused');
    t.equal(await value('fn_a'), 3, 'the recorded functions are left alone');
  } finally {
    await Promise.all(pools.map((p) => p.end()));
    await scratch.drop();
  }
});

t.test("0153: the console's four-eyes decisions move into approvals with their ids; operator_decisions is dropped", async (t) => {
  const { copyFileSync, readdirSync } = await import('node:fs');
  const { migrationsDir } = await import('../ops/paths.js');
  const scratch = scratchDatabase('orq_mig153');
  const url = scratch.url;
  await ensureDatabase(url);
  const dir = mkdtempSync(join(tmpdir(), 'orq-mig153-'));
  const files = readdirSync(migrationsDir).filter((f) => /^\d{4}_.*\.sql$/.test(f)).sort();
  for (const f of files.filter((f) => Number(f.slice(0, 4)) <= 152)) copyFileSync(join(migrationsDir, f), join(dir, f));
  const sql = createSql(url, 2);
  try {
    await migrate(sql, dir);
    const [ten, op1, op2, app] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    const [pending, approved, failed] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    await sql`insert into tenants (id, name) values (${ten}, 'Migrada SA')`;
    await sql`insert into portal_members (id, tenant_id, email, role) values (${op1}, ${ten}, 'ana@x.mx', 'admin'), (${op2}, ${ten}, 'beto@x.mx', 'admin')`;
    const cmd = (route: string) => sql.json({ route, params: { tenantId: ten }, body: { reason: 'r' } });
    await sql`
      insert into operator_decisions (id, tenant_id, livemode, status, action, target_kind, target_id, reason, command, snapshot, outcome, requested_by, decided_by, decision_note, decided_at)
      values (${pending}, ${ten}, true, 'pending', 'tenant.release', 'tenant', ${ten}, 'aclarado', ${cmd('POST /admin/tenants/{tenantId}/release')}, ${sql.json({ suspended: true })}, null, ${op1}, null, null, null),
             (${approved}, ${ten}, false, 'approved', 'payout_approval.approve', 'payout_approval', ${app}, null, ${cmd('POST x')}, ${sql.json({ amount_minor: 500000, currency: 'MXN', status: 'pending' })}, ${sql.json({ status: 200 })}, ${op1}, ${op2}, 'visto', now()),
             (${failed}, ${ten}, false, 'failed', 'onboarding_application.approve', 'onboarding_application', ${app}, null, ${cmd('POST y')}, null, ${sql.json({ status: 409, code: 'onboarding_application.transition_conflict' })}, ${op1}, ${op2}, null, now())`;
    await sql`insert into entity_history (entity_kind, entity_id, tenant_id, livemode, event, to_status) values ('operator_decision', ${approved}, ${ten}, false, 'approve', 'approved')`;
    copyFileSync(join(migrationsDir, '0153_operator_approvals.sql'), join(dir, '0153_operator_approvals.sql'));
    t.same(await migrate(sql, dir), ['0153_operator_approvals.sql']);
    const rows = await sql`select id, subject_kind, status, amount_minor, currency, request, requested_by, approver, subject_id, resolution_note from approvals order by created_at, id`;
    const by = new Map(rows.map((r) => [r.id as string, r]));
    t.match(by.get(pending), { subject_kind: 'operator_decision', status: 'pending', amount_minor: null, requested_by: op1, approver: null, subject_id: null, request: { action: 'tenant.release', target_id: ten, reason: 'aclarado', snapshot: { suspended: true }, body: { reason: 'r' } } });
    t.match(by.get(approved), { status: 'approved', currency: 'MXN', approver: op2, subject_id: app, resolution_note: 'visto', request: { action: 'payout_approval.approve', outcome: { status: 200 } } });
    t.equal(Number(by.get(approved)!.amount_minor), 500000);
    t.match(by.get(failed), { status: 'rejected', subject_id: null, resolution_note: 'refused when run: onboarding_application.transition_conflict' });
    t.equal((await sql`select to_regclass('operator_decisions') as t`)[0]!.t, null, 'the table is gone');
    t.same((await sql`select entity_kind from entity_history where entity_id = ${approved}`).map((r) => r.entity_kind), ['approval']);
    await t.rejects(sql`insert into approvals (id, tenant_id, livemode, subject_kind, status, request, requested_by) values (${crypto.randomUUID()}, ${ten}, false, 'refund', 'pending', '{}', 'k')`, /approvals_amount_present/, 'a refund still needs its amount');
    await t.rejects(sql`insert into approvals (id, tenant_id, livemode, subject_kind, status, request, requested_by) values (${crypto.randomUUID()}, ${ten}, true, 'operator_decision', 'pending', ${sql.json({ action: 'tenant.release', target_id: ten })}, 'x')`, /approvals_operator_open/, 'one open decision per action and target');
  } finally {
    await sql.end();
    await scratch.drop();
  }
});

t.test('0177: the payment path carries no foreign key to tenants; tenants are never deleted; the composite keys to the intent stay', async (t) => {
  const url = testConfig().databaseUrl;
  await ensureDatabase(url);
  const sql = createSql(url, 2);
  t.teardown(() => sql.end());
  await migrate(sql);
  const fks = await sql<{ child: string; name: string }[]>`
    select conrelid::regclass::text as child, conname as name from pg_constraint
    where contype = 'f' and confrelid = 'tenants'::regclass
      and conrelid::regclass::text in ('attempts', 'routing_decisions', 'outbox_events', 'idempotency_keys', 'journal_entries', 'payment_intents')
    order by 1`;
  t.same(fks.map((f) => f.child), ['payment_intents'], 'only payment_intents keeps its key to tenants (the anchor of the chain)');
  const ten = crypto.randomUUID();
  await sql`insert into tenants (id, name) values (${ten}, 'Nunca Borrada SA')`;
  await t.rejects(sql`delete from tenants where id = ${ten}`, { code: '23001', message: /tenants are never deleted/ });
  await t.rejects(sql`delete from tenants where false`, { code: '23001' }, 'refused even when it would match nothing');
  t.equal((await sql`select 1 from tenants where id = ${ten}`).length, 1, 'the tenant is still there');
  const keys = await sql<{ def: string }[]>`
    select pg_get_constraintdef(oid) as def from pg_constraint where conname in ('attempts_payment_intent_id_fkey', 'routing_decisions_payment_intent_id_fkey', 'payment_intent_history_payment_intent_id_fkey') order by conname`;
  t.same(keys.map((k) => k.def), [
    'FOREIGN KEY (payment_intent_id, tenant_id) REFERENCES payment_intents(id, tenant_id)',
    'FOREIGN KEY (payment_intent_id, tenant_id) REFERENCES payment_intents(id, tenant_id)',
    'FOREIGN KEY (payment_intent_id, tenant_id) REFERENCES payment_intents(id, tenant_id)',
  ], 'attempts, history and routing decisions stay tied to their intent and its tenant');
});
