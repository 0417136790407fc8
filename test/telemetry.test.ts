// A span per request, made at the edge, with route, status and tenant, and never a key.
import t from 'tap';
import { tracing } from '@opentelemetry/sdk-node';
import { startTelemetry, stopTelemetry } from '../ops/telemetry.js';
import { startTestApp } from './helpers/app.js';

t.test('edge spans', async (t) => {
  const exporter = new tracing.InMemorySpanExporter();
  startTelemetry({ spanProcessors: [new tracing.SimpleSpanProcessor(exporter)] });
  const a = await startTestApp();
  t.teardown(async () => {
    await a.stop();
    await stopTelemetry();
  });
  const ten = await a.newTenant();
  const c = await a.call('POST', '/v1/customers', { key: ten.testKey, body: { name: 'Span' }, headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
  t.equal(c.status, 201);
  await a.call('GET', '/v1/customers/not-a-uuid', { key: ten.testKey });
  await new Promise((r) => setTimeout(r, 50));
  const spans = exporter.getFinishedSpans();
  const create = spans.find((s) => s.name === 'POST /v1/customers');
  t.ok(create, 'span for the create');
  t.equal(create!.attributes['http.route'], '/v1/customers');
  t.equal(create!.attributes['http.response.status_code'], 201);
  t.equal(create!.attributes['orquesta.tenant_id'], ten.id);
  t.equal(create!.spanContext().traceId, '0af7651916cd43dd8448eb211c80319c', 'joins the caller trace');
  const notFound = spans.find((s) => s.name === 'GET /v1/customers/{id}');
  t.equal(notFound!.attributes['http.response.status_code'], 404);
  const dump = JSON.stringify(spans.map((s) => s.attributes));
  t.notMatch(dump, /sk_test_|sk_live_|adm_/, 'no key in any span');
});
