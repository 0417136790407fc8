// bench/reconciliation (npm run bench:reconciliation): import of a bank statement file against
// 100,000 stored SPEI charges, at 5 MiB (about 50,000 lines) and at 500 KiB: lines per second of the
// whole import (HTTP upload, parse, insert, matching, ledger postings, commit) and the peak memory
// (VmHWM) of the API process. Each size runs in a fresh API process (ROLE=api, `node
// dist/ops/main.js`) on one scratch database, so each peak belongs to one import.
//
// The statement is in Banorte's CSV layout: 80% of the lines match a charge exactly (reference =
// the attempt's provider_ref, same amount, same day), 10% name a charge with another amount
// (partial), 10% name nothing (unmatched). The 500 KiB file uses other charges than the 5 MiB one.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSql } from '../kernel/db.js';
import { dbUrl, dropDatabase, fmt, here, machineInfo, mdTable, parseOptions, sleep, sourceInfo } from './confirm-lib.js';

const o = parseOptions<Record<string, number | boolean | string | undefined>>(process.argv.slice(2), {
  charges: { type: 'number', default: 100_000, min: 1000, max: 1_000_000, help: 'stored SPEI charges' },
  write: { type: 'boolean', default: false, help: 'append the results to bench/RESULTS.md' },
  keep: { type: 'boolean', default: false, help: 'keep the scratch database (to look at the plans)' },
  json: { type: 'string', help: 'write the headline figures as JSON here (what ops/bench.mjs --baseline compares)' },
}, 'npm run bench:reconciliation -- [options]');
const CHARGES = o.charges as number;
const root = join(here, '..', '..');
// The API under test: this tree's, or the baseline's build under ops/bench.mjs --baseline (the same
// bench code seeds and measures both).
const appRoot = process.env.BENCH_APP_ROOT ?? root;
const DB = `orq_recon_bench_${randomBytes(3).toString('hex')}`;
const ADMIN = `adm_bench_${randomBytes(12).toString('hex')}`;
const PREFIX = `orq_bench_recon_${randomBytes(3).toString('hex')}`;
const DAY = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Mexico_City' }).format(new Date());
const [yy, mm, dd] = DAY.split('-');

function httpJson(port: number, method: string, path: string, headers: Record<string, string>, body?: Buffer | string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { connection: 'close', ...headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        try {
          resolve({ status: res.statusCode!, body: JSON.parse(text) });
        } catch {
          resolve({ status: res.statusCode!, body: text });
        }
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Peak and current resident memory (kB) of a process. */
function memOf(pid: number): { hwmKb: number; rssKb: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? 0);
  return { hwmKb: kb('VmHWM'), rssKb: kb('VmRSS') };
}

async function startApi(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(appRoot, 'dist', 'ops', 'main.js')], {
    cwd: appRoot,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      NODE_ENV: 'test',
      ROLE: 'api',
      PORT: String(port),
      DATABASE_URL: dbUrl(DB),
      REDIS_PREFIX: PREFIX,
      ADMIN_KEY: ADMIN,
      LOG_LEVEL: 'error',
      STATE_DIR: mkdtempSync(join(tmpdir(), 'orq-bench-recon-')),
      SEED_DEMO_TENANT: 'false',
      RATE_LIMIT_V1_PER_MIN: '100000',
    },
  });
  const end = Date.now() + 60_000;
  while (Date.now() < end) {
    if (child.exitCode !== null) throw new Error(`the API process exited (${child.exitCode})`);
    const ok = await httpJson(port, 'GET', '/health/live', {}).then((r) => r.status === 200, () => false);
    if (ok) return child;
    await sleep(100);
  }
  throw new Error('the API process did not come up');
}

/** A Banorte CSV of about `bytes` bytes whose line k names charge index(k). */
function statement(bytes: number, index: (k: number) => number, salt: string): { file: Buffer; lines: number } {
  const head = `FECHA,REFERENCIA,DESCRIPCIÓN,COD. TRANSAC,SUCURSAL,DEPÓSITOS,RETIROS,SALDO,MOVIMIENTO,DESCRIPCIÓN DETALLADA (${salt})\r\n`;
  const parts: string[] = [head];
  let size = Buffer.byteLength(head);
  for (let k = 0; ; k++) {
    const i = index(k);
    const kind = k % 10; // 0-7 exact, 8 partial, 9 unmatched
    const ref = kind === 9 ? `NOPE${k}` : `bench_${i}`;
    const amount = 1000 + i + (kind === 8 ? 1 : 0);
    const money = `"$${(amount / 100).toLocaleString('en-US', { minimumFractionDigits: 2 })}"`;
    // about 105 bytes a line: 5 MiB is about 50,000 lines (issue 16)
    const row = `${dd}/${mm}/${yy},${ref},SPEI RECIBIDO,5001,0123,${money},-,"$1,000,000.00",${k + 1},CTA 0121800012 PAGO ${k}\r\n`;
    const n = Buffer.byteLength(row);
    if (size + n > bytes) return { file: Buffer.from(parts.join('')), lines: k };
    parts.push(row);
    size += n;
  }
}

async function main() {
  const sources = sourceInfo();
  const port = 20000 + Math.floor(Math.random() * 20000);
  let api = await startApi(port); // creates and migrates the scratch database
  const sql = createSql(dbUrl(DB), 2);
  const results: Array<Array<string | number>> = [];
  const headline: Record<string, { value: number; better: 'higher' | 'lower'; unit: string }> = {};
  try {
    const t = await httpJson(port, 'POST', '/admin/tenants', { 'x-admin-key': ADMIN, 'content-type': 'application/json' }, '{"name":"Bench Recon"}');
    const tenant = t.body.id as string;
    const key = (t.body.api_keys as Array<{ key: string; livemode: boolean }>).find((k) => !k.livemode)!.key;
    const t0 = Date.now();
    await sql`
      insert into payment_intents (id, tenant_id, livemode, amount_minor, currency, status, client_secret, receipt_code)
      select ('00000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, ${tenant}, false, 1000 + g, 'MXN', 'succeeded', 'pi_secret_bench_' || g, 'B-' || g
        from generate_series(0, ${CHARGES - 1}) g`;
    await sql`
      insert into attempts (id, tenant_id, livemode, payment_intent_id, status, connector_key, method, amount_minor, currency, provider_ref, provider_key)
      select ('00000000-0000-4000-9000-' || lpad(to_hex(g), 12, '0'))::uuid, ${tenant}, false, ('00000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid,
             'captured', 'sim', 'spei', 1000 + g, 'MXN', 'bench_' || g, 'orq_att_bench_' || g
        from generate_series(0, ${CHARGES - 1}) g`;
    await sql`
      insert into cash_facts (kind, source_id, entry_id, tenant_id, livemode, occurred_at, currency, method, connector_key, payment_intent_id, attempt_id, amount_minor, tip_minor)
      select 'charge', ('00000000-0000-4000-9000-' || lpad(to_hex(g), 12, '0'))::uuid, gen_random_uuid(), ${tenant}, false, now(), 'MXN', 'spei', 'sim',
             ('00000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, ('00000000-0000-4000-9000-' || lpad(to_hex(g), 12, '0'))::uuid, 1000 + g, 0
        from generate_series(0, ${CHARGES - 1}) g`;
    await sql`analyze payment_intents; analyze attempts; analyze cash_facts`.simple();
    console.log(`${CHARGES} charges stored in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    const sizes: Array<[string, number, (k: number) => number]> = [
      ['500 KiB', 500 * 1024, (k) => 2 * k + 1],
      ['5 MiB', 5 * 1024 * 1024, (k) => 2 * k],
    ];
    for (const [label, bytes, index] of sizes) {
      const { file, lines } = statement(bytes, index, randomBytes(4).toString('hex'));
      // a fresh API process per size: its peak is this import's
      api.kill('SIGTERM');
      await new Promise((r) => api.once('exit', r));
      api = await startApi(port);
      await httpJson(port, 'GET', '/v1/bank_statements', { authorization: `Bearer ${key}` }); // warm the key cache and the pool
      const before = memOf(api.pid!);
      const q = `bank=Banorte&period_start=${DAY}&period_end=${DAY}&preset=banorte&tolerance_days=0`;
      const s = process.hrtime.bigint();
      const r = await httpJson(port, 'POST', `/v1/bank_statements?${q}`, { authorization: `Bearer ${key}`, 'content-type': 'text/csv' }, file);
      const secs = Number(process.hrtime.bigint() - s) / 1e9;
      const after = memOf(api.pid!);
      if (r.status !== 201) throw new Error(`import ${label}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      console.log(`${label}: ${lines} lines in ${secs.toFixed(2)} s; matched ${r.body.matched}, partial ${r.body.partial}, unmatched ${r.body.unmatched}; API VmHWM ${before.hwmKb} → ${after.hwmKb} kB`);
      headline[`${label} import`] = { value: secs, better: 'lower', unit: 's' };
      headline[`${label} lines/s`] = { value: lines / secs, better: 'higher', unit: '/s' };
      results.push([label, file.length, lines, fmt(secs, 2), fmt(lines / secs), `${r.body.matched} / ${r.body.partial} / ${r.body.unmatched}`, fmt(before.hwmKb / 1024, 1), fmt(after.hwmKb / 1024, 1), fmt((after.hwmKb - before.rssKb) / 1024, 1)]);
    }
    // A 50 MiB upload (chunked, no Content-Length) in a fresh process: refused past the cap, its
    // bytes dropped as they arrive, so the peak must not grow with it.
    api.kill('SIGTERM');
    await new Promise((r) => api.once('exit', r));
    api = await startApi(port);
    await httpJson(port, 'GET', '/v1/bank_statements', { authorization: `Bearer ${key}` });
    const before = memOf(api.pid!);
    const refused = await new Promise<{ status: number; code?: string; sentMiB: number }>((resolve) => {
      let sent = 0;
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: `/v1/bank_statements?bank=X&period_start=${DAY}&period_end=${DAY}&preset=banorte`, headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv', connection: 'close' }, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode!, code: JSON.parse(Buffer.concat(chunks).toString()).error?.code, sentMiB: sent / 2 ** 20 }));
      });
      req.on('error', () => resolve({ status: 0, sentMiB: sent / 2 ** 20 }));
      const chunk = Buffer.alloc(256 * 1024, 0x41);
      const pump = () => {
        while (sent < 50 * 2 ** 20) {
          sent += chunk.length;
          if (!req.write(chunk)) return req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    const after = memOf(api.pid!);
    console.log(`50 MiB upload: ${refused.status} ${refused.code ?? '(connection closed)'} after ${refused.sentMiB.toFixed(1)} MiB sent; API VmHWM ${before.hwmKb} → ${after.hwmKb} kB`);
    results.push([`50 MiB upload (refused: ${refused.code ?? 'closed'})`, 50 * 2 ** 20, '-', '-', '-', '-', fmt(before.hwmKb / 1024, 1), fmt(after.hwmKb / 1024, 1), fmt((after.hwmKb - before.rssKb) / 1024, 1)]);
  } finally {
    api.kill('SIGTERM');
    await new Promise((r) => (api.exitCode !== null ? r(null) : api.once('exit', r)));
    await sql.end({ timeout: 2 });
    if (o.keep) console.log(`kept database ${DB}`);
    else await dropDatabase(DB);
  }
  const m = machineInfo();
  const table = mdTable(['file', 'bytes', 'lines', 'import s', 'lines/s', 'matched / partial / unmatched', 'API peak MiB before', 'API peak MiB after', 'peak − RSS before, MiB'], results);
  const out = [
    '',
    `## bench/reconciliation (${m.date.slice(0, 10)}, commit ${sources.commit}${sources.dirty.length ? ' + uncommitted changes' : ''})`,
    '',
    `Import of a Banorte-layout statement (POST /v1/bank_statements, raw body) against ${CHARGES.toLocaleString('en-US')} stored SPEI charges; each size in a fresh API process (ROLE=api). ` +
      `Node ${m.node}, ${m.nproc} CPUs (${m.cpuModel}), ${m.memGiB} GiB, shared with other sessions. "import s" is the whole request: upload over loopback, parse, insert, matching, ledger postings, commit.`,
    '',
    table,
    '',
  ].join('\n');
  console.log(out);
  if (o.write) appendFileSync(join(root, 'bench', 'RESULTS.md'), out);
  if (o.json) writeFileSync(o.json as string, JSON.stringify({ machine: m, source: sources, appRoot, headline }, null, 2) + '\n');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
