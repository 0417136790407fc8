// bench/recharges (npm run bench:recharges): recharges per second at 64 connections with the sim
// aggregator (POST /v1/recharges → 200 `delivered`: the whole money path runs inside the request),
// beside pgbench running the same SQL on the same machine in the same run (bench/confirm-lib.ts is
// the shared harness).
//
// pgbench variant (-M prepared, one scratch database with the app's migrations):
//   recharge-sql  what one request sends: the enabled carriers, the key lookup, the create (one
//                 statement: row + history), the fenced send_started step, the sim aggregator's
//                 book, the fenced delivered step (row, history, ledger entry and its three lines).
//                 The steps start from the row the request holds (no re-read under its own lock).
// Then the app (one ROLE=api child, bench/confirm-app.js) on another scratch database: autocannon
// drives 64 connections of POST /v1/recharges (a fresh Idempotency-Key each).
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSql, ensureDatabase } from '../kernel/db.js';
import { migrate } from '../ops/migrate.js';
import { appBench, benchTenant, Children, CpuSampler, cpuCells, dbUrl, deleteRedisPrefix, dropDatabase, fmt, here, latencyStats, machineInfo, mdTable, parseOptions, sourceInfo, waitForQuiet } from './confirm-lib.js';

const o = parseOptions<Record<string, number | boolean | string | undefined>>(process.argv.slice(2), {
  duration: { type: 'number', default: 10, min: 1, max: 120, help: 'seconds of the measured load' },
  warmup: { type: 'number', default: 2, min: 0, max: 30, help: 'seconds of warm-up' },
  connections: { type: 'number', default: 64, min: 1, max: 512, help: 'autocannon connections and pgbench clients' },
  'pgbench-duration': { type: 'number', default: 10, min: 1, max: 120, help: 'pgbench -T' },
  'max-wait': { type: 'number', default: 600, min: 0, max: 3600, help: 'seconds to wait for a quiet machine' },
  json: { type: 'string', help: 'write the results as JSON here' },
  'pgbench-scripts': { type: 'string', help: 'only write the pgbench script into this directory and exit' },
}, 'npm run bench:recharges -- [options]');
const D = o.duration as number;
const C = o.connections as number;
const TENANT = '7e4a0c1e-0000-4000-8000-0000000c0019';
const children = new Children('bench/recharges');
const cleanups: Array<() => Promise<unknown>> = [];
const tmp = mkdtempSync(join(tmpdir(), 'orq-bench-recharges-'));

// ---- pgbench: the same SQL as the code sends, one recharge per script run --------------------------
const RECHARGE = [
  `select gen_random_uuid() as rid, gen_random_uuid() as ikey, gen_random_uuid() as eid \\gset`,
  `select carrier_code from recharge_carrier_settings where tenant_id = '${TENANT}' and livemode = false and enabled;`,
  `select * from recharges where tenant_id = '${TENANT}' and livemode = false and idempotency_key = cast(:ikey as text);`,
  `with entity as (insert into recharges (id, tenant_id, livemode, status, version, carrier_code, product_code, phone_sealed, phone_masked, face_amount_minor, merchant_commission_minor, currency, payment_intent_id, idempotency_key, order_key, send_started_at, provider_ref, failure_reason, created_at, updated_at) values (:rid, '${TENANT}', false, 'pending', 0, 'telcel', 'telcel_50', 'v1.' || md5(random()::text) || md5(random()::text), '55****5678', 5000, 250, 'MXN', null, :ikey, 'rc_' || replace(cast(:rid as text), '-', ''), null, null, null, now(), now())), history as (insert into entity_history (entity_id, tenant_id, livemode, event, from_status, to_status, data, entity_kind) values (:rid, '${TENANT}', false, 'create', null, 'pending', '{"product_code": "telcel_50", "face_amount_minor": 5000}', 'recharge')) select 1;`,
  'begin;',
  `with u as (update recharges set updated_at = now(), send_started_at = now(), version = 1 where id = :rid and version = 0 returning 1) select orq_expect_rows(count(*), 'recharge') from u;`,
  `insert into entity_history (entity_id, tenant_id, livemode, event, from_status, to_status, data, entity_kind) values (:rid, '${TENANT}', false, 'send_started', 'pending', 'pending', null, 'recharge');`,
  'commit;',
  `insert into sim_recharge_orders (key, tenant_id, livemode, carrier_code, product_code, phone_masked, amount_minor, state, provider_ref, failure_reason) values ('rc_' || replace(cast(:rid as text), '-', ''), '${TENANT}', false, 'telcel', 'telcel_50', '55****5678', 5000, 'delivered', 'sim_rc_' || md5(random()::text), null) on conflict (key) do update set sends = sim_recharge_orders.sends + 1 returning *, (xmax = 0) as inserted;`,
  'begin;',
  `with u as (update recharges set updated_at = now(), provider_ref = 'sim_rc_1', status = 'delivered', version = 2 where id = :rid and version = 1 returning 1) select orq_expect_rows(count(*), 'recharge') from u;`,
  `insert into entity_history (entity_id, tenant_id, livemode, event, from_status, to_status, data, entity_kind) values (:rid, '${TENANT}', false, 'aggregator.delivered', 'pending', 'delivered', '{"provider_ref": "sim_rc_1"}', 'recharge');`,
  `insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id, memo) values (:eid, '${TENANT}', false, 'recharge.delivered', 'recharge', :rid, 'telcel_50 to 55****5678');`,
  `insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values (cast(:eid as uuid), '${TENANT}', false, 'recharge_clearing', 'MXN', 5000), (cast(:eid as uuid), '${TENANT}', false, 'recharge_payable' || chr(58) || 'telcel', 'MXN', -4750), (cast(:eid as uuid), '${TENANT}', false, 'merchant_recharge_income', 'MXN', -250);`,
  'commit;',
];

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d));
    p.stderr.on('data', (d: Buffer) => (out += d));
    const kill = setTimeout(() => p.kill('SIGKILL'), (Number(o['pgbench-duration']) + 60) * 1000);
    p.on('error', reject);
    p.on('close', (code) => (clearTimeout(kill), code === 0 ? resolve(out) : reject(new Error(`${cmd} exited ${code}: ${out.slice(-500)}`))));
  });
}

async function pgbench() {
  const name = `orq_bench_rc_pgb_${randomBytes(4).toString('hex')}`;
  cleanups.push(() => dropDatabase(name));
  await ensureDatabase(dbUrl(name));
  const sql = createSql(dbUrl(name), 2);
  await migrate(sql);
  await sql`insert into tenants (id, name) values (${TENANT}, 'pgbench')`;
  await sql`insert into recharge_carrier_settings (tenant_id, livemode, carrier_code, enabled) values (${TENANT}, false, 'telcel', true)`;
  await sql.end();
  const u = new URL(dbUrl(name));
  const script = join(tmp, 'recharge-sql.sql');
  writeFileSync(script, RECHARGE.join('\n') + '\n');
  const prefix = join(tmp, 'log-recharge');
  const sampler = new CpuSampler({ bench: process.pid }).start();
  const text = await run('pgbench', ['-h', u.hostname, '-p', u.port || '5432', '-U', 'postgres', '-n', '-M', 'prepared', '-c', String(C), '-j', '2', '-T', String(o['pgbench-duration']), '-f', script, '-l', `--log-prefix=${prefix}`, name]);
  const cpu = sampler.stop();
  const lats: number[] = [];
  for (const f of readdirSync(tmp).filter((f) => f.startsWith('log-recharge.'))) {
    for (const l of readFileSync(join(tmp, f), 'utf8').split('\n')) if (l) lats.push(Number(l.split(' ')[2]) / 1000);
  }
  const s = latencyStats(lats);
  const out = { tps: Number(/tps = ([0-9.]+) \(without/.exec(text)?.[1]), p50: s.p50, p99: s.p99, cpu: cpuCells(cpu, ['postgres', 'pgbench']) };
  process.stdout.write(`pgbench recharge-sql: ${fmt(out.tps)} tps, p99 ${fmt(s.p99, 1)} ms\n`);
  await dropDatabase(name);
  return out;
}

// ---- the app -----------------------------------------------------------------------------------
async function app() {
  const name = `orq_bench_rc_${randomBytes(4).toString('hex')}`;
  const prefix = `orq_bench_rc_${randomBytes(4).toString('hex')}`;
  const adminKey = `adm_bench_${randomBytes(12).toString('hex')}`;
  cleanups.push(() => dropDatabase(name), () => deleteRedisPrefix(prefix));
  const env = {
    ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'warn', DATABASE_URL: dbUrl(name), REDIS_PREFIX: prefix, ADMIN_KEY: adminKey, PORT: '0',
    SECRETS_KEY: randomBytes(32).toString('base64'), RATE_LIMIT_V1_PER_MIN: '1000000000', SEED_DEMO_TENANT: 'false',
  };
  const api = await children.start<{ pid: number; port: number }>('api', appBench('confirm-app.js'), { env: { ...env, ROLE: 'api', STATE_DIR: mkdtempSync(join(tmp, 'api-')) } });
  const base = `http://127.0.0.1:${api.info.port}`;
  const { key } = await benchTenant(base, adminKey, 'bench');
  await fetch(`${base}/v1/recharge-carriers/telcel/enable`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
  const sql = createSql(dbUrl(name), 2);
  const delivered = async () => Number((await sql`select count(*)::int as n from recharges where status = 'delivered'`)[0].n);
  const load = (seconds: number) =>
    new Promise<{ lat: number[]; ok: number; statuses: Record<number, number>; duration: number }>((resolve, reject) => {
      const lat: number[] = [];
      const statuses: Record<number, number> = {};
      const body = JSON.stringify({ product_code: 'telcel_50', phone_number: '5512345678' });
      autocannon({
        url: base, connections: C, pipelining: 1, duration: seconds, timeout: 10,
        requests: [{ method: 'POST', path: '/v1/recharges', body, setupRequest: (r: autocannon.Request) => ({ ...r, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() } }) }],
        setupClient: (c) => c.on('response', (status: number, _b: number, ms: number) => (lat.push(ms), (statuses[status] = (statuses[status] ?? 0) + 1))),
      } as autocannon.Options, (err: unknown, res: autocannon.Result) => (err ? reject(err) : resolve({ lat, ok: statuses[200] ?? 0, statuses, duration: res.duration })));
    });
  if (Number(o.warmup) > 0) await load(Number(o.warmup));
  const before = await delivered();
  const sampler = new CpuSampler({ api: api.info.pid, bench: process.pid }).start();
  const r = await load(D);
  const cpu = sampler.stop();
  const during = (await delivered()) - before;
  const [left] = await sql`select count(*)::int as n from recharges where status <> 'delivered'`;
  const s = latencyStats(r.lat);
  await sql.end();
  await children.stop(api.child);
  return { perS: r.ok / r.duration, deliveredPerS: during / r.duration, p50: s.p50, p99: s.p99, statuses: r.statuses, notDelivered: Number(left.n), cpu: cpuCells(cpu, ['api', 'postgres', 'redis', 'bench']) };
}

if (o['pgbench-scripts']) {
  writeFileSync(join(String(o['pgbench-scripts']), 'recharge-sql.sql'), RECHARGE.join('\n') + '\n');
  process.exit(0);
}
try {
  const quiet = await waitForQuiet('bench/recharges', Number(o['max-wait']));
  const pg = await pgbench();
  const a = await app();
  const rows = [['recharges delivered (HTTP 200)', fmt(a.perS), fmt(pg.tps), `${fmt(a.perS / pg.tps, 3)}x`, fmt(a.p99, 1), fmt(pg.p99, 1)]];
  const report = [
    `bench/recharges ${new Date().toISOString()} (${C} connections, ${D} s; commit ${sourceInfo().commit}${quiet.warning ? `; ${quiet.warning}` : ''})`,
    mdTable(['', 'Orquesta /s', 'pgbench same SQL tps', 'ratio', 'p99 ms (HTTP)', 'p99 ms (pgbench)'], rows),
    `HTTP statuses ${JSON.stringify(a.statuses)}; p50 ${fmt(a.p50, 1)} ms; delivered during the window ${fmt(a.deliveredPerS)}/s; recharges not delivered at the end: ${a.notDelivered}.`,
    mdTable(['CPU (app run)', 'api', 'postgres', 'redis', 'bench', 'other', 'machine busy', 'steal'], [['% of one core', ...a.cpu]]),
  ].join('\n\n');
  process.stdout.write(`\n${report}\n`);
  if (o.json) writeFileSync(String(o.json), JSON.stringify({ machine: machineInfo(), pgbench: pg, app: a }, null, 2));
} finally {
  await children.stopAll();
  for (const c of cleanups.reverse()) await c().catch(() => {});
  rmSync(tmp, { recursive: true, force: true });
}
