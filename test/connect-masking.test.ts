// The full CLABE never leaves the sealed columns: not in responses, logs (at debug level), webhook
// events, entity history, idempotency records, the inbox, the ledger, the sim rail's book, nor in
// trace spans. Runs the whole Connect flow (application, account, transfer and its payouts, a
// direct payout, a failed one, one held for approval, a devolución) and then searches everything.
import t from 'tap';
import { tracing } from '@opentelemetry/sdk-node';
import { startTelemetry, stopTelemetry } from '../ops/telemetry.js';
import { startTestApp } from './helpers/app.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CLABES = ['646180110400000007', '072691004495711499', '002010077777777771'];
const MALFORMED = '64618011040000000X1';
const FULL = new RegExp(`${CLABES.join('|')}|${MALFORMED}`);

t.test('no full CLABE in responses, logs, events, history, records or traces', async (t) => {
  const exporter = new tracing.InMemorySpanExporter();
  startTelemetry({ spanProcessors: [new tracing.SimpleSpanProcessor(exporter)] });
  // Capture this process's log lines (the app runs in it) instead of printing them.
  const logs: string[] = [];
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  const capture = (orig: typeof out) => ((chunk: unknown, ...rest: unknown[]) => {
    const s = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
    if (s.startsWith('{"t":')) {
      logs.push(s);
      return true;
    }
    return (orig as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof out;
  process.stdout.write = capture(out);
  process.stderr.write = capture(err);
  const a = await startTestApp({ ROLE: 'all', LOG_LEVEL: 'debug', RATE_LIMIT_V1_PER_MIN: '100000', SWEEP_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500' });
  t.teardown(async () => {
    await a.stop();
    process.stdout.write = out;
    process.stderr.write = err;
    await stopTelemetry();
  });
  const ten = await a.newTenant();
  const key = ten.testKey;
  const texts: string[] = [];
  const call = async (method: string, path: string, body?: object, idem = false) => {
    const r = await a.call(method, path, { key, body, headers: idem ? { 'idempotency-key': crypto.randomUUID() } : {} });
    texts.push(r.text);
    return r;
  };
  const until = async (fn: () => Promise<boolean>) => {
    for (let i = 0; i < 300 && !(await fn()); i++) await sleep(50);
  };

  const docs = ['ine', 'comprobante_domicilio', 'constancia_fiscal', 'caratula_estado_cuenta'].map((document_type) => ({ document_type, reference: `r-${document_type}`, reference_hash: 'f'.repeat(64) }));
  // An application that first has a malformed CLABE (needs_info), then a good one.
  const app = await call('POST', '/v1/onboarding/applications', { legal_name: 'Abarrotes La Esperanza', person_type: 'moral', contact_email: 'a@e.mx', rfc: 'EKU9003173C9', clabe: MALFORMED });
  await call('PATCH', `/v1/onboarding/applications/${app.body.id}`, { documents: docs });
  t.equal((await call('POST', `/v1/onboarding/applications/${app.body.id}/submit`)).body.status, 'needs_info');
  await call('PATCH', `/v1/onboarding/applications/${app.body.id}`, { clabe: CLABES[0] });
  t.equal((await call('POST', `/v1/onboarding/applications/${app.body.id}/submit`)).body.status, 'approved');
  await call('GET', `/v1/onboarding/applications/${app.body.id}`);
  await call('GET', '/v1/onboarding/applications');
  const acc = await call('POST', '/v1/connect/accounts', { onboarding_application_id: app.body.id });
  await call('GET', `/v1/connect/accounts/${acc.body.id}`);
  const pi = await call('POST', '/v1/payment_intents', { amount_minor: 5_000, currency: 'MXN' }, true);
  await call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { payment_token: 'tok_sim_ok', payment_method: 'card' }, true);
  await until(async () => (await a.call('GET', `/v1/payment_intents/${pi.body.id}`, { key })).body.status === 'succeeded');
  const tr = await call('POST', '/v1/connect/transfers', { payment_intent_id: pi.body.id, charge_amount_minor: 5_000, application_fee_minor: 1_000, currency: 'MXN', splits: [{ connect_account_id: acc.body.id, amount_minor: 4_000 }] }, true);
  t.equal(tr.status, 201);
  const direct = await call('POST', '/v1/payouts', { clabe: CLABES[1], beneficiary_name: 'Proveedor', amount_minor: 3_000, currency: 'MXN', concepto: 'Pago' }, true);
  const failed = await call('POST', '/v1/payouts', { clabe: CLABES[2], beneficiary_name: 'FAIL', amount_minor: 3_100, currency: 'MXN', concepto: 'Pago' }, true);
  await call('POST', '/v1/payouts', { clabe: CLABES[2].slice(0, 17) + '9', beneficiary_name: 'X', amount_minor: 1, currency: 'MXN', concepto: 'bad check digit' }, true);
  await a.admin('PATCH', `/admin/tenants/${ten.id}/payout_settings`, { payout_approval_threshold_minor: 100_000 });
  const held = await call('POST', '/v1/payouts', { clabe: CLABES[1], beneficiary_name: 'Grande', amount_minor: 500_000, currency: 'MXN', concepto: 'Grande' }, true);
  t.equal(held.status, 202);
  texts.push((await a.admin('POST', `/admin/tenants/${ten.id}/payout_approvals/${held.body.id}/approve`, { approver: 'segunda@persona.mx' })).text);
  const payoutIds = [direct.body.id, failed.body.id, tr.body.splits[0].payout_id];
  await until(async () => {
    const [r] = await a.app.deps.sql`select count(*)::int as n from payouts where tenant_id = ${ten.id} and status = 'processing'`;
    return r.n === 0;
  });
  texts.push((await a.admin('POST', `/admin/tenants/${ten.id}/payouts/${direct.body.id}/simulate-return`)).text);
  await until(async () => (await a.call('GET', `/v1/payouts/${direct.body.id}`, { key })).body.status === 'returned');
  for (const id of payoutIds) await call('GET', `/v1/payouts/${id}`);
  await call('GET', '/v1/payouts');
  await call('GET', `/v1/connect/transfers/${tr.body.id}`);
  await call('GET', '/v1/events');
  await sleep(300);

  t.ok(texts.length > 20, `${texts.length} responses searched`);
  // spec: a payout lists `clabe`: the merchant's own direct payouts answer the CLABE it sent, in
  // full. A Connect split's payout goes to the sub-merchant's settlement account, whose full CLABE
  // is never exposed: it stays masked there. Every other answer carries none.
  const direct1 = await a.call('GET', `/v1/payouts/${direct.body.id}`, { key });
  t.equal(direct1.body.clabe, CLABES[1], "a direct payout answers the merchant's CLABE");
  const split = await a.call('GET', `/v1/payouts/${tr.body.splits[0].payout_id}`, { key });
  t.equal(split.body.clabe, '646***********0007', "a split's payout keeps the settlement CLABE masked");
  const ownClabe = /"clabe":"(\d{18})"/g;
  t.notMatch(texts.map((x) => x.replace(ownClabe, (m, c: string) => (c === CLABES[1] || c === CLABES[2] ? '"clabe":"(own)"' : m))).join('\n'), FULL, 'responses');
  t.match(texts.join('\n'), /646\*{11}0007/, 'the masked form is what is shown');
  const sql = a.app.deps.sql;
  const dump = async (q: PromiseLike<unknown>) => JSON.stringify(await q);
  t.notMatch(await dump(sql`select data from outbox_events where tenant_id = ${ten.id}`), FULL, 'webhook events');
  t.notMatch(await dump(sql`select data from entity_history where tenant_id = ${ten.id}`), FULL, 'entity history');
  t.notMatch(await dump(sql`select response_body from idempotency_keys where tenant_id = ${ten.id}`), FULL, 'idempotency records');
  t.notMatch(await dump(sql`select payload from inbox where tenant_id = ${ten.id}`), FULL, 'inbox');
  t.notMatch(await dump(sql`select memo from journal_entries where tenant_id = ${ten.id}`), FULL, 'ledger');
  t.notMatch(await dump(sql`select * from sim_payout_orders where tenant_id = ${ten.id}`), FULL, "the sim rail's book");
  for (const table of ['onboarding_applications', 'connect_accounts', 'payouts', 'payout_approvals', 'approvals']) {
    t.notMatch(await dump(sql`select * from ${sql(table)} where tenant_id = ${ten.id}`), FULL, `${table}: only sealed and masked`);
  }
  // The service logs no request or response bodies; a field named like a CLABE is masked by the logger.
  a.app.deps.log.warn('payout diagnostics', { clabe: CLABES[0], settlement_clabe: CLABES[1], payout: { clabe: CLABES[2] } });
  t.ok(logs.length >= 2, `${logs.length} log lines searched`);
  t.match(logs.join(''), /payout diagnostics/);
  t.notMatch(logs.join(''), FULL, 'logs');
  const spans = exporter.getFinishedSpans();
  t.ok(spans.some((s) => s.name === 'connector sim.send'), 'the rail calls are traced');
  t.notMatch(JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events }))), FULL, 'traces');
});
