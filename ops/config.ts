// The one place that reads process.env: defaults, then env, then validate, then freeze.
// spec: decisions.md §1 "Running it" lists the settings and their defaults.
import { Ajv } from 'ajv';

export type Role = 'api' | 'worker' | 'all';

export interface Config {
  readonly env: 'development' | 'test' | 'production';
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  readonly replicaDatabaseUrl?: string;
  /**
   * DATABASE_POOL_MAX: Postgres connections of each process's primary pool (default 20). Each
   * request or job holds one for its statement or transaction; a write waits for its commit's WAL
   * flush while holding it, so commit-bound writes (creates) go as far as connections × flushes/s.
   * API + workers processes × this must stay under the server's max_connections (docs/operations.md).
   */
  readonly databasePoolMax: number;
  readonly redisUrl: string;
  /** REDIS_CLUSTER_NODES (`host:port,…`): a Redis Cluster instead of REDIS_URL's single Redis (kernel/redis.ts). */
  readonly redisClusterNodes: readonly string[];
  /** ORQ_BANNER=off: no start banner (ops/start.mjs sets it on all but the first of several processes). */
  readonly banner: boolean;
  /** Prefix of every Redis key (BullMQ queues, locks, rate limits) so tests and deployments can share a server. */
  readonly redisPrefix: string;
  readonly adminKey?: string;
  readonly publicBaseUrl: string;
  readonly rateLimitV1PerMin: number;
  readonly rateLimitPublicPerMin: number;
  /** Failed authentications (API key or X-Admin-Key) per client IP per minute before they answer 429 instead of 401. */
  readonly authFailuresPerMin: number;
  /** Peers whose X-Forwarded-For is believed. Empty: the socket address is the client IP. */
  readonly trustedProxies: readonly string[];
  readonly webhookAllowHttpHosts: readonly string[];
  /**
   * Local webhooks (development only): test-mode endpoints may point at localhost, 127.0.0.1 or
   * [::1] over http. WEBHOOK_LOCAL_ENDPOINTS=auto (default) turns it on when NODE_ENV is unset or
   * `development` and HOST is a loopback address; `true` forces it (refused in production); `false` turns it off.
   */
  readonly webhookLocalEndpoints: boolean;
  readonly role: Role;
  readonly otelEndpoint?: string;
  readonly otelTracesExporter?: string;
  /** Link of a trace for operators, `{trace_id}` replaced (e.g. a Jaeger UI: `http://localhost:16686/trace/{trace_id}`); unset = ids only. */
  readonly traceUrlTemplate?: string;
  /** Hours each entity's job history (every run of its jobs: attempts, errors) is kept in Redis; 0 keeps none. */
  readonly jobHistoryHours: number;
  readonly stateDir: string;
  readonly bodyLimitBytes: number;
  readonly shutdownTimeoutMs: number;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  readonly queueShards: number;
  readonly replicationMaxLagSeconds: number;
  readonly securityContact: string;
  readonly walletDomainAssociation: string;
  readonly idempotencyRetentionHours: number;
  /** Seconds an API key record stays cached in a process before it is read again from Postgres. */
  readonly keyCacheSeconds: number;
  /** A portal session ends after this many minutes without a request (docs/portal.md). */
  readonly portalSessionIdleMinutes: number;
  /** A portal session ends this many hours after sign-in, used or not. */
  readonly portalSessionMaxHours: number;
  readonly seedDemoTenant: boolean;
  /** How often a worker fires due timers (by each tenant's clock). */
  readonly sweepIntervalMs: number;
  /** How often a worker re-enqueues work Postgres shows pending (lost jobs, flushed Redis). */
  readonly reconcileIntervalMs: number;
  /** Jobs a worker runs at once per shard queue. */
  readonly workerConcurrency: number;
  /** BullMQ job lock, and the lease of a claimed webhook delivery: a dead worker's work is taken over after about this long. */
  readonly jobLockMs: number;
  /** Entity lock TTL: longer than the slowest provider call made under it. */
  readonly entityLockMs: number;
  /** How often the outbox relay looks for committed events (the safety net: commits that call kernel/outbox.ts wakeRelay start a pass at once). */
  readonly relayIntervalMs: number;
  /** Webhook deliveries a worker process has in flight at once (at most 8 per endpoint). */
  readonly webhookConcurrency: number;
  /** A worker process (ROLE=worker) serves /metrics and /health/live on this port when set. */
  readonly metricsPort?: number;
  /** Key of secrets at rest (full CLABEs, rail credentials): 32 bytes, base64 or hex; generated into STATE_DIR when unset (ops/secret-box.ts). */
  readonly secretsKey?: string;
  /** STP's REST base for live payouts (connectors/payout/stp.ts). */
  readonly stpApiUrl: string;
  /** Conekta's API base (connectors/card/conekta.ts); test and live keys use the same host. */
  readonly conektaApiUrl: string;
  /** Openpay's API base for live keys, and its sandbox for test keys (connectors/card/openpay.ts). */
  readonly openpayApiUrl: string;
  readonly openpaySandboxUrl: string;
  /** Deadline of a card processor call; a later answer is a fault (outcome unknown, settled by retrieve). */
  readonly cardTimeoutMs: number;
  /** Finkok's base for live stamping and cancellation (connectors/pac/finkok.ts); its production host by default. */
  readonly finkokUrl?: string;
}

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['port', 'host', 'databaseUrl', 'redisUrl', 'publicBaseUrl', 'role'],
  properties: {
    env: { enum: ['development', 'test', 'production'] },
    port: { type: 'integer', minimum: 0, maximum: 65535 },
    host: { type: 'string', minLength: 1 },
    databaseUrl: { type: 'string', pattern: '^postgres(ql)?://' },
    replicaDatabaseUrl: { type: 'string', pattern: '^postgres(ql)?://' },
    databasePoolMax: { type: 'integer', minimum: 1, maximum: 1000 },
    redisUrl: { type: 'string', pattern: '^rediss?://' },
    banner: { type: 'boolean' },
    redisClusterNodes: { type: 'array', items: { type: 'string', pattern: '^(\\[[0-9a-fA-F:]+\\]|[A-Za-z0-9.-]+):[0-9]{1,5}$' } },
    redisPrefix: { type: 'string', pattern: '^[A-Za-z0-9_:-]+$' },
    adminKey: { type: 'string', minLength: 16 },
    publicBaseUrl: { type: 'string', pattern: '^https?://[^/]+' },
    rateLimitV1PerMin: { type: 'integer', minimum: 1 },
    rateLimitPublicPerMin: { type: 'integer', minimum: 1 },
    authFailuresPerMin: { type: 'integer', minimum: 1 },
    trustedProxies: { type: 'array', items: { type: 'string', minLength: 1 } },
    webhookAllowHttpHosts: { type: 'array', items: { type: 'string', minLength: 1 } },
    webhookLocalEndpoints: { type: 'boolean' },
    role: { enum: ['api', 'worker', 'all'] },
    otelEndpoint: { type: 'string', minLength: 1 },
    otelTracesExporter: { type: 'string', minLength: 1 },
    traceUrlTemplate: { type: 'string', pattern: '^https?://.*\\{trace_id\\}' },
    jobHistoryHours: { type: 'integer', minimum: 0, maximum: 8760 },
    stateDir: { type: 'string', minLength: 1 },
    bodyLimitBytes: { type: 'integer', minimum: 1024 },
    shutdownTimeoutMs: { type: 'integer', minimum: 0 },
    logLevel: { enum: ['debug', 'info', 'warn', 'error', 'silent'] },
    queueShards: { type: 'integer', minimum: 1, maximum: 1024 },
    replicationMaxLagSeconds: { type: 'integer', minimum: 0 },
    securityContact: { type: 'string', minLength: 1 },
    walletDomainAssociation: { type: 'string' },
    idempotencyRetentionHours: { type: 'integer', minimum: 24 },
    keyCacheSeconds: { type: 'integer', minimum: 0, maximum: 300 },
    portalSessionIdleMinutes: { type: 'integer', minimum: 1, maximum: 1440 },
    portalSessionMaxHours: { type: 'integer', minimum: 1, maximum: 720 },
    seedDemoTenant: { type: 'boolean' },
    sweepIntervalMs: { type: 'integer', minimum: 50 },
    reconcileIntervalMs: { type: 'integer', minimum: 100 },
    workerConcurrency: { type: 'integer', minimum: 1, maximum: 1000 },
    jobLockMs: { type: 'integer', minimum: 1000 },
    entityLockMs: { type: 'integer', minimum: 3000 },
    relayIntervalMs: { type: 'integer', minimum: 10 },
    webhookConcurrency: { type: 'integer', minimum: 1, maximum: 1000 },
    metricsPort: { type: 'integer', minimum: 0, maximum: 65535 },
    secretsKey: { type: 'string', minLength: 32 },
    stpApiUrl: { type: 'string', pattern: '^https?://[^/]+' },
    conektaApiUrl: { type: 'string', pattern: '^https?://[^/]+' },
    openpayApiUrl: { type: 'string', pattern: '^https?://[^/]+' },
    openpaySandboxUrl: { type: 'string', pattern: '^https?://[^/]+' },
    cardTimeoutMs: { type: 'integer', minimum: 100, maximum: 120000 },
    finkokUrl: { type: 'string', pattern: '^https?://[^/]+' },
  },
} as const;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  return Number(raw.trim());
}

function list(env: Env, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function opt(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

const isLoopbackHost = (h: string) => h === 'localhost' || h === '::1' || h === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(h);

/** WEBHOOK_LOCAL_ENDPOINTS: local webhook endpoints in development only (see Config.webhookLocalEndpoints). */
function localEndpoints(env: Env, nodeEnv: Config['env'], host: string): boolean {
  const raw = (env.WEBHOOK_LOCAL_ENDPOINTS ?? '').trim().toLowerCase();
  const auto = nodeEnv === 'development' && isLoopbackHost(host);
  if (raw === '' || raw === 'auto') return auto;
  const on = bool(env, 'WEBHOOK_LOCAL_ENDPOINTS', false);
  if (on && nodeEnv === 'production') {
    throw new ConfigError('WEBHOOK_LOCAL_ENDPOINTS=true is refused when NODE_ENV=production: it would let webhooks reach this machine\'s loopback services. List the hosts you mean in WEBHOOK_ALLOW_HTTP_HOSTS instead.');
  }
  return on;
}

/** Builds the configuration from an environment (process.env by default). Throws ConfigError naming the bad setting. */
export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = env.NODE_ENV === 'production' ? 'production' : env.NODE_ENV === 'test' ? 'test' : 'development';
  const port = int(env, 'PORT', 8080);
  const host = opt(env, 'HOST') ?? '127.0.0.1';
  const draft: Record<string, unknown> = {
    env: nodeEnv,
    port,
    host,
    databaseUrl: opt(env, 'DATABASE_URL') ?? `postgres://postgres@127.0.0.1:5432/${nodeEnv === 'test' ? 'orquesta_test' : 'orquesta'}`,
    replicaDatabaseUrl: opt(env, 'REPLICA_DATABASE_URL'),
    databasePoolMax: int(env, 'DATABASE_POOL_MAX', 20),
    redisUrl: opt(env, 'REDIS_URL') ?? 'redis://127.0.0.1:6379/0',
    redisClusterNodes: list(env, 'REDIS_CLUSTER_NODES'),
    banner: opt(env, 'ORQ_BANNER') !== 'off',
    redisPrefix: opt(env, 'REDIS_PREFIX') ?? (nodeEnv === 'test' ? 'orq_test' : 'orq'),
    adminKey: opt(env, 'ADMIN_KEY'),
    publicBaseUrl: (opt(env, 'PUBLIC_BASE_URL') ?? `http://127.0.0.1:${port}`).replace(/\/+$/, ''),
    rateLimitV1PerMin: int(env, 'RATE_LIMIT_V1_PER_MIN', 300),
    rateLimitPublicPerMin: int(env, 'RATE_LIMIT_PUBLIC_PER_MIN', 60),
    authFailuresPerMin: int(env, 'AUTH_FAILURES_PER_MIN', 20),
    trustedProxies: list(env, 'TRUSTED_PROXIES'),
    webhookAllowHttpHosts: list(env, 'WEBHOOK_ALLOW_HTTP_HOSTS'),
    webhookLocalEndpoints: localEndpoints(env, nodeEnv, host),
    role: opt(env, 'ROLE') ?? 'all',
    otelEndpoint: opt(env, 'OTEL_EXPORTER_OTLP_ENDPOINT'),
    otelTracesExporter: opt(env, 'OTEL_TRACES_EXPORTER'),
    traceUrlTemplate: opt(env, 'TRACE_URL_TEMPLATE'),
    jobHistoryHours: int(env, 'JOB_HISTORY_HOURS', 72),
    stateDir: opt(env, 'STATE_DIR') ?? '.orquesta',
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 1024 * 1024),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 10_000),
    logLevel: opt(env, 'LOG_LEVEL') ?? (nodeEnv === 'test' ? 'warn' : 'info'),
    queueShards: int(env, 'QUEUE_SHARDS', 8),
    replicationMaxLagSeconds: int(env, 'REPLICATION_MAX_LAG_SECONDS', 30),
    securityContact: opt(env, 'SECURITY_CONTACT') ?? 'mailto:security@orquesta.mx',
    walletDomainAssociation: opt(env, 'WALLET_DOMAIN_ASSOCIATION') ?? '',
    idempotencyRetentionHours: int(env, 'IDEMPOTENCY_RETENTION_HOURS', 72),
    keyCacheSeconds: int(env, 'KEY_CACHE_SECONDS', 10),
    portalSessionIdleMinutes: int(env, 'PORTAL_SESSION_IDLE_MINUTES', 30),
    portalSessionMaxHours: int(env, 'PORTAL_SESSION_MAX_HOURS', 12),
    seedDemoTenant: bool(env, 'SEED_DEMO_TENANT', nodeEnv !== 'test'),
    sweepIntervalMs: int(env, 'SWEEP_INTERVAL_MS', 5000),
    reconcileIntervalMs: int(env, 'RECONCILE_INTERVAL_MS', 10_000),
    workerConcurrency: int(env, 'WORKER_CONCURRENCY', 16),
    jobLockMs: int(env, 'JOB_LOCK_MS', 30_000),
    entityLockMs: int(env, 'ENTITY_LOCK_MS', 30_000),
    relayIntervalMs: int(env, 'RELAY_INTERVAL_MS', 200),
    webhookConcurrency: int(env, 'WEBHOOK_CONCURRENCY', 256),
    metricsPort: opt(env, 'METRICS_PORT') === undefined ? undefined : int(env, 'METRICS_PORT', 0),
    secretsKey: opt(env, 'SECRETS_KEY'),
    stpApiUrl: (opt(env, 'STP_API_URL') ?? 'https://prod.stpmex.com/speiws/rest').replace(/\/+$/, ''),
    conektaApiUrl: (opt(env, 'CONEKTA_API_URL') ?? 'https://api.conekta.io').replace(/\/+$/, ''),
    openpayApiUrl: (opt(env, 'OPENPAY_API_URL') ?? 'https://api.openpay.mx').replace(/\/+$/, ''),
    openpaySandboxUrl: (opt(env, 'OPENPAY_SANDBOX_URL') ?? 'https://sandbox-api.openpay.mx').replace(/\/+$/, ''),
    cardTimeoutMs: int(env, 'CARD_TIMEOUT_MS', 15_000),
    finkokUrl: opt(env, 'FINKOK_URL')?.replace(/\/+$/, ''),
  };
  for (const k of Object.keys(draft)) if (draft[k] === undefined) delete draft[k];

  const ajv = new Ajv({ allErrors: true });
  const validate = ajv.compile(schema);
  if (!validate(draft)) {
    // Name the environment variable a person set (DATABASE_POOL_MAX), beside the setting's name.
    const named = (prop: string) => {
      const variable = prop.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
      return prop && env[variable] !== undefined ? `${variable} (${prop})` : prop || 'config';
    };
    const msg = (validate.errors ?? []).map((e) => `${named(e.instancePath.slice(1))} ${e.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${msg}`);
  }
  const frozen = draft as unknown as Config;
  for (const v of Object.values(frozen)) if (Array.isArray(v)) Object.freeze(v);
  return Object.freeze(frozen);
}

/** The configuration as it may be printed or logged: secrets and credentials in URLs masked. */
export function redactedConfig(c: Config): Record<string, unknown> {
  const mask = (u: string) => u.replace(/\/\/([^:@/]+):([^@/]+)@/, '//$1:***@');
  return {
    ...c,
    adminKey: c.adminKey ? '***' : undefined,
    secretsKey: c.secretsKey ? '***' : undefined,
    databaseUrl: mask(c.databaseUrl),
    replicaDatabaseUrl: c.replicaDatabaseUrl ? mask(c.replicaDatabaseUrl) : undefined,
    redisUrl: mask(c.redisUrl),
  };
}
