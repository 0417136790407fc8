// Webhook delivery (spec: Events > Delivery and retries): the relay turns committed outbox events
// into one delivery per matching active endpoint (the spec's internal sink has no row: /v1/events
// reads the outbox itself, docs/decisions.md); deliveries are signed
// POSTs, retried on the tenant's clock (1 min, 5 min, 30 min, 2 h, 6 h, 12 h, then 24 h), and an
// endpoint still failing a delivery 72 h after it was queued is disabled.
//
// Deliveries are claimed from Postgres, not from a queue (bench/RESULTS.md, "bench/webhooks": one
// BullMQ job plus one 5-table SELECT per delivery held the worker to 0.056x of a bare POST loop).
// This facade wires the parts, one concept per file under actors/webhooks/:
// - relay.ts: outbox → deliveries, leased to this worker and handed over in memory; RelayLoop runs
//   it when a commit wakes it (kernel/outbox.ts wakeRelay) and on the RELAY_INTERVAL_MS poll;
// - claims.ts: leases (claim, renew, release) and the sweep of due retries and orphans;
// - dispatcher.ts: per-endpoint queues, concurrency, backpressure;
// - http-client.ts: undici pools, the signed POST, the delivery-time address guard;
// - attempt.ts: one traced attempt and what its answer means;
// - outcomes.ts: outcomes written in batches, the endpoint disable;
// - item.ts: the delivery item (built once, for relay and claims alike) and the envelope;
// - schedule.ts: the retry waits and the 72-hour rule.
import { hostname } from 'node:os';
import type { RedisClient } from '../kernel/redis.js';
import type { Sql } from '../kernel/db.js';
import type { Logger } from '../kernel/log.js';
import type { Metrics } from '../kernel/metrics.js';
import { deliveryPolicy, type LocalRuleConfig } from './net-guard.js';
import { attempt } from './webhooks/attempt.js';
import { Claims } from './webhooks/claims.js';
import { Dispatcher, MAX_HELD } from './webhooks/dispatcher.js';
import { WebhookHttpClient } from './webhooks/http-client.js';
import { OutcomeWriter, type Lease } from './webhooks/outcomes.js';
import { Relay, RelayLoop, RELAY_BATCH } from './webhooks/relay.js';

export { API_VERSION, envelope } from './webhooks/item.js';
export { DELIVERY_TIMEOUT_MS } from './webhooks/http-client.js';
export { PER_ENDPOINT_IN_FLIGHT } from './webhooks/dispatcher.js';
export { RELAY_BATCH, RELAY_FIRST_BATCH } from './webhooks/relay.js';
export { DISABLE_AFTER_MS, RETRY_WAITS_S, retryWaitSeconds } from './webhooks/schedule.js';

export interface WebhookDeps {
  sql: Sql;
  redis: RedisClient;
  config: LocalRuleConfig & { jobLockMs: number; webhookConcurrency: number; redisPrefix: string; relayIntervalMs: number };
  log: Logger;
  metrics?: Pick<Metrics, 'webhookDeliveries' | 'webhookLag'>;
  /** Deliveries held in memory at most (default 10,000); the relay pauses at half of it. */
  maxHeld?: number;
  /** How long outcomes wait to be written in one batch (default 25 ms; tests stretch it). */
  flushMs?: number;
}

export class WebhookDelivery {
  private readonly lease: Lease;
  private readonly http: WebhookHttpClient;
  private readonly dispatcher: Dispatcher;
  private readonly outcomes: OutcomeWriter;
  private readonly claims: Claims;
  private readonly relay: Relay;

  constructor(private readonly d: WebhookDeps) {
    const { sql, redis, config, log } = d;
    this.lease = { owner: `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`, ms: config.jobLockMs };
    this.http = new WebhookHttpClient(deliveryPolicy(config));
    const targetOf = (url: string) => this.http.target(url);
    this.outcomes = new OutcomeWriter({ sql, log, lease: this.lease, flushMs: d.flushMs });
    const attemptDeps = {
      http: this.http,
      outcomes: this.outcomes,
      disable: (endpointId: string, reason: string) => this.claims.disable(endpointId, reason),
      retryDue: (at: number) => this.claims.wakeAt(at),
      delivered: d.metrics?.webhookDeliveries.labels('delivered'),
      failed: d.metrics?.webhookDeliveries.labels('failed'),
      lag: d.metrics?.webhookLag,
    };
    this.dispatcher = new Dispatcher({
      maxInFlight: config.webhookConcurrency,
      maxHeld: d.maxHeld ?? MAX_HELD,
      attempt: (i) => attempt(attemptDeps, i),
      onError: (i, err) => log.warn('webhook delivery failed unexpectedly', { deliveryId: i.id, err }),
    });
    this.claims = new Claims({ sql, redis, log, wakeChannel: `${config.redisPrefix}:wh:wake`, lease: this.lease, dispatcher: this.dispatcher, outcomes: this.outcomes, targetOf });
    this.relay = new Relay({ sql, lease: this.lease, dispatcher: this.dispatcher, targetOf });
  }

  // ---- lifecycle ---------------------------------------------------------------------------------

  /** Starts the dispatcher in a worker process: claims, sends, renews leases, listens for wake-ups. */
  async start(instanceId?: string): Promise<void> {
    if (this.dispatcher.running) return;
    if (instanceId) this.lease.owner = instanceId;
    this.dispatcher.running = true;
    await this.claims.start();
  }

  /**
   * Starts the relay loop of a worker process (after `start`): a pass when a commit wakes it
   * (kernel/outbox.ts `wakeRelay`), and every RELAY_INTERVAL_MS. `stop()` it before `stop()`ping this.
   */
  startRelay(): Promise<RelayLoop> {
    const { redis, config, log } = this.d;
    return new RelayLoop({
      relayOnce: (batch, tenantId) => this.relayOnce(batch, tenantId),
      accepting: () => !this.dispatcher.paused,
      redis,
      prefix: config.redisPrefix,
      intervalMs: config.relayIntervalMs,
      log,
    }).start();
  }

  /** Stops claiming; waits (up to timeoutMs) for in-flight POSTs, writes outcomes, gives back unsent leases, closes the connections. */
  async stop(timeoutMs = 11_000): Promise<void> {
    if (!this.dispatcher.running) return this.outcomes.flush();
    this.claims.stop();
    // Nothing new starts: drop what waits in memory (its lease is released below).
    const unsent = this.dispatcher.drain();
    await this.dispatcher.idle(timeoutMs);
    await this.claims.settled();
    await this.outcomes.flush();
    await this.claims.release(unsent);
    await this.http.closePools(); // no idle keep-alive socket outlives the dispatcher
  }

  async close() {
    await this.stop();
    await this.http.close();
  }

  // ---- the parts' operations -----------------------------------------------------------------------

  /** Relays up to `batch` committed events of `tenantId`, or of the tenants a sweep finds (relay.ts); returns how many. */
  relayOnce(batch = RELAY_BATCH, tenantId?: string): Promise<number> {
    return this.relay.relayOnce(batch, tenantId);
  }

  /** Claims what is due (claims.ts); in an API process, publishes a wake-up to the workers instead. */
  sweepOnce(opts: { tenantId?: string } = {}): Promise<number> {
    return this.claims.sweepOnce(opts);
  }

  /** Writes the outcomes recorded so far. */
  flush(): Promise<void> {
    return this.outcomes.flush();
  }

  /** Resolves when no delivery of this process is in flight (its outcome recorded, maybe not yet written). */
  idle(): Promise<void> {
    return this.dispatcher.idle();
  }
}
