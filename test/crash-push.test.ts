// A paid push payment is never lost (issue: hardening, item 2). SPEI and OXXO intents wait for their
// payers, for two tenants. Workers are killed; then
// - tenant A's payers pay and the operator's simulate-inbound (a provider's payment notice) is
//   acknowledged while no worker runs, and Redis is flushed: only the inbox row in Postgres knows
//   (its clock does not move: these must succeed through the inbox replay alone);
// - tenant B's payers pay at the provider but the notice never reaches us, and B's clock passes
//   every expiry: these must succeed because an expiry asks the provider first.
// Workers come back and are SIGKILLed mid-run twice. Every paid intent ends `succeeded`, none paid
// ends `expired`, every unpaid one expires, each with exactly one terminal event, and the ledger
// has one capture per paid intent.
import t from 'tap';
import { serviceProcesses, sharedWith, startTestApp, waitForWorker, flushPrefix } from './helpers/app.js';
import { ownDatabase } from './helpers/db.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


t.test('push payments paid while workers are down, Redis flushed and workers killed: none lost, none expired while paid', async (t) => {
  const fast = { JOB_LOCK_MS: '3000', ENTITY_LOCK_MS: '4000', RECONCILE_INTERVAL_MS: '400', SWEEP_INTERVAL_MS: '300' };
  const dbUrl = ownDatabase(t, 'orq_crash_push'); // its own processes' work only (test/helpers/db.ts)
  const a = await startTestApp({ DATABASE_URL: dbUrl, ROLE: 'api', RATE_LIMIT_V1_PER_MIN: '100000', RATE_LIMIT_PUBLIC_PER_MIN: '100000', ...fast });
  const workers = serviceProcesses({ ...fast, ...sharedWith(a), ROLE: 'worker', WORKER_CONCURRENCY: '8' });
  t.teardown(async () => {
    workers.killAll();
    await a.stop();
  });
  const startWorker = async () => {
    const w = workers.start();
    await waitForWorker(a.app.deps.redis, a.config.redisPrefix, w);
    return w;
  };
  const A = await a.newTenant();
  const B = await a.newTenant();
  const sql = a.app.deps.sql;
  const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
  const until = async (what: string, fn: () => Promise<boolean>, ms = 60_000) => {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (await fn()) return;
      await sleep(200);
    }
    t.fail(`timed out waiting: ${what}`);
  };

  // N chains per tenant: push intents waiting for their payers (requires_action, with an expiry).
  const N = 24;
  let w = await startWorker();
  const ids: string[] = [];
  const idsOf: Record<string, string[]> = { [A.id]: [], [B.id]: [] };
  for (const ten of [A, B]) {
    for (let i = 0; i < N; i++) {
      const pi = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 50_000 + i, currency: 'MXN' }, headers: idem() });
      const c = await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key: ten.testKey, body: { payment_token: 'x', payment_method: i % 4 === 3 ? 'oxxo' : 'spei' }, headers: idem() });
      t.equal(c.status, 200);
      ids.push(pi.body.id);
      idsOf[ten.id].push(pi.body.id);
    }
  }
  await until('every intent waits for its payer', async () => {
    const [r] = await sql`select count(*)::int as n from payment_intents where id in ${sql(ids)} and status = 'requires_action'`;
    return r.n === ids.length;
  });
  let kills = 0;
  let flushes = 0;

  // The workers die. Payers pay 3 of every 4 intents.
  w.kill('SIGKILL');
  kills++;
  const paid = new Set<string>();
  const refsOf = async (tenantIds: string[]) => sql`select payment_intent_id, provider_ref from attempts where payment_intent_id in ${sql(tenantIds)} order by payment_intent_id`;
  for (const [i, r] of (await refsOf(idsOf[A.id])).entries()) {
    if (i % 4 === 0) continue;
    // Tenant A: the notice is acknowledged by the API (the inbox row is its only record once Redis is flushed).
    const s = await a.admin('POST', `/admin/tenants/${A.id}/simulate-inbound`, { provider_ref: r.provider_ref });
    t.equal(s.status, 200, 'the notice is acknowledged');
    paid.add(r.payment_intent_id as string);
  }
  for (const [i, r] of (await refsOf(idsOf[B.id])).entries()) {
    if (i % 4 === 0) continue;
    // Tenant B: the provider holds the payment, but its notice never reaches Orquesta.
    t.ok(await a.app.deps.sim.markPaid(B.id, r.provider_ref as string), 'paid at the provider');
    paid.add(r.payment_intent_id as string);
  }
  const [stored] = await sql`select count(*)::int as n from inbox where subject_id in (select id from attempts where payment_intent_id in ${sql(idsOf[A.id])}) and processed_at is null`;
  t.equal(stored.n, (N * 3) / 4, 'every acknowledged notice is stored in Postgres before the answer');

  // Redis loses the notices' jobs; B's clock passes every expiry (OXXO's 72 h included), and Redis loses those jobs too.
  flushes++;
  t.ok((await flushPrefix(a.app.deps.redis, a.config.redisPrefix)) > 0, 'Redis flushed');
  t.equal((await a.call('POST', '/v1/test/clock/advance', { key: B.testKey, body: { seconds: 73 * 3600 } })).status, 200);
  flushes++;
  await flushPrefix(a.app.deps.redis, a.config.redisPrefix);

  // Workers come back and are killed twice while they replay notices and fire expiries.
  for (let round = 0; round < 2; round++) {
    w = await startWorker();
    await sleep(400 + round * 300);
    w.kill('SIGKILL');
    kills++;
  }
  w = await startWorker();
  await until('every paid intent is terminal and every unpaid one of B expired', async () => {
    const [r] = await sql`
      select count(*)::int as n from payment_intents
       where id in ${sql(ids)} and status not in ('succeeded', 'expired', 'failed') and (id in ${sql([...paid])} or tenant_id = ${B.id})`;
    return r.n === 0;
  }, 90_000);

  const rows = await sql`select id, status from payment_intents where id in ${sql(ids)}`;
  const lost = rows.filter((r) => paid.has(r.id as string) && r.status !== 'succeeded');
  const expiredWhilePaid = rows.filter((r) => paid.has(r.id as string) && r.status === 'expired');
  t.same(lost.map((r) => `${r.id}: ${r.status}`), [], 'no paid intent lost');
  t.same(expiredWhilePaid, [], 'no paid intent expired');
  t.ok(rows.filter((r) => !paid.has(r.id as string) && idsOf[B.id].includes(r.id as string)).every((r) => r.status === 'expired'), "every unpaid intent of B expired");
  t.ok(rows.filter((r) => !paid.has(r.id as string) && idsOf[A.id].includes(r.id as string)).every((r) => r.status === 'requires_action'), "A's unpaid intents still wait (its clock did not move)");
  const evs = await sql`select entity_id, event_type, count(*)::int as n from outbox_events where entity_id in ${sql(ids)} group by 1, 2`;
  t.ok(evs.every((e) => e.n === 1), 'no event twice');
  for (const r of rows) {
    const mine = evs.filter((e) => e.entity_id === r.id).map((e) => e.event_type).sort();
    const want = r.status === 'requires_action' ? ['payment_intent.requires_action'] : ['payment_intent.requires_action', `payment_intent.${r.status}`].sort();
    t.same(mine, want, `${r.id}: requires_action then at most its one terminal event`);
  }
  const [captures] = await sql`select count(*)::int as n from journal_entries where kind = 'charge.captured' and ref_id in (select id from attempts where payment_intent_id in ${sql(ids)})`;
  t.equal(captures.n, paid.size, 'one capture entry per paid intent');
  const [pending] = await sql`select count(*)::int as n from inbox where subject_id in (select id from attempts where payment_intent_id in ${sql(ids)}) and processed_at is null`;
  t.equal(pending.n, 0, 'every notice processed');
  t.comment(`chains=${ids.length}, paid=${paid.size} (${(N * 3) / 4} by an acknowledged notice, ${(N * 3) / 4} only at the provider), kills=${kills}, flushes=${flushes}, lost=${lost.length}, expired while paid=${expiredWhilePaid.length}`);
});
