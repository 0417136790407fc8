// What handlers and commands are given: the process's pools and shared services.
import type { Redis } from 'ioredis';
import type { Config } from './config.js';
import type { Sql } from '../kernel/db.js';
import type { Logger } from '../kernel/log.js';
import type { Metrics } from '../kernel/metrics.js';
import type { KeyStore } from '../api/auth.js';
import type { Idempotency } from '../api/idempotency.js';
import type { RateLimiter } from '../api/rate-limit.js';
import type { PaymentIntents } from '../actors/payment-intents.js';
import type { Queues } from '../kernel/queues.js';
import type { Runtime } from '../kernel/runtime.js';
import type { TestClock } from '../actors/test-clock.js';
import type { WebhookDelivery } from '../actors/webhook-delivery.js';
import type { Refunds } from '../actors/refunds.js';
import type { PaymentMethods } from '../actors/payment-methods.js';
import type { Router } from '../connectors/routing.js';
import type { SimAcquirer } from '../connectors/sim.js';
import type { SecretBox } from './secret-box.js';
import type { ConnectServices } from './connect.js';
import type { Invoices } from '../actors/invoices.js';
import type { BillerServices } from './billers.js';
import type { Receivables } from '../actors/receivables.js';
import type { Routing } from '../actors/routing.js';
import type { CardWebhooks } from '../actors/card-webhooks.js';
import type { Signups } from '../actors/signups.js';
import type { PortalAccounts } from '../actors/portal-accounts.js';
import type { Terminals } from '../actors/terminals.js';
import type { JobHistory } from '../kernel/job-history.js';
import type { Operators } from '../actors/operators.js';
import type { OperatorDecisions } from '../actors/operator-decisions.js';

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
  /** Jobs, timers, reactions and the entity actor of every installed capability. */
  readonly runtime: Runtime;
  readonly router: Router;
  /** Per-tenant routing tables, decisions and scores (issue 20). */
  readonly routing: Routing;
  /** Inbound notices of the real card connectors (POST /webhooks/in/{conekta|openpay}/{tenantId}). */
  readonly cardWebhooks: CardWebhooks;
  /** Public signup (POST /public/signup, /verify; GET /admin/signups). */
  readonly signups: Signups;
  readonly sim: SimAcquirer;
  readonly payments: PaymentIntents;
  readonly webhooks: WebhookDelivery;
  readonly refunds: Refunds;
  readonly methods: PaymentMethods;
  readonly testClock: TestClock;
  /** Secrets at rest (full CLABEs, rail credentials). */
  readonly secrets: SecretBox;
  readonly onboarding: ConnectServices['onboarding'];
  readonly connect: ConnectServices['connect'];
  readonly payouts: ConnectServices['payouts'];
  readonly payoutCredentials: ConnectServices['payoutCredentials'];
  readonly invoices: Invoices;
  readonly billers: BillerServices['billers'];
  readonly recharges: BillerServices['recharges'];
  readonly receivables: Receivables;
  /** The merchant portal's accounts, sessions, team, keys and audit log (docs/portal.md). */
  readonly portal: PortalAccounts;
  /** The portal's built files (dist/web/portal: ops/build-web.mjs), by name; undefined when absent. */
  readonly portalAsset: (name: string) => { body: Uint8Array; type: string } | undefined;
  /** Terminals (card-present readers, counter CoDi devices): portal and operator administration. */
  readonly terminals: Terminals;
  /** Each job run (attempt, outcome, error, trace) per entity, for operators (kernel/job-history.ts). */
  readonly jobHistory: JobHistory;
  /** Named operators on the portal's accounts, and their four-eyes decisions (docs/operator.md). */
  readonly operators: Operators;
  readonly operatorDecisions: OperatorDecisions;
}
