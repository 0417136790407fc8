// One writer per entity: a Redis lock (SET NX PX with a token, released only by its holder).
// The Postgres row's version is the fencing token for a holder whose lock expired.
import { randomUUID } from 'node:crypto';
import type { RedisClient } from './redis.js';
import { ATTR, inSpan, SpanKind } from './tracing.js';

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export interface LockMetrics {
  lockWaits: { inc(labels: { entity: string }): void };
  lockTimeouts: { inc(labels: { entity: string }): void };
}

export class EntityLocks {
  constructor(private redis: RedisClient, private prefix: string, private metrics?: LockMetrics) {
    if (!(redis as unknown as { orqLockRelease?: unknown }).orqLockRelease) redis.defineCommand('orqLockRelease', { numberOfKeys: 1, lua: RELEASE });
  }

  /** Token when acquired within waitMs, else null. Traced as a Redis client span. */
  acquire(entity: string, ttlMs: number, waitMs: number): Promise<string | null> {
    return inSpan('redis lock.acquire', { [ATTR.dbSystem]: 'redis', [ATTR.lockEntity]: entity.split(':')[0] }, () => this.acquireUntraced(entity, ttlMs, waitMs), { kind: SpanKind.CLIENT });
  }

  private async acquireUntraced(entity: string, ttlMs: number, waitMs: number): Promise<string | null> {
    const key = `${this.prefix}:lock:${entity}`;
    const token = randomUUID();
    const deadline = Date.now() + waitMs;
    let pause = 5;
    const kind = entity.split(':')[0];
    for (let tries = 0; ; tries++) {
      if ((await this.redis.set(key, token, 'PX', ttlMs, 'NX')) === 'OK') {
        if (tries > 0) this.metrics?.lockWaits.inc({ entity: kind });
        return token;
      }
      if (Date.now() + pause > deadline) {
        this.metrics?.lockTimeouts.inc({ entity: kind });
        return null;
      }
      await new Promise((r) => setTimeout(r, pause));
      pause = Math.min(pause * 2, 50);
    }
  }

  async release(entity: string, token: string): Promise<void> {
    await (this.redis as unknown as { orqLockRelease(k: string, v: string): Promise<number> }).orqLockRelease(`${this.prefix}:lock:${entity}`, token);
  }
}
