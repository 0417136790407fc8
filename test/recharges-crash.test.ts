// The money path of recharges under a crash: an API process SIGKILLed between the aggregator's
// delivery and the record of its answer leaves the recharge `pending` with `send_started_at`; a
// replay with the same key (another process) asks the aggregator and resolves it `delivered`
// without delivering again, with one ledger entry; without a replay the worker's reconciler does
// the same (the key's idempotency record, written with the recharge, names it). Real service
// processes (node dist/ops/main.js), as test/payout-crash.test.ts. The sim
// aggregator answers a phone ending in 2222 about 2 s after delivering: the window of the kill.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { freePort, httpCall, serviceProcesses, sharedWith, startTestApp, until, waitReady } from './helpers/app.js';
import { ownDatabase } from './helpers/db.js';

t.test('SIGKILL between delivery and record: delivered once, booked once (replay, and reconciler)', async (t) => {
  const fast = { ENTITY_LOCK_MS: '3000', RECONCILE_INTERVAL_MS: '500', SWEEP_INTERVAL_MS: '300' };
  const secrets = { SECRETS_KEY: randomBytes(32).toString('base64') };
  const dbUrl = ownDatabase(t, 'orq_recharges_crash'); // its own processes' work only (test/helpers/db.ts)
  const a = await startTestApp({ DATABASE_URL: dbUrl, ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000', ...fast, ...secrets });
  const procs = serviceProcesses({ ...fast, ...secrets, ...sharedWith(a), ROLE: 'api', RATE_LIMIT_V1_PER_MIN: '100000' });
  t.teardown(async () => {
    procs.killAll();
    await a.stop();
  });
  const sql = a.app.deps.sql;
  const ten = await a.newTenant();
  t.equal((await a.call('POST', '/v1/recharge-carriers/telcel/enable', { key: ten.testKey })).status, 200);

  for (const resolver of ['replay', 'reconciler'] as const) {
    const port = await freePort();
    const victim = procs.start({ PORT: String(port) });
    const url = `http://127.0.0.1:${port}`;
    await waitReady(url, victim);
    const key = crypto.randomUUID();
    const body = JSON.stringify({ product_code: 'telcel_50', phone_number: '5587652222' });
    const headers = { authorization: `Bearer ${ten.testKey}`, 'content-type': 'application/json', 'idempotency-key': key };
    void httpCall(`${url}/v1/recharges`, 'POST', headers, body).catch(() => undefined);
    // Delivered at the aggregator, not yet recorded: the process is between send and record.
    const row = await until(
      async () => (await sql`
        select r.id, r.status, r.provider_ref, r.send_started_at, s.sends from recharges r left join sim_recharge_orders s on s.key = r.order_key
          join idempotency_keys k on k.tenant_id = r.tenant_id and k.livemode = r.livemode and k.key = ${key} and k.response_body::jsonb->>'id' = r.id::text
         where r.tenant_id = ${ten.id}`)[0],
      (r) => !!r && r.sends === 1 && r.status === 'pending' && r.send_started_at !== null && r.provider_ref === null,
      20_000,
    );
    victim.kill('SIGKILL');
    await new Promise((r) => victim.once('exit', r));
    const [cut] = await sql`select status, provider_ref from recharges where id = ${row.id}`;
    t.same([cut.status, cut.provider_ref], ['pending', null], `${resolver}: the answer was lost with the process`);
    let final;
    if (resolver === 'replay') {
      // The dead process's lock expires (ENTITY_LOCK_MS); meanwhile the replay is a retry_conflict.
      final = await until(() => a.call('POST', '/v1/recharges', { key: ten.testKey, raw: body, headers: { 'content-type': 'application/json', 'idempotency-key': key } }), (r) => r.status === 200 && r.body.status !== 'pending', 20_000);
      t.equal(final.body.id, row.id, 'the same recharge');
    } else {
      final = await until(() => a.call('GET', `/v1/recharges/${row.id}`, { key: ten.testKey }), (r) => r.body.status !== 'pending', 20_000);
    }
    t.equal(final.body.status, 'delivered', `${resolver}: resolved with the aggregator's evidence`);
    const [book] = await sql`select sends, status_queries, provider_ref from sim_recharge_orders where key = ${'rc_' + row.id.replace(/-/g, '')}`;
    t.equal(book.sends, 1, `${resolver}: delivered exactly once`);
    t.ok(book.status_queries >= 1, `${resolver}: asked, not resent`);
    t.equal(final.body.provider_ref, book.provider_ref);
    const [n] = await sql`select count(*)::int as n from journal_entries where ref_id = ${row.id}`;
    t.equal(n.n, 1, `${resolver}: one ledger entry`);
  }
});
