// What a process holds: the edge's services (api/services.ts: what handlers may call, and api/edge/deps.ts
// EdgeDeps: what the edge itself uses) and, beside
// them, the pools and shared machinery that only ops/, the workers and the actors' wiring use.
import type { RedisClient } from '../kernel/redis.js';
import type { Config } from './config.js';
import type { Sql } from '../kernel/db.js';
import type { EdgeDeps } from '../api/edge.js';
import type { Queues } from '../kernel/queues.js';
import type { Runtime } from '../kernel/runtime.js';
import type { WebhookDelivery } from '../actors/webhook-delivery.js';
import type { Router } from '../connectors/routing.js';
import type { SimAcquirer } from '../connectors/sim.js';
import type { SecretBox } from './secret-box.js';

export interface AppDeps extends EdgeDeps {
  readonly config: Config;
  readonly sql: Sql;
  /** Pool for lag-tolerant reads; the primary when no replica is configured. */
  readonly readSql: Sql;
  readonly redis: RedisClient;
  readonly queues: Queues;
  /** Jobs, timers, reactions and the entity actor of every installed capability. */
  readonly runtime: Runtime;
  readonly router: Router;
  readonly sim: SimAcquirer;
  readonly webhooks: WebhookDelivery;
  /** Secrets at rest (full CLABEs, rail credentials). */
  readonly secrets: SecretBox;
}
