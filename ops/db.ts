// Postgres pools (postgres.js). The primary is the system of record; a replica, when configured,
// serves reads that tolerate lag (reports, lists) and /health/replication.
import postgres from 'postgres';
import type { Config } from './config.js';

export type Sql = postgres.Sql<{}>;
export type Tx = postgres.TransactionSql<{}>;
/** Either the pool or a transaction: query helpers take this so they can run inside a caller's transaction. */
export type Db = Sql | Tx;

export function createSql(url: string, max = 10): Sql {
  return postgres(url, {
    max,
    onnotice: () => {},
    idle_timeout: 30,
    connect_timeout: 5,
    // bigint columns come back as JS numbers: money in minor units stays far below 2^53.
    types: { bigint: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) } },
    transform: { undefined: null },
  }) as unknown as Sql;
}

/** Creates the database of `url` when it does not exist (connecting to the `postgres` maintenance database). */
export async function ensureDatabase(url: string): Promise<boolean> {
  const u = new URL(url);
  const name = decodeURIComponent(u.pathname.replace(/^\//, '')) || 'postgres';
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    const rows = await sql`select 1 from pg_database where datname = ${name}`;
    if (rows.length) return false;
    try {
      await sql.unsafe(`create database "${name.replace(/"/g, '""')}"`);
    } catch (e) {
      // Another process created it between our check and our create: fine.
      if ((e as { code?: string }).code !== '42P04') throw e;
    }
    return true;
  } finally {
    await sql.end({ timeout: 2 });
  }
}
