// One trace for one confirm: request → job → transition → connector → webhook delivery, with the
// parent/child chain intact across the BullMQ hop and the outbox, and no secret in any attribute.
import t from 'tap';
import { tracing } from '@opentelemetry/sdk-node';
import { startTelemetry, stopTelemetry } from '../ops/telemetry.js';
import { startReceiver } from './helpers/receiver.js';
import { startTestApp } from './helpers/app.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('request → job → transition → connector → delivery', async (t) => {
  const exporter = new tracing.InMemorySpanExporter();
  startTelemetry({ spanProcessors: [new tracing.SimpleSpanProcessor(exporter)] });
  const rx = await startReceiver();
  const a = await startTestApp({ ROLE: 'all', WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1', RELAY_INTERVAL_MS: '50', SWEEP_INTERVAL_MS: '200' });
  t.teardown(async () => {
    await a.stop();
    await rx.close();
    await stopTelemetry();
  });
  const ten = await a.newTenant();
  await a.call('POST', '/v1/webhook_endpoints', { key: ten.testKey, body: { url: `${rx.url}/trace` } });
  const pi = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 5000, currency: 'MXN' }, headers: { 'idempotency-key': crypto.randomUUID() } });
  exporter.reset();
  const c = await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key: ten.testKey, body: { payment_token: 'tok_sim_ok', payment_method: 'card' }, headers: { 'idempotency-key': crypto.randomUUID() } });
  t.equal(c.status, 200);
  // Other test files share the database, so this app's worker may also be relaying their events: allow time.
  const got = await rx.waitFor((r) => r.some((x) => x.path === '/trace'), 30_000);
  await sleep(300);
  const spans = exporter.getFinishedSpans();
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const parentOf = (s: (typeof spans)[number]) => byId.get((s as unknown as { parentSpanContext?: { spanId: string } }).parentSpanContext?.spanId ?? (s as unknown as { parentSpanId?: string }).parentSpanId ?? '');
  const chainNames = (s: (typeof spans)[number]) => {
    const names: string[] = [];
    for (let cur: (typeof spans)[number] | undefined = s; cur; cur = parentOf(cur)) names.unshift(cur.name);
    return names;
  };
  const request = spans.find((s) => s.name === 'POST /v1/payment_intents/{id}/confirm');
  t.ok(request, 'the request span');
  // Spans of this request's trace only (the worker may be delivering other test files' events too).
  const ours = (s: (typeof spans)[number]) => s.spanContext().traceId === request?.spanContext().traceId;
  const delivery = spans.find((s) => s.name === 'webhook.deliver' && ours(s));
  t.ok(delivery, 'the delivery span');
  const chain = chainNames(delivery!);
  t.same(
    chain,
    // The confirm's own transition enqueues the provider call, so the job is its child; the event
    // is written inside the evidence's transaction, so its delivery continues from there.
    ['POST /v1/payment_intents/{id}/confirm', 'payment_intent.transition', 'job attempt.execute', 'payment_intent.transition', 'postgres transaction', 'job webhook.deliver', 'webhook.deliver'],
    `delivery chain: ${chain.join(' → ')}`,
  );
  const connector = spans.find((s) => s.name === 'connector sim.charge' && ours(s));
  t.same(chainNames(connector!), ['POST /v1/payment_intents/{id}/confirm', 'payment_intent.transition', 'job attempt.execute', 'connector sim.charge'], 'the connector call is in the job');
  const confirmTransition = spans.find((s) => s.name === 'payment_intent.transition' && parentOf(s)?.name === 'POST /v1/payment_intents/{id}/confirm');
  t.ok(confirmTransition, "the confirm's own transition is a child of the request");
  t.equal(confirmTransition!.attributes['orquesta.status.to'], 'processing');
  t.ok(spans.filter((s) => s.name !== 'POST /v1/payment_intents/{id}/confirm' && chainNames(s)[0] === request!.name).every((s) => s.spanContext().traceId === request!.spanContext().traceId), 'one trace');
  const tp = got.find((x) => x.path === '/trace')!.headers.traceparent as string;
  t.match(tp, new RegExp(`^00-${request!.spanContext().traceId}-[0-9a-f]{16}-0[01]$`), 'the delivery carries traceparent of the same trace');
  const dump = JSON.stringify(spans.map((s) => s.attributes));
  t.notMatch(dump, /sk_test_|sk_live_|whsec_|pi_secret_|tok_sim|\b\d{18}\b/, 'no keys, secrets, tokens or CLABEs in attributes');
});
