// Migrations, applied by migrate() under a Postgres advisory lock so that several processes starting
// at once migrate exactly once (docs/architecture.md, "Migrations"):
//
// 1. Numbered migrations, ops/migrations/NNNN_name.sql: forward-only and immutable, each applied once,
//    in its own transaction, recorded in schema_migrations with its checksum; an applied file that
//    was edited is refused.
// 2. Repeatable function files, ops/migrations/functions/<name>.sql (the directory may be absent): one
//    PL/pgSQL or SQL function each (`create or replace function ...`, with closely related helpers),
//    so that changing a function edits its file instead of copying it into a new numbered migration.
//    After the numbered ones, every file whose sha256 differs from the one recorded in
//    schema_repeatables is run, in name order, ALL IN ONE transaction that also records them: a
//    failure rolls them all back (the numbered migrations of the run stay applied). An unchanged
//    file is not run again, so a function changed by hand in the database keeps that change until
//    its file changes. A removed file is ignored: its function and its record stay (drop the function
//    with a numbered migration).
// 3. On a Citus coordinator, orq_citus_distribute() (migration 0161) distributes the tables added
//    since. It runs after the repeatables, so that the schema functions it calls
//    (orq_reference_tables(), orq_citus_distribution_plan()) and the trigger functions of the tables
//    it distributes are already at their files' versions.
//
// The rules that follow from 1 and 2 being separate transactions, numbered first:
// - A numbered migration still sees the function as the repeatable file left it on an existing
//   database, and as the latest numbered migration that created it on a fresh one (the repeatable
//   runs after all numbered migrations). A numbered migration that changes a table a repeatable
//   function reads must keep the old function working until the repeatable runs, or re-create the
//   function itself; and when it re-creates it, the same change edits the repeatable file to that
//   version (otherwise the file, unchanged, is not run again on existing databases and they keep the
//   migration's version, while a fresh database ends with the file's).
// - A numbered migration cannot depend on a function that only a repeatable file defines: on a fresh
//   database that file has not run yet.
// - The files run in name order: a `language sql` function (checked when created) that calls another
//   repeatable function sorts after it or shares its file.
// - Changing a function's arguments or result type is not a `create or replace` (the first makes a
//   second function, the second is refused): drop the old one in the file (`drop function if exists
//   f(old args)`) or in a numbered migration.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Sql } from '../kernel/db.js';
import { migrationsDir } from './paths.js';

// Arbitrary constant shared by every Orquesta process ("orq-migrate").
export const MIGRATION_ADVISORY_LOCK_KEY = 7_263_201_001;

/** The repeatable function files' subdirectory of the migrations directory. */
export const REPEATABLES_SUBDIR = 'functions';

export interface Migration { version: number; name: string; sql: string; checksum: string }
/** A repeatable function file: `name` is the file's name in functions/, `path` that name with the subdirectory. */
export interface Repeatable { name: string; path: string; sql: string; checksum: string }

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export function loadMigrations(dir = migrationsDir): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((f) => {
      const sql = readFileSync(join(dir, f), 'utf8');
      return { version: Number(f.slice(0, 4)), name: f, sql, checksum: sha256(sql) };
    });
}

/** The repeatable function files (`functions/*.sql`), sorted by name; none when the directory is absent. */
export function loadRepeatables(dir = migrationsDir): Repeatable[] {
  const sub = join(dir, REPEATABLES_SUBDIR);
  if (!existsSync(sub)) return [];
  return readdirSync(sub)
    .filter((f) => /^[\w-]+\.sql$/.test(f))
    .sort()
    .map((f) => {
      const sql = readFileSync(join(sub, f), 'utf8');
      return { name: f, path: `${REPEATABLES_SUBDIR}/${f}`, sql, checksum: sha256(sql) };
    });
}

type Reserved = Awaited<ReturnType<Sql['reserve']>>;

/**
 * Runs `work` in one transaction on the reserved connection; a failure rolls it back and is thrown
 * again as `<what> failed: <message>` (`what` is read then, so it can name the step that failed).
 */
async function inTransaction(conn: Reserved, what: () => string, work: () => Promise<void>): Promise<void> {
  await conn.unsafe('begin');
  try {
    await work();
    await conn.unsafe('commit');
  } catch (e) {
    await conn.unsafe('rollback');
    throw new Error(`${what()} failed: ${(e as Error).message}`);
  }
}

/**
 * Applies pending numbered migrations, then the changed repeatable function files; returns the names
 * applied (`NNNN_x.sql`, then `functions/y.sql`). Fails if an applied numbered file was edited.
 */
export async function migrate(sql: Sql, dir = migrationsDir): Promise<string[]> {
  const migrations = loadMigrations(dir);
  const repeatables = loadRepeatables(dir);
  const conn = await sql.reserve();
  const applied: string[] = [];
  try {
    await conn`select pg_advisory_lock(${MIGRATION_ADVISORY_LOCK_KEY})`;
    await conn`create table if not exists schema_migrations (
      version integer primary key, name text not null, checksum text not null,
      applied_at timestamptz not null default now())`;
    const done = new Map((await conn`select version, name, checksum from schema_migrations`).map((r) => [r.version as number, r]));
    for (const m of migrations) {
      const prev = done.get(m.version);
      if (prev) {
        if (prev.checksum !== m.checksum) {
          throw new Error(`migration ${m.name} was edited after it was applied (checksum differs); add a new migration instead`);
        }
        continue;
      }
      await inTransaction(conn, () => `migration ${m.name}`, async () => {
        await conn.unsafe(m.sql);
        await conn`insert into schema_migrations (version, name, checksum) values (${m.version}, ${m.name}, ${m.checksum})`;
      });
      applied.push(m.name);
    }
    // Created after the numbered migrations: on a fresh Citus coordinator, 0161 distributes every
    // table that exists when it runs, and only 0181 declares this one a reference table.
    await conn`create table if not exists schema_repeatables (
      name text primary key, checksum text not null,
      applied_at timestamptz not null default now())`;
    // Repeatable function files whose content changed (or that are new), all in one transaction.
    // Read under the lock: a process that waited for it sees what the one before it recorded.
    const recorded = new Map((await conn`select name, checksum from schema_repeatables`).map((r) => [r.name as string, r.checksum as string]));
    const changed = repeatables.filter((r) => recorded.get(r.name) !== r.checksum);
    if (changed.length) {
      let current: Repeatable | undefined;
      await inTransaction(conn, () => `repeatable function ${current?.path ?? '(commit)'}`, async () => {
        for (const r of changed) {
          current = r;
          await conn.unsafe(r.sql);
          await conn`
            insert into schema_repeatables (name, checksum) values (${r.name}, ${r.checksum})
            on conflict (name) do update set checksum = excluded.checksum, applied_at = now()`;
        }
        current = undefined;
      });
      applied.push(...changed.map((r) => r.path));
    }
    // On a Citus coordinator, a table a migration added is distributed (or made a reference table)
    // now, as migration 0161 did for the tables before it (docs/scaling.md). Without Citus: nothing.
    const [citus] = await conn`select 1 from pg_extension where extname = 'citus'`;
    if (citus && (await conn`select 1 from pg_proc where proname = 'orq_citus_distribute'`).length) {
      await inTransaction(conn, () => 'distributing the new tables (orq_citus_distribute)', async () => {
        await conn`select orq_citus_distribute()`;
      });
    }
    return applied;
  } finally {
    await conn`select pg_advisory_unlock(${MIGRATION_ADVISORY_LOCK_KEY})`.catch(() => {});
    conn.release();
  }
}
