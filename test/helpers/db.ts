// The test database without the app: a pool, migrated, and a tenant row of its own (tests of SQL,
// triggers and migrations that need no API). End the pool in the test file's teardown.
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
