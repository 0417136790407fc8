// What the edge is given, as types of its own (api/ imports nothing from ops/; ops/app.ts builds
// these). `Services` is what a handler may call (ctx.deps): the capabilities' facades, never a pool
// (test/layers.test.ts checks both). api/edge/deps.ts EdgeDeps adds what the edge's own steps use.
import type { Bound } from '../kernel/facade.js';
import type { Metrics } from '../kernel/metrics.js';
import type { commandGroups } from '../actors/facades.js';
import type { PaymentIntents } from '../actors/payment-intents.js';
import type { Refunds } from '../actors/refunds.js';
import type { PaymentMethods } from '../actors/payment-methods.js';
import type { Invoices } from '../actors/invoices.js';
import type { Receivables } from '../actors/receivables.js';
import type { Routing } from '../actors/routing.js';
import type { CardWebhooks } from '../actors/card-webhooks.js';
import type { Signups } from '../actors/signups.js';
import type { TestClock } from '../actors/test-clock.js';
import type { TestHelpers } from '../actors/test-helpers.js';
import type { Onboarding } from '../actors/onboarding.js';
import type { Connect } from '../actors/connect.js';
import type { Payouts } from '../actors/payouts.js';
import type { PayoutCredentials } from '../actors/payout-credentials.js';
import type { Billers } from '../actors/billers.js';
import type { Recharges } from '../actors/recharges.js';
import type { PortalAccounts } from '../actors/portal-accounts.js';
import type { PortalViews } from '../actors/portal-views.js';
import type { ManualReconciliation } from '../actors/portal-reconcile.js';
import type { Terminals } from '../actors/terminals.js';
import type { Operators } from '../actors/operators.js';
import type { OperatorDecisions } from '../actors/operator-decisions.js';
import type { KeyStore } from './auth.js';

/** The settings the edge and its routes read (ops/config.ts Config has them all). */
export interface EdgeConfig {
  readonly publicBaseUrl: string;
  readonly bodyLimitBytes: number;
  readonly trustedProxies: readonly string[];
  readonly rateLimitV1PerMin: number;
  readonly rateLimitPublicPerMin: number;
  readonly authFailuresPerMin: number;
  readonly replicationMaxLagSeconds: number;
  readonly walletDomainAssociation: string;
  readonly securityContact: string;
}

/** The probes behind /health/ready, /health/replication and /status (ops/health.ts). */
export interface Health {
  database(): Promise<unknown>;
  redis(): Promise<unknown>;
  /** Replicas streaming from the primary, with their replay lag in seconds. */
  standbys(): Promise<Array<{ name: string; state: string; lag: number }>>;
  /** The configured read replica's replay lag in seconds; undefined when none is configured. */
  replicaLag?: () => Promise<number>;
  /** Worker processes seen recently, and when the last one beat. */
  workers(): Promise<{ count: number; last?: number }>;
}

/** The capabilities written as plain functions (actors/facades.ts), bound to the process. */
export type CommandGroups = { readonly [N in keyof typeof commandGroups]: Bound<(typeof commandGroups)[N]> };

/** What a handler is given (RequestContext.deps). */
export interface Services extends CommandGroups {
  readonly config: EdgeConfig;
  readonly startedAt: Date;
  readonly metrics: Metrics;
  readonly health: Health;
  /** Checks an API key sent in a body (the billers' account endpoint registration). */
  readonly keys: Pick<KeyStore, 'authenticate'>;
  readonly payments: PaymentIntents;
  readonly refunds: Refunds;
  readonly methods: PaymentMethods;
  readonly invoices: Invoices;
  readonly receivables: Receivables;
  /** Per-tenant routing tables, decisions and scores (issue 20). */
  readonly routing: Routing;
  /** Inbound notices of the real card connectors (POST /webhooks/in/{conekta|openpay}/{tenantId}). */
  readonly cardWebhooks: CardWebhooks;
  /** Public signup (POST /public/signup, /verify; GET /admin/signups). */
  readonly signups: Signups;
  readonly testClock: TestClock;
  readonly testHelpers: TestHelpers;
  readonly onboarding: Onboarding;
  readonly connect: Connect;
  readonly payouts: Payouts;
  readonly payoutCredentials: PayoutCredentials;
  readonly billers: Billers;
  readonly recharges: Recharges;
  /** The merchant portal's accounts, sessions, team, keys and audit log (docs/portal.md). */
  readonly portal: PortalAccounts;
  /** A payment's activity, webhook delivery logs and resends, refund and payout approvals with who asked (docs/portal.md). */
  readonly portalViews: PortalViews;
  /** Matching a bank statement line by hand, and undoing a match (actors/portal-reconcile.ts). */
  readonly manualReconciliation: ManualReconciliation;
  /** The portal's built files (dist/web/portal), by name; undefined when absent. */
  readonly portalAsset: (name: string) => { body: Uint8Array; type: string } | undefined;
  /** Terminals (card-present readers, counter CoDi devices): portal and operator administration. */
  readonly terminals: Terminals;
  /** Named operators on the portal's accounts, and their four-eyes decisions (docs/operator.md). */
  readonly operators: Operators;
  readonly operatorDecisions: OperatorDecisions;
}
