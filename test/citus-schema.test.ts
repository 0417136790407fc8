// The schema can be distributed by tenant (Citus): read from the migrated database's catalog
// (ops/citus-schema.ts; docs/scaling.md). A table added by any migration that is neither
// tenant-keyed nor a declared reference table fails here, named with each constraint at fault.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { createSql, ensureDatabase } from '../kernel/db.js';
import { migrate } from '../ops/migrate.js';
import { describeOffences, distributionOffences, referenceTables } from '../ops/citus-schema.js';
import { testConfig } from './helpers/app.js';

const url = testConfig().databaseUrl;

t.test('every table of the migrated schema is distributed by tenant_id or a declared reference table', async (t) => {
  await ensureDatabase(url);
  const sql = createSql(url, 2);
  t.teardown(() => sql.end());
  await migrate(sql);
  const offences = await distributionOffences(sql);
  t.same(offences, [], `tables that Citus would refuse to distribute by tenant_id:\n${describeOffences(offences)}`);
  const refs = await referenceTables(sql);
  t.ok(refs.includes('tenants') && refs.includes('api_keys'), 'the reference tables are declared by the schema (orq_reference_tables())');
  // The payment path's tables are distributed, not declared away as reference tables.
  for (const table of ['payment_intents', 'attempts', 'refunds', 'journal_entries', 'journal_lines', 'outbox_events', 'webhook_deliveries', 'invoices', 'ledger_daily']) {
    t.notOk(refs.includes(table), `${table} is distributed`);
  }
});

t.test('the check names each table and constraint that breaks a rule', async (t) => {
  await ensureDatabase(url);
  const sql = createSql(url, 1);
  const schema = `orq_citus_check_${randomBytes(4).toString('hex')}`;
  t.teardown(async () => {
    await sql.unsafe(`drop schema if exists ${schema} cascade`);
    await sql.end();
  });
  await sql.unsafe(`
    create schema ${schema};
    create function ${schema}.orq_reference_tables() returns text[] language sql immutable as $$ select array['tenants', 'catalog', 'gone'] $$;
    create table ${schema}.tenants (id uuid primary key);
    create table ${schema}.good (id uuid, tenant_id uuid not null references ${schema}.tenants(id), code text,
      primary key (id, tenant_id), unique (code, tenant_id));
    create table ${schema}.good_child (id uuid, tenant_id uuid not null, good_id uuid, primary key (tenant_id, id),
      foreign key (good_id, tenant_id) references ${schema}.good (id, tenant_id));
    create table ${schema}.bad_pk (id uuid primary key, tenant_id uuid not null);
    create table ${schema}.bad_unique (id uuid, tenant_id uuid not null, slug text unique, primary key (id, tenant_id));
    create table ${schema}.bad_index (id uuid, tenant_id uuid not null, email text, primary key (id, tenant_id));
    create unique index bad_index_email on ${schema}.bad_index (lower(email));
    create table ${schema}.bad_fk (id uuid, tenant_id uuid not null, good_id uuid, primary key (id, tenant_id));
    create unique index good_id_only on ${schema}.good (id, code, tenant_id);
    alter table ${schema}.good add constraint good_id_key unique (id, code, tenant_id);
    create table ${schema}.bad_null (id uuid, tenant_id uuid, unique (id, tenant_id));
    create table ${schema}.bad_type (id uuid, tenant_id text not null, primary key (id, tenant_id));
    create table ${schema}.no_tenant (id uuid primary key);
    create table ${schema}.catalog (code text primary key, good_id uuid, good_tenant uuid,
      foreign key (good_id, good_tenant) references ${schema}.good (id, tenant_id));
  `);
  // a foreign key that pairs tenant_id with another column: both rows need not be on one shard
  await sql.unsafe(`alter table ${schema}.bad_fk add constraint bad_fk_good foreign key (good_id, tenant_id) references ${schema}.good (tenant_id, id)`);
  const offences = await distributionOffences(sql, schema);
  const got = offences.map((o) => `${o.table} ${o.constraint}`).sort();
  t.same(
    got,
    [
      'bad_fk bad_fk_good',
      'bad_index bad_index_email',
      'bad_null bad_null',
      'bad_null bad_null',
      'bad_pk bad_pk_pkey',
      'bad_type bad_type',
      'bad_unique bad_unique_slug_key',
      'catalog catalog_good_id_good_tenant_fkey',
      'gone gone',
      'no_tenant no_tenant',
    ],
    describeOffences(offences),
  );
  t.match(describeOffences(offences), /bad_index · bad_index_email: unique index without tenant_id/);
  t.match(describeOffences(offences), /bad_pk · bad_pk_pkey: primary key without tenant_id/);
  t.match(describeOffences(offences), /bad_null · bad_null: tenant_id is nullable/);
  t.match(describeOffences(offences), /bad_null · bad_null: no primary key/);
});

t.test('the distribution migration (0161) distributes every table once, after the tables its foreign keys name', async (t) => {
  await ensureDatabase(url);
  const sql = createSql(url, 1);
  t.teardown(() => sql.end());
  await migrate(sql);
  const [citus] = await sql`select 1 from pg_extension where extname = 'citus'`;
  t.notOk(citus, 'no citus extension here: orq_citus_distribute() is a no-op');
  t.equal((await sql`select orq_citus_distribute() as n`)[0].n, 0, 'without Citus nothing is distributed');
  const plan = await sql`select step, table_name, method from orq_citus_distribution_plan() order by step`;
  const tables = (await sql`
    select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition`).map((r) => r.relname as string);
  t.same(plan.map((p) => p.table_name).sort(), [...tables].sort(), 'every table once');
  const refs = new Set(await referenceTables(sql));
  t.same(plan.filter((p) => p.method === 'reference').map((p) => p.table_name).sort(), [...refs].sort(), 'the declared reference tables, and only those, are reference tables');
  const at = new Map(plan.map((p) => [p.table_name as string, p.step as number]));
  const fks = await sql`
    select c.relname as child, r.relname as parent from pg_constraint f
      join pg_class c on c.oid = f.conrelid join pg_class r on r.oid = f.confrelid join pg_namespace n on n.oid = c.relnamespace
     where f.contype = 'f' and n.nspname = current_schema() and c.oid <> r.oid`;
  const late = fks.filter((f) => at.get(f.parent as string)! > at.get(f.child as string)!).map((f) => `${f.child} -> ${f.parent}`);
  t.same(late, [], 'no table is distributed before a table its foreign keys name');
  t.same((await sql`select count(*)::int as n from orq_citus_distribution_plan(${sql.array(tables)}::text[])`)[0].n, 0, 'a table already distributed is left alone');
});
