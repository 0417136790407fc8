// One Redis client type for a single Redis or a Redis Cluster (REDIS_CLUSTER_NODES switches).
// Everything Orquesta keeps in Redis is written so that a command never spans two hash slots:
// BullMQ queues are named `{<kind>-<shard>}` (the braces are a hash tag: one slot per queue, queues spread over the slots);
// locks, idempotency markers and heartbeats are single keys; the rate limiter's batched script
// touches the revoked-keys set and the counters together, so they share the `{rl}` hash tag
// (`rateLimitTag`). Pub/sub (relay and webhook wake-ups, key revocations) has no key: a Cluster
// broadcasts PUBLISH to every node, so a subscriber on any node hears it.
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';

export type RedisClient = Redis | Cluster;

export interface RedisSettings {
  /** redis://… of a single Redis; ignored when clusterNodes is given. */
  readonly url: string;
  /** host:port of the Cluster's nodes (any subset is enough to discover the others). */
  readonly clusterNodes?: readonly string[];
}

/** `host:port,host:port` → nodes; throws a readable error on a malformed entry. */
export function parseClusterNodes(s: string): Array<{ host: string; port: number }> {
  return s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)
    .map((hp) => {
      const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(hp);
      if (!m) throw new Error(`REDIS_CLUSTER_NODES: "${hp}" is not host:port`);
      return { host: m[1], port: Number(m[2]) };
    });
}

const clusterOptions = (opts: RedisOptions): ClusterOptions => ({
  redisOptions: opts,
  enableAutoPipelining: opts.enableAutoPipelining,
  // The nodes announce 127.0.0.1 when bound locally; no NAT mapping needed.
  slotsRefreshTimeout: 2000,
  ...(opts.maxRetriesPerRequest === null ? { maxRedirections: 16 } : {}),
});

export function createRedisClient(s: RedisSettings, opts: RedisOptions): RedisClient {
  if (s.clusterNodes?.length) return new Cluster(s.clusterNodes.map((n) => parseClusterNodes(n)[0]), clusterOptions(opts));
  return new Redis(s.url, opts);
}

/** A second connection with other options (subscribers, BullMQ): the two classes' duplicate() differ. */
export function duplicateClient(c: RedisClient, opts: RedisOptions): RedisClient {
  if (c instanceof Cluster) return c.duplicate(undefined, clusterOptions({ ...c.options.redisOptions, ...opts }));
  return c.duplicate(opts);
}

export const isCluster = (c: RedisClient): c is Cluster => c instanceof Cluster;

/** The hash tag shared by every key the rate limiter's script touches in one call. */
export const rateLimitTag = '{rl}';
