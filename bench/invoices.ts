// bench/invoices: PUE invoices per second through the API (POST /v1/invoices, sim PAC, SAT's test
// CSD) beside a bare loop of the same XML build + sign, in the same run. The server is the real app
// (bench/orquesta-server.ts, ROLE=api) on a scratch database; succeeded card charges are seeded in
// SQL (the bench measures invoicing, not charging). Prints a markdown block for bench/RESULTS.md.
// Run: npm run bench:invoices -- [--seconds 15] [--concurrency 8]   (under flock /tmp/orq-bench.lock)
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import postgres from 'postgres';
import { Pool } from 'undici';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { appBench, Children, CpuSampler, dbUrl, dropDatabase, findProfile, fmt, here, latencyStats, machineInfo, monoUs, parseOptions, profileTables, sourceInfo, summarizeProfile, waitForQuiet } from './confirm-lib.js';
import { construirIngreso, sellarComprobante } from '../formats/cfdi/comprobante.js';
import { testCsd } from '../connectors/pac/test-csd.js';

const opt = parseOptions<{ seconds: number; concurrency: number; warmup: number; bare: number; 'max-wait': number; profile: boolean; json?: string }>(
  process.argv.slice(2),
  {
    seconds: { type: 'number', default: 15, min: 2, max: 120, help: 'measured seconds of the API phase' },
    concurrency: { type: 'number', default: 8, min: 1, max: 64, help: 'requests in flight' },
    warmup: { type: 'number', default: 2, min: 0, max: 30, help: 'seconds of API warm-up (not measured)' },
    bare: { type: 'number', default: 5, min: 1, max: 60, help: 'seconds of the bare build + sign loop' },
    'max-wait': { type: 'number', default: 600, min: 0, max: 3600, help: 'seconds to wait for a quiet machine' },
    profile: { type: 'boolean', default: false, help: 'V8 CPU profile of the server during the measured phase (printed summary)' },
    json: { type: 'string', help: 'write the figures (and the headline of ops/bench.mjs --baseline) as JSON here' },
  },
  'npm run bench:invoices -- [options]',
);

const receptor = { rfc: 'EKU9003173C9', nombre: 'ESCUELA KEMPER URGATE', uso_cfdi: 'G03', regimen_fiscal: '601', cp: '26015' };
const dbName = `orq_bench_invoices_${randomBytes(3).toString('hex')}`;
const children = new Children('bench/invoices');

async function main() {
  const quiet = await waitForQuiet('bench/invoices', opt['max-wait']);
  const url = dbUrl(dbName);
  const profDir = mkdtempSync(join(tmpdir(), 'orq-inv-prof-'));
  const srv = await children.start<{ appPort: number; key: string; tenantId: string }>('orquesta', appBench('orquesta-server.js'), {
    env: { ...process.env, DATABASE_URL: url },
    nodeArgs: opt.profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [],
  });
  const base = `http://127.0.0.1:${srv.info.appPort}`;
  const pool = new Pool(base, { connections: opt.concurrency, pipelining: 1 });
  const call = async (method: string, path: string, body: unknown) => {
    const r = await pool.request({ method: method as 'POST', path, headers: { authorization: `Bearer ${srv.info.key}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() }, body: JSON.stringify(body) });
    return { status: r.statusCode, text: await r.body.text() };
  };
  const prof = await call('PUT', '/v1/fiscal_profile', { rfc: 'AAA010101AAA', nombre: 'ACCEM SERVICIOS EMPRESARIALES SC', regimen_fiscal: '601', cp: '06600', pac_provider: 'sim' });
  if (prof.status !== 200) throw new Error(`fiscal profile: ${prof.status} ${prof.text}`);

  // Succeeded card charges, seeded in SQL: enough for the whole API phase at a generous rate.
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  const need = 400 * (opt.seconds + opt.warmup) + 1000;
  const charges: string[] = [];
  for (let done = 0; done < need; done += 2000) {
    const rows = Array.from({ length: Math.min(2000, need - done) }, (_, i) => ({ id: randomUUID(), code: `B-${(done + i).toString(36).toUpperCase().padStart(6, '0')}` }));
    await sql`insert into payment_intents (id, tenant_id, livemode, amount_minor, tip_minor, currency, status, client_secret, receipt_code)
      select x.id::uuid, ${srv.info.tenantId}, false, 11600, 0, 'MXN', 'succeeded', 'pi_secret_' || x.id, x.code from jsonb_to_recordset(${sql.json(rows)}) as x(id text, code text)`;
    await sql`insert into attempts (id, tenant_id, livemode, payment_intent_id, status, connector_key, method, amount_minor, currency, provider_key)
      select gen_random_uuid(), ${srv.info.tenantId}, false, x.id::uuid, 'captured', 'sim', 'card', 11600, 'MXN', 'bench_' || x.id from jsonb_to_recordset(${sql.json(rows)}) as x(id text)`;
    charges.push(...rows.map((r) => r.id));
  }
  await sql.end();

  // API phase: C loops, each POSTing the next charge's invoice.
  let next = 0;
  const lat: number[] = [];
  let errors = 0;
  const run = async (until: number, record: boolean) => {
    await Promise.all(
      Array.from({ length: opt.concurrency }, async () => {
        while (Date.now() < until && next < charges.length) {
          const id = charges[next++];
          const t0 = performance.now();
          const r = await call('POST', '/v1/invoices', { payment_intent_id: id, receptor });
          if (r.status !== 201) errors++;
          if (record) lat.push(performance.now() - t0);
        }
      }),
    );
  };
  await run(Date.now() + opt.warmup * 1000, false);
  const cpu = new CpuSampler({ server: srv.child.pid, driver: process.pid }).start();
  const t0 = performance.now();
  const fromUs = monoUs();
  await run(Date.now() + opt.seconds * 1000, true);
  const toUs = monoUs();
  const apiSeconds = (performance.now() - t0) / 1000;
  const cpuReport = cpu.stop();
  await pool.close();
  await children.stopAll();
  const profFile = opt.profile ? findProfile(profDir, srv.child.pid) : undefined;
  const profText = profFile ? profileTables(summarizeProfile(profFile, fromUs, toUs), 25) : '';
  rmSync(profDir, { recursive: true, force: true });

  // Bare loop: the same document built and sealed in this process, nothing else.
  const csd = testCsd(false);
  const emisor = { rfc: 'AAA010101AAA', nombre: 'ACCEM SERVICIOS EMPRESARIALES SC', regimenFiscal: '601' };
  const rec = { rfc: receptor.rfc, nombre: receptor.nombre, cp: receptor.cp, regimenFiscal: receptor.regimen_fiscal, usoCfdi: receptor.uso_cfdi };
  let bare = 0;
  const bareLat: number[] = [];
  const b0 = performance.now();
  while (performance.now() - b0 < opt.bare * 1000) {
    const s = performance.now();
    const built = construirIngreso({ serie: 'F', folio: String(bare), fecha: new Date(), lugarExpedicion: '06600', emisor, receptor: rec, metodoPago: 'PUE', formaPago: '04', conceptos: [{ descripcion: 'Venta', importeMinor: 11600 }] });
    sellarComprobante(built.doc, csd);
    bareLat.push(performance.now() - s);
    bare++;
  }
  const bareRate = bare / ((performance.now() - b0) / 1000);
  const apiRate = lat.length / apiSeconds;
  const st = latencyStats(lat);
  const bs = latencyStats(bareLat);
  const src = sourceInfo();
  const m = machineInfo();
  process.stdout.write(
    [
      `### bench/invoices: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, HEAD \`${src.commit}\`${src.dirty.length ? ' (dirty)' : ''}`,
      '',
      `Machine: ${JSON.stringify(m)}; quiet check: ${quiet.busyPct.toFixed(0)}% busy${quiet.warning ? ` (${quiet.warning})` : ''}.`,
      `Settings: ${opt.seconds} s measured after ${opt.warmup} s warm-up, ${opt.concurrency} requests in flight, bare loop ${opt.bare} s.`,
      '',
      '| Path | per second | p50 ms | p99 ms |',
      '|---|---|---|---|',
      `| POST /v1/invoices (sim PAC), ${lat.length} invoices, ${errors} errors | ${fmt(apiRate, 1)} | ${fmt(st.p50, 1)} | ${fmt(st.p99, 1)} |`,
      `| bare build + seal (same process, ${bare} documents) | ${fmt(bareRate, 1)} | ${fmt(bs.p50, 2)} | ${fmt(bs.p99, 2)} |`,
      `| ratio API / bare | ${(apiRate / bareRate).toFixed(3)}x | | |`,
      '',
      `CPU during the API phase (% of one core): server ${fmt(cpuReport.pct.server)}, postgres ${fmt(cpuReport.pct.postgres)}, redis ${fmt(cpuReport.pct.redis)}, load driver ${fmt(cpuReport.pct.driver)}; machine busy ${fmt(cpuReport.machineBusyPct)}%.`,
      '',
      profText,
    ].join('\n'),
  );
  if (opt.json)
    writeFileSync(
      opt.json,
      JSON.stringify({ apiRate, bareRate, ratio: apiRate / bareRate, p50: st.p50, p99: st.p99, errors, cpu: cpuReport, headline: {
        'invoices/s through the API': { value: apiRate, better: 'higher', unit: '/s' },
        'API / bare build+seal': { value: apiRate / bareRate, better: 'higher', unit: 'x' },
        'server CPU per invoice': { value: (10 * (cpuReport.pct.server ?? 0) * apiSeconds) / Math.max(1, lat.length), better: 'lower', unit: 'ms' },
        'invoice p99': { value: st.p99, better: 'lower', unit: 'ms' },
      } }, null, 2) + '\n',
    );
}

main()
  .catch((e) => {
    process.stderr.write(`bench/invoices: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 1;
  })
  .finally(async () => {
    await children.stopAll().catch(() => {});
    await dropDatabase(dbName).catch(() => {});
  });
