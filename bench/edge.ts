// bench/edge (npm run bench:edge): the HTTP edge's overhead against a bare uWebSockets.js server.
//
// Three targets (plus one reference), in two server processes, all loaded by autocannon from this
// process with the same settings:
//   bare        GET /                on bench/bare-server      (uWS hello-world, small JSON body)
//   health      GET /health/live     on the real app's edge: reference only, not in the target:
//               the edge's fixed cost (no auth, no rate limit, same handler as the bench route)
//   auth-get    GET /v1/bench/live   on bench/orquesta-server  (API key auth from the in-memory key
//               cache, the /v1 rate limit: one Redis script per request, scope, cheap handler)
//   validation  POST /v1/customers {"email":42} on the real app's edge: auth, rate limit, JSON
//               parse, Ajv rejects it with 400 request.invalid_body before any database work
// Every target gets a warm-up run, then a measured run. Verified before the load: the expected
// statuses and bodies. Verified after each run: the expected status codes only, no errors or
// timeouts, and (for the /v1 targets) that the rate limiter counted every request in Redis.
//
// Options: --duration <s> (10) --warmup <s> (2) --connections <n> (50) --pipelining <n> (1)
//          --rounds <n> (1) --only bare,health,auth-get,validation --json <file>
//          --profile-server <dir>: run the Orquesta server under node --cpu-prof, profile written there
import autocannon from 'autocannon';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { appBench, Children, sleep } from './confirm-lib.js';

const here = dirname(fileURLToPath(import.meta.url));
const SETTLE_MS = 1000;

// ---------------------------------------------------------------------------------------------
// Options
const ALL_TARGETS = ['bare', 'health', 'auth-get', 'validation'] as const;
interface Options {
  duration: number;
  warmup: number;
  connections: number;
  pipelining: number;
  rounds: number;
  only: Set<string>;
  json?: string;
  /** Directory for a V8 CPU profile of the Orquesta server process (node --cpu-prof). */
  profileServer?: string;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { duration: 10, warmup: 2, connections: 50, pipelining: 1, rounds: 1, only: new Set(ALL_TARGETS) };
  const num = (name: string, v: string | undefined, min: number, max: number) => {
    const n = Number(v);
    if (v === undefined || !Number.isFinite(n) || n < min || n > max) throw new Error(`--${name} takes a number between ${min} and ${max}, got ${v}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2) as [string, string | undefined];
    const val = () => inline ?? argv[++i];
    switch (flag) {
      case '--duration':
        o.duration = num('duration', val(), 1, 600);
        break;
      case '--warmup':
        o.warmup = num('warmup', val(), 0, 60);
        break;
      case '--connections':
        o.connections = Math.floor(num('connections', val(), 1, 10_000));
        break;
      case '--pipelining':
        o.pipelining = Math.floor(num('pipelining', val(), 1, 100));
        break;
      case '--rounds':
        o.rounds = Math.floor(num('rounds', val(), 1, 20));
        break;
      case '--only': {
        const names = String(val() ?? '').split(',').map((s) => s.trim()).filter(Boolean);
        for (const n of names) if (!(ALL_TARGETS as readonly string[]).includes(n)) throw new Error(`--only: unknown target ${n}`);
        o.only = new Set(names);
        break;
      }
      case '--json':
        o.json = val();
        break;
      case '--profile-server':
        o.profileServer = val();
        break;
      case '--help':
      case '-h':
        process.stdout.write('npm run bench:edge -- [--duration 10] [--warmup 2] [--connections 50] [--pipelining 1] [--rounds 1] [--only bare,health,auth-get,validation] [--json out.json] [--profile-server dir]\n');
        process.exit(0);
      // eslint-disable-next-line no-fallthrough
      default:
        throw new Error(`unknown option ${argv[i]} (try --help)`);
    }
  }
  return o;
}

// ---------------------------------------------------------------------------------------------
// Child processes: started with a stdin pipe (they exit when it closes), killed on every exit path
// (bench/confirm-lib.ts Children, shared with the other benches).
const children = new Children('bench/edge');
// The Orquesta server is the build under test's (BENCH_APP_ROOT under ops/bench.mjs --baseline); the bare
// server is the same code for both.
const startChild = <T>(name: string, script: string, readyTimeoutMs: number, nodeArgs: string[] = []) =>
  children.start<T>(name, script === 'bare-server.js' ? join(here, script) : appBench(script), { readyTimeoutMs, nodeArgs });

// ---------------------------------------------------------------------------------------------
// CPU accounting: the server child (from /proc), redis-server (INFO cpu), and this process.
let clkTck = 100;
try {
  clkTck = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
} catch {
  /* keep 100 */
}

function procCpuSeconds(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clkTck; // utime + stime
  } catch {
    return null;
  }
}

/** Whole-machine CPU seconds from /proc/stat: busy (not idle/iowait) and stolen by the hypervisor. */
function machineCpuSeconds(): { busy: number; steal: number } | null {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = f;
    return { busy: (user + nice + system + irq + softirq) / clkTck, steal: (steal ?? 0) / clkTck };
  } catch {
    return null;
  }
}

async function redisCpuSeconds(redis: Redis | undefined): Promise<number | null> {
  if (!redis) return null;
  try {
    const info = await redis.info('cpu');
    const get = (k: string) => Number(new RegExp(`^${k}:([0-9.]+)`, 'm').exec(info)?.[1] ?? NaN);
    const v = get('used_cpu_sys') + get('used_cpu_user');
    return Number.isFinite(v) ? v : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Targets and runs
interface Target {
  name: (typeof ALL_TARGETS)[number];
  label: string;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  expectStatus: number;
  serverPid?: number;
  /** Redis keys (SCAN pattern) of the rate-limit windows this target counts into. */
  rlPattern?: string;
}

interface RunResult {
  target: Target['name'];
  label: string;
  round: number;
  rps: number;
  rpsStddev: number;
  total: number;
  sent: number;
  duration: number;
  p50: number;
  p99: number;
  latencyAvg: number;
  statusCodes: Record<string, number>;
  non2xx: number;
  errors: number;
  timeouts: number;
  serverCpuPct: number | null;
  redisCpuPct: number | null;
  clientCpuPct: number | null;
  /** Busy CPU of the whole machine not accounted to the server, Redis or autocannon (100% = one core). */
  otherCpuPct: number | null;
  /** CPU time stolen by the hypervisor (100% = one core). */
  stealPct: number | null;
  rateLimitCounted: number | null;
  /** The first few request errors autocannon reported, if any. */
  reqErrors: string[];
}

function cannon(t: Target, o: Options, seconds: number, reqErrors: string[]): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const inst = autocannon(
      {
        url: t.url,
        method: t.method,
        headers: t.headers,
        body: t.body,
        connections: o.connections,
        pipelining: o.pipelining,
        duration: seconds,
        timeout: 10,
      },
      (err: unknown, res: autocannon.Result) => {
        clearTimeout(guard);
        if (err) reject(err);
        else resolve(res);
      },
    );
    inst.on('reqError', (e: unknown) => {
      if (reqErrors.length < 5) reqErrors.push(String((e as Error)?.message ?? e));
    });
    // Bounded even if the server stops answering: autocannon's own duration plus a margin.
    const guard = setTimeout(() => inst.stop(), (seconds + 30) * 1000);
  });
}

async function readCounters(redis: Redis, pattern: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length) (await redis.mget(...keys)).forEach((v, i) => v !== null && out.set(keys[i], Number(v)));
  } while (cursor !== '0');
  return out;
}

/**
 * Counts the rate limiter's increments while a run goes on. The limiter keeps one key per API key
 * and minute, expiring a second after its minute ends, so a run can straddle two windows and see
 * one expire: poll every key's value (they only grow) often enough to see each before it expires.
 */
class RateLimitCounter {
  private start = new Map<string, number>();
  private last = new Map<string, number>();
  private timer?: NodeJS.Timeout;
  private polling: Promise<void> = Promise.resolve();
  constructor(
    private redis: Redis,
    private pattern: string,
  ) {}
  async begin() {
    this.start = await readCounters(this.redis, this.pattern);
    this.last = new Map(this.start);
    this.timer = setInterval(() => {
      this.polling = this.polling.then(() => this.poll()).catch(() => {});
    }, 250);
  }
  private async poll() {
    for (const [k, v] of await readCounters(this.redis, this.pattern)) if (v > (this.last.get(k) ?? 0)) this.last.set(k, v);
  }
  async end(): Promise<number> {
    clearInterval(this.timer);
    await this.polling;
    await this.poll();
    let n = 0;
    for (const [k, v] of this.last) n += v - (this.start.get(k) ?? 0);
    return n;
  }
}

async function measure(t: Target, o: Options, round: number, redis: Redis | undefined): Promise<RunResult> {
  if (o.warmup > 0) {
    const warmErrors: string[] = [];
    const w = await cannon(t, o, o.warmup, warmErrors);
    if (w.errors || w.timeouts) throw new Error(`${t.name} warm-up: ${w.errors} errors, ${w.timeouts} timeouts ${warmErrors.join('; ')}`);
    await sleep(SETTLE_MS); // let the warm-up's last in-flight requests finish before counting
  }
  const rl = redis && t.rlPattern ? new RateLimitCounter(redis, t.rlPattern) : null;
  await rl?.begin();
  const srvBefore = procCpuSeconds(t.serverPid);
  const redisBefore = await redisCpuSeconds(redis);
  const machBefore = machineCpuSeconds();
  const cliBefore = process.cpuUsage();
  const wallBefore = process.hrtime.bigint();

  const reqErrors: string[] = [];
  const r = await cannon(t, o, o.duration, reqErrors);

  const wall = Number(process.hrtime.bigint() - wallBefore) / 1e9;
  const cli = process.cpuUsage(cliBefore);
  const srvAfter = procCpuSeconds(t.serverPid);
  const redisAfter = await redisCpuSeconds(redis);
  const machAfter = machineCpuSeconds();
  await sleep(SETTLE_MS); // requests in flight when autocannon stopped still reach the rate limiter
  const rlCounted = rl ? await rl.end() : null;

  const pct = (a: number | null, b: number | null) => (a === null || b === null ? null : (100 * (b - a)) / wall);
  const srvPct = pct(srvBefore, srvAfter);
  const redisPct = pct(redisBefore, redisAfter);
  const cliPct = (100 * (cli.user + cli.system)) / 1e6 / wall;
  const machPct = machBefore && machAfter ? (100 * (machAfter.busy - machBefore.busy)) / wall : null;
  const statusCodes: Record<string, number> = {};
  for (const [code, s] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = (s as { count?: number }).count ?? 0;
  return {
    target: t.name,
    label: t.label,
    round,
    rps: r.requests.average,
    rpsStddev: r.requests.stddev,
    total: r.requests.total,
    sent: r.requests.sent,
    duration: r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    latencyAvg: r.latency.average,
    statusCodes,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    serverCpuPct: srvPct,
    redisCpuPct: redisPct,
    clientCpuPct: cliPct,
    otherCpuPct: machPct === null ? null : Math.max(0, machPct - (srvPct ?? 0) - (redisPct ?? 0) - cliPct),
    stealPct: machBefore && machAfter ? (100 * (machAfter.steal - machBefore.steal)) / wall : null,
    rateLimitCounted: rlCounted,
    reqErrors,
  };
}

/** Problems with a run: anything but the expected status, errors, timeouts, uncounted requests. */
function problems(t: Target, r: RunResult): string[] {
  const p: string[] = [];
  if (r.total === 0) p.push('no responses');
  for (const [code, n] of Object.entries(r.statusCodes)) if (Number(code) !== t.expectStatus && n > 0) p.push(`${n} × HTTP ${code} (expected only ${t.expectStatus})`);
  if (r.errors) p.push(`${r.errors} errors ${r.reqErrors.join('; ')}`);
  if (r.timeouts) p.push(`${r.timeouts} timeouts`);
  if (r.rateLimitCounted !== null) {
    // Every answered request was counted; requests still in flight when the run stopped may be too.
    if (r.rateLimitCounted < r.total || r.rateLimitCounted > r.sent) {
      p.push(`rate limiter counted ${r.rateLimitCounted} hits for ${r.total} responses / ${r.sent} sent`);
    }
  }
  return p;
}

// ---------------------------------------------------------------------------------------------
// Pre-flight checks of each target (one request each, its own connection).
async function check(t: Target): Promise<void> {
  const res = await fetch(t.url, { method: t.method, headers: { ...t.headers, connection: 'close' }, body: t.body });
  const text = await res.text();
  if (res.status !== t.expectStatus) throw new Error(`${t.name}: ${t.method} ${t.url} answered ${res.status}, expected ${t.expectStatus}: ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as Record<string, any>;
  if (t.name === 'validation') {
    const code = body?.error?.code ?? body?.code;
    if (code !== 'request.invalid_body') throw new Error(`validation: expected error code request.invalid_body, got ${text.slice(0, 300)}`);
  } else if (body.status !== 'ok') throw new Error(`${t.name}: unexpected body ${text.slice(0, 300)}`);
}

// ---------------------------------------------------------------------------------------------
// Report
const fmt = (n: number | null | undefined, d = 0) => (n === null || n === undefined || !Number.isFinite(n) ? 'n/a' : n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));
const codes = (c: Record<string, number>) =>
  Object.entries(c)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');

function table(results: RunResult[]): string {
  const head = ['run', 'round', 'req/s (avg)', '± stddev', 'responses', 'p50 ms', 'p99 ms', 'status codes', 'non-2xx', 'errors', 'timeouts', 'server CPU', 'req/s per server core', 'redis CPU', 'autocannon CPU', 'other CPU', 'steal', 'RL hits counted'];
  const rows = results.map((r) => [
    r.label,
    String(r.round),
    fmt(r.rps),
    fmt(r.rpsStddev),
    fmt(r.total),
    fmt(r.p50),
    fmt(r.p99),
    codes(r.statusCodes),
    fmt(r.non2xx),
    fmt(r.errors),
    fmt(r.timeouts),
    r.serverCpuPct === null ? 'n/a' : `${fmt(r.serverCpuPct)}%`,
    fmt(perCore(r)),
    r.redisCpuPct === null ? 'n/a' : `${fmt(r.redisCpuPct)}%`,
    r.clientCpuPct === null ? 'n/a' : `${fmt(r.clientCpuPct)}%`,
    r.otherCpuPct === null ? 'n/a' : `${fmt(r.otherCpuPct)}%`,
    r.stealPct === null ? 'n/a' : `${fmt(r.stealPct)}%`,
    r.rateLimitCounted === null ? '–' : fmt(r.rateLimitCounted),
  ]);
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Requests served per second of server CPU: the server's own cost, independent of the load generator. */
const perCore = (r: RunResult) => (r.serverCpuPct ? r.rps / (r.serverCpuPct / 100) : NaN);
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

// ---------------------------------------------------------------------------------------------
async function main(): Promise<number> {
  const o = parseArgs(process.argv.slice(2));
  const cpuModel = cpus()[0]?.model ?? 'unknown';
  process.stdout.write(
    `bench/edge: node ${process.version}, ${cpus().length} CPUs (${cpuModel}), ${fmt(totalmem() / 2 ** 30, 1)} GiB\n` +
      `autocannon: connections ${o.connections}, pipelining ${o.pipelining}, duration ${o.duration} s, warm-up ${o.warmup} s per target, rounds ${o.rounds}\n`,
  );

  // Is the machine quiet? Another process's load would skew the comparison.
  const idle0 = machineCpuSeconds();
  await sleep(1000);
  const idle1 = machineCpuSeconds();
  if (idle0 && idle1) {
    const busy = 100 * (idle1.busy - idle0.busy);
    const steal = 100 * (idle1.steal - idle0.steal);
    process.stdout.write(`machine before the run: ${fmt(busy)}% busy, ${fmt(steal)}% steal (of one core)\n`);
    if (busy + steal > 20) process.stdout.write('WARNING: the machine is not idle; the numbers will be noisy (is a test suite or another benchmark running?)\n');
  }

  const targets: Target[] = [];
  let redis: Redis | undefined;

  if (o.only.has('bare')) {
    const bare = await startChild<{ port: number; pid: number }>('bare', 'bare-server.js', 15_000);
    targets.push({
      name: 'bare',
      label: 'bare uWS GET /',
      url: `http://127.0.0.1:${bare.info.port}/`,
      method: 'GET',
      headers: {},
      expectStatus: 200,
      serverPid: bare.child.pid,
    });
  }
  if (o.only.has('health') || o.only.has('auth-get') || o.only.has('validation')) {
    const orq = await startChild<{ appPort: number; benchPort: number; key: string; keyId: string; redisPrefix: string; pid: number }>('orquesta', 'orquesta-server.js', 120_000, o.profileServer ? ['--cpu-prof', `--cpu-prof-dir=${o.profileServer}`] : []);
    const rlPattern = `${orq.info.redisPrefix}:{rl}:k:${orq.info.keyId}:*`;
    const auth = { authorization: `Bearer ${orq.info.key}` };
    if (o.only.has('health')) {
      targets.push({
        name: 'health',
        label: 'reference: Orquesta GET /health/live (no auth, no rate limit)',
        url: `http://127.0.0.1:${orq.info.appPort}/health/live`,
        method: 'GET',
        headers: {},
        expectStatus: 200,
        serverPid: orq.child.pid,
      });
    }
    if (o.only.has('auth-get')) {
      targets.push({
        name: 'auth-get',
        label: 'Orquesta auth GET /v1/bench/live',
        url: `http://127.0.0.1:${orq.info.benchPort}/v1/bench/live`,
        method: 'GET',
        headers: auth,
        expectStatus: 200,
        serverPid: orq.child.pid,
        rlPattern,
      });
    }
    if (o.only.has('validation')) {
      targets.push({
        name: 'validation',
        label: 'Orquesta auth POST /v1/customers → 400',
        url: `http://127.0.0.1:${orq.info.appPort}/v1/customers`,
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: '{"email": 42}',
        expectStatus: 400,
        serverPid: orq.child.pid,
        rlPattern,
      });
    }
    redis = new Redis(process.env.REDIS_URL || 'redis://127.0.0.1:6379/0', { maxRetriesPerRequest: 2, lazyConnect: false });
    await redis.ping();
    // Auth is really enforced on the bench route: no key → 401.
    const unauth = await fetch(`http://127.0.0.1:${orq.info.benchPort}/v1/bench/live`, { headers: { connection: 'close' } });
    await unauth.text();
    if (unauth.status !== 401) throw new Error(`GET /v1/bench/live without a key answered ${unauth.status}, expected 401`);
  }

  for (const t of targets) await check(t);
  process.stdout.write(`pre-checks passed: ${targets.map((t) => `${t.name} → ${t.expectStatus}`).join(', ')}; unauthenticated bench route → 401\n\n`);

  const results: RunResult[] = [];
  const failures: string[] = [];
  for (let round = 1; round <= o.rounds; round++) {
    for (const t of targets) {
      process.stdout.write(`round ${round}: ${t.label} (${o.warmup} s warm-up + ${o.duration} s)… `);
      const r = await measure(t, o, round, redis);
      results.push(r);
      const p = problems(t, r);
      process.stdout.write(`${fmt(r.rps)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms${p.length ? `  PROBLEMS: ${p.join('; ')}` : ''}\n`);
      for (const x of p) failures.push(`${t.name} round ${round}: ${x}`);
    }
  }

  const avg = (name: Target['name']) => mean(results.filter((r) => r.target === name).map((r) => r.rps));
  const bareRps = avg('bare');
  const ratios: Record<string, number> = {};
  const cpuRatios: Record<string, number> = {};
  const avgPerCore = (name: Target['name']) => mean(results.filter((r) => r.target === name).map(perCore));
  if (o.only.has('bare')) {
    const pairs = [
      ['auth-get', 'auth GET / bare'],
      ['validation', 'validation-reject / bare'],
      ['health', 'reference: unauthenticated /health/live / bare'],
    ] as const;
    for (const [name, label] of pairs) {
      if (!o.only.has(name)) continue;
      ratios[label] = avg(name) / bareRps;
      cpuRatios[label] = avgPerCore(name) / avgPerCore('bare');
    }
  }

  process.stdout.write(`\n${table(results)}\n`);
  process.stdout.write(
    `CPU columns: % of one core over the measured run (this machine has ${cpus().length}); "other" = machine busy time not spent in the server, ` +
      `redis-server or autocannon (kernel softirq for loopback TCP, other processes); steal = taken by the hypervisor; RL hits counted = rate-limit increments in Redis during the run (must be between responses and requests sent)\n\n`,
  );
  const disturbed = results.filter((r) => (r.otherCpuPct ?? 0) + (r.stealPct ?? 0) > 15);
  if (disturbed.length) {
    process.stdout.write(
      `WARNING: ${disturbed.length} run(s) lost more than 15% of a core to other processes or the hypervisor (columns "other CPU" and "steal"): ` +
        `${disturbed.map((r) => `${r.target}#${r.round}`).join(', ')}. Re-run on a quiet machine before trusting the ratios.\n\n`,
    );
  }
  if (o.rounds > 1) {
    for (const n of ALL_TARGETS) if (o.only.has(n)) process.stdout.write(`mean req/s ${n}: ${fmt(avg(n))}\n`);
  }
  for (const [k, v] of Object.entries(ratios)) {
    const verdict = k.startsWith('reference') ? '' : `  (target >= 0.5x: ${v >= 0.5 ? 'met' : 'NOT met'})`;
    process.stdout.write(`ratio ${k}: ${v.toFixed(3)}x${verdict}\n`);
  }
  for (const [k, v] of Object.entries(cpuRatios)) process.stdout.write(`per-server-core ratio ${k}: ${v.toFixed(3)}x (requests per second of server CPU; informative)\n`);
  if (failures.length) process.stdout.write(`\nFAILED CHECKS:\n${failures.map((f) => `  - ${f}`).join('\n')}\n`);
  else process.stdout.write(`\nchecks: only the expected status codes, no errors, no timeouts${redis ? '; the rate limiter counted every /v1 request in Redis' : ''}\n`);

  if (o.json) {
    writeFileSync(
      o.json,
      JSON.stringify({ date: new Date().toISOString(), node: process.version, cpus: cpus().length, cpuModel, options: { ...o, only: [...o.only] }, results, ratios, cpuRatios, failures }, null, 2) + '\n',
    );
  }
  redis?.disconnect();
  return failures.length ? 1 : 0;
}

let code = 1;
try {
  code = await main();
} catch (e) {
  process.stderr.write(`bench/edge failed: ${(e as Error).stack ?? String(e)}\n`);
  code = 1;
} finally {
  await children.stopAll(10_000);
}
process.exit(code);
