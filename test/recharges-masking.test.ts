// A full phone number never leaves the sealed column: not in responses (recharges, lists, errors),
// logs (at debug level), webhook events, entity history, the ledger, the sim aggregator's book,
// nor in trace spans; the mask is the spec's (two digits, asterisks, last four).
import t from 'tap';
import { tracing } from '@opentelemetry/sdk-node';
import { startTelemetry, stopTelemetry } from '../ops/telemetry.js';
import { startTestApp } from './helpers/app.js';

const PHONES = ['5512345678', '5599991111', '5511110000', '3387654321'];
const FULL = new RegExp(PHONES.join('|'));

t.test('no full phone number in responses, logs, events, history, ledger or traces', async (t) => {
  const exporter = new tracing.InMemorySpanExporter();
  startTelemetry({ spanProcessors: [new tracing.SimpleSpanProcessor(exporter)] });
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
  const a = await startTestApp({ ROLE: 'all', LOG_LEVEL: 'debug', RATE_LIMIT_V1_PER_MIN: '100000', RECONCILE_INTERVAL_MS: '500' });
  t.teardown(async () => {
    await a.stop();
    process.stdout.write = out;
    process.stderr.write = err;
    await stopTelemetry();
  });
  const ten = await a.newTenant();
  const key = ten.testKey;
  const texts: string[] = [];
  const call = async (method: string, path: string, body?: object, headers: Record<string, string> = {}) => {
    const r = await a.call(method, path, { key, body, headers });
    texts.push(r.text);
    return r;
  };
  await call('POST', '/v1/recharge-carriers/telcel/enable');
  await call('POST', '/v1/recharge-carriers/movistar/enable');
  const ids: string[] = [];
  for (const phone of PHONES) {
    const h = { 'idempotency-key': crypto.randomUUID() };
    const r = await call('POST', '/v1/recharges', { product_code: 'telcel_50', phone_number: phone }, h);
    ids.push(r.body.id);
    t.equal(r.body.phone_masked, `${phone.slice(0, 2)}****${phone.slice(-4)}`, 'the spec mask');
    await call('POST', '/v1/recharges', { product_code: 'telcel_50', phone_number: phone }, h); // replay (resolves the timed-out one)
    await call('POST', '/v1/recharges', { product_code: 'movistar_50', phone_number: phone }, h); // conflict
    await call('GET', `/v1/recharges/${r.body.id}`);
  }
  await call('POST', '/v1/recharges', { product_code: 'telcel_50', phone_number: '55123456789' }, { 'idempotency-key': crypto.randomUUID() });
  await call('GET', '/v1/recharges');
  // The app's logger masks a phone in a field named like one and inside free text.
  a.app.deps.log.warn('recharge diagnostics', { phone_number: PHONES[0], note: `customer ${PHONES[1]} called` });
  t.ok(texts.length > 15, `${texts.length} responses searched`);
  t.notMatch(texts.join('\n'), FULL, 'responses');
  t.match(texts.join('\n'), /55\*{4}5678/, 'the masked form is what is shown');
  const sql = a.app.deps.sql;
  const dump = async (q: PromiseLike<unknown>) => JSON.stringify(await q);
  t.notMatch(await dump(sql`select data from outbox_events where tenant_id = ${ten.id}`), FULL, 'events');
  t.notMatch(await dump(sql`select data from entity_history where tenant_id = ${ten.id}`), FULL, 'entity history');
  t.notMatch(await dump(sql`select memo from journal_entries where tenant_id = ${ten.id}`), FULL, 'ledger');
  t.match(await dump(sql`select memo from journal_entries where tenant_id = ${ten.id}`), /55\*{4}5678/, 'the ledger memo names the masked phone');
  t.notMatch(await dump(sql`select * from sim_recharge_orders where tenant_id = ${ten.id}`), FULL, "the sim aggregator's book");
  t.notMatch(await dump(sql`select * from recharges where tenant_id = ${ten.id}`), FULL, 'recharges: only sealed and masked');
  t.ok(logs.length >= 2, `${logs.length} log lines searched`);
  t.match(logs.join(''), /recharge diagnostics/);
  t.match(logs.join(''), /recharge aggregator timed out/, 'the timeout was logged');
  t.notMatch(logs.join(''), FULL, 'logs');
  const spans = exporter.getFinishedSpans();
  t.ok(spans.some((s) => s.name === 'connector sim.recharge.send'), 'the aggregator calls are traced');
  t.notMatch(JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events }))), FULL, 'traces');
});
