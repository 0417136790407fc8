// Postgres pools (postgres.js). The primary is the system of record; a replica, when configured,
// serves reads that tolerate lag (reports, lists) and /health/replication.
import postgres from 'postgres';

export type Sql = postgres.Sql<{}>;
export type Tx = postgres.TransactionSql<{}>;
/** Either the pool or a transaction: query helpers take this so they can run inside a caller's transaction. */
export type Db = Sql | Tx;

const SQL_IDENT = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/;
/** A column or table name (optionally qualified, `t.col`) checked before it is spliced into SQL text (`db.unsafe`). */
export function sqlIdent(name: string): string {
  if (!SQL_IDENT.test(name)) throw new Error(`not a column name: ${name}`);
  return name;
}

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

/** A query error of Postgres (SQLSTATE in `code`). */
const sqlState = (e: unknown) => (e as { code?: string } | undefined)?.code;
/** "current transaction is aborted": a statement after the one that failed. */
const IN_FAILED_TX = '25P02';

/**
 * One transaction in (usually) one network round trip: BEGIN, the statements `build` issues and
 * COMMIT are pipelined on a reserved connection instead of each awaiting the previous one
 * (bench/RESULTS.md: round trips were most of the confirm path's cost).
 *
 * - Every statement issued with `tx` starts at once, in order. `build` awaits one only when it
 *   needs its result before issuing the next (that costs a round trip); the others' results are
 *   read after `atomically` resolves (their promises are settled by then).
 * - A failed statement aborts the transaction: Postgres answers the COMMIT with a ROLLBACK, and
 *   `atomically` rejects with that statement's error. An error thrown by `build` rolls back too.
 * - Build fragments (a conditional `and …`) with the pool's `sql`, not with `tx`: a fragment made
 *   with `tx` would be sent as a statement of its own.
 * - A check whose failure must undo the transaction has to fail *in Postgres* (e.g. the version
 *   fence calls `orq_expect_rows`, migration 0008), since COMMIT is already on its way.
 */
export async function atomically<T>(sql: Sql, build: (tx: Sql) => Promise<T> | T): Promise<T> {
  const conn = await sql.reserve();
  const settled: Array<Promise<unknown>> = [];
  const track = (q: Promise<unknown>) => {
    // Starts the query now (postgres.js queries are lazy) and keeps its failure for the end.
    settled.push(q.then(() => undefined, (e: unknown) => e ?? new Error('query failed')));
    return q;
  };
  // A statement's text given whole (`tx.unsafe(text, params)`, the benches' SQL) joins the flight as a
  // tagged one does; other members (tx.json, tx(identifier)) are fragments, untouched.
  const unsafe = (...args: Parameters<Sql['unsafe']>) => track(conn.unsafe(...args));
  const tx = new Proxy(conn, {
    apply(target, thisArg, args: unknown[]) {
      const r = Reflect.apply(target as unknown as (...a: unknown[]) => unknown, thisArg, args);
      const tagged = Array.isArray(args[0]) && 'raw' in (args[0] as object);
      return tagged ? track(r as Promise<unknown>) : r;
    },
    get(target, prop, receiver) {
      return prop === 'unsafe' ? unsafe : Reflect.get(target, prop, receiver);
    },
  }) as unknown as Sql;
  try {
    track(conn`begin`);
    let result: T;
    try {
      result = await build(tx);
    } catch (e) {
      await conn`rollback`.catch(() => {});
      const errors = (await Promise.all(settled)).filter((x): x is Error => x !== undefined);
      // A statement `build` awaited may only report the aborted transaction (25P02): the cause is
      // the first statement that failed before it (a trigger, a constraint).
      if (sqlState(e) === IN_FAILED_TX) throw errors.find((x) => sqlState(x) !== IN_FAILED_TX) ?? e;
      throw e;
    }
    // COMMIT goes out now, behind the statements, in the same flight (postgres.js queries are lazy:
    // one not started here would wait for every result first, a second round trip per transaction).
    // After a failed statement Postgres answers it with ROLLBACK; the statement's error is the cause.
    const committing = conn`commit`.then(() => undefined, (e: unknown) => e as Error);
    const errors = (await Promise.all(settled)).filter((e): e is Error => e !== undefined);
    // The first failure is the cause; the statements after it only report the aborted transaction.
    const cause = errors.find((e) => sqlState(e) !== IN_FAILED_TX) ?? errors[0];
    const committed = await committing;
    if (cause) throw cause;
    if (committed) throw committed;
    return result;
  } finally {
    conn.release();
  }
}
