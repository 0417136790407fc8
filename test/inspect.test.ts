// The operator's inspection of a payment, refund and payout (issue 30 part 4, docs/operator.md):
// every step carries the trace id of the request or job that made it (the spans the SDK recorded)
// and a link from TRACE_URL_TEMPLATE; the job history shows each run of the jobs that named the
// object, a failed first run (the sim provider's HTTP 500) with its error and the retry that
// completed. Before this issue no trace id was kept with an object and finished jobs left no trace.
import t from 'tap';
import { tracing } from '@opentelemetry/sdk-node';
import { startTelemetry, stopTelemetry } from '../ops/telemetry.js';
import { startTestApp, type TestApp, until } from './helpers/app.js';

const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const TEMPLATE = 'http://jaeger.example:16686/trace/{trace_id}';
let a: TestApp;
let exporter: tracing.InMemorySpanExporter;

t.before(async () => {
  exporter = new tracing.InMemorySpanExporter();
  startTelemetry({ spanProcessors: [new tracing.SimpleSpanProcessor(exporter)] });
  a = await startTestApp({ ROLE: 'all', TRACE_URL_TEMPLATE: TEMPLATE, RATE_LIMIT_V1_PER_MIN: '100000', SWEEP_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500' });
});
t.teardown(async () => {
  await a.stop();
  await stopTelemetry();
});

t.test('a payment whose first provider call failed: steps with traces, the failed run and its retry', async (t) => {
  const ten = await a.newTenant();
  const pi = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 12_345, currency: 'MXN' }, headers: idem() });
  const c = await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key: ten.testKey, body: { payment_token: 'tok_sim_provider_500', payment_method: 'card' }, headers: idem() });
  t.equal(c.status, 200, c.text);
  // The sim's HTTP 500 on the first call: the job fails that run, BullMQ runs it again, and the
  // provider's recorded answer for that call (a generic error) ends the payment failed.
  await until(() => a.call('GET', `/v1/payment_intents/${pi.body.id}`, { key: ten.testKey }), (r) => r.body.status === 'failed', 30_000);
  const path = `/admin/tenants/${ten.id}/inspect/payment_intents/${pi.body.id}`;
  const r = await until(() => a.admin('GET', path), (x) => x.body?.jobs?.some((j: any) => j.outcome === 'completed'), 10_000);
  t.equal(r.status, 200, r.text);
  t.match(r.body, { object: 'inspection', kind: 'payment_intent', id: pi.body.id, livemode: false, status: 'failed', job_history: 'recorded' });
  t.notOk('trace_links' in r.body, 'the template is set');

  const traceIds = new Set(exporter.getFinishedSpans().map((s) => s.spanContext().traceId));
  const steps = r.body.steps as any[];
  t.ok(steps.length >= 2, `${steps.length} steps`);
  for (const s of steps) {
    t.match(s.trace_id, /^[0-9a-f]{32}$/, `${s.event}: a trace id`);
    t.ok(traceIds.has(s.trace_id), `${s.event}: a trace the SDK recorded`);
    t.equal(s.trace_url, TEMPLATE.replace('{trace_id}', s.trace_id), `${s.event}: its link`);
  }
  const createSpan = exporter.getFinishedSpans().find((s) => s.name === 'POST /v1/payment_intents' && s.spanContext().traceId === steps[0].trace_id);
  t.ok(createSpan, 'the creation step is in the trace of the create request');

  const jobs = r.body.jobs as any[];
  const failed = jobs.find((j) => j.outcome === 'retrying');
  t.ok(failed, 'the first run, failed and retried');
  t.match(failed, { attempt: 1, error: /HTTP 500/, trace_id: /^[0-9a-f]{32}$/, trace_url: /^http:\/\/jaeger\.example:16686\/trace\// });
  const done = jobs.find((j) => j.outcome === 'completed' && j.job_id === failed.job_id);
  t.ok(done, 'the same job completed on a later run');
  t.ok(done.attempt > failed.attempt, `run ${done.attempt} after run ${failed.attempt}`);
  t.ok(r.body.traces.length >= 1 && r.body.traces.every((x: any) => x.trace_url === TEMPLATE.replace('{trace_id}', x.trace_id)));

  // A refund of a paid charge, and a payout: their steps carry traces too.
  const paid = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 5_000, currency: 'MXN' }, headers: idem() });
  await a.call('POST', `/v1/payment_intents/${paid.body.id}/confirm`, { key: ten.testKey, body: { payment_token: 'tok_sim_ok', payment_method: 'card' }, headers: idem() });
  await until(() => a.call('GET', `/v1/payment_intents/${paid.body.id}`, { key: ten.testKey }), (x) => x.body.status === 'succeeded', 30_000);
  const attempt = (await a.call('GET', `/v1/payment_intents/${paid.body.id}?expand=attempts`, { key: ten.testKey })).body.attempts[0].id;
  const rf = await a.call('POST', '/v1/refunds', { key: ten.testKey, body: { attempt_id: attempt, amount_minor: 345 }, headers: idem() });
  t.ok(rf.status === 200 || rf.status === 201, rf.text);
  const ri = await until(() => a.admin('GET', `/admin/tenants/${ten.id}/inspect/refunds/${rf.body.id}`), (x) => x.body?.steps?.length >= 1);
  t.match(ri.body, { kind: 'refund', id: rf.body.id });
  t.ok(ri.body.steps.every((s: any) => /^[0-9a-f]{32}$/.test(s.trace_id)), 'refund steps traced');
  const po = await a.call('POST', '/v1/payouts', { key: ten.testKey, body: { clabe: '072691004495711499', beneficiary_name: 'Proveedora', amount_minor: 1000, currency: 'MXN', concepto: 'Pago' }, headers: idem() });
  t.equal(po.status, 201, po.text);
  const pi2 = await until(() => a.admin('GET', `/admin/tenants/${ten.id}/inspect/payouts/${po.body.id}`), (x) => x.body?.jobs?.length >= 1);
  t.match(pi2.body, { kind: 'payout', id: po.body.id });
  t.ok(pi2.body.steps.length >= 1 && pi2.body.steps.every((s: any) => /^[0-9a-f]{32}$/.test(s.trace_id)), 'payout steps traced');

  // Tenancy: another tenant's id, an unknown one, a malformed one: the kind's not_found.
  const other = await a.newTenant();
  t.equal((await a.admin('GET', `/admin/tenants/${other.id}/inspect/payment_intents/${pi.body.id}`)).body.error.code, 'payment_intent.not_found');
  t.equal((await a.admin('GET', `/admin/tenants/${ten.id}/inspect/invoices/${crypto.randomUUID()}`)).body.error.code, 'invoice.not_found');
  t.equal((await a.admin('GET', `/admin/tenants/${ten.id}/inspect/refunds/nope`)).body.error.code, 'refund.not_found');
  t.equal((await a.call('GET', path, { key: ten.testKey })).status, 401, 'an API key is not the operator key');
});
