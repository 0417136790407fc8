// Worker liveness for /status: each worker process refreshes its score in a Redis sorted set.
import type { RedisClient } from '../kernel/redis.js';

export const HEARTBEAT_MS = 5_000;
export const STALE_MS = 15_000;

export function startHeartbeat(redis: RedisClient, prefix: string, id: string): () => Promise<void> {
  const key = `${prefix}:workers`;
  const beat = () => redis.zadd(key, Date.now(), id).catch(() => {});
  void beat();
  const t = setInterval(beat, HEARTBEAT_MS);
  t.unref();
  return async () => {
    clearInterval(t);
    await redis.zrem(key, id).catch(() => {});
  };
}

/** Workers seen within STALE_MS, and when the last one beat. */
export async function liveWorkers(redis: RedisClient, prefix: string): Promise<{ count: number; last?: number }> {
  const key = `${prefix}:workers`;
  const now = Date.now();
  await redis.zremrangebyscore(key, 0, now - 10 * STALE_MS);
  const live = await redis.zrangebyscore(key, now - STALE_MS, '+inf', 'WITHSCORES');
  let last: number | undefined;
  for (let i = 1; i < live.length; i += 2) last = Math.max(last ?? 0, Number(live[i]));
  return { count: live.length / 2, last };
}
