// One attempt of a delivery: a consumer span that continues the event's trace, the signed POST in a
// client span, then the outcome: delivered; failed, with the next attempt due after the spec's wait
// counted from this answer on the tenant's clock; or, 72 h after the delivery was queued, the
// endpoint disabled.
import { ATTR, extractTrace, inSpan, SpanKind } from '../../kernel/tracing.js';
import type { WebhookHttpClient } from './http-client.js';
import type { DeliveryItem } from './item.js';
import type { OutcomeWriter } from './outcomes.js';
import { DISABLE_AFTER_MS, retryWaitSeconds } from './schedule.js';

export interface AttemptDeps {
  http: WebhookHttpClient;
  outcomes: OutcomeWriter;
  /** Disables an endpoint (this process stops sending to it; its pending deliveries are discarded). */
  disable(endpointId: string, reason: string): Promise<void>;
  /** A retry recorded here is due at this local time: look again then. */
  retryDue(localMs: number): void;
  delivered?: { inc(): void };
  failed?: { inc(): void };
  /** Commit → delivered, in seconds. */
  lag?: { observe(seconds: number): void };
}

export async function attempt(d: AttemptDeps, i: DeliveryItem): Promise<void> {
  const result = await inSpan(
    'job webhook.deliver',
    { [ATTR.jobName]: 'webhook.deliver', [ATTR.queue]: 'webhook_deliveries', [ATTR.jobId]: String(i.id) },
    () =>
      inSpan(
        'webhook.deliver',
        { [ATTR.deliveryId]: i.id, [ATTR.endpointId]: i.endpointId, [ATTR.eventType]: i.eventType, [ATTR.serverAddress]: i.target?.host ?? 'invalid' },
        async (span) => {
          const r = await d.http.post(i.target, i.body, i.secrets);
          if (r.status) span.setAttribute(ATTR.httpStatus, r.status);
          span.setAttribute(ATTR.outcome, r.ok ? 'delivered' : 'failed');
          return r;
        },
        { kind: SpanKind.CLIENT },
      ),
    { parent: extractTrace(i.trace), kind: SpanKind.CONSUMER },
  );
  const answeredAt = Date.now();
  (result.ok ? d.delivered : d.failed)?.inc();
  if (result.ok) {
    d.lag?.observe((answeredAt - i.createdAtMs) / 1000);
    d.outcomes.succeeded(i.id);
    return;
  }
  const failures = i.attempts + 1;
  const status = result.status ?? null;
  const error = result.error?.slice(0, 500) ?? null;
  if (answeredAt + i.offsetMs - i.queuedAtMs >= DISABLE_AFTER_MS) {
    await d.disable(i.endpointId, `a delivery failed for 72 hours (last: ${result.status ?? result.error})`);
    await d.outcomes.lastFailure(i.id, failures, status, error);
    return;
  }
  const waitMs = retryWaitSeconds(failures) * 1000;
  // Due on the tenant's clock: this answer's moment on it, plus the wait (written later, in a batch).
  d.outcomes.failed({ id: i.id, attempts: i.attempts, dueMs: answeredAt + i.offsetMs + waitMs, status, error });
  // This worker looks again when the retry is due (by the clock it knows; a clock advance wakes it too).
  d.retryDue(answeredAt + waitMs + 50);
}
