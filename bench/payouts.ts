// bench/payouts (npm run bench:payouts): payouts created (POST /v1/payouts, 201 processing) and
// executed (the worker sends each order to the sim rail and records it paid, with its history,
// ledger entry and outbox event) per second at 64 connections, beside pgbench running the same SQL
// on the same machine in the same run (bench/confirm-lib.ts is the shared harness).
//
// pgbench variants (-M prepared, one scratch database with the app's migrations):
//   create-sql  the create's one statement: CTEs write the payout row, its history and the
//               idempotency record and check the tenant's four-eyes threshold (its own implicit
//               transaction); the denominator of "created per second". Also run at --peak-clients (8 and 16):
//               on 2 cores it peaks there, not at 64, so the creates alone are also shown against
//               the same SQL at its best client count.
//   payout-sql  the create, then what the worker sends for it: the hydrate, the fenced
//               send_started step (row, history), the sim rail's book, the fenced paid step (row,
//               history, ledger entry and its two lines, outbox event, poll timer cancelled);
//               the denominator of "executed per second".
// The statements live in bench/payouts-sql.ts. Then (--skeleton, on by default) the bare stack:
// bench/skeleton-app sending the create's statement through uWS and postgres.js with the API's pool
// and enqueuing its job, no app code, under the same load: the creates the chosen stack allows
// before the app adds anything. Then the app (ROLE=api and ROLE=worker children, bench/confirm-app.js) on another scratch
// database: autocannon drives 64 connections of POST /v1/payouts (a fresh Idempotency-Key each);
// executed per second = payouts that became paid during the load window / its length. With --api N,
// N API processes share the one port and the pool (--api-pool split among them), as `npm start --
// --api N` runs them (docs/scaling.md: a second API process helps where one event loop is the bound).
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSql, ensureDatabase } from '../kernel/db.js';
import { Redis } from 'ioredis';
import { CREATE, EXECUTE, TENANT } from './payouts-sql.js';
import { appBench, benchTenant, migratedScratch, startApp, startBareStack, Children, CpuSampler, cpuCells, dbUrl, deleteRedisPrefix, dropDatabase, findProfile, fmt, latencyStats, machineInfo, mdTable, monoUs, parseOptions, PgEvidence, pgEvidenceTables, profileTables, redisUrl, sleep, sourceInfo, summarizeProfile, waitForQuiet } from './confirm-lib.js';

const o = parseOptions<Record<string, number | boolean | string | undefined>>(process.argv.slice(2), {
  duration: { type: 'number', default: 10, min: 1, max: 120, help: 'seconds of the measured load' },
  warmup: { type: 'number', default: 2, min: 0, max: 30, help: 'seconds of warm-up' },
  connections: { type: 'number', default: 64, min: 1, max: 512, help: 'autocannon connections and pgbench clients' },
  'pgbench-duration': { type: 'number', default: 10, min: 1, max: 120, help: 'pgbench -T per variant' },
  'peak-clients': { type: 'string', default: '8,16', help: "create-sql also at these client counts (comma-separated; '' for none): the same SQL at its best count is the second ceiling of the creates alone (2 cores: pgbench peaks at 8-16 clients, below that at 64)" },
  'worker-concurrency': { type: 'number', default: 16, min: 1, max: 1000, help: 'WORKER_CONCURRENCY of the worker' },
  'api-pool': { type: 'number', default: 20, min: 0, max: 1000, help: "Postgres connections of the API processes together (default: DATABASE_POOL_MAX's default, the app as deployed; 0: as many as --connections, pgbench's clients), split evenly among --api processes (DATABASE_POOL_MAX each); the worker keeps the default" },
  api: { type: 'number', default: 1, min: 1, max: 16, help: 'API processes on one port (SO_REUSEPORT), started as npm start -- --api N does (ops/processes.ts); CPU "api" sums them' },
  'max-wait': { type: 'number', default: 600, min: 0, max: 3600, help: 'seconds to wait for a quiet machine' },
  json: { type: 'string', help: 'write the results as JSON here' },
  'pgbench-scripts': { type: 'string', help: 'only write the pgbench scripts into this directory (to read or run them) and exit' },
  skeleton: { type: 'boolean', default: true, help: "before the app, the creates on the bare stack (bench/skeleton-app: the create's statement through uWS and postgres.js with the API's pool, its job enqueued, no app code): the ceiling of the app's own code (--no-skeleton to skip)" },
  profile: { type: 'string', help: 'after the measured phases, creates alone once more with the api under node --cpu-prof (profile written here; its tables printed)' },
}, 'npm run bench:payouts -- [options]');
const D = o.duration as number;
const C = o.connections as number;
const apiPool = (o['api-pool'] as number) || C;
const APIS = o.api as number;
// each API process's share of the pool, so that N processes together hold what one would
const apiPoolEach = Math.max(1, Math.ceil(apiPool / APIS));
const children = new Children('bench/payouts');
const cleanups: Array<() => Promise<unknown>> = [];
const tmp = mkdtempSync(join(tmpdir(), 'orq-bench-payouts-'));

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d));
    p.stderr.on('data', (d: Buffer) => (out += d));
    const kill = setTimeout(() => p.kill('SIGKILL'), (Number(o['pgbench-duration']) + 60) * 1000);
    p.on('error', reject);
    p.on('close', (code) => (clearTimeout(kill), code === 0 ? resolve(out) : reject(new Error(`${cmd} exited ${code}: ${out.slice(-500)}`))));
  });
}

async function pgbench() {
  const name = `orq_bench_pay_pgb_${randomBytes(4).toString('hex')}`;
  cleanups.push(() => dropDatabase(name));
  await migratedScratch(name, TENANT, 'pgbench');
  const u = new URL(dbUrl(name));
  const out: Record<string, { clients: number; tps: number; p50: number; p99: number; cpu: string[] }> = {};
  const peaks = String(o['peak-clients']).split(',').map(Number).filter((n) => n > 0 && n !== C);
  const variants: Array<[string, string[], number]> = [['create-sql', CREATE, C], ...peaks.map((n): [string, string[], number] => [`create-sql@${n}`, CREATE, n]), ['payout-sql', [...CREATE, ...EXECUTE], C]];
  for (const [variant, lines, clients] of variants) {
    const file = variant.replace('@', '-c'); // pgbench reads '@' in a script's name as its weight
    const script = join(tmp, `${file}.sql`);
    writeFileSync(script, lines.join('\n') + '\n');
    const prefix = join(tmp, `log-${file}`);
    const sampler = new CpuSampler({ bench: process.pid }).start();
    const text = await run('pgbench', ['-h', u.hostname, '-p', u.port || '5432', '-U', 'postgres', '-n', '-M', 'prepared', '-c', String(clients), '-j', '2', '-T', String(o['pgbench-duration']), '-f', script, '-l', `--log-prefix=${prefix}`, name]);
    const cpu = sampler.stop();
    const lats: number[] = [];
    for (const f of readdirSync(tmp).filter((f) => f.startsWith(`log-${file}.`))) {
      for (const l of readFileSync(join(tmp, f), 'utf8').split('\n')) if (l) lats.push(Number(l.split(' ')[2]) / 1000);
    }
    const s = latencyStats(lats);
    out[variant] = { clients, tps: Number(/tps = ([0-9.]+) \(without/.exec(text)?.[1]), p50: s.p50, p99: s.p99, cpu: cpuCells(cpu, ['postgres', 'pgbench']) };
    process.stdout.write(`pgbench ${variant} (${clients} clients): ${fmt(out[variant].tps)} tps, p99 ${fmt(s.p99, 1)} ms\n`);
  }
  await dropDatabase(name);
  return out;
}

// ---- the load: POST /v1/payouts at C connections, a fresh Idempotency-Key each --------------------
function loadPayouts(base: string, key: string, seconds: number) {
  return new Promise<{ lat: number[]; created: number; statuses: Record<number, number>; duration: number }>((resolve, reject) => {
    const lat: number[] = [];
    const statuses: Record<number, number> = {};
    const body = JSON.stringify({ clabe: '072691004495711499', beneficiary_name: 'Proveedora del Norte', amount_minor: 15_000, currency: 'MXN', concepto: 'Pago de factura' });
    autocannon({
      url: base, connections: C, pipelining: 1, duration: seconds, timeout: 10,
      requests: [{ method: 'POST', path: '/v1/payouts', body, setupRequest: (r: autocannon.Request) => ({ ...r, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() } }) }],
      setupClient: (c) => c.on('response', (status: number, _b: number, ms: number) => (lat.push(ms), (statuses[status] = (statuses[status] ?? 0) + 1))),
    } as autocannon.Options, (err: unknown, res: autocannon.Result) => (err ? reject(err) : resolve({ lat, created: statuses[201] ?? 0, statuses, duration: res.duration })));
  });
}

// ---- the bare stack: the create's statement through uWS and postgres.js, no app code ---------------
// bench/skeleton-app's POST /v1/payouts with the API's pool: the creates alone the chosen stack allows
// before the app adds anything (authentication, validation, the CLABE's seal, the machine,
// idempotency, rate limit, telemetry).
async function bareStack() {
  const bare = await startBareStack(children, { label: 'pay', tenant: TENANT, roles: ['api'], env: { DATABASE_POOL_MAX: String(apiPool) } });
  cleanups.push(() => bare.stop());
  try {
    const base = `http://127.0.0.1:${bare.port}`;
    if (Number(o.warmup) > 0) await loadPayouts(base, bare.key, Number(o.warmup));
    const sampler = new CpuSampler({ api: bare.pids.api!, bench: process.pid }).start();
    const r = await loadPayouts(base, bare.key, D);
    const cpu = sampler.stop();
    const s = latencyStats(r.lat);
    const apiCpuMs = (((cpu.pct.api ?? 0) / 100) * cpu.wallS * 1000) / Math.max(1, r.created);
    process.stdout.write(`bare stack (bench/skeleton-app) creates: ${fmt(r.created / r.duration)}/s, p99 ${fmt(s.p99, 1)} ms\n`);
    return { createdPerS: r.created / r.duration, p50: s.p50, p99: s.p99, statuses: r.statuses, apiCpuMs, cpu: cpuCells(cpu, ['api', 'postgres', 'redis', 'bench']) };
  } finally {
    await bare.stop();
  }
}

// ---- the app -----------------------------------------------------------------------------------
async function app() {
  const name = `orq_bench_pay_${randomBytes(4).toString('hex')}`;
  const prefix = `orq_bench_pay_${randomBytes(4).toString('hex')}`;
  const adminKey = `adm_bench_${randomBytes(12).toString('hex')}`;
  cleanups.push(() => dropDatabase(name), () => deleteRedisPrefix(prefix));
  const env = {
    ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'warn', DATABASE_URL: dbUrl(name), REDIS_PREFIX: prefix, ADMIN_KEY: adminKey, PORT: '0',
    SECRETS_KEY: randomBytes(32).toString('base64'), RATE_LIMIT_V1_PER_MIN: '1000000000', SEED_DEMO_TENANT: 'false', WORKER_CONCURRENCY: String(o['worker-concurrency']),
  };
  // Created here: N processes starting together would race to create it.
  await ensureDatabase(dbUrl(name));
  // The API processes, started by the supervisor of `npm start -- --api N` (ops/processes.ts), all on
  // one port. Their Postgres connections: DATABASE_POOL_MAX's default (20) in all, the app as `npm
  // start` runs it (--api-pool 0: as many as pgbench has clients, 64, like for like; on 2 cores that
  // pool is the slower one: 64 backends queue for the cores the API's event loop needs,
  // bench/RESULTS.md issue 26 tenth session). A build before DATABASE_POOL_MAX ignores it (20).
  const apiEnv = { ...env, DATABASE_POOL_MAX: String(apiPoolEach) };
  const apis = await startApp(children, { main: appBench('confirm-app.js'), env: { ...apiEnv, STATE_DIR: mkdtempSync(join(tmp, 'api-')) }, apis: APIS, workers: 0, ready: 'line', label: 'api' });
  const worker = await children.start<{ pid: number }>('worker', appBench('confirm-app.js'), { env: { ...env, ROLE: 'worker', STATE_DIR: mkdtempSync(join(tmp, 'worker-')) } });
  let base = `http://127.0.0.1:${apis.port}`;
  const { key } = await benchTenant(base, adminKey, 'bench');
  const sql = createSql(dbUrl(name), 2);
  const paid = async () => Number((await sql`select count(*)::int as n from payouts where status = 'paid'`)[0].n);
  const load = (seconds: number) => loadPayouts(base, key, seconds);
  if (Number(o.warmup) > 0) await load(Number(o.warmup));
  const before = await paid();
  const sampler = new CpuSampler({ api: apis.pids.api, worker: worker.info.pid, bench: process.pid }).start();
  const r = await load(D);
  const cpu = sampler.stop();
  const during = (await paid()) - before;
  const s = latencyStats(r.lat);
  const started = Date.now();
  const total = Number((await sql`select count(*)::int as n from payouts`)[0].n);
  while ((await paid()) < total && Date.now() - started < 120_000) await sleep(200);
  const drainS = (Date.now() - started) / 1000;
  // Creates alone: the worker stopped (its jobs wait in the queue), as pgbench's create-sql runs alone.
  await children.stop(worker.child);
  const ev = await PgEvidence.start(name);
  const redis0 = await redisCommands();
  const aloneCpu = new CpuSampler({ api: apis.pids.api, bench: process.pid }).start();
  const alone = await load(D);
  const aloneReport = aloneCpu.stop();
  const redisDelta = diffCommands(await redisCommands(), redis0);
  const evidence = await ev.stop(12, 'buffers');
  const as = latencyStats(alone.lat);
  const apiCpuMs = ((aloneReport.pct.api ?? 0) / 100) * aloneReport.wallS * 1000 / Math.max(1, alone.created);
  let profile: string | undefined;
  if (o.profile) {
    await apis.stop();
    const dir = String(o.profile);
    // One API process under the profiler, with one process's share of the pool.
    const prof = await children.start<{ pid: number; port: number }>('api-prof', appBench('confirm-app.js'), { env: { ...apiEnv, ROLE: 'api', STATE_DIR: mkdtempSync(join(tmp, 'api-prof-')) }, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
    base = `http://127.0.0.1:${prof.info.port}`;
    await load(2);
    const w0 = monoUs();
    const pr = await load(D);
    const w1 = monoUs();
    await children.stop(prof.child);
    const file = findProfile(dir, prof.info.pid);
    profile = file ? `${fmt(pr.created / pr.duration)} created/s under the profiler\n\n${profileTables(summarizeProfile(file, w0, w1))}` : `no profile of the api in ${dir}`;
  } else await apis.stop();
  await sql.end();
  return {
    createdPerS: r.created / r.duration, executedPerS: during / r.duration, p50: s.p50, p99: s.p99, statuses: r.statuses, backlog: total - before - during, drainS, cpu: cpuCells(cpu, ['api', 'worker', 'postgres', 'redis', 'bench']),
    alone: {
      createdPerS: alone.created / alone.duration, p50: as.p50, p99: as.p99, statuses: alone.statuses, apiCpuMs, cpu: cpuCells(aloneReport, ['api', 'postgres', 'redis', 'bench']),
      statements: evidence.work.calls / Math.max(1, alone.created), redis: redisDelta, evidence: pgEvidenceTables(evidence, Math.max(1, alone.created), 'create'), created: alone.created,
    },
    profile,
  };
}

/** Redis's command counts (INFO commandstats: the whole server's, scripts' inner calls included). */
async function redisCommands(): Promise<Record<string, number>> {
  const redis = new Redis(redisUrl(), { maxRetriesPerRequest: 2 });
  try {
    const out: Record<string, number> = {};
    for (const m of (await redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out[m[1]] = Number(m[2]);
    return out;
  } finally {
    redis.disconnect();
  }
}
const diffCommands = (b: Record<string, number>, a: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(b).map(([k, v]) => [k, v - (a[k] ?? 0)] as const).filter(([k, v]) => v > 0 && k !== 'info'));

if (o['pgbench-scripts']) {
  for (const [v, lines] of [['create-sql', CREATE], ['payout-sql', [...CREATE, ...EXECUTE]]] as const) writeFileSync(join(String(o['pgbench-scripts']), `${v}.sql`), lines.join('\n') + '\n');
  process.exit(0);
}
try {
  const quiet = await waitForQuiet('bench/payouts', Number(o['max-wait']));
  const pg = await pgbench();
  const bare = o.skeleton ? await bareStack() : undefined;
  const a = await app();
  // create-sql at its best client count (C or one of --peak-clients)
  const peak = Object.entries(pg).filter(([k]) => k === 'create-sql' || k.startsWith('create-sql@')).map(([, v]) => v).sort((x, y) => y.tps - x.tps)[0];
  const rows = [
    ['payouts created (HTTP 201)', fmt(a.createdPerS), fmt(pg['create-sql'].tps), `${fmt(a.createdPerS / pg['create-sql'].tps, 3)}x`, fmt(a.p99, 1), fmt(pg['create-sql'].p99, 1)],
    ['payouts executed (paid)', fmt(a.executedPerS), fmt(pg['payout-sql'].tps), `${fmt(a.executedPerS / pg['payout-sql'].tps, 3)}x`, 'n/a', fmt(pg['payout-sql'].p99, 1)],
    ['payouts created, worker stopped (creates alone, as create-sql runs)', fmt(a.alone.createdPerS), fmt(pg['create-sql'].tps), `${fmt(a.alone.createdPerS / pg['create-sql'].tps, 3)}x`, fmt(a.alone.p99, 1), fmt(pg['create-sql'].p99, 1)],
    [`the same, against create-sql at its best client count (${peak.clients})`, fmt(a.alone.createdPerS), fmt(peak.tps), `${fmt(a.alone.createdPerS / peak.tps, 3)}x`, fmt(a.alone.p99, 1), fmt(peak.p99, 1)],
    ...(bare
      ? [
          ['bare stack creates (bench/skeleton-app: the same statement via uWS and postgres.js, no app code)', fmt(bare.createdPerS), fmt(pg['create-sql'].tps), `${fmt(bare.createdPerS / pg['create-sql'].tps, 3)}x`, fmt(bare.p99, 1), fmt(pg['create-sql'].p99, 1)],
          [`the same, against create-sql at its best client count (${peak.clients})`, fmt(bare.createdPerS), fmt(peak.tps), `${fmt(bare.createdPerS / peak.tps, 3)}x`, fmt(bare.p99, 1), fmt(peak.p99, 1)],
        ]
      : []),
  ];
  const per = (n: number) => fmt(n / Math.max(1, a.alone.created), 2);
  const report = [
    `bench/payouts ${new Date().toISOString()} (${C} connections, ${APIS} api process${APIS > 1 ? 'es' : ''} with DATABASE_POOL_MAX ${apiPoolEach}${APIS > 1 ? ' each' : ''}, ${D} s; commit ${sourceInfo().commit}${quiet.warning ? `; ${quiet.warning}` : ''})`,
    mdTable(['', 'Orquesta /s', 'pgbench same SQL tps', 'ratio', 'p99 ms (HTTP)', 'p99 ms (pgbench)'], rows),
    `HTTP statuses ${JSON.stringify(a.statuses)}; create p50 ${fmt(a.p50, 1)} ms; backlog after the load ${a.backlog} payouts, drained in ${fmt(a.drainS, 1)} s.`,
    mdTable(['CPU (app run)', 'api', 'worker', 'postgres', 'redis', 'bench', 'other', 'machine busy', 'steal'], [['% of one core', ...a.cpu]]),
    `Creates alone (worker stopped, ${D} s): HTTP statuses ${JSON.stringify(a.alone.statuses)}; p50 ${fmt(a.alone.p50, 1)} ms; api CPU ${fmt(a.alone.apiCpuMs, 3)} ms per create; ` +
      `${fmt(a.alone.statements, 2)} top-level statements per create; Redis commands per create (the whole server's INFO commandstats, scripts' inner calls included): ` +
      `${Object.entries(a.alone.redis).sort((x, y) => y[1] - x[1]).map(([k, v]) => `${k} ${per(v)}`).join(', ') || 'none'}`,
    mdTable(['CPU (creates alone)', 'api', 'postgres', 'redis', 'bench', 'other', 'machine busy', 'steal'], [['% of one core', ...a.alone.cpu], ...(bare ? [['bare stack', ...bare.cpu]] : [])]),
    ...(bare ? [`Bare stack: HTTP statuses ${JSON.stringify(bare.statuses)}; api CPU ${fmt(bare.apiCpuMs, 3)} ms per create (the app's: ${fmt(a.alone.apiCpuMs, 3)}); the app's creates alone / the bare stack's: ${fmt(a.alone.createdPerS / bare.createdPerS, 3)}x.`] : []),
    a.alone.evidence,
    ...(a.profile ? [`### api CPU profile, creates alone\n\n${a.profile}`] : []),
  ].join('\n\n');
  process.stdout.write(`\n${report}\n`);
  const headline = {
    'payouts created /s': { value: a.createdPerS, better: 'higher', unit: '/s' },
    'created / pgbench create-sql': { value: a.createdPerS / pg['create-sql'].tps, better: 'higher', unit: 'x' },
    'payouts executed /s': { value: a.executedPerS, better: 'higher', unit: '/s' },
    'executed / pgbench payout-sql': { value: a.executedPerS / pg['payout-sql'].tps, better: 'higher', unit: 'x' },
    'create p99': { value: a.p99, better: 'lower', unit: 'ms' },
    // the absolute rate beside the ratios: pgbench's tps moves by a third from run to run on this VM
    'payouts created alone /s': { value: a.alone.createdPerS, better: 'higher', unit: '/s' },
    'created alone / pgbench create-sql': { value: a.alone.createdPerS / pg['create-sql'].tps, better: 'higher', unit: 'x' },
    'created alone / create-sql at its best client count': { value: a.alone.createdPerS / peak.tps, better: 'higher', unit: 'x' },
    'api CPU per create (alone)': { value: a.alone.apiCpuMs, better: 'lower', unit: 'ms' },
    // The same code in both runs of a guard: its ratio is the guard's control (drift, position).
    ...(bare ? { 'bare stack creates /s (control)': { value: bare.createdPerS, better: 'higher', unit: '/s' } } : {}),
  };
  if (o.json) writeFileSync(String(o.json), JSON.stringify({ machine: machineInfo(), pgbench: pg, bare, app: a, headline }, null, 2));
} finally {
  await children.stopAll();
  for (const c of cleanups.reverse()) await c().catch(() => {});
  rmSync(tmp, { recursive: true, force: true });
}
