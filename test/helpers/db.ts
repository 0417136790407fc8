// The test database without the app: a pool, migrated, and a tenant row of its own (tests of SQL,
// triggers and migrations that need no API). End the pool in the test file's teardown. And a scratch
// database of a test's own, on the same server, for what the shared one cannot give (an empty
// schema, no other file's workers).
import { randomUUID } from 'node:crypto';
import { createSql, type Sql } from '../../kernel/db.js';
import { migrate } from '../../ops/migrate.js';
import { testConfig } from './app.js';

export async function migratedDb(tenantName: string, max = 4): Promise<{ sql: Sql; tenant: string }> {
  const sql = createSql(testConfig().databaseUrl, max);
  await migrate(sql);
  const tenant = randomUUID();
  await sql`insert into tenants (id, name) values (${tenant}, ${tenantName})`;
  return { sql, tenant };
}

/**
 * A database name of the caller's own (`<prefix>_<time>_<random>`) on the test server: `url` to
 * create it (ensureDatabase, or an app's start) and `drop()` to remove it at the end, connections
 * still open on it forced out.
 */
export function scratchDatabase(prefix: string): { url: string; drop(): Promise<void> } {
  const u = new URL(testConfig().databaseUrl);
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`;
  u.pathname = `/${name}`;
  const url = u.toString();
  return {
    url,
    async drop() {
      const admin = createSql(new URL('/postgres', url).toString(), 1);
      try {
        await admin.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await admin.end();
      }
    },
  };
}

/**
 * A scratch database of the test's own (scratchDatabase), dropped when the test ends: for a test whose
 * processes must see only their own work. In the shared database, the reconcilers of other files' test
 * apps (their own Redis prefixes, so their own locks) act on every tenant's pending work. tap runs a
 * test's teardowns last-registered first, so the drop registered here runs after the teardowns the
 * caller registers later (the ones that stop the processes using it).
 */
export function ownDatabase(t: { teardown(fn: () => unknown): void }, prefix: string): string {
  const db = scratchDatabase(prefix);
  t.teardown(() => db.drop());
  return db.url;
}

