// One writer per entity: a Redis lock (SET NX PX with a token, released only by its holder).
// The Postgres row's version is the fencing token for a holder whose lock expired.
import { randomUUID } from 'node:crypto';
import type { RedisClient } from './redis.js';
import { ATTR, inSpan, SpanKind } from './tracing.js';

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
const EXTEND = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;

export interface LockMetrics {
  lockWaits: { inc(labels: { entity: string }): void };
  lockTimeouts: { inc(labels: { entity: string }): void };
  /** A kept-alive lock found no longer its holder's (expired through a stall of its process, and taken, or deleted). */
  lockLost?: { inc(labels: { entity: string }): void };
}

export class EntityLocks {
  constructor(private redis: RedisClient, private prefix: string, private metrics?: LockMetrics) {
    if (!(redis as unknown as { orqLockRelease?: unknown }).orqLockRelease) redis.defineCommand('orqLockRelease', { numberOfKeys: 1, lua: RELEASE });
    if (!(redis as unknown as { orqLockExtend?: unknown }).orqLockExtend) redis.defineCommand('orqLockExtend', { numberOfKeys: 1, lua: EXTEND });
  }

  /** The locks kept alive (keepAlive): entity → token, all with one TTL (the first given); one timer extends them all. */
  private readonly alive = new Map<string, string>();
  private aliveTtlMs = 0;
  private beat?: NodeJS.Timeout;

  /**
   * Keeps a held lock from expiring while its holder lives: every third of its TTL its expiry is pushed
   * back (only while the token is still the key's). A holder that dies, or whose event loop stops, stops
   * extending, and the lock expires after its TTL as before. `forget` (before release) ends it. The hot
   * path allocates nothing here: the entity and token strings exist already, the timer is shared.
   */
  keepAlive(entity: string, token: string, ttlMs: number): void {
    // One TTL for all (the entity actor's ENTITY_LOCK_MS): a second one would be extended to the first.
    if (this.aliveTtlMs && ttlMs !== this.aliveTtlMs) throw new Error(`keepAlive: this EntityLocks keeps locks of ${this.aliveTtlMs} ms alive, not ${ttlMs} ms`);
    this.aliveTtlMs = ttlMs;
    this.alive.set(entity, token);
    if (this.beat) return;
    this.beat = setInterval(() => this.extendAll(), Math.max(250, Math.floor(ttlMs / 3)));
    this.beat.unref();
  }

  forget(entity: string, token: string): void {
    if (this.alive.get(entity) === token) this.alive.delete(entity);
  }

  private extendAll() {
    if (!this.alive.size) {
      // Nothing held: the timer stops here, not at each release.
      clearInterval(this.beat);
      this.beat = undefined;
      return;
    }
    const extend = (this.redis as unknown as { orqLockExtend(k: string, v: string, ttl: number): Promise<number> }).orqLockExtend.bind(this.redis);
    for (const [entity, token] of this.alive) {
      extend(`${this.prefix}:lock:${entity}`, token, this.aliveTtlMs)
        .then((ok) => {
          // Lost (expired during a stall and taken, or deleted): nothing to keep; the row's version fences.
          if (ok) return;
          this.forget(entity, token);
          this.metrics?.lockLost?.inc({ entity: entity.split(':')[0] });
        })
        .catch(() => {
          /* Redis unreachable: the next beat tries again; the row's version still fences */
        });
    }
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
