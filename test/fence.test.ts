// One transaction in one flight (ops/db.ts atomically) and the version fence of the payment
// intent actor (architecture invariant 3; issue: "the row's version fences a writer that lost its
// lock: its commit fails and it retries from fresh state"), against the real Postgres.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { hydrate } from '../actors/payment-intent-store.js';
import { atomically } from '../kernel/db.js';
import { startTestApp, type TestApp } from './helpers/app.js';

let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
const table = `orq_atomic_probe_${randomBytes(4).toString('hex')}`;

t.before(async () => {
  a = await startTestApp({ ROLE: 'all' });
  ten = await a.newTenant('fence');
  await a.app.deps.sql.unsafe(`create table ${table} (id int primary key, note text not null)`);
});
t.teardown(async () => {
  await a.app.deps.sql.unsafe(`drop table if exists ${table}`);
  await a.stop();
});

const rows = async () => (await a.app.deps.sql.unsafe(`select id, note from ${table} order by id`)).map((r) => `${r.id}:${r.note}`);

t.test('atomically: every statement commits together, results readable afterwards', async (t) => {
  const sql = a.app.deps.sql;
  let read: Promise<unknown> | undefined;
  const out = await atomically(sql, (tx) => {
    tx`insert into ${tx(table)} (id, note) values (1, 'one')`;
    tx`insert into ${tx(table)} (id, note) values (2, 'two')`;
    read = tx`select count(*)::int as n from ${tx(table)}`; // sees the transaction's own rows
    return 'built';
  });
  t.equal(out, 'built');
  t.same(await read, [{ n: 2 }], 'a statement issued in the flight saw the earlier ones');
  t.same(await rows(), ['1:one', '2:two']);
});

/** A connection of its own (max 1), connected and idle, for counting the writes of one flight. */
async function oneConnection(t: { teardown(fn: () => unknown): void }) {
  const postgres = (await import('postgres')).default;
  const one = postgres(a.config.databaseUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => one.end());
  await one`select 1`;
  return one;
}

/**
 * The socket writes of the process during `fn` whose bytes contain `marker` (every write is seen,
 * the app's workers write too: the marker picks this test's).
 */
async function writesDuring(marker: string, fn: () => Promise<unknown>): Promise<string[]> {
  const { Socket } = await import('node:net');
  const write = Socket.prototype.write;
  const seen: string[] = [];
  Socket.prototype.write = function (this: InstanceType<typeof Socket>, ...args: unknown[]) {
    const data = args[0];
    const text = Buffer.isBuffer(data) ? data.toString('latin1') : typeof data === 'string' ? data : '';
    if (text.includes(marker)) seen.push(text);
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as typeof write;
  try {
    await fn();
  } finally {
    Socket.prototype.write = write;
  }
  return seen;
}

// The flight: BEGIN, the statements and COMMIT leave in one socket write (one round trip). The
// COMMIT of postgres.js is lazy: not started until the statements' results were read, it cost a
// second write and a second round trip per transaction (found 2026-11-27 with strace; bench/RESULTS.md).
t.test('atomically: BEGIN, the statements and COMMIT go out in one write', async (t) => {
  const one = await oneConnection(t);
  // The flight is the write that carries this test's inserts, and it must carry the COMMIT as well.
  const flights = await writesDuring(table, () =>
    atomically(one, (tx) => {
      tx`insert into ${tx(table)} (id, note) values (50, 'fifty')`;
      tx`insert into ${tx(table)} (id, note) values (51, 'fifty-one')`;
    }),
  );
  t.equal(flights.length, 1, 'the two inserts leave in one write');
  t.ok(flights[0]?.includes('begin') && flights[0]?.includes('commit'), 'with BEGIN before them and COMMIT after them');
  t.same((await rows()).filter((r) => r.startsWith('5')), ['50:fifty', '51:fifty-one']);
  await a.app.deps.sql.unsafe(`delete from ${table} where id in (50, 51)`);
});

t.test('atomically: a statement given whole (tx.unsafe) joins the flight and its failure is the error', async (t) => {
  const one = await oneConnection(t);
  // Prepared (as the benches send them): the first run describes each statement's parameters (a round
  // trip each); from the second on, the flight is one write.
  const insert = (tx: typeof one, id: number, note: string) => void tx.unsafe(`insert into ${table} (id, note) values ($1, $2)`, [id, note], { prepare: true });
  await atomically(one, (tx) => {
    insert(tx, 58, 'warm');
  });
  // Not awaited inside build: untracked, a postgres.js query would never start (it is lazy). A
  // prepared statement's Bind carries its values, not its text: the marker is a value.
  const flights = await writesDuring('sixty', () =>
    atomically(one, (tx) => {
      insert(tx, 60, 'sixty');
      insert(tx, 61, 'sixty-one');
    }),
  );
  t.equal(flights.length, 1, 'both statements leave in one write');
  t.ok(flights[0]?.includes('sixty-one'), 'the second with the first');
  t.same((await rows()).filter((r) => r.startsWith('6')), ['60:sixty', '61:sixty-one']);
  await t.rejects(
    atomically(one, (tx) => {
      insert(tx, 62, 'sixty-two');
      insert(tx, 60, 'again');
    }),
    { code: '23505' },
    'the duplicate is the error thrown',
  );
  t.same((await rows()).filter((r) => r.startsWith('6')), ['60:sixty', '61:sixty-one'], 'and sixty-two is undone with it');
  await a.app.deps.sql.unsafe(`delete from ${table} where id in (58, 60, 61)`);
});

t.test('atomically: a failing statement undoes the statements before it and is the error thrown', async (t) => {
  const sql = a.app.deps.sql;
  await t.rejects(
    atomically(sql, (tx) => {
      tx`insert into ${tx(table)} (id, note) values (3, 'three')`;
      tx`insert into ${tx(table)} (id, note) values (1, 'duplicate')`; // primary key violation
      tx`insert into ${tx(table)} (id, note) values (4, 'four')`; // runs in an aborted transaction
    }),
    { code: '23505' },
    'the cause (unique violation), not the aborted-transaction errors after it',
  );
  t.same(await rows(), ['1:one', '2:two'], 'nothing of the failed transaction is visible');
});

t.test('atomically: an error thrown by build rolls back what was issued', async (t) => {
  const sql = a.app.deps.sql;
  await t.rejects(
    atomically(sql, (tx) => {
      tx`insert into ${tx(table)} (id, note) values (5, 'five')`;
      throw new Error('no route');
    }),
    { message: 'no route' },
  );
  t.same(await rows(), ['1:one', '2:two']);
});

t.test('atomically: orq_expect_rows aborts the transaction when the fenced update matched nothing', async (t) => {
  const sql = a.app.deps.sql;
  await t.rejects(
    atomically(sql, (tx) => {
      tx`insert into ${tx(table)} (id, note) values (6, 'six')`;
      tx`with u as (update ${tx(table)} set note = 'x' where id = 999 returning 1) select orq_expect_rows(count(*), 'probe row 999') as n from u`;
    }),
    { code: 'OQ409' },
  );
  t.same(await rows(), ['1:one', '2:two'], 'the insert before the fence was undone');
  const ok = await sql.unsafe(`with u as (update ${table} set note = 'uno' where id = 1 returning 1) select orq_expect_rows(count(*), 'probe') as n from u`);
  t.equal(Number(ok[0].n), 1, 'a matching update passes the fence');
});

t.test('a writer holding stale state is fenced and retries from fresh state (cancel)', async (t) => {
  const r = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 1000, currency: 'MXN' }, headers: { 'idempotency-key': crypto.randomUUID() } });
  t.equal(r.status, 201);
  const id = r.body.id as string;
  const stale = await hydrate(a.app.deps.sql, id);
  t.equal(stale?.row.version, 0);
  // Another writer moves the intent first.
  const c = await a.call('POST', `/v1/payment_intents/${id}/cancel`, { key: ten.testKey, headers: { 'idempotency-key': crypto.randomUUID() } });
  t.equal(c.body.status, 'canceled');
  // The late writer read version 0: its commit is refused; on fresh state cancel is a no-op.
  const { actor } = a.app.deps.runtime;
  const out = await actor.runLocked<any, any, any, any>(a.app.deps.payments.def, { tenantId: ten.id, livemode: false }, id, { kind: 'cancel' }, { waitMs: 0, known: stale! });
  t.equal(out.intent.version, 1, 'the retry saw the canceled intent (version 1): nothing to write');
  t.equal(out.intent.status, 'canceled');
  const sql = a.app.deps.sql;
  const history = await sql`select event from payment_intent_history where payment_intent_id = ${id} order by id`;
  t.same(history.map((h) => h.event), ['create', 'cancel'], 'one cancel in the history, not two');
  const events = await sql`select event_type from outbox_events where entity_id = ${id}`;
  t.same(events.map((e) => e.event_type), ['payment_intent.canceled'], 'one canceled event, not two');
  const [row] = await sql`select version from payment_intents where id = ${id}`;
  t.equal(row.version, 1);
});

t.test('a stale confirm cannot open a second attempt: fenced, then not_confirmable on fresh state', async (t) => {
  const r = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 2000, currency: 'MXN' }, headers: { 'idempotency-key': crypto.randomUUID() } });
  const id = r.body.id as string;
  const stale = await hydrate(a.app.deps.sql, id, ten.id, false, { rules: true });
  const c = await a.call('POST', `/v1/payment_intents/${id}/confirm`, { key: ten.testKey, body: { payment_method: 'card', payment_token: 'tok_sim_slow' }, headers: { 'idempotency-key': crypto.randomUUID() } });
  t.equal(c.status, 200);
  await t.rejects(
    a.app.deps.runtime.actor.runLocked(a.app.deps.payments.def, { tenantId: ten.id, livemode: false }, id, { kind: 'confirm', body: { payment_method: 'card', payment_token: 'tok_sim_ok' } }, { waitMs: 0, known: stale! }),
    { code: 'payment_intent.not_confirmable' },
  );
  const attempts = await a.app.deps.sql`select id from attempts where payment_intent_id = ${id}`;
  t.equal(attempts.length, 1, 'exactly one attempt');
});

t.test('two writers of one refund: the stale one is fenced and retries from fresh state (no second ledger entry or event)', async (t) => {
  const sql = a.app.deps.sql;
  const h = { 'idempotency-key': crypto.randomUUID() };
  const pi = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 4000, currency: 'MXN' }, headers: h });
  await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key: ten.testKey, body: { payment_method: 'card', payment_token: 'tok_sim_ok' }, headers: { 'idempotency-key': crypto.randomUUID() } });
  let attemptId = '';
  for (let i = 0; i < 100 && !attemptId; i++) {
    const [r] = await sql`select id from attempts where payment_intent_id = ${pi.body.id} and status = 'captured'`;
    if (r) attemptId = r.id as string;
    else await new Promise((r) => setTimeout(r, 50));
  }
  const { refunds } = a.app.deps;
  // A requested refund row with no job queued (so only this test's two writers touch it), read by a late writer.
  const refundId = crypto.randomUUID();
  await sql`
    insert into refunds (id, tenant_id, livemode, attempt_id, payment_intent_id, amount_minor, currency, status, requested_by)
    values (${refundId}, ${ten.id}, false, ${attemptId}, ${pi.body.id}, 1000, 'MXN', 'requested', 'k')`;
  const stale = await refunds.def.hydrate(sql, refundId, undefined);
  t.equal(stale?.row.version, 0);
  // The first writer applies the provider's success.
  await refunds.execute(refundId);
  // The late writer, holding version 0, applies a failure: fenced, then on fresh state nothing to do.
  const out = await a.app.deps.runtime.actor.runLocked<any, any, any, any>(refunds.def, undefined, refundId, { kind: 'provider_outcome', outcome: { kind: 'failed', code: 'x', message: 'late' } }, { waitMs: 0, known: stale! });
  t.equal(out.status, 'succeeded', 'the retry saw the succeeded refund');
  const [row] = await sql`select status, version from refunds where id = ${refundId}`;
  // The first writer's execute is two steps (issue 24's ask-first: send_started marks the send, then the
  // outcome); the late writer adds nothing.
  t.same([row.status, row.version], ['succeeded', 2], 'the first writer\'s two steps, nothing from the late one');
  t.same((await sql`select event_type from outbox_events where entity_id = ${refundId}`).map((e) => e.event_type), ['refund.succeeded'], 'one event');
  t.equal((await sql`select id from journal_entries where ref_id = ${refundId}`).length, 1, 'one ledger entry');
  t.same((await sql`select event from entity_history where entity_id = ${refundId} order by id`).map((e) => e.event), ['send_started', 'provider.succeeded'], 'one outcome in the history');
});
