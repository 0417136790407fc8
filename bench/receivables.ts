// bench/receivables: ageing (all customers, and one customer) and a customer statement through the
// running service, for a tenant with 1,000 receivables and one with 100,000, both with 20
// receivables per customer (50 and 5,000 customers), generated in bulk with SQL (receivables and
// their payment links). p50/p99 and the large / small ratio.
//   flock /tmp/orq-bench.lock node dist/bench/receivables.js [--small 1000] [--large 100000] [--iterations 100] [--reuse]
import { dbUrl, dropDatabase, fmt, latencyStats, machineInfo, mdTable, parseOptions, sourceInfo, waitForQuiet } from './confirm-lib.js';
import { createSql, ensureDatabase, type Sql } from '../kernel/db.js';
import { migrate } from '../ops/migrate.js';
import { startTestApp } from '../test/helpers/app.js';

const o = parseOptions<{ small: number; large: number; iterations: number; reuse: boolean; perCustomer: number }>(process.argv.slice(2), {
  small: { type: 'number', default: 1_000, min: 100, help: 'receivables of the small tenant' },
  large: { type: 'number', default: 100_000, min: 100, help: 'receivables of the large tenant' },
  perCustomer: { type: 'number', default: 20, min: 1, help: 'receivables per customer' },
  iterations: { type: 'number', default: 100, min: 10, help: 'timed requests per query and tenant (after 10 warm-up)' },
  reuse: { type: 'boolean', default: false, help: 'keep the generated database of an earlier run' },
}, 'bench/receivables: ageing and statement latency at two sizes');

const DB = 'orq_bench_receivables';

/**
 * N receivables of N / perCustomer customers: due dates spread over the 200 days before now and the
 * 60 after, a third paid, 3% canceled, amounts 100.00 to 50,099.00 MXN; each with its link. The
 * unpaid ones past due are stored `overdue`, as their timers would have left them.
 */
async function generate(sql: Sql, tenantId: string, n: number, perCustomer: number) {
  const customers = Math.max(1, Math.floor(n / perCustomer));
  await sql.begin(async (tx) => {
    await tx`
      create temp table gen on commit drop as
      select i, gen_random_uuid() as id, gen_random_uuid() as link, 'c' || (i % ${customers}) || '@bench.mx' as email,
             'Cliente ' || (i % ${customers}) as name,
             now() - interval '200 days' + ((i * 7919) % 260) * interval '1 day' as due,
             (10000 + (i * 104729) % 5000000)::bigint as amount,
             case when i % 3 = 0 then 'paid' when i % 33 = 1 then 'canceled' else 'open' end as state,
             lower(substr(md5(random()::text || i), 1, 12)) as slug
        from generate_series(0::bigint, ${n - 1}::bigint) i`;
    await tx`
      insert into payment_links (id, tenant_id, livemode, slug, amount_minor, currency, concepto, reusable, active, metadata, paid_at)
      select link, ${tenantId}, false, slug, amount, 'MXN', 'Factura ' || i, false, state = 'open', jsonb_build_object('receivable_id', id::text), case when state = 'paid' then due end from gen`;
    await tx`
      insert into receivables (id, tenant_id, livemode, status, customer_name, customer_email, concepto, amount_minor, currency, due_date, payment_link_id, payment_link_slug, paid_at, canceled_at, created_at, updated_at)
      select id, ${tenantId}, false, case when state = 'open' and due <= now() then 'overdue' else state end, name, email, 'Factura ' || i, amount, 'MXN', due, link, slug,
             case when state = 'paid' then due - interval '1 day' end, case when state = 'canceled' then due end, due - interval '30 days', due - interval '30 days' from gen`;
  });
  return customers;
}

async function main() {
  const url = dbUrl(DB);
  if (!o.reuse) await dropDatabase(DB);
  await ensureDatabase(url);
  const sql = createSql(url, 4);
  await migrate(sql);
  const app = await startTestApp({ DATABASE_URL: url, ROLE: 'api', RATE_LIMIT_V1_PER_MIN: '100000000' });
  try {
    await sql`create table if not exists bench_tenants (size bigint primary key, tenant_id uuid not null, key text not null, customers int not null)`;
    const tenants: Array<{ size: number; id: string; key: string; customers: number }> = [];
    for (const size of [o.small, o.large]) {
      const [known] = await sql`select tenant_id, key, customers from bench_tenants where size = ${size}`;
      if (known) {
        tenants.push({ size, id: known.tenant_id as string, key: known.key as string, customers: Number(known.customers) });
        continue;
      }
      const t = await app.newTenant(`bench ${size}`);
      const g0 = Date.now();
      const customers = await generate(sql, t.id, size, o.perCustomer);
      process.stderr.write(`generated ${size.toLocaleString()} receivables of ${customers.toLocaleString()} customers in ${((Date.now() - g0) / 1000).toFixed(1)} s\n`);
      await sql`insert into bench_tenants values (${size}, ${t.id}, ${t.testKey}, ${customers})`;
      tenants.push({ size, id: t.id, key: t.testKey, customers });
    }
    await sql.unsafe('vacuum analyze');
    const [counts] = await sql`select (select count(*) from receivables)::bigint as receivables, pg_size_pretty(pg_database_size(current_database())) as size`;
    const quiet = await waitForQuiet('bench/receivables', 60);
    const results: Array<{ query: string; size: number; p50: number; p99: number; bytes: number }> = [];
    for (const t of tenants) {
      const customer = () => `c${Math.floor(Math.random() * t.customers)}@bench.mx`;
      const queries: Array<[string, () => string]> = [
        ['ageing, every customer', () => '/v1/receivables/ageing'],
        ['ageing, one customer', () => `/v1/receivables/ageing?customer_email=${customer()}`],
        ['customer statement', () => `/v1/receivables/statement?customer_email=${customer()}`],
        ['list, overdue, first page (20)', () => '/v1/receivables?status=overdue'],
      ];
      for (const [name, path] of queries) {
        const lat: number[] = [];
        let bytes = 0;
        for (let i = 0; i < 10 + o.iterations; i++) {
          const t0 = performance.now();
          const r = await fetch(app.url + path(), { headers: { authorization: `Bearer ${t.key}` } });
          const b = await r.arrayBuffer();
          if (r.status !== 200) throw new Error(`${name}: ${r.status} ${Buffer.from(b).toString()}`);
          if (i >= 10) {
            lat.push(performance.now() - t0);
            bytes = b.byteLength;
          }
        }
        const s = latencyStats(lat);
        results.push({ query: name, size: t.size, p50: s.p50, p99: s.p99, bytes });
      }
    }
    const src = sourceInfo();
    const rows = [...new Set(results.map((r) => r.query))].map((q) => {
      const s = results.find((r) => r.query === q && r.size === o.small)!;
      const l = results.find((r) => r.query === q && r.size === o.large)!;
      return [q, `${fmt(s.p50, 1)} / ${fmt(s.p99, 1)}`, `${fmt(l.p50, 1)} / ${fmt(l.p99, 1)}`, `${fmt(l.p50 / s.p50, 2)}x / ${fmt(l.p99 / s.p99, 2)}x`, `${fmt(s.bytes / 1024, 1)} / ${fmt(l.bytes / 1024, 1)}`];
    });
    const [small, large] = tenants;
    process.stdout.write(`\n## bench/receivables (${new Date().toISOString()}, commit ${src.commit}${src.dirty.length ? ' + uncommitted changes' : ''})\n\n`);
    process.stdout.write(`Machine: ${JSON.stringify(machineInfo())}; quiet check: ${JSON.stringify(quiet)}\n`);
    process.stdout.write(`Database: ${counts.receivables} receivables, ${counts.size}. ${o.iterations} sequential requests per row after 10 warm-up.\n\n`);
    process.stdout.write(mdTable(['query', `${small!.size.toLocaleString()} receivables (${small!.customers} customers) p50 / p99 ms`, `${large!.size.toLocaleString()} receivables (${large!.customers} customers) p50 / p99 ms`, 'ratio p50 / p99', 'answer KiB small / large'], rows) + '\n');
  } finally {
    await app.stop();
    await sql.end();
  }
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});
