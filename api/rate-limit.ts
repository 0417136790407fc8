// Fixed one-minute windows in Redis, shared by every API process. spec: Limits.
// One round trip per event-loop turn, whatever the number of requests in it: hits are gathered
// until setImmediate, then one script adds each bucket's count (INCRBY n) and checks the
// revoked-keys set, so a revoked key is refused by every process at once. Each request gets its
// own place in the window (count - n + i), so the limit is exact.
import type { Redis } from 'ioredis';

const SCRIPT = `
local out = {}
for i = 2, #KEYS do
  local keyId = ARGV[2 * i - 1]
  if keyId ~= '' and redis.call('SISMEMBER', KEYS[1], keyId) == 1 then
    out[i - 1] = -1
  else
    local n = redis.call('INCRBY', KEYS[i], tonumber(ARGV[2 * i - 2]))
    if n == tonumber(ARGV[2 * i - 2]) then redis.call('PEXPIRE', KEYS[i], ARGV[1]) end
    out[i - 1] = n
  end
end
return out`;

export const WINDOW_MS = 60_000;

export interface Verdict {
  allowed: boolean;
  revoked: boolean;
  /** Seconds until the current window ends (what Retry-After carries). */
  retryAfter: number;
}

interface Waiter {
  limit: number;
  resolve: (v: Verdict) => void;
  reject: (e: unknown) => void;
}
interface Batch {
  key: string;
  keyId: string;
  window: number;
  waiters: Waiter[];
}

type WithHit = Redis & { orqRateHits(numKeys: number, ...args: Array<string | number>): Promise<number[]> };

export class RateLimiter {
  private r: WithHit;
  private batches = new Map<string, Batch>();
  private scheduled = false;

  constructor(redis: Redis, private prefix: string, private revokedSetKey: string, private now: () => number = Date.now) {
    if (!(redis as unknown as Partial<WithHit>).orqRateHits) redis.defineCommand('orqRateHits', { lua: SCRIPT });
    this.r = redis as unknown as WithHit;
  }

  /** Counts one request of `bucket` (e.g. "k:<keyId>" or "ip:<addr>") against `limit` per minute. */
  hit(bucket: string, limit: number, keyId = ''): Promise<Verdict> {
    const window = Math.floor(this.now() / WINDOW_MS);
    const key = `${this.prefix}:rl:${bucket}:${window}`;
    return new Promise((resolve, reject) => {
      let b = this.batches.get(key);
      if (!b) this.batches.set(key, (b = { key, keyId, window, waiters: [] }));
      b.waiters.push({ limit, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush() {
    this.scheduled = false;
    const batches = [...this.batches.values()];
    this.batches.clear();
    const args: Array<string | number> = [batches.length + 1, this.revokedSetKey, ...batches.map((b) => b.key), WINDOW_MS + 1000];
    for (const b of batches) args.push(b.waiters.length, b.keyId);
    let counts: number[];
    try {
      counts = await this.r.orqRateHits(...(args as [number, ...Array<string | number>]));
    } catch (e) {
      for (const b of batches) for (const w of b.waiters) w.reject(e);
      return;
    }
    const now = this.now();
    batches.forEach((b, i) => {
      const retryAfter = Math.max(1, Math.ceil(((b.window + 1) * WINDOW_MS - now) / 1000));
      const total = Number(counts[i]);
      b.waiters.forEach((w, j) => {
        if (total === -1) return w.resolve({ allowed: false, revoked: true, retryAfter });
        const mine = total - b.waiters.length + j + 1;
        w.resolve({ allowed: mine <= w.limit, revoked: false, retryAfter });
      });
    });
  }
}
