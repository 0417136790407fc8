// The bare stack of bench/confirm: the chosen stack (uWebSockets.js, postgres.js, BullMQ on ioredis)
// serving the create → confirm chain and executing its attempt with the same SQL as pgbench's
// chain-full-sql (bench/confirm-sql.ts), and no app code: no authentication lookup, validation,
// machine, entity lock, idempotency logic, job history, telemetry or rate limit. What it reaches
// is what the stack itself allows on this machine, the ceiling of the app's own code.
//
//   node dist/bench/skeleton-app.js api     serves POST /v1/payment_intents and …/{id}/confirm
//   node dist/bench/skeleton-app.js worker  executes the attempts the confirms enqueue
//
// and, for bench/payouts, POST /v1/payouts: the create's one statement (bench/payouts-sql.ts, as
// pgbench's create-sql sends it), then its execution job enqueued (no worker: the creates alone).
//
// Configured as the app is by default: DATABASE_POOL_MAX (20) connections per process, QUEUE_SHARDS
// (8) queues of WORKER_CONCURRENCY (16) jobs, BullMQ connections without auto-pipelining, jobs
// enqueued through the kernel's Queues (a turn's adds in one write) and removed when done. The
// confirm enqueues its job after its commit and before answering, as the app does. Environment:
// DATABASE_URL (migrated, with the tenant of bench/confirm-sql's or bench/payouts-sql's TENANT),
// REDIS_URL, REDIS_PREFIX, SKELETON_KEY (the bearer token it accepts). Prints `BENCH_READY
// {"pid":…,"port":…}`; exits when its stdin (a pipe from the parent) closes.
import { createHash } from 'node:crypto';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { uws } from '../api/uws.js';
import { atomically, createSql, type Sql } from '../kernel/db.js';
import { Queues, queueName as shardQueue } from '../kernel/queues.js';
import { skeletonChain, skeletonSteps, type SkeletonStep } from './confirm-sql.js';
import { CREATE as PAYOUT_CREATE } from './payouts-sql.js';

const role = process.argv[2];
if (role !== 'api' && role !== 'worker') throw new Error('usage: skeleton-app.js api|worker');
const env = process.env;
const poolMax = Number(env.DATABASE_POOL_MAX ?? 20);
const shards = Number(env.QUEUE_SHARDS ?? 8);
const concurrency = Number(env.WORKER_CONCURRENCY ?? 16);
const prefix = env.REDIS_PREFIX ?? 'orq_skeleton';
const sql = createSql(env.DATABASE_URL ?? '', poolMax);
const chain = skeletonChain();
const payoutCreate = skeletonSteps(PAYOUT_CREATE.join('\n'), ['n', 'amount']);
const redisOpts = { maxRetriesPerRequest: null, enableAutoPipelining: false };
const connections: Redis[] = [];
const redis = () => {
  const c = new Redis(env.REDIS_URL ?? 'redis://127.0.0.1:6379/0', redisOpts);
  connections.push(c);
  return c;
};

async function run(steps: SkeletonStep[], ...params: string[]): Promise<void> {
  for (const s of steps) {
    if ('statement' in s) await sql.unsafe(s.statement, params, { prepare: true });
    // The kernel's one-flight transaction (BEGIN, the statements and COMMIT in one write).
    else
      await atomically(sql, (tx) => {
        for (const text of s.transaction) void tx.unsafe(text, params, { prepare: true });
      });
  }
}

/** n ↔ the intent id bench/confirm-sql's ID gives it (lpad(to_hex(n), 32, '0') as a uuid; ATT pads with 'a'). */
const idOf = (n: string, pad = '0') => {
  const h = BigInt(n).toString(16).padStart(32, pad);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};
const nOf = (id: string) => (/^[0-9a-f-]{36}$/.test(id) ? BigInt('0x' + id.replace(/-/g, '')).toString() : undefined);

function intentJson(n: string, status: string, attempt: boolean): string {
  const now = new Date().toISOString();
  return JSON.stringify({
    id: idOf(n),
    object: 'payment_intent',
    amount_minor: 15000,
    tip_minor: 0,
    total_minor: 15000,
    currency: 'MXN',
    status,
    client_secret: `pi_secret_${createHash('sha1').update(n).digest('hex').slice(0, 24)}`,
    livemode: false,
    receipt_code: `W-${n}`,
    metadata: null,
    ...(attempt ? { attempts: [{ id: idOf(n, 'a'), object: 'attempt', status: 'pending', connector_key: 'sim', method: 'card', amount_minor: 15000, currency: 'MXN', created_at: now }] } : {}),
    created_at: now,
    updated_at: now,
  });
}

if (role === 'api') {
  const key = `Bearer ${env.SKELETON_KEY ?? ''}`;
  // The kernel's enqueue (kernel/queues.ts): sharded by entity, the adds of one turn in one write.
  const queues = new Queues(redis(), prefix, shards);
  queues.setShards('skel', 'default');
  queues.setShards('skel_payout', 'default');
  // From 0x1000000: bench/confirm-sql's ATT and ENTRY pad the hex of n with 'a' and 'b', so an n
  // whose hex starts with either would share its ids with a smaller n (0xa5 and 0x5); here every
  // n's hex starts with 1 for the next 16 million.
  let counter = 0x1000000n;
  const app = uws.App();
  type Res = Parameters<Parameters<typeof app.post>[1]>[0];
  const reply = (res: Res, aborted: { v: boolean }, status: string, body: string) => {
    if (aborted.v) return;
    res.cork(() => {
      res.writeStatus(status);
      res.writeHeader('Content-Type', 'application/json; charset=utf-8');
      res.end(body);
    });
  };
  /** Reads the JSON body, checks the bearer token and the idempotency key's presence, then runs `handle`. */
  const route = (res: Res, auth: string, idem: string, handle: (body: Record<string, unknown>) => Promise<[string, string]>) => {
    const aborted = { v: false };
    res.onAborted(() => (aborted.v = true));
    const chunks: Buffer[] = [];
    res.onData((ab, last) => {
      chunks.push(Buffer.from(ab.slice(0)));
      if (!last) return;
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        return reply(res, aborted, '400 Bad Request', '{"error":{"code":"invalid_json"}}');
      }
      if (auth !== key) return reply(res, aborted, '401 Unauthorized', '{"error":{"code":"unauthorized"}}');
      if (!idem) return reply(res, aborted, '400 Bad Request', '{"error":{"code":"idempotency_key_required"}}');
      handle(body).then(
        ([status, out]) => reply(res, aborted, status, out),
        (e: unknown) => {
          process.stderr.write(`skeleton api: ${(e as Error).message}\n`);
          reply(res, aborted, '500 Internal Server Error', '{"error":{"code":"internal"}}');
        },
      );
    });
  };
  app.post('/v1/payment_intents', (res, req) => {
    route(res, req.getHeader('authorization'), req.getHeader('idempotency-key'), async (body) => {
      if (typeof body.amount_minor !== 'number') return ['400 Bad Request', '{"error":{"code":"invalid_request"}}'];
      const n = (++counter).toString();
      await run(chain.create, n);
      return ['201 Created', intentJson(n, 'requires_payment_method', false)];
    });
  });
  app.post('/v1/payment_intents/:id/confirm', (res, req) => {
    const n = nOf(req.getParameter(0) ?? '');
    route(res, req.getHeader('authorization'), req.getHeader('idempotency-key'), async (body) => {
      if (!n || typeof body.payment_token !== 'string') return ['400 Bad Request', '{"error":{"code":"invalid_request"}}'];
      await run(chain.confirm, n);
      await queues.add('skel', n, 'execute', { n }, { jobId: `att-${n}` });
      return ['200 OK', intentJson(n, 'processing', true)];
    });
  });
  app.post('/v1/payouts', (res, req) => {
    route(res, req.getHeader('authorization'), req.getHeader('idempotency-key'), async (body) => {
      const amount = body.amount_minor;
      if (typeof amount !== 'number' || typeof body.clabe !== 'string') return ['400 Bad Request', '{"error":{"code":"invalid_request"}}'];
      const n = (++counter).toString();
      await run(payoutCreate, n, String(amount));
      await queues.add('skel_payout', n, 'execute', { n }, { jobId: `po-${n}` });
      const now = new Date().toISOString();
      const view = { id: idOf(n), object: 'payout', clabe_masked: `${body.clabe.slice(0, 3)}***********${body.clabe.slice(-4)}`, beneficiary_name: body.beneficiary_name, amount_minor: amount, currency: 'MXN', concepto: body.concepto, status: 'processing', connector_key: 'stp', livemode: false, created_at: now, updated_at: now };
      return ['201 Created', JSON.stringify(view)];
    });
  });
  app.any('/*', (res) => {
    res.writeStatus('404 Not Found').end();
  });
  app.listen('127.0.0.1', 0, (sock) => {
    if (!sock) {
      process.stderr.write('skeleton api: cannot listen\n');
      process.exit(1);
    }
    process.stdout.write(`BENCH_READY ${JSON.stringify({ port: uws.us_socket_local_port(sock as never), pid: process.pid })}\n`);
  });
} else {
  for (let i = 0; i < shards; i++) {
    const w = new Worker(shardQueue('skel', i), async (job) => run(chain.execute, (job.data as { n: string }).n), { connection: redis(), prefix, concurrency });
    w.on('failed', (_job, err) => process.stderr.write(`skeleton worker: ${err.message}\n`));
    await w.waitUntilReady();
  }
  process.stdout.write(`BENCH_READY ${JSON.stringify({ port: null, pid: process.pid })}\n`);
}

const stop = () => {
  for (const c of connections) c.disconnect();
  void (sql as Sql).end({ timeout: 1 }).finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, stop);
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
