// Prometheus metrics (prom-client): request rates and latencies at the edge, process metrics,
// and gauges that other parts (queues, deliveries, locks) register as they are built.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route'>;
  rateLimited: Counter<'kind'>;
  idempotentReplays: Counter;
  jobDuration: Histogram<'queue' | 'name' | 'result'>;
  jobWait: Histogram<'queue' | 'name'>;
  lockWaits: Counter<'entity'>;
  lockTimeouts: Counter<'entity'>;
  lockLost: Counter<'entity'>;
  webhookDeliveries: Counter<'outcome'>;
  webhookLag: Histogram;
  /** Gauges computed at scrape time from shared state (queues in Redis, the outbox in Postgres). */
  setSharedCollectors(c: { queueDepths: () => Promise<Array<{ queue: string; state: string; count: number }>>; outboxLagSeconds: () => Promise<number>; ledgerPending: () => Promise<number> }): void;
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
    jobDuration: new Histogram({ name: 'orquesta_job_duration_seconds', help: 'Time a worker spent on a job', labelNames: ['queue', 'name', 'result'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers: [registry] }),
    jobWait: new Histogram({ name: 'orquesta_job_wait_seconds', help: 'Time from enqueue (or due time) to a worker taking the job', labelNames: ['queue', 'name'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers: [registry] }),
    lockWaits: new Counter({ name: 'orquesta_lock_waits_total', help: 'Entity lock acquisitions that had to wait (contention)', labelNames: ['entity'], registers: [registry] }),
    lockTimeouts: new Counter({ name: 'orquesta_lock_timeouts_total', help: 'Entity lock acquisitions that gave up', labelNames: ['entity'], registers: [registry] }),
    lockLost: new Counter({ name: 'orquesta_lock_lost_total', help: 'Entity locks a live holder found no longer its own when extending them (its process stalled past ENTITY_LOCK_MS; the row version fences it)', labelNames: ['entity'], registers: [registry] }),
    webhookDeliveries: new Counter({ name: 'orquesta_webhook_deliveries_total', help: 'Webhook delivery attempts by outcome', labelNames: ['outcome'], registers: [registry] }),
    webhookLag: new Histogram({ name: 'orquesta_webhook_delivery_lag_seconds', help: 'From the event commit to its successful delivery', buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 300, 3600], registers: [registry] }),
    setSharedCollectors(c) {
      registry.removeSingleMetric('orquesta_queue_depth');
      registry.removeSingleMetric('orquesta_outbox_lag_seconds');
      registry.removeSingleMetric('orquesta_ledger_pending_entries');
      new Gauge({
        name: 'orquesta_queue_depth',
        help: 'Jobs per queue and state',
        labelNames: ['queue', 'state'],
        registers: [registry],
        async collect() {
          this.reset();
          for (const d of await c.queueDepths().catch(() => [])) this.set({ queue: d.queue, state: d.state }, d.count);
        },
      });
      new Gauge({
        name: 'orquesta_outbox_lag_seconds',
        help: 'Age of the oldest committed event not yet relayed to webhook deliveries',
        registers: [registry],
        async collect() {
          this.set(await c.outboxLagSeconds().catch(() => -1));
        },
      });
      new Gauge({
        name: 'orquesta_ledger_pending_entries',
        help: "Ledger entries whose reports' summaries are not written yet (the worker's summarize-ledger job)",
        registers: [registry],
        async collect() {
          this.set(await c.ledgerPending().catch(() => -1));
        },
      });
    },
  };
}
