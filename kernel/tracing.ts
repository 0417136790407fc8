// Tracing helpers and the one list of span attribute names. Trace context travels in job data
// (`_trace`), in outbox rows (`traceparent`) and in a `traceparent` header on webhook deliveries,
// so one trace runs request → job → transition → connector → delivery. Attribute values never carry
// keys, secrets, CLABEs, phone numbers or card tokens.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, isSpanContextValid, propagation, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';

export const tracer = trace.getTracer('orquesta');

/** Every span attribute the service sets, named once. */
export const ATTR = {
  tenantId: 'orquesta.tenant_id',
  livemode: 'orquesta.livemode',
  requestId: 'orquesta.request_id',
  intentId: 'orquesta.payment_intent_id',
  attemptId: 'orquesta.attempt_id',
  event: 'orquesta.event',
  fromStatus: 'orquesta.status.from',
  toStatus: 'orquesta.status.to',
  connector: 'orquesta.connector',
  outcome: 'orquesta.outcome',
  jobName: 'messaging.operation.name',
  queue: 'messaging.destination.name',
  jobId: 'messaging.message.id',
  deliveryId: 'orquesta.webhook.delivery_id',
  endpointId: 'orquesta.webhook.endpoint_id',
  eventType: 'orquesta.webhook.event_type',
  httpMethod: 'http.request.method',
  httpRoute: 'http.route',
  httpStatus: 'http.response.status_code',
  urlPath: 'url.path',
  serverAddress: 'server.address',
  dbSystem: 'db.system.name',
  dbOperation: 'db.operation.name',
  lockEntity: 'orquesta.lock.entity',
} as const;

export type Carrier = Record<string, string>;

/** The active trace context as a carrier (empty when tracing is off). */
export function injectTrace(ctx: Context = context.active()): Carrier {
  const carrier: Carrier = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

export const extractTrace = (carrier: Carrier | undefined | null): Context => (carrier ? propagation.extract(ROOT_CONTEXT, carrier) : ROOT_CONTEXT);

/**
 * Runs fn in a new active span (child of `parent` or of the active context); records failures.
 *
 * With tracing off (no SDK registered) and no trace to join, the span is a no-op with no context to
 * carry: fn runs as it is, without a context switch or an async frame around it (on the money path
 * this wrapper ran several times per request for nothing; bench/RESULTS.md, issue 26, eleventh
 * session). A span that records, or that carries a trace from a parent (a `traceparent` header, a
 * job's `_trace`), takes the full path, so propagation is unchanged.
 */
export function inSpan<T>(name: string, attrs: Attributes, fn: (span: Span) => Promise<T>, opts: { parent?: Context; kind?: SpanKind } = {}): Promise<T> {
  const parent = opts.parent ?? context.active();
  const span = tracer.startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes: attrs }, parent);
  if (!span.isRecording() && !isSpanContextValid(span.spanContext())) {
    try {
      // A plain promise, as the full path gives: a lazy thenable (a postgres.js query) starts now,
      // not when (or whether) the caller awaits it.
      return Promise.resolve(fn(span));
    } catch (e) {
      return Promise.reject(e);
    }
  }
  return inRecordedSpan(span, parent, fn);
}

async function inRecordedSpan<T>(span: Span, parent: Context, fn: (span: Span) => Promise<T>): Promise<T> {
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (e) {
    span.recordException(e as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error).message });
    throw e;
  } finally {
    span.end();
  }
}

/** The trace id of the active span, or null when there is none (tracing off: no SDK, no exporter). */
export function activeTraceId(): string | null {
  const sc = trace.getActiveSpan()?.spanContext();
  return sc && isSpanContextValid(sc) ? sc.traceId : null;
}

export { SpanKind };
