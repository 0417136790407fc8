// bench/cost (npm run bench:cost): the cost of a payment and of a payout's creation in units that do
// not depend on what else the machine runs (issue 26): per unit of work, the statements Postgres ran
// (top level and nested in triggers), the rows they returned, the shared buffers they hit, read,
// dirtied and wrote, the WAL records, full-page images and bytes (pg_stat_statements of the bench's
// own database, so other databases on the cluster are not in it; pg_current_wal_lsn would count
// them), beside CPU per unit (Postgres backends, api, worker), which does depend on the load.
//
// The app: ROLE=api and ROLE=worker children (bench/confirm-app.js of the build under test, so the
// guard `npm run bench:cost -- --baseline <commit>` compares two builds) on a scratch database.
// After a warm-up (--warmup full payments and payouts, not measured), the phases, each with the
// statistics reset before it and read after it:
//   payment        --payments create + confirm + execution (the worker charges the sim card, posts
//                  the ledger, relays the events), --concurrency at a time; ends when every attempt
//                  is final, every outbox row relayed, every summary written (0180) and the
//                  statement count stopped moving.
//   create         the worker stopped: --payments POST /v1/payment_intents.
//   confirm        the same intents confirmed (their execution jobs wait in Redis).
//   execute        = payment - create - confirm (the worker's and relay's share).
//   payout create  --payouts POST /v1/payouts (worker still stopped: the create only).
// The counts are properties of the SQL (same build, same counts whatever the load, except full-page
// images, which follow checkpoints: a CHECKPOINT runs before each phase so each starts alike; and
// the relay's batches, whose size follows the timing). Time-driven polls are turned off (relay
// safety net 10 s, sweeps and reconcilers 10 min) so that they are not counted per payment.
// Needs pg_stat_statements in shared_preload_libraries (track = all; track_planning = on for the
// planning column). "write transactions" counts transaction ids assigned in the whole cluster, so
// it is the load's own only on a cluster nobody else uses: bench/RESULTS.md shows how to start a
// private one (DATABASE_URL pointing at it).
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { Pool } from 'undici';
import { ensureDatabase } from '../kernel/db.js';
import { appBench, benchTenant, checkpoint, Children, CpuSampler, dbUrl, deleteRedisPrefix, dropDatabase, fmt, machineInfo, mdTable, parseOptions, PgEvidence, pgEvidenceTables, type PgEvidenceReport, runBench, sleep, sourceInfo } from './confirm-lib.js';

const o = parseOptions<{ payments: number; payouts: number; warmup: number; concurrency: number; top: number; analyze: boolean; 'keep-db': boolean; json?: string }>(
  process.argv.slice(2),
  {
    payments: { type: 'number', default: 200, min: 10, max: 100_000, help: 'payments (create + confirm + execution) per measured phase' },
    payouts: { type: 'number', default: 200, min: 0, max: 100_000, help: 'payouts created in the payout phase (0: none)' },
    warmup: { type: 'number', default: 30, min: 0, max: 10_000, help: 'full payments and payouts before measuring (not counted)' },
    concurrency: { type: 'number', default: 4, min: 1, max: 64, help: 'requests in flight' },
    top: { type: 'number', default: 25, min: 1, max: 200, help: 'statements listed per phase (by buffers hit)' },
    analyze: { type: 'boolean', default: false, help: 'ANALYZE after the warm-up (this cluster runs with autovacuum = off)' },
    'keep-db': { type: 'boolean', default: false, help: 'keep the scratch database (its name is printed)' },
    json: { type: 'string', help: 'write the results as JSON here' },
  },
  'npm run bench:cost -- [options]',
);

const children = new Children('bench/cost');
const cleanups: Array<() => Promise<unknown>> = [];

interface Phase {
  name: string;
  units: number;
  unit: string;
  ev: PgEvidenceReport;
  cpuMs: Record<string, number>;
}

/** The per-unit figures of a phase (or of a difference of phases). */
function perUnit(ev: PgEvidenceReport, units: number) {
  const w = ev.work;
  return {
    statements: w.calls / units,
    nested: w.nestedCalls / units,
    rows: w.rows / units,
    blksHit: w.blksHit / units,
    blksRead: w.blksRead / units,
    blksDirtied: w.blksDirtied / units,
    blksWritten: w.blksWritten / units,
    walRecords: w.walRecords / units,
    walFpi: w.walFpi / units,
    walBytes: w.walBytes / units,
    writeXacts: ev.xids / units,
    planMs: w.planMs / units,
    execMs: w.execMs / units,
    pgCpuMs: (1000 * ev.backendCpuS) / units,
    pgSysMs: (1000 * ev.backendSysS) / units,
  };
}
type PerUnit = ReturnType<typeof perUnit>;
const minus = (a: PerUnit, ...b: PerUnit[]): PerUnit => Object.fromEntries(Object.entries(a).map(([k, v]) => [k, b.reduce((x, y) => x - y[k as keyof PerUnit], v)])) as PerUnit;

async function main(): Promise<number> {
  const m = machineInfo();
  const src = sourceInfo();
  const appRoot = process.env.BENCH_APP_ROOT;
  process.stdout.write(`bench/cost: ${m.date}, node ${m.node}, ${m.nproc} CPUs, load ${loadavg().map((x) => x.toFixed(1)).join(' ')}; app ${appRoot ? `from ${appRoot}` : `this tree (${src.commit})`}; ${o.payments} payments, ${o.payouts} payouts, ${o.concurrency} in flight\n`);
  const hex = randomBytes(4).toString('hex');
  const db = `orq_bench_cost_${hex}`;
  const prefix = `orq_bench_cost_${hex}`;
  const adminKey = `adm_bench_${randomBytes(16).toString('hex')}`;
  const tmp = mkdtempSync(join(tmpdir(), 'orq-bench-cost-'));
  cleanups.push(async () => rmSync(tmp, { recursive: true, force: true }));
  await ensureDatabase(dbUrl(db));
  if (o['keep-db']) process.stdout.write(`database ${db} (kept)\n`);
  else cleanups.push(() => dropDatabase(db));
  cleanups.push(() => deleteRedisPrefix(prefix));
  const env: NodeJS.ProcessEnv = {
    ...process.env, NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'error', REDIS_PREFIX: prefix, ADMIN_KEY: adminKey, DATABASE_URL: dbUrl(db),
    SEED_DEMO_TENANT: 'false', RATE_LIMIT_V1_PER_MIN: '1000000000', WORKER_CONCURRENCY: '4', SECRETS_KEY: randomBytes(32).toString('base64'),
    // Time-driven polls out of the counts (a commit wakes the relay; its poll is only the safety net).
    RELAY_INTERVAL_MS: '10000', SWEEP_INTERVAL_MS: '600000', RECONCILE_INTERVAL_MS: '600000',
  };
  const api = await children.start<{ pid: number; port: number }>('api', appBench('confirm-app.js'), { env: { ...env, ROLE: 'api', STATE_DIR: mkdtempSync(join(tmp, 'api-')) } });
  let worker: Awaited<ReturnType<typeof children.start<{ pid: number }>>> | undefined = await children.start<{ pid: number }>('worker', appBench('confirm-app.js'), { env: { ...env, ROLE: 'worker', STATE_DIR: mkdtempSync(join(tmp, 'worker-')) } });
  const base = `http://127.0.0.1:${api.info.port}`;
  const { key } = await benchTenant(base, adminKey, 'bench-cost');
  // application_name: PgEvidence leaves this connection's CPU out (its polls are not the load's).
  const sql = postgres(dbUrl(db), { max: 2, onnotice: () => {}, connection: { application_name: 'orq-bench' } });
  cleanups.push(() => sql.end({ timeout: 2 }));
  await sql`create extension if not exists pg_stat_statements`;
  const pool = new Pool(base, { connections: o.concurrency + 2, pipelining: 1, keepAliveTimeout: 4_000, keepAliveMaxTimeout: 4_000 });
  cleanups.push(() => pool.close());

  const post = async (path: string, body: unknown, want: number) => {
    const r = await pool.request({ method: 'POST', path, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() }, body: JSON.stringify(body) });
    const text = await r.body.text();
    if (r.statusCode !== want) throw new Error(`POST ${path} answered ${r.statusCode} (want ${want}): ${text.slice(0, 300)}`);
    return JSON.parse(text) as { id: string; status: string };
  };
  /** Runs `fn(i)` for i < n, `concurrency` at a time. */
  const lanes = async (n: number, fn: (i: number) => Promise<void>) => {
    let next = 0;
    await Promise.all(Array.from({ length: Math.min(o.concurrency, n) }, async () => {
      for (let i = next++; i < n; i = next++) await fn(i);
    }));
  };
  const create = () => post('/v1/payment_intents', { amount_minor: 15000, currency: 'MXN', payment_method_types: ['card'] }, 201);
  const confirm = (id: string) => post(`/v1/payment_intents/${id}/confirm`, { payment_method: 'card', payment_token: 'tok_sim_ok' }, 200);
  const payout = () => post('/v1/payouts', { clabe: '072691004495711499', beneficiary_name: 'Proveedora del Norte', amount_minor: 15_000, currency: 'MXN', concepto: 'Pago de factura' }, 201);
  // The summarizing job (0180) runs every second whether or not there is work: its statements are not
  // the payments' follow-ups (settle waits for the pending list itself).
  const statementCount = async () => Number((await sql`-- orq-bench
    select coalesce(sum(calls), 0)::float8 as n from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
       and query not like '%ledger_summarize%' and query not like '%from ledger_pending%'`)[0].n);
  // Builds from migration 0180 on write the reports' summaries after the payment's transaction (the
  // worker's job, every second): a payment's cost includes them, so a phase with the worker running
  // ends when none is pending.
  const [{ pendingList }] = await sql`select to_regclass('public.ledger_pending') is not null as "pendingList"`;
  /** Every attempt final, every outbox row relayed, every payout paid, every summary written, and no statement for 1.5 s (the worker's follow-ups done). */
  const settle = async (label: string) => {
    const t0 = Date.now();
    for (;;) {
      const [r] = await sql`-- orq-bench
      select (select count(*) from attempts where status in ('pending', 'processing'))::int as attempts,
          (select count(*) from outbox_events where relayed_at is null)::int as outbox,
          (select count(*) from payouts where status not in ('paid', 'failed', 'returned', 'canceled'))::int as payouts,
          ${pendingList ? sql`(select count(*) from ledger_pending)::int` : sql`0`} as summaries`;
      if (r.attempts === 0 && r.outbox === 0 && ((r.payouts === 0 && r.summaries === 0) || !worker)) break;
      if (Date.now() - t0 > 180_000) throw new Error(`${label}: not settled after 180 s (${JSON.stringify(r)})`);
      await sleep(200);
    }
    let last = await statementCount();
    for (let quiet = 0; quiet < 3; ) {
      await sleep(500);
      const n = await statementCount();
      quiet = n - last <= 3 ? quiet + 1 : 0; // our own count query is a statement too
      last = n;
      if (Date.now() - t0 > 180_000) break;
    }
  };
  const phases: Phase[] = [];
  const measure = async (name: string, units: number, unit: string, run: () => Promise<void>) => {
    await checkpoint();
    const ev0 = await PgEvidence.start(db);
    const cpu = new CpuSampler({ api: api.info.pid, worker: worker?.info.pid, bench: process.pid }).start();
    await run();
    const c = cpu.stop();
    const ev = await ev0.stop(200, 'buffers');
    const cpuMs = Object.fromEntries(['api', 'worker', 'bench'].map((k) => [k, ((c.pct[k] ?? 0) / 100) * c.wallS * 1000 / units]));
    phases.push({ name, units, unit, ev, cpuMs });
    process.stdout.write(`${name}: ${units} ${unit}s, ${fmt(ev.work.calls / units, 1)} statements and ${fmt(ev.work.blksHit / units)} buffers hit per ${unit}\n`);
  };

  // Warm-up: every statement prepared, every cache filled, the tables past their first pages.
  const N = o.payments;
  if (o.warmup > 0) {
    await lanes(o.warmup, async () => void (await confirm((await create()).id)));
    if (o.payouts > 0) await lanes(o.warmup, async () => void (await payout()));
    await settle('warm-up');
  }
  if (o.analyze) await sql`analyze`;

  await measure('payment', N, 'payment', async () => {
    await lanes(N, async () => {
      const pi = await create();
      const c = await confirm(pi.id);
      if (c.status !== 'processing' && c.status !== 'succeeded') throw new Error(`confirm answered status ${c.status}`);
    });
    await settle('payment');
  });
  const [{ n: captured }] = await sql`select count(*)::int as n from attempts where status = 'captured'`;
  const expected = N + o.warmup;
  if (captured !== expected) throw new Error(`${captured} attempts captured, expected ${expected}`);

  await children.stop(worker.child);
  worker = undefined;
  const ids: string[] = [];
  await measure('create', N, 'payment', () => lanes(N, async (i) => void (ids[i] = (await create()).id)));
  await measure('confirm', N, 'payment', () => lanes(N, async (i) => void (await confirm(ids[i]))));
  if (o.payouts > 0) await measure('payout create', o.payouts, 'payout', () => lanes(o.payouts, async () => void (await payout())));

  // ---- report ----
  const by = (n: string) => phases.find((p) => p.name === n)!;
  const pay = perUnit(by('payment').ev, N);
  const cre = perUnit(by('create').ev, N);
  const con = perUnit(by('confirm').ev, N);
  const exe = minus(pay, cre, con);
  const rows: Array<[string, PerUnit, Record<string, number> | undefined]> = [
    ['payment (create + confirm + execution)', pay, by('payment').cpuMs],
    ['create', cre, by('create').cpuMs],
    ['confirm', con, by('confirm').cpuMs],
    ['execution (payment - create - confirm)', exe, undefined],
  ];
  if (o.payouts > 0) rows.push(['payout create', perUnit(by('payout create').ev, o.payouts), by('payout create').cpuMs]);
  const out: string[] = [];
  out.push(`bench/cost ${m.date} (commit ${src.commit}${appRoot ? `, app from ${appRoot}` : ''}; ${N} payments, ${o.payouts} payouts, ${o.concurrency} in flight, warm-up ${o.warmup})`);
  out.push(
    mdTable(
      ['per unit', 'statements (top level)', 'nested statements', 'write transactions', 'rows', 'buffers hit', 'read', 'dirtied', 'written', 'WAL records', 'WAL FPI', 'WAL bytes', 'executing ms*', 'planning ms*', 'Postgres CPU ms* (of which system)', 'api CPU ms*', 'worker CPU ms*'],
      rows.map(([name, u, cpu]) => [name, fmt(u.statements, 2), fmt(u.nested, 2), fmt(u.writeXacts, 2), fmt(u.rows, 1), fmt(u.blksHit, 1), fmt(u.blksRead, 2), fmt(u.blksDirtied, 2), fmt(u.blksWritten, 2), fmt(u.walRecords, 1), fmt(u.walFpi, 2), fmt(u.walBytes), fmt(u.execMs, 2), fmt(u.planMs, 2), `${fmt(u.pgCpuMs, 2)} (${fmt(u.pgSysMs, 2)})`, cpu ? fmt(cpu.api, 2) : '', cpu && 'worker' in cpu && name.startsWith('payment') ? fmt(cpu.worker, 2) : '']),
    ),
  );
  out.push('* CPU depends on the load of the machine (the other columns do not).');
  for (const p of phases) out.push(`### ${p.name}\n\n${pgEvidenceTables({ ...p.ev, statements: p.ev.statements.filter((s) => !s.query.includes('orq-bench')).slice(0, o.top) }, p.units, p.unit)}`);
  process.stdout.write(`\n${out.join('\n\n')}\n`);
  const headline: Record<string, { value: number; better: 'lower' | 'higher'; unit: string }> = {
    'statements per payment': { value: pay.statements, better: 'lower', unit: '' },
    'write transactions per payment': { value: pay.writeXacts, better: 'lower', unit: '' },
    'nested statements per payment': { value: pay.nested, better: 'lower', unit: '' },
    'buffers hit per payment': { value: pay.blksHit, better: 'lower', unit: '' },
    'buffers dirtied per payment': { value: pay.blksDirtied, better: 'lower', unit: '' },
    'WAL records per payment': { value: pay.walRecords, better: 'lower', unit: '' },
    'WAL bytes per payment': { value: pay.walBytes, better: 'lower', unit: 'B' },
    'Postgres CPU per payment (load-dependent)': { value: pay.pgCpuMs, better: 'lower', unit: 'ms' },
  };
  if (o.payouts > 0) {
    const po = perUnit(by('payout create').ev, o.payouts);
    headline['statements per payout create'] = { value: po.statements, better: 'lower', unit: '' };
    headline['buffers hit per payout create'] = { value: po.blksHit, better: 'lower', unit: '' };
    headline['WAL bytes per payout create'] = { value: po.walBytes, better: 'lower', unit: 'B' };
    headline['api CPU per payout create (load-dependent)'] = { value: by('payout create').cpuMs.api, better: 'lower', unit: 'ms' };
  }
  if (o.json) writeFileSync(o.json, JSON.stringify({ machine: m, source: src, options: o, perUnit: Object.fromEntries(rows.map(([n, u, c]) => [n, { ...u, cpuMs: c }])), phases, headline }, null, 2));
  return 0;
}

await runBench('bench/cost', main, children, cleanups);
