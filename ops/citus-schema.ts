// Is the schema distributable by tenant (Citus)? Read from the migrated database's catalog, not from
// the migration files: every table is either distributed by `tenant_id` (colocated: every tenant's
// rows on one node, a payment's transaction on one shard) or a declared reference table (copied to
// every node). docs/scaling.md has the deployment; migration 0161 distributes the tables where the
// `citus` extension is present.
//
// The rules Citus enforces when a table is distributed, checked here on plain Postgres:
// - a distributed table has `tenant_id uuid not null` (the distribution column: one type for all,
//   so that every table is colocated with every other);
// - its primary key, every unique constraint, unique index and exclusion constraint contain
//   `tenant_id` as a plain column (Citus checks uniqueness per shard only);
// - every foreign key to another distributed table pairs `tenant_id` with `tenant_id` (both rows on
//   one shard); a foreign key to a reference table is free;
// - a reference table has no foreign key to a distributed table.
// The declared reference tables are the schema's own function orq_reference_tables() (migration
// 0160): a new catalog is declared by a migration that redefines it.
import type { Sql } from '../kernel/db.js';

export interface Offence {
  table: string;
  /** The constraint or index at fault; the table itself when the fault is a column or a declaration. */
  constraint: string;
  problem: string;
}

export const DISTRIBUTION_COLUMN = 'tenant_id';

/** The tables the schema declares as reference tables (orq_reference_tables(); none when undeclared). */
export async function referenceTables(sql: Sql, schema = 'public'): Promise<string[]> {
  const [f] = await sql`
    select p.oid from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname = ${schema} and p.proname = 'orq_reference_tables'`;
  if (!f) return [];
  const rows = await sql.unsafe(`select unnest(${quoteIdent(schema)}.orq_reference_tables()) as t`);
  return rows.map((r) => r.t as string);
}

const quoteIdent = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** Every table of `schema` that breaks the rules above, one entry per table and constraint. */
export async function distributionOffences(sql: Sql, schema = 'public'): Promise<Offence[]> {
  const reference = new Set(await referenceTables(sql, schema));
  // Ordinary and partitioned tables; a partition is distributed with its parent and checked through it.
  const tables = await sql`
    select c.oid, c.relname as name,
           (select format_type(a.atttypid, a.atttypmod) from pg_attribute a
             where a.attrelid = c.oid and a.attname = ${DISTRIBUTION_COLUMN} and not a.attisdropped) as dist_type,
           (select a.attnotnull from pg_attribute a
             where a.attrelid = c.oid and a.attname = ${DISTRIBUTION_COLUMN} and not a.attisdropped) as dist_not_null,
           (select a.attnum from pg_attribute a
             where a.attrelid = c.oid and a.attname = ${DISTRIBUTION_COLUMN} and not a.attisdropped) as dist_attnum
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = ${schema} and c.relkind in ('r', 'p') and not c.relispartition
     order by c.relname`;
  const byOid = new Map(tables.map((t) => [t.oid as number, t]));
  const out: Offence[] = [];
  const names = new Set(tables.map((t) => t.name as string));
  for (const r of reference) if (!names.has(r)) out.push({ table: r, constraint: r, problem: 'declared a reference table by orq_reference_tables() but no such table' });

  // Keys: primary, unique and exclusion constraints, and unique indexes that back no constraint.
  const keys = await sql`
    select i.indrelid as rel, coalesce(con.conname, ic.relname) as name,
           case when con.contype = 'p' then 'primary key' when con.contype = 'x' then 'exclusion constraint'
                when con.contype = 'u' then 'unique constraint' else 'unique index' end as kind,
           string_to_array(i.indkey::text, ' ')::int[] as cols, pg_get_indexdef(i.indexrelid) as def
      from pg_index i
      join pg_class ic on ic.oid = i.indexrelid
      join pg_class c on c.oid = i.indrelid
      join pg_namespace n on n.oid = c.relnamespace
      left join pg_constraint con on con.conindid = i.indexrelid and con.conrelid = i.indrelid and con.contype in ('p', 'u', 'x')
     where n.nspname = ${schema} and (i.indisunique or i.indisprimary or con.contype = 'x') and not c.relispartition`;
  const fks = await sql`
    select con.conrelid as rel, con.confrelid as ref, con.conname as name, con.conkey::int2[] as cols, con.confkey::int2[] as refcols,
           pg_get_constraintdef(con.oid) as def
      from pg_constraint con join pg_namespace n on n.oid = con.connamespace
     where n.nspname = ${schema} and con.contype = 'f' and con.conparentid = 0`;
  const refDistAttnum = (oid: number) => {
    const t = byOid.get(oid);
    return t ? (t.dist_attnum as number | null) : null;
  };

  for (const t of tables) {
    const name = t.name as string;
    const oid = t.oid as number;
    const isRef = reference.has(name);
    const tableKeys = keys.filter((k) => k.rel === oid);
    const tableFks = fks.filter((f) => f.rel === oid);
    if (isRef) {
      for (const f of tableFks) {
        const target = byOid.get(f.ref as number);
        if (target && !reference.has(target.name as string)) {
          out.push({ table: name, constraint: f.name as string, problem: `reference table with a foreign key to the distributed table ${String(target.name)} (${String(f.def)})` });
        }
      }
      continue;
    }
    if (t.dist_attnum == null) {
      out.push({ table: name, constraint: name, problem: `no ${DISTRIBUTION_COLUMN} column and not declared a reference table` });
      continue;
    }
    if (t.dist_type !== 'uuid') out.push({ table: name, constraint: name, problem: `${DISTRIBUTION_COLUMN} is ${String(t.dist_type)}, not uuid (every distributed table must have the one type to be colocated)` });
    if (!t.dist_not_null) out.push({ table: name, constraint: name, problem: `${DISTRIBUTION_COLUMN} is nullable (a row without a tenant has no shard)` });
    if (!tableKeys.some((k) => k.kind === 'primary key')) out.push({ table: name, constraint: name, problem: 'no primary key' });
    for (const k of tableKeys) {
      if (!(k.cols as number[]).includes(t.dist_attnum as number)) {
        out.push({ table: name, constraint: k.name as string, problem: `${String(k.kind)} without ${DISTRIBUTION_COLUMN}: ${String(k.def)}` });
      }
    }
    for (const f of tableFks) {
      const target = byOid.get(f.ref as number);
      if (!target) continue; // another schema: not ours to judge
      if (reference.has(target.name as string)) continue;
      const cols = f.cols as number[];
      const refcols = f.refcols as number[];
      const at = cols.indexOf(t.dist_attnum as number);
      const refDist = refDistAttnum(f.ref as number);
      if (at < 0 || refDist == null || refcols[at] !== refDist) {
        out.push({ table: name, constraint: f.name as string, problem: `foreign key to the distributed table ${String(target.name)} that does not pair ${DISTRIBUTION_COLUMN} with ${DISTRIBUTION_COLUMN}: ${String(f.def)}` });
      }
    }
  }
  return out;
}

/** One line per offence, for a test's message or a person reading a failed check. */
export const describeOffences = (o: Offence[]) => o.map((x) => `${x.table} · ${x.constraint}: ${x.problem}`).join('\n');
