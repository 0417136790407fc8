// Spans of the edge: made only when an OpenTelemetry SDK is registered (an SDK may be started or
// stopped at any time, e.g. in tests). Attribute names live in kernel/tracing.ts (ATTR).
import {
  INVALID_SPAN_CONTEXT,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  propagation,
  trace,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { ATTR } from '../../kernel/tracing.js';
import { H, TRACE_HEADERS } from './head.js';

const tracer = trace.getTracer('orquesta-edge');
/** The API's no-op provider: what the global provider delegates to until an SDK registers one. */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

/** Whether spans are recorded now. */
export function tracingOn(): boolean {
  const p = trace.getTracerProvider();
  return !(p instanceof ProxyTracerProvider) || p.getDelegate() !== NOOP_TRACER_PROVIDER;
}

/** ctx.span when tracing is off: a non-recording span, as the no-op tracer would make. */
export const NO_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** The server span of a request, child of the caller's trace context (traceparent, tracestate, baggage). */
export function startRequestSpan(name: string, method: string, route: string, path: string, requestId: string, hv: ReadonlyArray<string | undefined>): { span: Span; ctx: Context } {
  const traceHeaders: Record<string, string> = {};
  for (const h of TRACE_HEADERS) {
    const v = hv[H[h]];
    if (v) traceHeaders[h] = v;
  }
  const parent = propagation.extract(ROOT_CONTEXT, traceHeaders);
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes: { [ATTR.httpMethod]: method, [ATTR.httpRoute]: route, [ATTR.urlPath]: path, [ATTR.requestId]: requestId } }, parent);
  return { span, ctx: trace.setSpan(parent, span) };
}

export function endRequestSpan(span: Span, status: number) {
  span.setAttribute(ATTR.httpStatus, status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
