// bench/portal: the portal's list and search pages (issue 29 part 7) through the running service and
// a signed-in member's session (cookie, re-served /v1 routes), for a tenant with 10^6 payments (a year
// of card and SPEI intents with attempts, 1 in 10 with a customer), generated in bulk with SQL.
// p50/p99 of: the first page of payments, a search by receipt code, the first page filtered by status,
// a search by customer email, by amount, by method; the page's HTML and its bundle.
//   flock /tmp/orq-bench.lock node dist/bench/portal.js [--payments 1000000] [--iterations 200] [--reuse]
import { dbUrl, dropDatabase, fmt, latencyStats, machineInfo, mdTable, parseOptions, sourceInfo, waitForQuiet } from './confirm-lib.js';
import { createSql, ensureDatabase, type Sql } from '../kernel/db.js';
import { hashPassword } from '../kernel/passwords.js';
import { migrate } from '../ops/migrate.js';
import { startTestApp } from '../test/helpers/app.js';

const o = parseOptions<{ payments: number; iterations: number; reuse: boolean; chunk: number }>(process.argv.slice(2), {
  payments: { type: 'number', default: 1_000_000, min: 1000, help: 'payments of the tenant' },
  iterations: { type: 'number', default: 200, min: 10, help: 'timed requests per query (after 20 warm-up)' },
  reuse: { type: 'boolean', default: false, help: 'keep the generated database of an earlier run' },
  chunk: { type: 'number', default: 100_000, min: 1000, help: 'payments per generating transaction' },
}, 'bench/portal: portal list and search latency at 10^6 payments');

const DB = 'orq_bench_portal';
const PASSWORD = 'bench portal password';

async function generate(sql: Sql, tenantId: string, n: number, chunk: number) {
  // 10,000 customers, each with an email; one payment in ten belongs to one of them.
  await sql`
    insert into customers (id, tenant_id, livemode, name, email, created_at)
    select md5(${tenantId}::text || ':' || i)::uuid, ${tenantId}, false, 'Cliente ' || i, 'cliente' || i || '@example.mx', now() - interval '400 days'
      from generate_series(0, 9999) i`;
  for (let lo = 0; lo < n; lo += chunk) {
    const hi = Math.min(n, lo + chunk);
    const t0 = Date.now();
    await sql.begin(async (tx) => {
      await tx`
        create temp table gen on commit drop as
        select i, gen_random_uuid() as pi, gen_random_uuid() as att,
               now() - (i::float8 / ${n}) * interval '365 days' as at,
               (1000 + (i * 7919) % 50000)::bigint as amount,
               case when i % 5 = 0 then 'spei' else 'card' end as method,
               case when i % 20 = 0 then 'failed' else 'succeeded' end as status
          from generate_series(${lo}::bigint, ${hi - 1}::bigint) i`;
      await tx`
        insert into payment_intents (id, tenant_id, livemode, amount_minor, tip_minor, currency, status, client_secret, metadata, receipt_code, customer_id, created_at, updated_at)
        select g.pi, ${tenantId}, false, g.amount, 0, 'MXN', g.status, 'pi_secret_' || g.pi, jsonb_build_object('branch', 'Sucursal ' || (g.i % 10)), 'B-' || g.i,
               case when g.i % 10 = 0 then md5(${tenantId}::text || ':' || ((g.i / 10) % 10000))::uuid end, g.at, g.at
          from gen g`;
      await tx`
        insert into attempts (id, tenant_id, livemode, payment_intent_id, status, connector_key, method, amount_minor, currency, provider_key, fee_minor, created_at, updated_at)
        select att, ${tenantId}, false, pi, case when status = 'failed' then 'failed' else 'captured' end, 'sim', method, amount, 'MXN', 'bench_' || att, 0, at, at from gen`;
    });
    process.stderr.write(`  ${hi.toLocaleString()} / ${n.toLocaleString()} payments (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
  }
}

async function main() {
  const url = dbUrl(DB);
  if (!o.reuse) await dropDatabase(DB);
  await ensureDatabase(url);
  const sql = createSql(url, 4);
  await migrate(sql);
  const app = await startTestApp({ DATABASE_URL: url, ROLE: 'api', AUTH_FAILURES_PER_MIN: '100000' });
  try {
    await sql`create table if not exists bench_portal (size bigint primary key, tenant_id uuid not null, email text not null)`;
    let [known] = await sql`select tenant_id, email from bench_portal where size = ${o.payments}`;
    if (!known) {
      const t = await app.newTenant('bench portal');
      const email = `owner+${t.id.slice(0, 8)}@bench.mx`;
      await sql`insert into portal_members (id, tenant_id, email, name, role, password_hash) values (gen_random_uuid(), ${t.id}, ${email}, 'Bench', 'owner', ${await hashPassword(PASSWORD)})`;
      const g0 = Date.now();
      await generate(sql, t.id, o.payments, o.chunk);
      process.stderr.write(`generated ${o.payments.toLocaleString()} payments in ${((Date.now() - g0) / 1000).toFixed(0)} s\n`);
      await sql`insert into bench_portal values (${o.payments}, ${t.id}, ${email})`;
      known = { tenant_id: t.id, email };
    }
    await sql.unsafe('vacuum analyze');
    const [counts] = await sql`select (select count(*) from payment_intents)::bigint as intents, (select count(*) from attempts)::bigint as attempts, pg_size_pretty(pg_database_size(current_database())) as size`;

    // Sign in like the browser: the session cookie and the CSRF token.
    const signIn = await fetch(`${app.url}/portal/api/session`, { method: 'POST', headers: { 'content-type': 'application/json', origin: app.url }, body: JSON.stringify({ email: known.email, password: PASSWORD }) });
    if (signIn.status !== 200) throw new Error(`sign-in: ${signIn.status} ${await signIn.text()}`);
    const cookie = /orq_session=[^;]+/.exec(signIn.headers.get('set-cookie') ?? '')![0];
    const headers = { cookie, 'orquesta-mode': 'test', origin: app.url };
    const quiet = await waitForQuiet('bench/portal', 60);

    const n = o.payments;
    const ids = (await sql`select id::text as id from payment_intents where tenant_id = ${known.tenant_id} order by random() limit 200`).map((r) => r.id as string);
    const rnd = (k: number) => Math.floor(Math.random() * k);
    const queries: Array<[string, () => string]> = [
      ['payments, first page (25)', () => '/portal/api/v1/payment_intents?limit=25'],
      ['search by receipt code', () => `/portal/api/v1/payment_intents?limit=25&receipt_code=B-${rnd(n)}`],
      ['first page, status=failed', () => '/portal/api/v1/payment_intents?limit=25&status=failed'],
      ['search by customer email', () => `/portal/api/v1/payment_intents?limit=25&customer_email=cliente${rnd(10_000)}@example.mx`],
      ['search by amount (a common one)', () => `/portal/api/v1/payment_intents?limit=25&amount_minor=${1000 + ((rnd(n) * 7919) % 50000)}`],
      ['first page, method=spei', () => '/portal/api/v1/payment_intents?limit=25&method=spei'],
      ['a payment by id (detail)', () => `/portal/api/v1/payment_intents/${ids[rnd(ids.length)]}?expand=attempts`],
      ['GET /portal (the page)', () => '/portal'],
    ];
    const results: Array<{ query: string; p50: number; p99: number; avg: number }> = [];
    for (const [name, path] of queries) {
      const lat: number[] = [];
      for (let i = 0; i < 20 + o.iterations; i++) {
        const t0 = performance.now();
        const r = await fetch(app.url + path(), { headers });
        await r.arrayBuffer();
        if (r.status !== 200) throw new Error(`${name}: ${r.status}`);
        if (i >= 20) lat.push(performance.now() - t0);
      }
      const s = latencyStats(lat);
      results.push({ query: name, p50: s.p50, p99: s.p99, avg: s.avg });
    }
    const src = sourceInfo();
    process.stdout.write(`\n## bench/portal (${new Date().toISOString()}, commit ${src.commit}${src.dirty.length ? ' + uncommitted changes' : ''})\n\n`);
    process.stdout.write(`Machine: ${JSON.stringify(machineInfo())}; quiet check: ${JSON.stringify(quiet)}\n`);
    process.stdout.write(`Database: ${counts.intents} payment intents, ${counts.attempts} attempts, ${counts.size}. One tenant with ${n.toLocaleString()} payments, signed in through /portal/api/session; ${o.iterations} sequential requests per row after 20 warm-up. Target (issue 29): p99 < 200 ms for the first page and the receipt-code search.\n\n`);
    process.stdout.write(mdTable(['query (portal session)', 'p50 ms', 'p99 ms', 'mean ms'], results.map((r) => [r.query, fmt(r.p50, 1), fmt(r.p99, 1), fmt(r.avg, 1)])) + '\n');
  } finally {
    await app.stop();
    await sql.end();
  }
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});
