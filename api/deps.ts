// What handlers and commands are given: the process's pools and shared services.
import type { Redis } from 'ioredis';
import type { Config } from '../ops/config.js';
import type { Sql } from '../ops/db.js';
import type { Logger } from '../ops/log.js';
import type { Metrics } from '../ops/metrics.js';
import type { KeyStore } from './auth.js';
import type { Idempotency } from './idempotency.js';
import type { RateLimiter } from './rate-limit.js';
import type { PaymentIntents } from '../actors/payment-intents.js';
import type { Queues } from '../actors/queues.js';
import type { WebhookDelivery } from '../actors/webhook-delivery.js';
import type { Refunds } from '../actors/refunds.js';
import type { PaymentMethods } from '../actors/payment-methods.js';
import type { Router } from '../connectors/routing.js';
import type { SimAcquirer } from '../connectors/sim.js';

export interface AppDeps {
  readonly config: Config;
  readonly sql: Sql;
  /** Pool for lag-tolerant reads; the primary when no replica is configured. */
  readonly readSql: Sql;
  readonly redis: Redis;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly keys: KeyStore;
  readonly limiter: RateLimiter;
  readonly idempotency: Idempotency;
  /** sha256 of the operator key (from ADMIN_KEY or the stored generated one). */
  readonly adminKeyHash: string;
  readonly startedAt: Date;
  readonly queues: Queues;
  readonly router: Router;
  readonly sim: SimAcquirer;
  readonly payments: PaymentIntents;
  readonly webhooks: WebhookDelivery;
  readonly refunds: Refunds;
  readonly methods: PaymentMethods;
}
