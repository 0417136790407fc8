// Fixed one-minute windows in Redis, shared by every API process. spec: Limits.
// One round trip per request: the script counts the hit and, for API keys, checks the
// revoked-keys set, so a revoked key is refused by every process at once.
import type { Redis } from 'ioredis';

const SCRIPT = `
if ARGV[3] ~= '' and redis.call('SISMEMBER', KEYS[2], ARGV[3]) == 1 then return -1 end
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

export const WINDOW_MS = 60_000;

export interface Verdict {
  allowed: boolean;
  revoked: boolean;
  /** Seconds until the current window ends (what Retry-After carries). */
  retryAfter: number;
}

type WithHit = Redis & { orqRateHit(k1: string, k2: string, ttl: number, limit: number, keyId: string): Promise<number> };

export class RateLimiter {
  private r: WithHit;
  constructor(redis: Redis, private prefix: string, private revokedSetKey: string, private now: () => number = Date.now) {
    if (!(redis as unknown as Partial<WithHit>).orqRateHit) redis.defineCommand('orqRateHit', { numberOfKeys: 2, lua: SCRIPT });
    this.r = redis as unknown as WithHit;
  }

  /** Counts one request of `bucket` (e.g. "k:<keyId>" or "ip:<addr>") against `limit` per minute. */
  async hit(bucket: string, limit: number, keyId = ''): Promise<Verdict> {
    const now = this.now();
    const window = Math.floor(now / WINDOW_MS);
    const n = await this.r.orqRateHit(`${this.prefix}:rl:${bucket}:${window}`, this.revokedSetKey, WINDOW_MS + 1000, limit, keyId);
    const retryAfter = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
    if (n === -1) return { allowed: false, revoked: true, retryAfter };
    return { allowed: n <= limit, revoked: false, retryAfter };
  }
}
