// bench/reports: cash cut (a month, one branch; a month, all branches), a payments page at a random
// depth and a month's trial balance, through the running service, for a tenant with 10^4 charges
// and one with 10^6 (a year of card and SPEI charges, tips, 10 branches, 2% refunded), generated in
// bulk with SQL through the real ledger triggers. p50/p99 and the 10^6 / 10^4 ratio.
//   flock /tmp/orq-bench.lock node dist/bench/reports.js [--small 10000] [--large 1000000] [--iterations 200] [--reuse]
import { dbUrl, dropDatabase, fmt, latencyStats, machineInfo, mdTable, parseOptions, sourceInfo, waitForQuiet } from './confirm-lib.js';
import { createSql, ensureDatabase, type Sql } from '../kernel/db.js';
import { migrate } from '../ops/migrate.js';
import { summarizeAll } from '../kernel/ledger.js';
import { startTestApp } from '../test/helpers/app.js';
import { signCursor } from '../actors/list-cursor.js';
import { addMonths, firstOfMonth, localDate } from '../actors/reports/period.js';

const o = parseOptions<{ small: number; large: number; iterations: number; reuse: boolean; chunk: number }>(process.argv.slice(2), {
  small: { type: 'number', default: 10_000, min: 100, help: 'charges of the small tenant' },
  large: { type: 'number', default: 1_000_000, min: 100, help: 'charges of the large tenant' },
  iterations: { type: 'number', default: 200, min: 10, help: 'timed requests per query and tenant (after 20 warm-up)' },
  reuse: { type: 'boolean', default: false, help: 'keep the generated database of an earlier run' },
  chunk: { type: 'number', default: 100_000, min: 1000, help: 'charges per generating transaction' },
}, 'bench/reports: report latency at two ledger sizes');

const DB = 'orq_bench_reports';

/** N charges spread over the 365 days before now, through the ledger's own triggers. */
async function generate(sql: Sql, tenantId: string, n: number, chunk: number) {
  for (let lo = 0; lo < n; lo += chunk) {
    const hi = Math.min(n, lo + chunk);
    const t0 = Date.now();
    const times: string[] = [];
    await sql.begin(async (raw) => {
      let last = Date.now();
      // Times each statement of the chunk (printed with the chunk's progress line).
      const tx = ((strings: TemplateStringsArray, ...args: unknown[]) =>
        (raw as unknown as (s: TemplateStringsArray, ...a: unknown[]) => Promise<unknown>)(strings, ...args).then((r) => {
          times.push(`${strings[0].trim().split(/\s+/).slice(0, 3).join(' ')} ${Date.now() - last} ms`);
          last = Date.now();
          return r;
        })) as unknown as Sql;
      await tx`
        create temp table gen on commit drop as
        select i, gen_random_uuid() as pi, gen_random_uuid() as att, gen_random_uuid() as ent,
               now() - (i::float8 / ${n}) * interval '365 days' as at,
               (1000 + (i * 7919) % 50000)::bigint as amount,
               (case when i % 3 = 0 then (i % 7) * 100 else 0 end)::bigint as tip,
               case when i % 5 = 0 then 'spei' else 'card' end as method,
               'Sucursal ' || (i % 10) as branch, 'Caja ' || (i % 5) as register
          from generate_series(${lo}::bigint, ${hi - 1}::bigint) i`;
      await tx`
        insert into payment_intents (id, tenant_id, livemode, amount_minor, tip_minor, currency, status, client_secret, metadata, receipt_code, created_at, updated_at)
        select pi, ${tenantId}, false, amount, tip, 'MXN', 'succeeded', 'pi_secret_' || pi, jsonb_build_object('branch', branch, 'register', register), 'B-' || i, at, at from gen`;
      await tx`
        insert into attempts (id, tenant_id, livemode, payment_intent_id, status, connector_key, method, amount_minor, currency, provider_key, fee_minor, created_at, updated_at)
        select att, ${tenantId}, false, pi, case when i % 50 = 0 then 'refunded' else 'captured' end, 'sim', method, amount + tip, 'MXN', 'bench_' || att,
               case when method = 'card' then round((amount + tip) * 0.029) + 250 else 500 end, at, at from gen`;
      await tx`insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id, created_at, occurred_at)
               select ent, ${tenantId}, false, 'charge.captured', 'attempt', att, at, at from gen`;
      await tx`
        insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor)
        select ent, ${tenantId}, false, l.account, 'MXN', l.amount
          from gen, lateral (select case when method = 'card' then round((amount + tip) * 0.029)::bigint + 250 else 500 end as fee) f,
               lateral (values ('connector_receivable:sim', amount + tip), ('sales', -amount), ('tips_payable', -tip), ('connector_fees:sim', f.fee), ('connector_receivable:sim', -f.fee)) l(account, amount)
         where l.amount <> 0`;
      await tx`create temp table ref on commit drop as select gen_random_uuid() as r, gen_random_uuid() as rent, * from gen where i % 50 = 0`;
      await tx`insert into refunds (id, tenant_id, livemode, attempt_id, payment_intent_id, amount_minor, currency, status, requested_by, created_at, updated_at)
               select r, ${tenantId}, false, att, pi, amount + tip, 'MXN', 'succeeded', 'bench', at + interval '1 hour', at + interval '1 hour' from ref`;
      await tx`insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id, created_at, occurred_at)
               select rent, ${tenantId}, false, 'refund.succeeded', 'refund', r, at + interval '1 hour', at + interval '1 hour' from ref`;
      await tx`insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor)
               select rent, ${tenantId}, false, l.account, 'MXN', l.amount from ref, lateral (values ('refunds', amount + tip), ('connector_receivable:sim', -(amount + tip))) l(account, amount)`;
    });
    process.stderr.write(`  ${tenantId.slice(0, 8)}: ${hi.toLocaleString()} / ${n.toLocaleString()} charges (${((Date.now() - t0) / 1000).toFixed(1)} s: ${times.join(', ')})\n`);
  }
}

async function main() {
  const url = dbUrl(DB);
  if (!o.reuse) await dropDatabase(DB);
  await ensureDatabase(url);
  const sql = createSql(url, 4);
  await migrate(sql);
  const app = await startTestApp({ DATABASE_URL: url, ROLE: 'api', RATE_LIMIT_V1_PER_MIN: '100000000' });
  try {
    await sql`create table if not exists bench_tenants (size bigint primary key, tenant_id uuid not null, key text not null)`;
    const tenants: Array<{ size: number; id: string; key: string }> = [];
    for (const size of [o.small, o.large]) {
      const [known] = await sql`select tenant_id, key from bench_tenants where size = ${size}`;
      if (known) {
        tenants.push({ size, id: known.tenant_id as string, key: known.key as string });
        continue;
      }
      const t = await app.newTenant(`bench ${size}`);
      const g0 = Date.now();
      await generate(sql, t.id, size, o.chunk);
      process.stderr.write(`generated ${size.toLocaleString()} charges in ${((Date.now() - g0) / 1000).toFixed(0)} s\n`);
      await sql`insert into bench_tenants values (${size}, ${t.id}, ${t.testKey})`;
      tenants.push({ size, id: t.id, key: t.testKey });
    }
    // The service's worker writes the summaries of new entries (migration 0180); this bench runs the
    // api alone, so it summarizes what it generated itself before measuring (timed: the batch cost).
    const s0 = Date.now();
    const summarized = await summarizeAll(sql, { batch: 10_000, maxBatches: Infinity });
    if (summarized) process.stderr.write(`summarized ${summarized.toLocaleString()} pending entries in ${((Date.now() - s0) / 1000).toFixed(1)} s\n`);
    await sql.unsafe('vacuum analyze');
    const [counts] = await sql`select (select count(*) from journal_lines)::bigint as lines, (select count(*) from journal_entries)::bigint as entries, (select count(*) from cash_facts)::bigint as facts, pg_size_pretty(pg_database_size(current_database())) as size`;
    const [keyRow] = await sql`select secret from report_cursor_keys where id = 1`;
    const cursorKey = Buffer.from(keyRow.secret as string, 'hex');
    const quiet = await waitForQuiet('bench/reports', 60);

    const today = localDate(new Date());
    const months = Array.from({ length: 11 }, (_, i) => addMonths(firstOfMonth(today), -(i + 1)));
    const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)];
    const results: Array<{ query: string; size: number; p50: number; p99: number; avg: number }> = [];
    for (const t of tenants) {
      const positions = await sql`select created_at::text as c, id::text as i from payment_intents where tenant_id = ${t.id} order by random() limit 100`;
      const queries: Array<[string, () => string]> = [
        ['cash cut, a month, one branch', () => { const m = pick(months); return `/v1/reports/cash-cut?from=${m}&to=${addMonths(m, 1)}&branch=${encodeURIComponent(`Sucursal ${Math.floor(Math.random() * 10)}`)}`; }],
        ['cash cut, a month, all branches', () => { const m = pick(months); return `/v1/reports/cash-cut?from=${m}&to=${addMonths(m, 1)}`; }],
        ['payments page (20) at a random depth', () => { const p = pick(positions); return `/v1/reports/payments?cursor=${encodeURIComponent(signCursor('payments', cursorKey, { tenantId: t.id, livemode: false }, { c: p.c as string, i: p.i as string }))}`; }],
        ['trial balance, a month', () => { const m = pick(months); return `/v1/reports/balanza?from=${m}&to=${addMonths(m, 1)}`; }],
      ];
      for (const [name, path] of queries) {
        const lat: number[] = [];
        for (let i = 0; i < 20 + o.iterations; i++) {
          const t0 = performance.now();
          const r = await fetch(app.url + path(), { headers: { authorization: `Bearer ${t.key}` } });
          await r.arrayBuffer();
          if (r.status !== 200) throw new Error(`${name}: ${r.status}`);
          if (i >= 20) lat.push(performance.now() - t0);
        }
        const s = latencyStats(lat);
        results.push({ query: name, size: t.size, p50: s.p50, p99: s.p99, avg: s.avg });
      }
    }
    const src = sourceInfo();
    const rows = [...new Set(results.map((r) => r.query))].map((q) => {
      const s = results.find((r) => r.query === q && r.size === o.small)!;
      const l = results.find((r) => r.query === q && r.size === o.large)!;
      return [q, `${fmt(s.p50, 1)} / ${fmt(s.p99, 1)}`, `${fmt(l.p50, 1)} / ${fmt(l.p99, 1)}`, `${fmt(l.p50 / s.p50, 2)}x / ${fmt(l.p99 / s.p99, 2)}x`];
    });
    process.stdout.write(`\n## bench/reports (${new Date().toISOString()}, commit ${src.commit}${src.dirty.length ? ' + uncommitted changes' : ''})\n\n`);
    process.stdout.write(`Machine: ${JSON.stringify(machineInfo())}; quiet check: ${JSON.stringify(quiet)}\n`);
    process.stdout.write(`Database: ${counts.entries} journal entries, ${counts.lines} journal lines, ${counts.facts} cash facts, ${counts.size}. ${o.iterations} sequential requests per row after 20 warm-up.\n\n`);
    process.stdout.write(mdTable(['query', `${o.small.toLocaleString()} charges p50 / p99 ms`, `${o.large.toLocaleString()} charges p50 / p99 ms`, 'ratio p50 / p99'], rows) + '\n');
  } finally {
    await app.stop();
    await sql.end();
  }
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});
