// kernel/tracing.ts inSpan with tracing off (no SDK registered in this process): fn runs as it is and
// failures still reach the caller as rejections. With an SDK whose spans record nothing (a sampler
// that drops the trace), the trace still reaches fn's context and what it injects, and a trace
// carried in from outside is joined. (test/tracing.test.ts covers the recorded path.)
import t from 'tap';
import { context, trace } from '@opentelemetry/api';
import { node, tracing } from '@opentelemetry/sdk-node';
import { activeTraceId, extractTrace, injectTrace, inSpan } from '../kernel/tracing.js';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

t.test('no SDK, no parent: fn runs with a span that records nothing, and its result is the answer', async (t) => {
  let seen: { recording: boolean; active: unknown } | undefined;
  const r = await inSpan('x', { a: 1 }, async (span) => {
    seen = { recording: span.isRecording(), active: activeTraceId() };
    return 42;
  });
  t.equal(r, 42);
  t.same(seen, { recording: false, active: null });
  t.same(injectTrace(), {}, 'nothing to propagate');
});

t.test('a lazy thenable fn returns (a postgres.js query) starts at once, as with the full path', async (t) => {
  let started = false;
  const lazy = { then: (ok: (v: number) => void) => { started = true; ok(7); } };
  const p = inSpan('x', {}, () => lazy as unknown as Promise<number>);
  t.ok(p instanceof Promise, 'a plain promise');
  await new Promise((r) => setImmediate(r));
  t.ok(started, 'started without being awaited');
  t.equal(await p, 7);
});

t.test('failures are rejections, whether fn rejects or throws before returning a promise', async (t) => {
  await t.rejects(inSpan('x', {}, async () => { throw new Error('async boom'); }), /async boom/);
  const p = inSpan('x', {}, (() => { throw new Error('sync boom'); }) as () => Promise<never>);
  t.ok(p instanceof Promise, 'a promise, not a synchronous throw');
  await t.rejects(p, /sync boom/);
});

t.test('an SDK that samples nothing still carries its trace on (the full path)', async (t) => {
  // Registered last in this file: the tests above see no SDK.
  const provider = new node.NodeTracerProvider({ sampler: new tracing.AlwaysOffSampler() });
  provider.register();
  t.teardown(() => provider.shutdown());
  const seen = await inSpan('x', {}, async (span) => ({ recording: span.isRecording(), id: activeTraceId(), carrier: injectTrace() }));
  t.equal(seen.recording, false, 'not sampled: records nothing');
  t.match(seen.id ?? '', /^[0-9a-f]{32}$/, 'but fn runs in its trace');
  t.match(seen.carrier.traceparent ?? '', new RegExp(`^00-${seen.id}-[0-9a-f]{16}-00$`), 'and what fn enqueues carries it, unsampled');
  const parent = extractTrace({ traceparent: TRACEPARENT });
  const joined = await inSpan('y', {}, async () => activeTraceId(), { parent });
  t.equal(joined, '0af7651916cd43dd8448eb211c80319c', 'a trace carried in from outside (a traceparent, a job) is joined');
  const viaActive = await context.with(parent, () => inSpan('z', {}, async () => trace.getActiveSpan()?.spanContext().traceId));
  t.equal(viaActive, '0af7651916cd43dd8448eb211c80319c', 'the same through the active context');
});
