// Starts the real app in-process (port 0) against the machine's Postgres and Redis, with its own
// Redis key prefix, and gives tests a small HTTP client. Each test makes its own tenants.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../ops/config.js';
import { projectRoot } from '../../ops/paths.js';
import { startApp, type RunningApp } from '../../ops/app.js';
import { createLogger } from '../../kernel/log.js';
import { isCluster, type RedisClient } from '../../kernel/redis.js';

/** The test Redis Cluster that `npm test` starts when absent (ops/preflight.ts): three local masters. */
export const testClusterNodes = process.env.TEST_REDIS_CLUSTER_NODES || '127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003';

/** The two Redis deployments a test can run on (REDIS_CLUSTER_NODES switches, kernel/redis.ts). */
export const redisModes: ReadonlyArray<{ name: string; env: Record<string, string> }> = [
  { name: 'single Redis', env: { REDIS_CLUSTER_NODES: '' } },
  { name: 'Redis Cluster', env: { REDIS_CLUSTER_NODES: testClusterNodes } },
];

/** Every key of a prefix: SCAN on each master of a Cluster (a SCAN sees one node), or on the one Redis. */
export async function scanPrefix(redis: RedisClient, prefix: string): Promise<string[]> {
  const nodes = isCluster(redis) ? redis.nodes('master') : [redis];
  const out: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      out.push(...keys);
    } while (cursor !== '0');
  }
  return out;
}

export interface Res<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface TestApp {
  app: RunningApp;
  config: Config;
  url: string;
  adminKey: string;
  call<T = any>(method: string, path: string, opts?: { key?: string; body?: unknown; raw?: string; headers?: Record<string, string> }): Promise<Res<T>>;
  admin<T = any>(method: string, path: string, body?: unknown): Promise<Res<T>>;
  newTenant(name?: string): Promise<{ id: string; testKey: string; liveKey: string; testKeyId: string; liveKeyId: string }>;
  stop(): Promise<void>;
}

/** One request on its own connection (Connection: close), so no idle keep-alive socket outlives a test. */
export function httpCall(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; headers: Headers; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { ...headers, connection: 'close' }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
        resolve({ status: res.statusCode!, headers: h, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    PORT: '0',
    ROLE: 'api',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    REDIS_PREFIX: `orq_test_${randomBytes(4).toString('hex')}`,
    ADMIN_KEY: `adm_test_${randomBytes(12).toString('hex')}`,
    STATE_DIR: mkdtempSync(join(tmpdir(), 'orq-state-')),
    SEED_DEMO_TENANT: 'false',
    ...env,
  });
}

export async function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const config = testConfig(env);
  const app = await startApp(config, createLogger(config.logLevel));
  const url = app.url!;
  const call: TestApp['call'] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    let body: string | undefined = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const r = await httpCall(url + path, method, headers, body);
    const text = r.text;
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: r.status, headers: r.headers, body: parsed as any, text };
  };
  const admin: TestApp['admin'] = (method, path, body) => call(method, path, { body, headers: { 'x-admin-key': config.adminKey! } });
  return {
    app,
    config,
    url,
    adminKey: config.adminKey!,
    call,
    admin,
    async newTenant(name = 'Test tenant') {
      const r = await admin('POST', '/admin/tenants', { name });
      if (r.status !== 201) throw new Error(`tenant creation failed: ${r.status} ${r.text}`);
      const test = r.body.api_keys.find((k: any) => !k.livemode);
      const live = r.body.api_keys.find((k: any) => k.livemode);
      return { id: r.body.id, testKey: test.key, liveKey: live.key, testKeyId: test.id, liveKeyId: live.id };
    },
    async stop() {
      try {
        await flushPrefix(app.deps.redis, config.redisPrefix);
      } catch {
        /* Redis may be down on purpose in this test */
      }
      await app.stop();
    },
  };
}

export const uuid = () => crypto.randomUUID();

/**
 * Real service processes (`node dist/ops/main.js`) for crash and multi-process tests: each gets the
 * base environment (test mode, quiet logs, its own state directory, no demo tenant) plus `env`,
 * plus its own `extra`. `killAll()` SIGKILLs whatever still runs (for teardown).
 */
export function serviceProcesses(env: Record<string, string>) {
  const procs = new Set<ChildProcess>();
  const base = { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'error', STATE_DIR: mkdtempSync(join(tmpdir(), 'orq-proc-')), SEED_DEMO_TENANT: 'false', ...env };
  return {
    procs,
    start(extra: Record<string, string> = {}): ChildProcess {
      const p = spawn(process.execPath, [join(projectRoot, 'dist', 'ops', 'main.js')], { env: { ...base, ...extra }, stdio: ['ignore', process.env.DEBUG_PROCS ? 'inherit' : 'ignore', 'inherit'] });
      procs.add(p);
      p.on('exit', () => procs.delete(p));
      return p;
    },
    killAll() {
      for (const p of procs) p.kill('SIGKILL');
    },
  };
}

/** The environment that points a worker process at a running test app's database, Redis prefix and admin key. */
export const sharedWith = (a: TestApp): Record<string, string> => ({
  REDIS_PREFIX: a.config.redisPrefix,
  ADMIN_KEY: a.adminKey,
  DATABASE_URL: a.config.databaseUrl,
  REDIS_URL: a.config.redisUrl,
  REDIS_CLUSTER_NODES: a.config.redisClusterNodes.join(','),
});

/**
 * Waits until the worker process `pid` beats (ops/heartbeat.ts): its queues' workers exist by then.
 * A fixed sleep is not enough on a loaded machine (a worker's boot took 0.7 s to 6 s here).
 */
export async function waitForWorker(redis: RedisClient, prefix: string, proc: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const pid = proc.pid!;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`worker process ${pid} exited during its start (${proc.exitCode ?? proc.signalCode})`);
    const members = await redis.zrange(`${prefix}:workers`, 0, -1);
    if (members.some((m) => m.includes(`:${pid}:`))) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`worker process ${pid} did not start within ${timeoutMs} ms`);
}

/** A TCP port free on loopback right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Waits until `url`/health/live answers 200; fails at once if the process it belongs to exited. */
export async function waitReady(url: string, proc?: ChildProcess, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (proc && (proc.exitCode !== null || proc.signalCode !== null)) throw new Error(`the process for ${url} exited during its start (${proc.exitCode ?? proc.signalCode})`);
    const ok = await httpCall(`${url}/health/live`, 'GET', {}).then((r) => r.status === 200, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come up within ${ms} ms`);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Calls fn until ok(its value) or ms pass; returns the value, or throws saying what it last saw. */
export async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  let v = await fn();
  while (!ok(v) && Date.now() < end) {
    await sleep(50);
    v = await fn();
  }
  if (!ok(v)) throw new Error(`condition not met: ${JSON.stringify(v)}`);
  return v;
}

/** Deletes every Redis key of a prefix (a test's own: "Redis lost everything"); returns how many. */
export async function flushPrefix(redis: RedisClient, prefix: string): Promise<number> {
  const keys = await scanPrefix(redis, prefix);
  // One DEL per key: on a Cluster a multi-key DEL must stay within one hash slot.
  const deleted = await Promise.all(keys.map((k) => redis.del(k)));
  return deleted.reduce((a, b) => a + b, 0);
}
