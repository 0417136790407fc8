// Forward-only numbered SQL migrations (ops/migrations/NNNN_name.sql), applied under a Postgres
// advisory lock so that several processes starting at once migrate exactly once.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Sql } from '../kernel/db.js';
import { migrationsDir } from './paths.js';

// Arbitrary constant shared by every Orquesta process ("orq-migrate").
export const MIGRATION_ADVISORY_LOCK_KEY = 7_263_201_001;

export interface Migration { version: number; name: string; sql: string; checksum: string }

export function loadMigrations(dir = migrationsDir): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((f) => {
      const sql = readFileSync(join(dir, f), 'utf8');
      return { version: Number(f.slice(0, 4)), name: f, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

/** Applies pending migrations; returns the names applied. Fails if an applied file was edited. */
export async function migrate(sql: Sql, dir = migrationsDir): Promise<string[]> {
  const migrations = loadMigrations(dir);
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
      await conn.unsafe('begin');
      try {
        await conn.unsafe(m.sql);
        await conn`insert into schema_migrations (version, name, checksum) values (${m.version}, ${m.name}, ${m.checksum})`;
        await conn.unsafe('commit');
      } catch (e) {
        await conn.unsafe('rollback');
        throw new Error(`migration ${m.name} failed: ${(e as Error).message}`);
      }
      applied.push(m.name);
    }
    // On a Citus coordinator, a table a migration added is distributed (or made a reference table)
    // now, as migration 0161 did for the tables before it (docs/scaling.md). Without Citus: nothing.
    const [citus] = await conn`select 1 from pg_extension where extname = 'citus'`;
    if (citus && (await conn`select 1 from pg_proc where proname = 'orq_citus_distribute'`).length) {
      await conn.unsafe('begin');
      try {
        await conn`select orq_citus_distribute()`;
        await conn.unsafe('commit');
      } catch (e) {
        await conn.unsafe('rollback');
        throw new Error(`distributing the new tables (orq_citus_distribute) failed: ${(e as Error).message}`);
      }
    }
    return applied;
  } finally {
    await conn`select pg_advisory_unlock(${MIGRATION_ADVISORY_LOCK_KEY})`.catch(() => {});
    conn.release();
  }
}
