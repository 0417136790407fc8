// Operational and public pages (spec: Endpoints > Operational and public pages).
import { ApiError } from '../../kernel/errors.js';
import { defineRoute } from '../route.js';
import type { Services } from '../services.js';

const VERSION = '2026-07-12';

async function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<T>((_, rej) => (t = setTimeout(() => rej(new Error(`timed out after ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(t);
  }
}

async function check(fn: () => Promise<unknown>): Promise<'ok' | 'down'> {
  try {
    await within(1500, fn());
    return 'ok';
  } catch {
    return 'down';
  }
}

const dbCheck = (d: Services) => check(() => d.health.database());
const redisCheck = (d: Services) => check(() => d.health.redis());

const healthSchema = {
  type: 'object',
  properties: { object: { const: 'health' }, status: { enum: ['ok', 'unavailable'] }, checks: { type: 'object', additionalProperties: { enum: ['ok', 'down'] } } },
} as const;

const live = (path: string) =>
  defineRoute({
    method: 'GET',
    path,
    auth: 'none',
    summary: 'Liveness: the process answers',
    tags: ['Operations'],
    responses: { 200: { description: 'Alive', schema: healthSchema } },
    handler: () => ({ status: 200, body: { object: 'health', status: 'ok' } }),
  });

// Chains of the Paynet cash network where a reference can be paid. Static catalog.
const PAYNET_CHAINS = [
  { code: '7eleven', name: '7-Eleven' },
  { code: 'circle_k', name: 'Circle K' },
  { code: 'farmacias_guadalajara', name: 'Farmacias Guadalajara' },
  { code: 'farmacias_del_ahorro', name: 'Farmacias del Ahorro' },
  { code: 'walmart', name: 'Walmart' },
  { code: 'bodega_aurrera', name: 'Bodega Aurrera' },
  { code: 'sams_club', name: "Sam's Club" },
  { code: 'extra', name: 'Extra' },
  { code: 'kiosko', name: 'Kiosko' },
  { code: 'waldos', name: "Waldo's" },
];

export const opsRoutes = [
  live('/health'),
  live('/health/live'),
  defineRoute({
    method: 'GET',
    path: '/health/ready',
    auth: 'none',
    summary: 'Readiness: Postgres and Redis answer',
    tags: ['Operations'],
    responses: { 200: { description: 'Ready', schema: healthSchema }, 503: { description: 'Postgres or Redis is down', schema: healthSchema } },
    handler: async (ctx) => {
      const [database, redis] = await Promise.all([dbCheck(ctx.deps), redisCheck(ctx.deps)]);
      const ok = database === 'ok' && redis === 'ok';
      return { status: ok ? 200 : 503, body: { object: 'health', status: ok ? 'ok' : 'unavailable', checks: { database, redis } } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/health/replication',
    auth: 'none',
    summary: 'Replication: replicas of the primary and their lag',
    description: 'Reads pg_stat_replication on the primary and, when REPLICA_DATABASE_URL is set, the replay lag of that replica. 503 when the replica is unreachable or lags more than REPLICATION_MAX_LAG_SECONDS.',
    tags: ['Operations'],
    responses: { 200: { description: 'Replication healthy (or no replica configured)' }, 503: { description: 'A replica is unreachable or lags too much' } },
    handler: async (ctx) => {
      const { health, config } = ctx.deps;
      try {
        const standbys = await within(1500, health.standbys());
        let replica: { configured: boolean; status: 'ok' | 'down' | 'lagging'; lag_seconds?: number } = { configured: false, status: 'ok' };
        if (health.replicaLag) {
          try {
            const lag = await within(1500, health.replicaLag());
            replica = { configured: true, status: lag > config.replicationMaxLagSeconds ? 'lagging' : 'ok', lag_seconds: lag };
          } catch {
            replica = { configured: true, status: 'down' };
          }
        }
        const ok = replica.status === 'ok';
        return {
          status: ok ? 200 : 503,
          body: {
            object: 'replication_health',
            status: ok ? 'ok' : 'unavailable',
            max_lag_seconds: config.replicationMaxLagSeconds,
            replica,
            standbys: standbys.map((s) => ({ name: s.name, state: s.state, lag_seconds: s.lag })),
          },
        };
      } catch {
        return { status: 503, body: { object: 'replication_health', status: 'unavailable', primary: 'down' } };
      }
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/status',
    auth: 'none',
    summary: 'Aggregate status of api, database and worker',
    tags: ['Operations'],
    responses: { 200: { description: 'Status of each part; `status` is `ok` only when all are' } },
    handler: async (ctx) => {
      const d = ctx.deps;
      const [database, redis] = await Promise.all([dbCheck(d), redisCheck(d)]);
      let worker: { status: 'ok' | 'down'; processes: number; last_heartbeat_at?: string } = { status: 'down', processes: 0 };
      if (redis === 'ok') {
        const w = await d.health.workers().catch(() => ({ count: 0, last: undefined }));
        worker = { status: w.count > 0 ? 'ok' : 'down', processes: w.count, last_heartbeat_at: w.last ? new Date(w.last).toISOString() : undefined };
      }
      const all = database === 'ok' && redis === 'ok' && worker.status === 'ok';
      return {
        status: 200,
        body: {
          object: 'status',
          status: all ? 'ok' : 'degraded',
          api: { status: 'ok', version: VERSION, uptime_seconds: Math.round((Date.now() - d.startedAt.getTime()) / 1000) },
          database: { status: database },
          redis: { status: redis },
          worker,
        },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/.well-known/security.txt',
    auth: 'none',
    summary: 'Security contact (RFC 9116)',
    tags: ['Operations'],
    responses: { 200: { description: 'security.txt', contentType: 'text/plain' } },
    handler: (ctx) => {
      const c = ctx.deps.config;
      const expires = new Date(ctx.deps.startedAt.getTime() + 365 * 86400_000).toISOString();
      return {
        status: 200,
        contentType: 'text/plain',
        text: `Contact: ${c.securityContact}\nExpires: ${expires}\nPreferred-Languages: es, en\nCanonical: ${c.publicBaseUrl}/.well-known/security.txt\n`,
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/.well-known/{file}',
    auth: 'none',
    summary: 'Wallet domain association file (`{wallet}-developer-merchantid-domain-association`)',
    description: 'Serves WALLET_DOMAIN_ASSOCIATION for any wallet provider segment, e.g. /.well-known/apple-developer-merchantid-domain-association.',
    tags: ['Operations'],
    responses: { 200: { description: 'The association file', contentType: 'text/plain' } },
    errors: ['route.not_found'],
    handler: (ctx) => {
      const m = /^([a-z0-9]+)-developer-merchantid-domain-association$/.exec(ctx.params.file);
      if (!m) throw new ApiError('route.not_found', `No file ${ctx.params.file} under /.well-known.`);
      const body = ctx.deps.config.walletDomainAssociation || `orquesta ${m[1]} merchant domain association for ${ctx.deps.config.publicBaseUrl}\n`;
      return { status: 200, contentType: 'text/plain', text: body };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/paynet/chains',
    auth: 'none',
    summary: 'Store chains of the Paynet cash network where references can be paid',
    tags: ['Operations'],
    responses: { 200: { description: 'List of chains' } },
    handler: () => ({ status: 200, body: { object: 'list', data: PAYNET_CHAINS.map((c) => ({ object: 'paynet_chain', ...c })) } }),
  }),
  defineRoute({
    method: 'GET',
    path: '/metrics',
    auth: 'none',
    summary: 'Prometheus metrics',
    tags: ['Operations'],
    responses: { 200: { description: 'Prometheus text format', contentType: 'text/plain' } },
    handler: async (ctx) => ({ status: 200, contentType: ctx.deps.metrics.registry.contentType, text: await ctx.deps.metrics.registry.metrics() }),
  }),
];
