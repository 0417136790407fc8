// The server under test for bench/edge: the real app (startApp, ROLE=api) against the machine's
// Postgres and Redis, plus a second edge built from the same deps with the product route table and
// one bench-only route, GET /v1/bench/live: api_key auth, scope payments:read, the /v1 rate limit
// (one Redis script per request), and a handler as cheap as /health/live. The product route table
// is not changed. Creates a tenant through the admin API and prints, on stdout, one line
// `BENCH_READY {"appPort":…,"benchPort":…,"key":"sk_test_…","keyId":…,"redisPrefix":…}`.
// Run as its own process by bench/edge.ts; stops on SIGTERM/SIGINT or when its stdin closes.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEdge, type Edge } from '../api/edge.js';
import { defineRoute } from '../api/route.js';
import { allRoutes } from '../api/routes/index.js';
import { startApp, type RunningApp } from '../ops/app.js';
import { loadConfig } from '../ops/config.js';
import { createLogger } from '../kernel/log.js';

export const benchRoute = defineRoute({
  method: 'GET',
  path: '/v1/bench/live',
  auth: 'api_key',
  scope: 'payments:read',
  summary: 'bench',
  tags: [],
  responses: {},
  handler: () => ({ status: 200, body: { object: 'health', status: 'ok' } }),
});

const stateDir = mkdtempSync(join(tmpdir(), 'orq-bench-state-'));
const redisPrefix = `orq_bench_${randomBytes(4).toString('hex')}`;
const config = loadConfig({
  ...process.env,
  NODE_ENV: 'test',
  PORT: '0',
  ROLE: 'api',
  LOG_LEVEL: 'error',
  REDIS_PREFIX: redisPrefix,
  ADMIN_KEY: `adm_bench_${randomBytes(16).toString('hex')}`,
  STATE_DIR: stateDir,
  SEED_DEMO_TENANT: 'false',
  RATE_LIMIT_V1_PER_MIN: '1000000000',
});
const log = createLogger(config.logLevel, { proc: 'bench-orquesta' });

let app: RunningApp | undefined;
let benchEdge: Edge | undefined;
let stopping: Promise<void> | undefined;

async function cleanRedis(a: RunningApp) {
  const redis = a.deps.redis;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
}

function stop(code: number): Promise<void> {
  stopping ??= (async () => {
    const hard = setTimeout(() => process.exit(code), 8000);
    hard.unref();
    try {
      await benchEdge?.close(2000);
      if (app) {
        await cleanRedis(app).catch(() => {});
        await app.stop();
      }
    } catch (e) {
      log.error('bench server stop failed', { err: e });
    }
    rmSync(stateDir, { recursive: true, force: true });
    process.exit(code);
  })();
  return stopping;
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => void stop(0));
process.stdin.on('end', () => void stop(0));
process.stdin.on('error', () => void stop(0));
process.stdin.resume();

try {
  app = await startApp(config, log);
  benchEdge = createEdge(app.deps, [...allRoutes(config), benchRoute]);
  const benchPort = await benchEdge.listen(config.host, 0);

  const r = await fetch(`${app.url}/admin/tenants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-admin-key': config.adminKey! },
    body: JSON.stringify({ name: 'bench' }),
  });
  const text = await r.text();
  if (r.status !== 201) throw new Error(`tenant creation answered ${r.status}: ${text}`);
  const tenant = JSON.parse(text) as { id: string; api_keys: { id: string; key: string; livemode: boolean }[] };
  const testKey = tenant.api_keys.find((k) => !k.livemode && k.key?.startsWith('sk_test_'));
  if (!testKey) throw new Error(`tenant creation returned no sk_test_ key: ${text}`);

  process.stdout.write(
    `BENCH_READY ${JSON.stringify({ pid: process.pid, appPort: app.port, benchPort, key: testKey.key, keyId: testKey.id, tenantId: tenant.id, redisPrefix })}\n`,
  );
} catch (e) {
  process.stderr.write(`orquesta-server: ${(e as Error).stack ?? String(e)}\n`);
  await stop(1);
}
