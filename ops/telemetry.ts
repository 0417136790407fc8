// OpenTelemetry, started before anything else (ops/main.ts imports this first).
// With no exporter configured (OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_TRACES_EXPORTER unset) no tracer
// provider is registered: the edge's spans are the API's no-op spans and cost next to nothing.
// The SDK itself reads the standard OTEL_* variables.
import { NodeSDK, tracing } from '@opentelemetry/sdk-node';

let sdk: NodeSDK | undefined;

export interface TelemetryOptions {
  /** From config: OTEL_EXPORTER_OTLP_ENDPOINT. */
  otelEndpoint?: string;
  /** OTEL_TRACES_EXPORTER as the SDK will read it (passed in, so this module does not read env). */
  tracesExporter?: string;
  /** Tests pass their own processors (e.g. an in-memory exporter). */
  spanProcessors?: tracing.SpanProcessor[];
}

export function startTelemetry(o: TelemetryOptions): { enabled: boolean } {
  if (sdk) return { enabled: true };
  const fromEnv = !!o.otelEndpoint || (!!o.tracesExporter && o.tracesExporter !== 'none');
  if (!o.spanProcessors && !fromEnv) return { enabled: false };
  sdk = new NodeSDK({
    serviceName: 'orquesta',
    instrumentations: [],
    ...(o.spanProcessors ? { spanProcessors: o.spanProcessors } : {}),
  });
  sdk.start();
  return { enabled: true };
}

export async function stopTelemetry(): Promise<void> {
  await sdk?.shutdown().catch(() => {});
  sdk = undefined;
}
