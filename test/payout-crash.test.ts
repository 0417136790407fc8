// A payout worker SIGKILLed between the rail's send and the record of its answer still sends the
// order exactly once: the worker committed `send_started_at` before calling the rail, so the next
// worker asks the rail (status) before sending, finds the order and records it. The sim rail keeps
// its own book by key (sim_payout_orders.sends counts every send call). Real service processes
// (node dist/ops/main.js), as test/crash.test.ts.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { serviceProcesses, sharedWith, startTestApp } from './helpers/app.js';
import { ownDatabase } from './helpers/db.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('SIGKILL between send and record: the order is sent once and the payout recorded', async (t) => {
  const fast = { JOB_LOCK_MS: '3000', ENTITY_LOCK_MS: '4000', RECONCILE_INTERVAL_MS: '500', SWEEP_INTERVAL_MS: '300' };
  // API and workers must open each other's sealed CLABEs: one secrets key for the deployment.
  const secrets = { SECRETS_KEY: randomBytes(32).toString('base64') };
  const dbUrl = ownDatabase(t, 'orq_payout_crash'); // its own processes' work only (test/helpers/db.ts)
  const a = await startTestApp({ DATABASE_URL: dbUrl, ROLE: 'api', RATE_LIMIT_V1_PER_MIN: '100000', ...fast, ...secrets });
  const workers = serviceProcesses({ ...fast, ...secrets, ...sharedWith(a), ROLE: 'worker', WORKER_CONCURRENCY: '4' });
  t.teardown(async () => {
    workers.killAll();
    await a.stop();
  });
  const sql = a.app.deps.sql;
  const ten = await a.newTenant();
  const startWorker = async () => {
    const w = workers.start();
    await sleep(700); // boot
    return w;
  };

  const ids: string[] = [];
  let w = await startWorker();
  const KILLS = 3;
  for (let i = 0; i < KILLS; i++) {
    // SLOW: the sim rail registers the order at once and answers about 2 s later.
    const r = await a.call('POST', '/v1/payouts', {
      key: ten.testKey,
      body: { clabe: '646180110400000007', beneficiary_name: 'SLOW', amount_minor: 10_000 + i, currency: 'MXN', concepto: `Crash ${i}` },
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
    t.equal(r.status, 201);
    ids.push(r.body.id);
    // Wait until the rail has the order while the payout has not recorded it: the worker is between send and record.
    let between = false;
    for (let k = 0; k < 750 && !between; k++) {
      const [row] = await sql`
        select p.status, p.provider_ref, p.send_started_at, s.sends from payouts p left join sim_payout_orders s on s.key = p.order_key where p.id = ${r.body.id}`;
      between = row.sends === 1 && row.provider_ref === null && row.status === 'processing' && row.send_started_at !== null;
      if (!between) await sleep(20);
    }
    t.ok(between, `payout ${i}: sent at the rail, not yet recorded`);
    w.kill('SIGKILL');
    const [cut] = await sql`select status, provider_ref from payouts where id = ${r.body.id}`;
    t.same([cut.status, cut.provider_ref], ['processing', null], 'the answer was lost with the worker');
    w = await startWorker();
  }

  const deadline = Date.now() + 60_000;
  let open = ids.length;
  while (Date.now() < deadline && open > 0) {
    const [r] = await sql`select count(*)::int as n from payouts where id in ${sql(ids)} and status <> 'paid'`;
    open = r.n;
    if (open) await sleep(200);
  }
  t.equal(open, 0, 'every payout recorded paid by the next worker');
  const book = await sql`
    select p.id, p.provider_ref, s.provider_ref as rail_ref, s.sends, s.status_queries from payouts p join sim_payout_orders s on s.key = p.order_key where p.id in ${sql(ids)}`;
  t.equal(book.length, ids.length);
  for (const b of book) {
    t.equal(b.sends, 1, `payout ${b.id}: one send at the rail`);
    t.ok(b.status_queries >= 1, 'the next worker asked before sending');
    t.equal(b.provider_ref, b.rail_ref, 'the recorded reference is the rail order');
  }
  const [ev] = await sql`select count(*)::int as n from outbox_events where entity_id in ${sql(ids)} and event_type = 'payout.paid'`;
  t.equal(ev.n, ids.length, 'one payout.paid event each');
  const [led] = await sql`select count(*)::int as n from journal_entries where ref_id in ${sql(ids)} and kind = 'payout.sent'`;
  t.equal(led.n, ids.length, 'one ledger entry each');
});
