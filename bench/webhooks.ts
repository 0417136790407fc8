// bench/webhooks (npm run bench:webhooks): webhook fan-out of the real delivery worker against a
// bare keep-alive POST loop to the same receivers, in the same run, plus a failure scenario.
//
// Processes: K receivers (bench/webhooks-receivers, one child process, node:http keep-alive), the
// app as --api N ROLE=api processes (admin API, endpoint registration, the test clock) and --workers
// M ROLE=worker processes (outbox relay every RELAY_INTERVAL_MS=20 ms, the webhook dispatcher;
// default 1 and 1), bench/confirm-app started by the supervisor of `npm start -- --api N --workers
// M` (ops/processes.ts), on a scratch database and Redis prefix; the CPU of a role sums its processes. WEBHOOK_ALLOW_HTTP_HOSTS=127.0.0.1 lets endpoints be
// http://127.0.0.1:<port>/… . This process inserts outbox events with SQL and runs the bare loop.
//
// 1. Throughput, per round: N committed events (one transaction, as the actors write them) for a
//    tenant with K endpoints → the worker relays and delivers N×K signed POSTs; deliveries/s =
//    N×K / (commit → the receivers' last new (endpoint, event) pair). Then the bare loop: the same
//    N×K bodies (built with the worker's own envelope()) POSTed to the same receivers with a
//    keep-alive http.Agent at the worker's per-endpoint concurrency (8 in flight per endpoint),
//    repeated until --bare-min-seconds; deliveries/s = answered requests / seconds. Both warmed up
//    (--warmup-events, 1,000 by default, so the worker's JIT is warm as the bare loop's is). The
//    defaults (N = 8,000, so the worker's phase lasts about as long as the bare loop's 3 s, and 3
//    rounds, rates averaged) keep a short, cold first phase from deciding the ratio.
// 2. Profile: the throughput phase again with the worker under node --cpu-prof (self time counted
//    only between the commit and the last delivery), and perf record -a on the whole machine.
//    Measured phases disturbed by other processes or hypervisor steal run again (--retries).
// 3. Failure scenario: another tenant, --fail-events events; the receivers fail --fail-ratio of the
//    requests (every other one at 0.5) for --fail-seconds (60: "the first minute"); meanwhile the
//    tenant's test clock is advanced 60 s every --advance-every s (POST /v1/test/clock/advance, which
//    also fires due deliveries), so that retries happen, and fail, inside the window. Then the
//    receivers succeed and the clock is advanced as needed (to the earliest pending retry, at least
//    60 s) until every (event, endpoint) pair was accepted at least once, or --recovery-timeout.
//
// Options: see --help. Writes JSON with --json <file>. Drops its scratch database and Redis keys.
import { Agent, request } from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import postgres from 'postgres';
import { envelope, API_VERSION } from '../actors/webhook-delivery.js';
import { SIGNATURE_HEADER } from '../kernel/signing.js';
import { ensureDatabase } from '../kernel/db.js';
import {
  Children,
  CpuSampler,
  ask,
  cpuCells,
  dbUrl,
  disturbance,
  disturbedWhy,
  DISTURBED_PCT,
  deleteRedisPrefix,
  dropDatabase,
  findProfile,
  perfAvailable,
  perfRecord,
  perfSummary,
  perfTables,
  removePerfMaps,
  threadRoles,
  type PerfSummary,
  fmt,
  here,
  machineInfo,
  sourceInfo,
  mainThreadLine,
  mdTable,
  monoUs,
  parseOptions,
  pgServerInfo,
  profileTables,
  sleep,
  summarizeProfile,
  waitForQuiet,
  type CpuReport,
  type ProfileSummary,
  appBench,
  startApp,
  benchTenant,
  runBench,
} from './confirm-lib.js';

const USAGE = 'npm run bench:webhooks -- [options]';
const SPEC = {
  events: { type: 'number', default: 8000, min: 1, max: 100_000, help: 'N events per throughput round' },
  endpoints: { type: 'number', default: 4, min: 1, max: 64, help: 'K endpoints (= K receivers)' },
  'warmup-events': { type: 'number', default: 1000, min: 0, max: 100_000, help: 'events of the warm-up before each measured phase' },
  rounds: { type: 'number', default: 3, min: 1, max: 10, help: 'throughput rounds (worker then bare loop each)' },
  'bare-min-seconds': { type: 'number', default: 3, min: 0, max: 60, help: 'the bare loop repeats the N×K posts until this long' },
  'bare-per-endpoint': { type: 'number', default: 8, min: 1, max: 256, help: 'bare loop in-flight requests per endpoint (the worker allows 8)' },
  'phase-timeout': { type: 'number', default: 120, min: 5, max: 600, help: 'seconds allowed for the worker to deliver N×K' },
  failure: { type: 'boolean', default: true, help: 'run the failure scenario (--no-failure to skip)' },
  'fail-events': { type: 'number', default: 1000, min: 1, max: 100_000, help: 'events of the failure scenario' },
  'fail-seconds': { type: 'number', default: 60, min: 1, max: 300, help: 'how long the receivers fail' },
  'fail-ratio': { type: 'number', default: 0.5, min: 0, max: 1, help: 'share of the requests that fail meanwhile' },
  'advance-every': { type: 'number', default: 10, min: 1, max: 300, help: 'advance the test clock 60 s every this many seconds while failing' },
  'recovery-timeout': { type: 'number', default: 60, min: 5, max: 600, help: 'seconds allowed to reach 100% after the failure window' },
  retries: { type: 'number', default: 3, min: 0, max: 10, help: 'run a measured phase again (keeping the least disturbed) when other processes or hypervisor steal took more than 15% of a core during it' },
  'webhook-concurrency': { type: 'number', default: 32, min: 1, max: 1000, help: 'WEBHOOK_CONCURRENCY of the worker (deliveries in flight per worker process; at most 8 per endpoint either way)' },
  'relay-interval': { type: 'number', default: 20, min: 10, max: 10_000, help: 'RELAY_INTERVAL_MS of the worker' },
  api: { type: 'number', default: 1, min: 1, max: 16, help: 'API processes on the one port (SO_REUSEPORT), started as npm start -- --api N does (ops/processes.ts); CPU "api" sums them' },
  workers: { type: 'number', default: 1, min: 1, max: 16, help: 'worker processes (npm start -- --workers M), each relaying and delivering; CPU "worker" sums them' },
  profile: { type: 'boolean', default: true, help: 'run the profiled throughput phase (--no-profile to skip)' },
  perf: { type: 'boolean', default: perfAvailable(), help: 'with the profiled phase, sample the whole machine with perf record -e cpu-clock -a (--no-perf to skip)' },
  'profile-dir': { type: 'string', help: 'keep the .cpuprofile files here (default: a temporary directory, removed)' },
  'max-wait': { type: 'number', default: 900, min: 0, max: 3600, help: 'seconds to wait for another benchmark / a busy machine before starting' },
  json: { type: 'string', help: 'write the results as JSON to this file' },
} as const;
interface Options {
  events: number;
  endpoints: number;
  'warmup-events': number;
  rounds: number;
  'bare-min-seconds': number;
  'bare-per-endpoint': number;
  'phase-timeout': number;
  failure: boolean;
  'fail-events': number;
  'fail-seconds': number;
  'fail-ratio': number;
  'advance-every': number;
  'recovery-timeout': number;
  retries: number;
  'webhook-concurrency': number;
  'relay-interval': number;
  api: number;
  workers: number;
  profile: boolean;
  perf: boolean;
  'profile-dir'?: string;
  'max-wait': number;
  json?: string;
  [k: string]: number | string | boolean | undefined;
}

const CPU_NOTE =
  `CPU: % of one core over the window (${cpus().length} cores here); "(+N% runq)": the main thread (each backend, for postgres) was runnable but waited that long for a CPU (/proc/<pid>/schedstat), i.e. starved rather than idle (the JSON has mainPct: the main thread's own CPU); other: machine busy time outside the listed processes (irq: interrupts, mostly loopback TCP softirq).`;

const children = new Children('bench/webhooks');
const cleanups: Array<() => Promise<unknown>> = [];

interface EventRow {
  id: number;
  event_id: string;
  event_type: string;
  created_at: Date;
  livemode: boolean;
  data: unknown;
}

interface Phase {
  round: number;
  mode: 'worker' | 'bare';
  deliveries: number;
  seconds: number;
  perSecond: number;
  firstMs?: number;
  statuses?: Record<string, number>;
  duplicates: number;
  cpu: CpuReport;
  /** Runs made: a run disturbed by other processes is made again (--retries). */
  attempts: number;
}

/** Resolves with the next `{event: name}` message of a child (or rejects after timeoutMs). */
function nextEvent<T>(child: ChildProcess, name: string, timeoutMs: number): { promise: Promise<T>; cancel: () => void } {
  let cancel = () => {};
  const promise = new Promise<T>((resolve, reject) => {
    const onMsg = (m: unknown) => {
      if ((m as { event?: string })?.event !== name) return;
      clearTimeout(timer);
      child.off('message', onMsg);
      resolve(m as T);
    };
    const timer = setTimeout(() => {
      child.off('message', onMsg);
      reject(new Error(`no "${name}" within ${timeoutMs} ms`));
    }, timeoutMs);
    cancel = () => {
      clearTimeout(timer);
      child.off('message', onMsg);
    };
    child.on('message', onMsg);
  });
  return { promise, cancel };
}

async function call(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; json: any; text: string }> {
  const r = await fetch(base + path, { method, headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: r.status, json, text };
}

/** N committed outbox events of a tenant, in one transaction, as the actors write them. */
async function insertEvents(sql: postgres.Sql, tenantId: string, n: number): Promise<EventRow[]> {
  const out: EventRow[] = [];
  await sql.begin(async (tx) => {
    for (let i = 0; i < n; i += 2000) {
      const rows = Array.from({ length: Math.min(2000, n - i) }, () => {
        const entity = randomUUID();
        return {
          event_id: randomUUID(),
          tenant_id: tenantId,
          livemode: false,
          event_type: 'payment_intent.succeeded',
          entity_id: entity,
          data: tx.json({ id: entity, object: 'payment_intent', status: 'succeeded', amount_minor: 15000, tip_minor: 0, total_minor: 15000, currency: 'MXN', metadata: null }),
        };
      });
      const got = await tx`
        insert into outbox_events ${tx(rows, 'event_id', 'tenant_id', 'livemode', 'event_type', 'entity_id', 'data')}
        returning id, event_id, event_type, created_at, livemode, data`;
      for (const r of got) out.push({ ...(r as unknown as EventRow), id: Number(r.id) });
    }
  });
  return out;
}

/** The bare loop: every (event, endpoint) body POSTed once per pass, `perEndpoint` in flight per receiver, until minSeconds. */
async function bareLoop(targets: string[], bodies: string[], perEndpoint: number, minSeconds: number): Promise<{ requests: number; seconds: number; statuses: Record<string, number>; passes: number; errors: string[] }> {
  const agent = new Agent({ keepAlive: true, maxSockets: perEndpoint, maxFreeSockets: perEndpoint });
  // A signature header of the real one's length (t=…,v1=<64 hex>): same bytes on the wire, no HMAC.
  const sig = `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`;
  const statuses: Record<string, number> = {};
  const errors: string[] = [];
  let requests = 0;
  const post = (url: URL, body: string) =>
    new Promise<void>((resolve) => {
      const req = request(
        url,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': `Orquesta-Webhooks/${API_VERSION}`, [SIGNATURE_HEADER]: sig } },
        (res) => {
          res.resume();
          res.on('end', () => {
            statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
            requests++;
            resolve();
          });
        },
      );
      req.on('error', (e) => {
        if (errors.length < 5) errors.push(e.message);
        resolve();
      });
      req.end(body);
    });
  const t0 = process.hrtime.bigint();
  let passes = 0;
  do {
    await Promise.all(
      targets.map(async (t) => {
        const url = new URL(t);
        let next = 0;
        await Promise.all(
          Array.from({ length: perEndpoint }, async () => {
            while (next < bodies.length) await post(url, bodies[next++]);
          }),
        );
      }),
    );
    passes++;
  } while (Number(process.hrtime.bigint() - t0) / 1e9 < minSeconds);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  agent.destroy();
  return { requests, seconds, statuses, passes, errors };
}

// ---------------------------------------------------------------------------------------------
async function main(): Promise<number> {
  const o = parseOptions<Options>(process.argv.slice(2), SPEC as never, USAGE);
  const N = o.events;
  const K = o.endpoints;
  const m = machineInfo();
  const src = sourceInfo();
  const pg = await pgServerInfo();
  process.stdout.write(
    `bench/webhooks: ${m.date}, node ${m.node}, ${m.nproc} CPUs (${m.cpuModel}), ${m.memGiB} GiB, ${pg.version}\n` +
      `N=${N} events x K=${K} endpoints per round, ${o.rounds} round(s), warm-up ${o['warmup-events']} events; bare loop ${o['bare-per-endpoint']} in flight per endpoint, >= ${o['bare-min-seconds']} s; ` +
      `worker WEBHOOK_CONCURRENCY=${o['webhook-concurrency']} (per worker process), RELAY_INTERVAL_MS=${o['relay-interval']}; ${o.api} API and ${o.workers} worker process(es) (ops/processes.ts)\n`,
  );
  process.stdout.write(`source: commit ${src.commit}${src.dirty.length ? `, with uncommitted changes in ${src.dirty.join(', ')}` : ', no uncommitted changes outside bench/'}\n`);
  const quiet = await waitForQuiet('bench/webhooks', o['max-wait']);
  process.stdout.write(`machine before the run: at most ${fmt(quiet.busyPct)}% busy, ${fmt(quiet.stealPct)}% steal (of one core, per second over 5 s)${quiet.waitedS > 7 ? `, after waiting ${fmt(quiet.waitedS)} s` : ''}\n`);
  if (quiet.warning) process.stdout.write(`WARNING: ${quiet.warning}; the numbers will be noisy\n`);

  const tmp = mkdtempSync(join(tmpdir(), 'orq-bench-webhooks-'));
  cleanups.push(async () => rmSync(tmp, { recursive: true, force: true }));
  const failures: string[] = [];

  const rx = await children.start<{ pid: number; ports: number[] }>('receivers', join(here, 'webhooks-receivers.js'), { ipc: true, args: [String(K)], readyTimeoutMs: 15_000 });
  const receivers = rx.child;

  const hex = randomBytes(4).toString('hex');
  const appDb = `orq_bench_webhooks_${hex}`;
  const prefix = `orq_bench_webhooks_${hex}`;
  cleanups.push(() => dropDatabase(appDb));
  cleanups.push(() => deleteRedisPrefix(prefix));
  const adminKey = `adm_bench_${randomBytes(16).toString('hex')}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'error',
    REDIS_PREFIX: prefix,
    ADMIN_KEY: adminKey,
    DATABASE_URL: dbUrl(appDb),
    SEED_DEMO_TENANT: 'false',
    RATE_LIMIT_V1_PER_MIN: '1000000000',
    WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1',
    RELAY_INTERVAL_MS: String(o['relay-interval']),
    WEBHOOK_CONCURRENCY: String(o['webhook-concurrency']),
  };
  const states: string[] = [];
  cleanups.push(async () => states.forEach((s) => rmSync(s, { recursive: true, force: true })));
  // --api N API processes and --workers M worker processes of bench/confirm-app, started by the
  // supervisor of `npm start -- --api N --workers M` (ops/processes.ts): one group per role, so that
  // the profiled phase restarts the workers alone.
  const startRole = async (role: 'api' | 'worker', profileDir?: string, perfMaps = false) => {
    const state = mkdtempSync(join(tmpdir(), `orq-bench-webhooks-${role}-`));
    states.push(state);
    return startApp(children, {
      main: appBench('confirm-app.js'),
      env: { ...env, STATE_DIR: state },
      apis: role === 'api' ? o.api : 0,
      workers: role === 'worker' ? o.workers : 0,
      // --perf-basic-prof: perf can name the JIT-compiled JavaScript functions (/tmp/perf-<pid>.map).
      execArgv: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, ...(perfMaps ? ['--perf-basic-prof'] : [])] : [],
      ready: 'line',
      label: role,
    });
  };
  // Created here: N processes starting together would race to create it.
  await ensureDatabase(dbUrl(appDb));
  const api = await startRole('api');
  let worker = await startRole('worker');
  const base = `http://127.0.0.1:${api.port}`;
  const sql = postgres(dbUrl(appDb), { max: 4, onnotice: () => {} });
  cleanups.push(() => sql.end({ timeout: 2 }));

  const newTenant = async (name: string, path: string) => {
    const { id, key } = await benchTenant(base, adminKey, name);
    const targets: string[] = [];
    for (let k = 0; k < K; k++) {
      const url = `http://127.0.0.1:${rx.info.ports[k]}/${path}/ep${k}`;
      const r = await call(base, 'POST', '/v1/webhook_endpoints', { authorization: `Bearer ${key}` }, { url });
      if (r.status !== 201) throw new Error(`endpoint registration answered ${r.status}: ${r.text}`);
      targets.push(url);
    }
    return { id, key, targets, paths: targets.map((u) => new URL(u).pathname) };
  };
  const A = await newTenant('bench-webhooks-throughput', 'a');

  /** Inserts n events for tenant A and waits until the receivers accepted all n×K pairs. */
  const workerPhase = async (n: number, cpuNames: Record<string, number | number[] | undefined>, onCommitted?: () => void) => {
    await ask(receivers, { cmd: 'reset' });
    const reached = nextEvent<{ atNs: string; firstNs: string }>(receivers, 'reached', o['phase-timeout'] * 1000);
    await ask(receivers, { cmd: 'target', n: n * K });
    const sampler = new CpuSampler(cpuNames).start();
    const rows = await insertEvents(sql, A.id, n);
    const committedNs = process.hrtime.bigint();
    const committedUs = monoUs();
    onCommitted?.();
    let r: { atNs: string; firstNs: string };
    try {
      r = await reached.promise;
    } finally {
      reached.cancel();
    }
    const cpu = sampler.stop();
    const seconds = Number(BigInt(r.atNs) - committedNs) / 1e9;
    const stats = await ask<{ duplicates: number; unsigned: number; failedAnswers: number }>(receivers, { cmd: 'stats' });
    return { rows, seconds, firstMs: Number(BigInt(r.firstNs) - committedNs) / 1e6, cpu, stats, windowUs: [committedUs, committedUs + Math.round(seconds * 1e6)] as [number, number] };
  };

  const allSucceeded = async (tenantId: string, timeoutMs: number) => {
    const t0 = Date.now();
    for (;;) {
      const rows = await sql`select status, count(*)::int as n from webhook_deliveries where tenant_id = ${tenantId} and endpoint_id is not null group by status`;
      const by = Object.fromEntries(rows.map((r) => [r.status as string, r.n as number])) as Record<string, number>;
      if (Object.keys(by).every((s) => s === 'succeeded') || Date.now() - t0 > timeoutMs) return by;
      await sleep(200);
    }
  };

  // 1. Throughput rounds
  const phases: Phase[] = [];
  for (let round = 1; round <= o.rounds; round++) {
    const names = { worker: worker.pids.worker, api: api.pids.api, receivers: rx.info.pid, bench: process.pid };
    if (o['warmup-events'] > 0) {
      process.stdout.write(`round ${round}: warm-up ${o['warmup-events']} events via the worker… `);
      const w = await workerPhase(o['warmup-events'], names);
      process.stdout.write(`${fmt((o['warmup-events'] * K) / w.seconds)}/s\n`);
    }
    // Each measured phase runs again (after a quiet spell) when other processes or the hypervisor
    // disturbed it; the least disturbed attempt is kept.
    const again = async (cpu: CpuReport, attempt: number) => {
      if (disturbance(cpu) <= DISTURBED_PCT || attempt > o.retries) return false;
      process.stdout.write(`  disturbed (${disturbedWhy(cpu)}); again in 10 s\n`);
      // Not waitForQuiet: it would count this bench's own children (receivers, app) as another benchmark.
      await sleep(10_000);
      return true;
    };
    const keep = (best: Phase | undefined, p: Phase) => (!best || disturbance(p.cpu) < disturbance(best.cpu) ? p : best);
    let wp!: Awaited<ReturnType<typeof workerPhase>>;
    let bestW: Phase | undefined;
    for (let attempt = 1; ; attempt++) {
      process.stdout.write(`round ${round}: worker: ${N} events x ${K} endpoints${attempt > 1 ? ` (attempt ${attempt})` : ''}… `);
      wp = await workerPhase(N, names);
      process.stdout.write(`${fmt(N * K)} deliveries in ${fmt(wp.seconds, 2)} s = ${fmt((N * K) / wp.seconds)}/s (first after ${fmt(wp.firstMs)} ms)\n`);
      if (wp.stats.unsigned) failures.push(`round ${round}: ${wp.stats.unsigned} deliveries without a ${SIGNATURE_HEADER} header`);
      const db = await allSucceeded(A.id, 10_000);
      if (Object.keys(db).some((s) => s !== 'succeeded')) failures.push(`round ${round}: deliveries in Postgres not all succeeded: ${JSON.stringify(db)}`);
      bestW = keep(bestW, { round, mode: 'worker', deliveries: N * K, seconds: wp.seconds, perSecond: (N * K) / wp.seconds, firstMs: wp.firstMs, duplicates: wp.stats.duplicates, cpu: wp.cpu, attempts: attempt });
      if (!(await again(wp.cpu, attempt))) break;
    }
    phases.push(bestW);

    const bodies = wp.rows.map((e) => JSON.stringify(envelope(e)));
    if (o['warmup-events'] > 0) await bareLoop(A.targets, bodies.slice(0, o['warmup-events']), o['bare-per-endpoint'], 0);
    let bestB: Phase | undefined;
    for (let attempt = 1; ; attempt++) {
      await ask(receivers, { cmd: 'reset' });
      process.stdout.write(`round ${round}: bare loop: the same ${fmt(N * K)} bodies, ${o['bare-per-endpoint']} in flight per endpoint${attempt > 1 ? ` (attempt ${attempt})` : ''}… `);
      const sampler = new CpuSampler(names).start();
      const b = await bareLoop(A.targets, bodies, o['bare-per-endpoint'], o['bare-min-seconds']);
      const cpu = sampler.stop();
      const st = await ask<{ accepted: number; duplicates: number }>(receivers, { cmd: 'stats' });
      const bps = b.requests / b.seconds;
      process.stdout.write(`${fmt(b.requests)} requests (${b.passes} passes) in ${fmt(b.seconds, 2)} s = ${fmt(bps)}/s\n`);
      if (st.accepted !== N * K) failures.push(`round ${round}: bare loop: receivers accepted ${st.accepted} pairs, expected ${N * K}`);
      if (b.errors.length || Object.keys(b.statuses).some((s) => s !== '200')) failures.push(`round ${round}: bare loop: statuses ${JSON.stringify(b.statuses)} errors ${b.errors.join('; ')}`);
      bestB = keep(bestB, { round, mode: 'bare', deliveries: b.requests, seconds: b.seconds, perSecond: bps, statuses: b.statuses, duplicates: st.duplicates, cpu, attempts: attempt });
      if (!(await again(cpu, attempt))) break;
    }
    phases.push(bestB);
    for (const p of [bestW, bestB]) if (p.attempts > 1) process.stdout.write(`  round ${round} ${p.mode}: keeping attempt ${p.attempts} (the least disturbed: ${disturbedWhy(p.cpu)})\n`);
  }

  // 2. Profiled throughput phase
  let profile: ProfileSummary | undefined;
  let perf: PerfSummary | undefined;
  let profiled: { perSecond: number; seconds: number } | undefined;
  if (o.profile) {
    const dir = o['profile-dir'] ?? join(tmp, 'profiles');
    mkdirSync(dir, { recursive: true });
    await worker.stop();
    worker = await startRole('worker', dir, o.perf);
    const names = { worker: worker.pids.worker, api: api.pids.api, receivers: rx.info.pid, bench: process.pid };
    process.stdout.write(`profiled: worker under --cpu-prof (${dir}), warm-up then ${N} events… `);
    if (o['warmup-events'] > 0) await workerPhase(o['warmup-events'], names);
    // perf samples the whole machine from the commit on, for most of the expected delivery time.
    const perfFile = join(dir, 'perf-webhooks.data');
    const perfSeconds = Math.max(1, Math.min(30, Math.floor((phases[0]?.seconds ?? 10) * 0.8)));
    let perfDone: Promise<number | null> = Promise.resolve(null);
    const pp = await workerPhase(N, names, () => {
      if (o.perf) perfDone = perfRecord(perfSeconds, perfFile);
    });
    const perfCode = await perfDone;
    profiled = { perSecond: (N * K) / pp.seconds, seconds: pp.seconds };
    process.stdout.write(`${fmt(profiled.perSecond)}/s under the profiler\n`);
    // With --workers M every worker is profiled; the tables summarize the first one.
    const wpids = worker.pids.worker;
    const pid = wpids[0];
    if (o.perf && perfCode === 0) {
      perf = perfSummary(perfFile, threadRoles({ 'worker (node)': wpids, 'receivers (node)': rx.info.pid, 'api (node)': api.pids.api, 'bench (node, this process)': process.pid }));
      if (perf) perf.samples = `${perfFile} (first ${perfSeconds} s after the commit)`;
    } else if (o.perf) failures.push(`perf record exited with ${perfCode}`);
    await allSucceeded(A.id, 10_000);
    await worker.stop();
    removePerfMaps(wpids);
    const file = findProfile(dir, pid);
    if (file) profile = summarizeProfile(file, pp.windowUs[0], pp.windowUs[1]);
    else failures.push(`no CPU profile of the worker in ${dir}`);
    worker = await startRole('worker');
  }

  // 3. Failure scenario
  let failure: Record<string, unknown> | undefined;
  let failureOk = false;
  if (o.failure) {
    const B = await newTenant('bench-webhooks-failure', 'b');
    const NF = o['fail-events'];
    const total = NF * K;
    await ask(receivers, { cmd: 'reset' });
    const reached = nextEvent<{ atNs: string }>(receivers, 'reached', (o['fail-seconds'] + o['recovery-timeout'] + 30) * 1000);
    let reachedAt: bigint | undefined;
    reached.promise.then((r) => (reachedAt = BigInt(r.atNs))).catch(() => {});
    await ask(receivers, { cmd: 'target', n: total });
    await ask(receivers, { cmd: 'fail', ratio: o['fail-ratio'], ms: o['fail-seconds'] * 1000 });
    const t0 = process.hrtime.bigint();
    const since = () => Number(process.hrtime.bigint() - t0) / 1e9;
    process.stdout.write(`failure scenario: ${NF} events x ${K} endpoints, receivers fail ${o['fail-ratio'] * 100}% for ${o['fail-seconds']} s, clock +60 s every ${o['advance-every']} s… `);
    const rows = await insertEvents(sql, B.id, NF);
    const advances: Array<{ at: number; seconds: number; status: number; phase: 'failing' | 'recovery' }> = [];
    const advance = async (seconds: number, phase: 'failing' | 'recovery') => {
      const r = await call(base, 'POST', '/v1/test/clock/advance', { authorization: `Bearer ${B.key}` }, { seconds });
      advances.push({ at: Math.round(since() * 10) / 10, seconds, status: r.status, phase });
      if (r.status !== 200) failures.push(`clock advance answered ${r.status}: ${r.text.slice(0, 200)}`);
    };
    for (let next = o['advance-every']; next < o['fail-seconds']; next += o['advance-every']) {
      await sleep(Math.max(0, next - since()) * 1000);
      await advance(60, 'failing');
    }
    await sleep(Math.max(0, o['fail-seconds'] - since()) * 1000);
    const atFailEnd = await ask<{ accepted: number; requests: number; failedAnswers: number }>(receivers, { cmd: 'stats' });
    process.stdout.write(`${fmt(atFailEnd.accepted)}/${fmt(total)} pairs accepted when the failures stop; recovering… `);
    const recoveryStart = since();
    while (reachedAt === undefined && since() - recoveryStart < o['recovery-timeout']) {
      const [p] = await sql`
        select count(*)::int as n,
               min(extract(epoch from d.next_attempt_at - (now() + make_interval(secs => coalesce(c.offset_ms, 0) / 1000.0))))::float8 as wait_s
          from webhook_deliveries d left join test_clocks c on c.tenant_id = d.tenant_id
         where d.tenant_id = ${B.id} and d.status = 'pending' and d.endpoint_id is not null`;
      if ((p.n as number) > 0) await advance(Math.max(60, Math.ceil(Number(p.wait_s ?? 0))), 'recovery');
      await Promise.race([reached.promise.catch(() => {}), sleep(1500)]);
    }
    reached.cancel();
    const stats = await ask<{ requests: number; okAnswers: number; failedAnswers: number; duplicates: number; accepted: number; unsigned: number }>(receivers, { cmd: 'stats' });
    const { pairs } = await ask<{ pairs: string[] }>(receivers, { cmd: 'pairs' });
    const got = new Set(pairs);
    const missing: string[] = [];
    for (const e of rows) for (const p of B.paths) if (!got.has(`${p}|${e.event_id}`)) missing.push(`${p}|${e.event_id}`);
    const db = await allSucceeded(B.id, 10_000);
    const attempts = await sql`select attempts, count(*)::int as n from webhook_deliveries where tenant_id = ${B.id} and endpoint_id is not null group by attempts order by attempts`;
    const doneS = reachedAt !== undefined ? Number(reachedAt - t0) / 1e9 : null;
    failureOk = missing.length === 0 && Object.keys(db).every((s) => s === 'succeeded');
    failure = {
      events: NF,
      endpoints: K,
      pairs: total,
      failSeconds: o['fail-seconds'],
      failRatio: o['fail-ratio'],
      advanceEvery: o['advance-every'],
      acceptedAtFailEnd: atFailEnd.accepted,
      requestsDuringFailure: atFailEnd.requests,
      failedAnswers: stats.failedAnswers,
      requests: stats.requests,
      okAnswers: stats.okAnswers,
      duplicates: stats.duplicates,
      unsigned: stats.unsigned,
      accepted: stats.accepted,
      missing: missing.length,
      missingSample: missing.slice(0, 5),
      allPairsAtS: doneS,
      afterFailEndS: doneS === null ? null : doneS - o['fail-seconds'],
      advances,
      clockAdvancedS: advances.reduce((a, x) => a + x.seconds, 0),
      deliveriesInPostgres: db,
      attemptsHistogram: Object.fromEntries(attempts.map((r) => [String(r.attempts), r.n as number])),
    };
    process.stdout.write(failureOk ? `100% of ${fmt(total)} pairs accepted ${fmt(doneS, 1)} s after the start\n` : `${missing.length} pairs MISSING\n`);
    if (!failureOk) failures.push(`failure scenario: ${missing.length} of ${total} (event, endpoint) pairs never accepted; Postgres: ${JSON.stringify(db)}`);
  }

  for (const g of [api, worker]) if (g.fatal()) failures.push(g.fatal()!);

  // Report
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const workerRate = mean(phases.filter((p) => p.mode === 'worker').map((p) => p.perSecond));
  const bareRate = mean(phases.filter((p) => p.mode === 'bare').map((p) => p.perSecond));
  const ratio = workerRate / bareRate;
  const ratioOk = ratio >= 0.5;
  const cpuNames = ['worker', 'api', 'receivers', 'bench', 'postgres', 'redis'];
  const out: string[] = [];
  out.push(
    mdTable(
      ['round', 'sender', 'deliveries', 'seconds', 'deliveries/s', 'first ms', 'dup', ...cpuNames.map((n) => `${n} CPU`), 'other CPU', 'machine busy', 'steal'],
      phases.map((p) => [p.round, p.mode === 'worker' ? 'Orquesta worker (relay + lease + signed POST)' : 'bare keep-alive POST loop', fmt(p.deliveries), fmt(p.seconds, 2), fmt(p.perSecond), p.firstMs === undefined ? '–' : fmt(p.firstMs), fmt(p.duplicates), ...cpuCells(p.cpu, cpuNames)]),
    ),
  );
  out.push(CPU_NOTE);
  for (const p of phases) out.push(`round ${p.round} ${p.mode}: ${mainThreadLine(p.cpu, p.mode === 'worker' ? ['worker', 'receivers'] : ['bench', 'receivers'])}`);
  out.push(`ratio worker / bare loop: ${fmt(workerRate)} / ${fmt(bareRate)} = ${ratio.toFixed(3)}x (target >= 0.5x: ${ratioOk ? 'met' : 'NOT met'})`);
  const perCore = (p: Phase, name: string) => p.perSecond / ((p.cpu.pct[name] ?? NaN) / 100);
  const w0 = phases.find((p) => p.mode === 'worker');
  const b0 = phases.find((p) => p.mode === 'bare');
  if (w0 && b0) out.push(`per sender core: worker ${fmt(perCore(w0, 'worker'))} deliveries per CPU-second of the worker process; bare loop ${fmt(perCore(b0, 'bench'))} per CPU-second of its process`);
  if (phases.some((p) => disturbance(p.cpu) > DISTURBED_PCT)) out.push(`WARNING: a phase lost more than ${DISTURBED_PCT}% of a core to other processes or the hypervisor (after ${o.retries} retries); re-run on a quiet machine before trusting the ratio`);
  if (failure) {
    const f = failure as Record<string, any>;
    out.push(
      mdTable(
        ['failure scenario', 'value'],
        [
          ['events x endpoints', `${f.events} x ${f.endpoints} = ${fmt(f.pairs)} pairs`],
          ['receivers failing', `${f.failRatio * 100}% of requests (every other one) for ${f.failSeconds} s`],
          ['clock advances', `${f.advances.length} (${f.advances.filter((a: any) => a.phase === 'failing').length} while failing, +60 s every ${f.advanceEvery} s; ${f.advances.filter((a: any) => a.phase === 'recovery').length} in recovery), ${fmt(f.clockAdvancedS)} s in all`],
          ['pairs accepted when the failures stopped', `${fmt(f.acceptedAtFailEnd)} of ${fmt(f.pairs)} (${fmt(f.requestsDuringFailure)} requests so far)`],
          ['requests received / answered 500 / answered 200', `${fmt(f.requests)} / ${fmt(f.failedAnswers)} / ${fmt(f.okAnswers)}`],
          ['duplicates (2xx for a pair already accepted)', fmt(f.duplicates)],
          ['100% accepted at', f.allPairsAtS === null ? 'never' : `${fmt(f.allPairsAtS, 1)} s after the start (${fmt(f.afterFailEndS, 1)} s after the failures stopped)`],
          ['missing pairs', fmt(f.missing)],
          ['deliveries in Postgres', JSON.stringify(f.deliveriesInPostgres)],
          ['attempts per delivery (histogram)', JSON.stringify(f.attemptsHistogram)],
        ],
      ),
    );
    out.push(`failure target (100% of events delivered): ${failureOk ? 'met' : 'NOT met'}`);
  }
  if (profile) out.push(`worker profile (throughput phase, ${fmt(profiled!.perSecond)} deliveries/s under the profiler):\n\n${profileTables(profile)}`);
  if (perf) out.push(`whole machine during the profiled phase:\n\n${perfTables(perf)}`);
  process.stdout.write(`\n${out.join('\n\n')}\n`);
  if (failures.length) process.stdout.write(`\nFAILED CHECKS:\n${failures.map((f) => `  - ${f}`).join('\n')}\n`);
  else process.stdout.write('\nchecks: every delivery signed and recorded as succeeded in Postgres; bare loop all 200; failure scenario complete\n');

  if (o.json) {
    writeFileSync(o.json, JSON.stringify({ machine: m, source: src, postgres: pg, quiet, options: o, phases, workerRate, bareRate, ratio, targets: { ratio: ratioOk, failure: failureOk }, failure, profiled, profile, perf, failures }, null, 2) + '\n');
  }
  return failures.length ? 1 : 0;
}

await runBench('bench/webhooks', main, children, cleanups);
