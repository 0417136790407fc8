// Prometheus metrics (prom-client): request rates and latencies at the edge, process metrics,
// and gauges that other parts (queues, deliveries, locks) register as they are built.
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route'>;
  rateLimited: Counter<'kind'>;
  idempotentReplays: Counter;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'orquesta_' });
  return {
    registry,
    httpRequests: new Counter({ name: 'orquesta_http_requests_total', help: 'HTTP requests by route template and status', labelNames: ['method', 'route', 'status'], registers: [registry] }),
    httpDuration: new Histogram({
      name: 'orquesta_http_request_duration_seconds',
      help: 'Time from the first byte read to the response written',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [registry],
    }),
    rateLimited: new Counter({ name: 'orquesta_rate_limited_total', help: '429 answers by limit kind', labelNames: ['kind'], registers: [registry] }),
    idempotentReplays: new Counter({ name: 'orquesta_idempotent_replays_total', help: 'Responses replayed for a repeated Idempotency-Key', registers: [registry] }),
  };
}
