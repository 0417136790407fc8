// Assembles a process: pools, migrations, first-start state, then the API and/or the workers
// according to ROLE. Tests build the same thing in-process (port 0).
import { hostname } from 'node:os';
import { createRedisClient, type RedisClient } from '../kernel/redis.js';
import { KeyStore } from '../api/auth.js';
import type { AppDeps } from './deps.js';
import { createEdge, type Edge } from '../api/edge.js';
import { Idempotency } from '../api/idempotency.js';
import { RateLimiter } from '../api/rate-limit.js';
import { allRoutes } from '../api/routes/index.js';
import { startWorkers, type RunningWorkers } from './worker.js';
import { EntityLocks } from '../kernel/lock.js';
import { PaymentIntents } from '../actors/payment-intents.js';
import { paymentLinksCapability } from '../actors/payment-links.js';
import { bankStatementsCapability } from '../actors/bank-statements.js';
import { TestClock } from '../actors/test-clock.js';
import { Queues } from '../kernel/queues.js';
import { Runtime } from '../kernel/runtime.js';
import { wakeRelay } from '../kernel/outbox.js';
import { maintenanceCapability } from './maintenance.js';
import { WebhookDelivery } from '../actors/webhook-delivery.js';
import { Refunds } from '../actors/refunds.js';
import { Invoices } from '../actors/invoices.js';
import { PacRegistry } from '../connectors/pac/index.js';
import { Receivables } from '../actors/receivables.js';
import { PaymentMethods } from '../actors/payment-methods.js';
import { Terminals } from '../actors/terminals.js';
import { JobHistory } from '../kernel/job-history.js';
import { Operators } from '../actors/operators.js';
import { OperatorDecisions } from '../actors/operator-decisions.js';
import { Router, SIM_B_FEES, SIM_FEES } from '../connectors/routing.js';
import { Routing } from '../actors/routing.js';
import { ConektaAcquirer } from '../connectors/card/conekta.js';
import { OpenpayAcquirer } from '../connectors/card/openpay.js';
import { SqlKeyBook } from '../connectors/card/key-book.js';
import { CardWebhooks } from '../actors/card-webhooks.js';
import { Signups } from '../actors/signups.js';
import { PortalAccounts } from '../actors/portal-accounts.js';
import { PortalViews } from '../actors/portal-views.js';
import { ManualReconciliation } from '../actors/portal-reconcile.js';
import { portalAssets } from './portal-assets.js';
import { SimAcquirer } from '../connectors/sim.js';
import { ensureDemoTenant, resolveAdminKey, type AdminKeyInfo, type DemoTenant } from './bootstrap.js';
import type { Config } from './config.js';
import { createSql, ensureDatabase, type Sql } from '../kernel/db.js';
import { createLogger, type Logger } from '../kernel/log.js';
import { createMetrics } from '../kernel/metrics.js';
import { migrate } from './migrate.js';
import { createConnect } from './connect.js';
import { createBillers } from './billers.js';
import { resolveSecretBox } from './secret-box.js';
import { createHealth } from './health.js';
import { bindGroups } from '../kernel/facade.js';
import { commandGroups } from '../actors/facades.js';
import { TestHelpers } from '../actors/test-helpers.js';

export interface RunningApp {
  deps: AppDeps;
  port?: number;
  url?: string;
  admin: AdminKeyInfo;
  demo?: DemoTenant;
  migrationsApplied: string[];
  stop(): Promise<void>;
}

export function createRedis(config: Config): RedisClient {
  return createRedisClient({ url: config.redisUrl, clusterNodes: config.redisClusterNodes }, { enableAutoPipelining: true, maxRetriesPerRequest: 2, lazyConnect: false });
}

export async function startApp(config: Config, log: Logger = createLogger(config.logLevel)): Promise<RunningApp> {
  await ensureDatabase(config.databaseUrl);
  const sql: Sql = createSql(config.databaseUrl, config.databasePoolMax);
  const readSql: Sql = config.replicaDatabaseUrl ? createSql(config.replicaDatabaseUrl, 10) : sql;
  const migrationsApplied = await migrate(sql);
  if (migrationsApplied.length) log.info('migrations applied', { migrations: migrationsApplied });

  const redis = createRedis(config);
  await redis.ping();
  const admin = await resolveAdminKey(sql, config);
  const demo = config.seedDemoTenant ? await ensureDemoTenant(sql, config) : undefined;

  const keys = new KeyStore(sql, redis, config.redisPrefix, config.keyCacheSeconds * 1000);
  const queues = new Queues(redis, config.redisPrefix, config.queueShards);
  const metrics = createMetrics();
  // The runtime every capability is installed into: jobs, timers, reactions, the entity actor.
  // After a commit that wrote outbox events, the webhook relay is woken at once (kernel/outbox.ts).
  const jobHistory = new JobHistory(redis, config.redisPrefix, { max: 50, ttlSeconds: config.jobHistoryHours * 3600 });
  const runtime = new Runtime({
    sql, queues, locks: new EntityLocks(redis, config.redisPrefix, metrics), log, lockMs: config.entityLockMs, jobHistory,
    onEvents: (tenantId) => wakeRelay(redis, config.redisPrefix, tenantId),
  });
  const actor = runtime.actor;
  const sim = new SimAcquirer(sql, config.publicBaseUrl);
  // sim_b: the second simulated card connector (issue 20); a tenant enables it in its routing table.
  const simB = new SimAcquirer(sql, config.publicBaseUrl, undefined, 'sim_b');
  // Real card connectors: a tenant enables them with its credentials (PUT /v1/routing/connectors/{key}).
  const book = new SqlKeyBook(sql);
  const credsOf = (key: string) => (tenantId: string, livemode: boolean) => routing.credentialsFor(tenantId, livemode, key);
  const conekta = new ConektaAcquirer({ baseUrl: config.conektaApiUrl, timeoutMs: config.cardTimeoutMs, book, credentials: credsOf('conekta') });
  const openpay = new OpenpayAcquirer({ baseUrl: config.openpayApiUrl, sandboxUrl: config.openpaySandboxUrl, timeoutMs: config.cardTimeoutMs, book, credentials: credsOf('openpay') });
  const router = new Router({ sim, sim_b: simB, conekta, openpay }, { sim: SIM_FEES });
  const secrets = resolveSecretBox(config);
  const routing: Routing = new Routing({ sql, readSql, router, secrets, publishedFees: { sim: SIM_FEES, sim_b: SIM_B_FEES } });
  const methods = new PaymentMethods({ sql, actor, router, log });
  const terminals = new Terminals({ sql, actor });
  const payments = new PaymentIntents({
    sql, readSql, actor, router, log,
    enqueue: (j) => runtime.jobs.enqueue(j),
    savedMethod: (tenantId, livemode, id) => methods.chargeable(sql, tenantId, livemode, id),
    routingTable: (tenantId, livemode) => routing.tableFor(tenantId, livemode),
    terminalActive: (tenantId, livemode, id) => terminals.isActive(tenantId, livemode, id),
  });
  const refunds = new Refunds({ sql, actor, router, log, refundSettled: (intentId, attemptId, scope) => payments.refundSettled(intentId, attemptId, scope), refundCovered: (intentId, scope, refundId) => invoices.refundCredits(intentId, scope, refundId) });
  const invoices = new Invoices({ sql, actor, log, secrets, pacs: new PacRegistry({ finkokUrl: config.finkokUrl }) });
  const receivables = new Receivables({ sql, actor, log, payments, invoices, publicBaseUrl: config.publicBaseUrl });
  const cx = createConnect({ config, sql, log, secrets, actor, enqueue: (j) => runtime.jobs.enqueue(j) });
  const bx = createBillers({ sql, log, secrets, actor, onEvents: () => runtime.onEvents?.() });
  runtime.install(
    cx.capability,
    ...bx.capabilities,
    invoices.capability(),
    payments.capability(),
    refunds.capability(),
    methods.capability(),
    paymentLinksCapability,
    bankStatementsCapability,
    receivables.capability(),
    maintenanceCapability({ sql, log, retentionHours: config.idempotencyRetentionHours, healRevokedKeys: () => keys.healRevokedSet() }),
  );
  metrics.setSharedCollectors({
    queueDepths: () => queues.depths(runtime.jobs.queueKinds()), // webhooks use no queue (leases in Postgres)
    outboxLagSeconds: async () => {
      const [r] = await sql`select coalesce(extract(epoch from now() - min(created_at)), 0)::float8 as lag from outbox_events where relayed_at is null`;
      return Number(r.lag);
    },
    ledgerPending: async () => Number((await sql`select count(*)::float8 as n from ledger_pending`)[0].n),
  });
  const webhooks = new WebhookDelivery({ sql, redis, config, log, metrics });
  const portal = new PortalAccounts({ sql, secrets, idleMinutes: config.portalSessionIdleMinutes, maxHours: config.portalSessionMaxHours, announceRevocation: (id) => keys.announceRevocation(id) });
  const base = {
    config,
    sql,
    readSql,
    redis,
    log,
    metrics,
    keys,
    limiter: new RateLimiter(redis, config.redisPrefix, keys.revokedSetKey),
    idempotency: new Idempotency(sql, redis, config.redisPrefix, undefined, (sealed, context) => secrets.open(sealed, context)),
    adminKeyHash: admin.hash,
    startedAt: new Date(),
    queues,
    runtime,
    router,
    routing,
    cardWebhooks: new CardWebhooks({ sql, routing, payments, conekta }),
    signups: new Signups({ sql, secrets }),
    portal,
    portalAsset: portalAssets(),
    portalViews: new PortalViews({ sql, readSql, wake: (tenantId) => webhooks.sweepOnce({ tenantId }) }),
    manualReconciliation: new ManualReconciliation({ sql }),
    sim,
    payments,
    webhooks,
    refunds,
    methods,
    invoices,
    receivables,
    terminals,
    jobHistory,
    operators: new Operators({ sql, requestReset: (email, url) => portal.requestReset(email, url), publicBaseUrl: config.publicBaseUrl }),
    operatorDecisions: new OperatorDecisions({
      sql, actor,
      targets: { application: cx.onboarding.def as never, payoutApproval: cx.payouts.approvals.def as never },
      announceRelease: (ids) => keys.announceSuspension(ids, false),
    }),
    testClock: new TestClock({ sql, log, webhooks, sweepTimers: (tenantId, suffix) => runtime.sweep({ tenantId, suffix }) }),
    secrets,
    onboarding: cx.onboarding,
    connect: cx.connect,
    payouts: cx.payouts,
    payoutCredentials: cx.payoutCredentials,
    billers: bx.billers,
    recharges: bx.recharges,
  };
  // What the edge's handlers call (api/services.ts): the plain-function capabilities bound to this
  // process (actors/facades.ts), the test helpers and the health probes.
  const deps: AppDeps = {
    ...base,
    ...bindGroups(base, commandGroups),
    testHelpers: new TestHelpers(base),
    health: createHealth({ sql, readSql, redis, redisPrefix: config.redisPrefix }),
  };

  let edge: Edge | undefined;
  let port: number | undefined;
  let workers: RunningWorkers | undefined;
  if (config.role === 'api' || config.role === 'all') {
    await keys.start();
    edge = createEdge(deps, allRoutes(config));
    port = await edge.listen(config.host, config.port);
  }
  if (config.role === 'worker' && config.metricsPort !== undefined) {
    // A worker has no API: it serves its own metrics (job latency, deliveries) and liveness.
    edge = createEdge(deps, allRoutes(config).filter((r) => r.path === '/metrics' || r.path === '/health/live'));
    port = await edge.listen(config.host, config.metricsPort);
  }
  if (config.role === 'worker' || config.role === 'all') {
    workers = await startWorkers(deps, runtime, `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`);
  }

  let stopping: Promise<void> | undefined;
  return {
    deps,
    port,
    url: port !== undefined ? `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}` : undefined,
    admin,
    demo,
    migrationsApplied,
    stop() {
      // Stop accepting, finish in-flight requests, stop workers, then close pools.
      stopping ??= (async () => {
        await edge?.close(config.shutdownTimeoutMs);
        await workers?.stop().catch((e) => log.warn('worker stop failed', { err: e }));
        await keys.stop();
        await deps.webhooks.close().catch(() => {});
        await queues.close().catch(() => {});
        redis.disconnect();
        await sql.end({ timeout: 5 });
        if (readSql !== sql) await readSql.end({ timeout: 5 });
      })();
      return stopping;
    },
  };
}
