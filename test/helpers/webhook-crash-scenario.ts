// Killing the delivery worker in the middle of a fan-out loses nothing: every event reaches every
// endpoint at least once afterwards (duplicates are allowed: receivers dedupe on event_id).
import type { Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { startReceiver } from './receiver.js';
import { serviceProcesses, sharedWith, startTestApp } from './app.js';
import { ownDatabase } from './db.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** SIGKILL of the delivery worker mid fan-out: every event delivered at least once (crash tests run it on a single Redis and on a Redis Cluster). */
export async function deliveryWorkerKilledMidFanOut(t: Test, redisEnv: Record<string, string>): Promise<void> {
  const knobs = { JOB_LOCK_MS: '3000', RELAY_INTERVAL_MS: '50', SWEEP_INTERVAL_MS: '300', RECONCILE_INTERVAL_MS: '1000', WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1' };
  const rx = await startReceiver();
  rx.delayMs = 15;
  const dbUrl = ownDatabase(t, 'orq_wh_crash'); // its own processes' work only (test/helpers/db.ts)
  const a = await startTestApp({ DATABASE_URL: dbUrl, ...redisEnv, ROLE: 'api', ...knobs });
  const workers = serviceProcesses({ ...knobs, ...sharedWith(a), ROLE: 'worker', WEBHOOK_CONCURRENCY: '8' });
  t.teardown(async () => {
    workers.killAll();
    await a.stop();
    await rx.close();
  });
  const startWorker = () => workers.start();

  const ten = await a.newTenant();
  const K = 3;
  for (let k = 0; k < K; k++) {
    const r = await a.call('POST', '/v1/webhook_endpoints', { key: ten.testKey, body: { url: `${rx.url}/ep${k}` } });
    t.equal(r.status, 201);
  }
  // N committed events, as the actors would write them.
  const N = 150;
  const sql = a.app.deps.sql;
  const eventIds: string[] = [];
  for (let i = 0; i < N; i++) {
    const eventId = randomUUID();
    eventIds.push(eventId);
    await sql`insert into outbox_events (event_id, tenant_id, livemode, event_type, entity_id, data)
              values (${eventId}, ${ten.id}, false, 'payment_intent.succeeded', ${randomUUID()}, ${sql.json({ n: i, metadata: null })})`;
  }
  const total = N * K;
  const distinct = () => new Set(rx.received.map((r) => `${r.path}|${r.json?.event_id}`)).size;

  let w = startWorker();
  let kills = 0;
  for (const fraction of [0.25, 0.55]) {
    await rx.waitFor(() => distinct() >= total * fraction, 30_000);
    w.kill('SIGKILL');
    kills++;
    t.ok(distinct() < total, `killed at ${distinct()}/${total} deliveries`);
    await sleep(200);
    w = startWorker();
  }
  await rx.waitFor(() => distinct() >= total, 60_000).catch(() => undefined);
  const got = new Set(rx.received.map((r) => `${r.path}|${r.json?.event_id}`));
  const missing = [];
  for (let k = 0; k < K; k++) for (const e of eventIds) if (!got.has(`/ep${k}|${e}`)) missing.push(`/ep${k}|${e}`);
  t.same(missing, [], `no delivery lost after ${kills} kills`);
  const dups = rx.received.length - got.size;
  t.comment(`N=${N} events x K=${K} endpoints, kills=${kills}, delivered=${got.size}/${total}, duplicates=${dups}`);
  // Postgres agrees, once the success batches are written.
  const end = Date.now() + 10_000;
  let pending = -1;
  while (Date.now() < end) {
    const [r] = await sql`select count(*)::int as n from webhook_deliveries where tenant_id = ${ten.id} and status <> 'succeeded'`;
    pending = r.n;
    if (pending === 0) break;
    await sleep(200);
  }
  t.equal(pending, 0, 'every delivery recorded as succeeded');
}
