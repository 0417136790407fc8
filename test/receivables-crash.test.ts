// Receivables paid while their workers are SIGKILLed (issue 15: "the automatic PUE and REP are
// stamped exactly once even when the payment's worker is killed mid-way"). Real service processes
// (node dist/ops/main.js, ROLE=worker) run the charges, the reaction that marks the receivables
// paid and the invoice jobs. The first worker is killed once every receivable is paid and its
// invoice job under way (the test holds the locks those jobs wait for, so this point is reached
// whatever the machine's speed); the next ones at varying points while stamping goes on. Then: every receivable paid once with one receivable.paid event, every PUE charge has
// exactly one invoice row (stamped: a CFDI abandoned and rebuilt would show as a second row), and
// the PPD invoice has exactly one stamped REP per payment with an unbroken balance chain.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { serviceProcesses, sharedWith, startTestApp, waitForWorker } from './helpers/app.js';
import { EntityLocks } from '../kernel/lock.js';
import { base } from './helpers/receivables.js';
import { ownDatabase } from './helpers/db.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fiscal = { customer_name: 'Escuela Kemper Urgate', customer_rfc: 'EKU9003173C9', customer_uso_cfdi: 'G03', customer_regimen_fiscal: '601', customer_cp: '26015' };
const receptor = { rfc: 'EKU9003173C9', nombre: 'Escuela Kemper Urgate', uso_cfdi: 'G03', regimen_fiscal: '601', cp: '26015' };

t.test('workers SIGKILLed while receivables are paid and invoiced: each CFDI once', async (t) => {
  // A database of its own (test/helpers/db.ts): in the shared one, the reconcilers of the test apps of
  // files run beside this one (each with its own Redis prefix, so its own locks) settled these
  // receivables and CFDIs too, overlapping this file's workers (a second CFDI for a charge, a
  // receivable turned to error), which is what this test must not see from its own processes.
  const dbUrl = ownDatabase(t, 'orq_recv_crash');
  const fast = { JOB_LOCK_MS: '3000', ENTITY_LOCK_MS: '4000', RECONCILE_INTERVAL_MS: '500', SWEEP_INTERVAL_MS: '300' };
  const secrets = { SECRETS_KEY: randomBytes(32).toString('base64') };
  const a = await startTestApp({ DATABASE_URL: dbUrl, ROLE: 'api', RATE_LIMIT_V1_PER_MIN: '100000', RATE_LIMIT_PUBLIC_PER_MIN: '100000', ...fast, ...secrets });
  const workers = serviceProcesses({ ...fast, ...secrets, ...sharedWith(a), ROLE: 'worker', WORKER_CONCURRENCY: '4' });
  t.teardown(async () => {
    workers.killAll();
    await a.stop();
  });
  const sql = a.app.deps.sql;
  const ten = await a.newTenant('Crash SA');
  const key = ten.testKey;
  const post = (path: string, body: unknown) => a.call('POST', path, { key, body, headers: { 'idempotency-key': crypto.randomUUID() } });
  t.equal((await a.call('PUT', '/v1/fiscal_profile', { key, body: { rfc: 'AAA010101AAA', nombre: 'ACCEM SERVICIOS EMPRESARIALES SC', regimen_fiscal: '601', cp: '06600', serie: 'F', pac_provider: 'sim' } })).status, 200);
  const ppd = await post('/v1/invoices/ppd', { total_minor: 10_000, receptor });
  t.equal(ppd.status, 201, 'PPD invoice');

  const PUE = 10;
  const REP = 4;
  const recs: Array<{ id: string; url: string; ppd: boolean }> = [];
  for (let i = 0; i < PUE; i++) {
    const r = await post('/v1/receivables', base({ ...fiscal, amount_minor: 11_600 + i * 116, concepto: `Pedido ${i}` }));
    recs.push({ id: r.body.id, url: r.body.payment_link_url, ppd: false });
  }
  for (let i = 0; i < REP; i++) {
    const r = await post('/v1/receivables', base({ amount_minor: 2_500, ppd_invoice_id: ppd.body.id, concepto: `Parcialidad ${i + 1}` }));
    recs.push({ id: r.body.id, url: r.body.payment_link_url, ppd: true });
  }
  t.equal(recs.filter((r) => r.id).length, PUE + REP, 'receivables created');

  // The test holds the locks the invoice jobs need (the charge's for a PUE, the PPD invoice's for a
  // REP): the worker charges, marks the receivables paid and starts their invoice jobs, which wait.
  const locks = new EntityLocks(a.app.deps.redis, a.config.redisPrefix);
  const held: Array<[string, string]> = [];
  const hold = async (entity: string) => {
    const token = await locks.acquire(entity, 120_000, 1000);
    if (!token) throw new Error(`could not hold ${entity}`);
    held.push([entity, token]);
  };
  await hold(`invoice:${ppd.body.id}`);
  // The payers open the links and confirm by card (the API answers processing; the charge runs on a worker).
  for (const r of recs) {
    const opened = await a.call('POST', `/public/payment_links/${r.url.split('/').pop()}/intent`, {});
    if (!r.ppd) await hold(`invoice_charge:${opened.body.id}`);
    const c = await a.call('POST', `/public/payment_intents/${opened.body.id}/confirm`, { body: { client_secret: opened.body.client_secret, payment_token: 'tok_sim_ok', payment_method: 'card' } });
    t.equal(c.status, 200, 'confirmed');
  }

  const ids = recs.map((r) => r.id);
  const count = async (where: string) => {
    const [x] = await sql`select count(*)::int as n from receivables where id in ${sql(ids)} and ${sql.unsafe(where)}`;
    return x.n as number;
  };
  const settled = () => count(`status = 'paid' and invoice_status = 'stamped'`);
  const deadline = Date.now() + 120_000;
  let w = workers.start();
  await waitForWorker(a.app.deps.redis, a.config.redisPrefix, w);
  while (Date.now() < deadline && (await count(`status = 'paid'`)) < ids.length) await sleep(100);
  t.equal(await count(`status = 'paid' and invoice_status = 'pending'`), ids.length, 'all paid, every CFDI pending: the jobs are under way');
  w.kill('SIGKILL');
  let kills = 1;
  for (const [entity, token] of held) await locks.release(entity, token);
  // More kills at varying points while stamping goes on (the PAC calls, the REP chain).
  w = workers.start();
  await waitForWorker(a.app.deps.redis, a.config.redisPrefix, w);
  while (Date.now() < deadline && kills < 4 && (await settled()) < ids.length) {
    await sleep(100 + kills * 150);
    w.kill('SIGKILL');
    kills++;
    w = workers.start();
    await waitForWorker(a.app.deps.redis, a.config.redisPrefix, w);
  }
  while (Date.now() < deadline && (await settled()) < ids.length) await sleep(200);
  t.equal(await settled(), ids.length, `every receivable paid and its CFDI stamped (${kills} kills)`);

  const rows = await sql`select id, payment_intent_id, invoice_id, invoice_payment_id, ppd_invoice_id from receivables where id in ${sql(ids)}`;
  const [ev] = await sql`select count(*)::int as n from outbox_events where entity_id in ${sql(ids)} and event_type = 'receivable.paid'`;
  t.equal(ev.n, ids.length, 'one receivable.paid event each');
  const pueIntents = rows.filter((r) => !r.ppd_invoice_id).map((r) => r.payment_intent_id as string);
  const invs = await sql`select payment_intent_id, status, id from invoices where payment_intent_id in ${sql(pueIntents)}`;
  t.equal(invs.length, PUE, 'one invoice row per PUE charge (nothing abandoned and rebuilt)');
  t.ok(invs.every((i) => i.status === 'stamped'), 'all stamped');
  t.same(new Set(invs.map((i) => i.payment_intent_id)).size, PUE);
  for (const r of rows.filter((x) => !x.ppd_invoice_id)) t.ok(invs.some((i) => i.id === r.invoice_id), 'the receivable links its invoice');
  const reps = await sql`select parcialidad, monto_minor, saldo_anterior_minor, saldo_insoluto_minor, status, payment_intent_id from invoice_payments where invoice_id = ${ppd.body.id} order by parcialidad`;
  t.equal(reps.length, REP, 'one REP row per payment');
  t.ok(reps.every((r) => r.status === 'stamped'), 'all REPs stamped');
  t.same(reps.map((r) => Number(r.saldo_insoluto_minor)), [7_500, 5_000, 2_500, 0], 'an unbroken balance chain');
  t.same(reps.map((r) => Number(r.parcialidad)), [1, 2, 3, 4]);
  const [inv] = await sql`select saldo_insoluto_minor from invoices where id = ${ppd.body.id}`;
  t.equal(Number(inv.saldo_insoluto_minor), 0);
});
