// API key and operator key authentication. Keys are stored only as sha256 hashes; a process caches
// what it read for KEY_CACHE_SECONDS, and revocation reaches every process at once through Redis
// (a revoked-keys set checked in the same round trip as the rate limit, plus a pub/sub message
// that drops cached records).
import { KEY_SHAPE, hashKey } from '../kernel/keys.js';
import { duplicateClient, rateLimitTag, type RedisClient } from '../kernel/redis.js';
import type { Sql } from '../kernel/db.js';
import { ApiError } from '../kernel/errors.js';
import type { Principal } from '../kernel/principal.js';

export { constantTimeEqual, generateApiKey, hashKey } from '../kernel/keys.js';

interface Cached { principal: Principal | null; until: number }

export class KeyStore {
  private cache = new Map<string, Cached>();
  private sub?: RedisClient;

  constructor(
    private sql: Sql,
    private redis: RedisClient,
    private prefix: string,
    private cacheMs: number,
  ) {}

  get revokedSetKey() {
    // Shares the rate limiter's hash tag: its script reads this set with the counters (kernel/redis.ts).
    return `${this.prefix}:${rateLimitTag}:keys:revoked`;
  }
  private get channel() {
    return `${this.prefix}:keys:revocations`;
  }

  /** Subscribes to revocations so cached records are dropped at once. */
  async start(): Promise<void> {
    this.sub = duplicateClient(this.redis, {});
    this.sub.on('message', (_ch: string, keyId: string) => this.forgetKeyId(keyId));
    // After a reconnect we may have missed messages: forget everything.
    this.sub.on('ready', () => this.cache.clear());
    await this.sub.subscribe(this.channel);
  }

  async stop(): Promise<void> {
    this.sub?.disconnect();
  }

  private forgetKeyId(keyId: string) {
    for (const [h, c] of this.cache) if (c.principal?.keyId === keyId) this.cache.delete(h);
  }

  /** The key hash of an Authorization header, or 401 api_key.missing_or_invalid when it is not a well-formed key. */
  private hashOf(authorization: string | undefined): string {
    const m = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
    if (!m || !KEY_SHAPE.test(m[1])) throw new ApiError('api_key.missing_or_invalid');
    return hashKey(m[1]);
  }

  /**
   * The principal from this process's cache, without waiting: undefined when the cache has no
   * fresh record (then call authenticate), 401 when the header is malformed or the key is known bad.
   */
  cached(authorization: string | undefined): Principal | undefined {
    const hit = this.cache.get(this.hashOf(authorization));
    if (!hit || hit.until <= Date.now()) return undefined;
    if (!hit.principal) throw new ApiError('api_key.missing_or_invalid');
    return hit.principal;
  }

  /** The principal of an Authorization header, or 401 api_key.missing_or_invalid (one message for every cause). */
  async authenticate(authorization: string | undefined): Promise<Principal> {
    const hash = this.hashOf(authorization);
    const now = Date.now();
    const hit = this.cache.get(hash);
    let principal: Principal | null;
    if (hit && hit.until > now) principal = hit.principal;
    else {
      const rows = await this.sql`
        -- the live (not revoked) key with this hash, of a tenant that is not suspended (docs/operator.md)
        select k.id, k.tenant_id, k.livemode, k.scopes from api_keys k join tenants t on t.id = k.tenant_id
         where k.key_hash = ${hash} and k.revoked_at is null and t.suspended_at is null`;
      principal = rows.length
        ? Object.freeze({ keyId: rows[0].id as string, tenantId: rows[0].tenant_id as string, livemode: rows[0].livemode as boolean, scopes: Object.freeze(rows[0].scopes as string[]) })
        : null;
      if (this.cache.size > 50_000) this.cache.clear();
      this.cache.set(hash, { principal, until: now + this.cacheMs });
    }
    if (!principal) throw new ApiError('api_key.missing_or_invalid');
    return principal;
  }

  /**
   * Called after a tenant's suspension (or release) committed: its keys answer 401 at once on every
   * process (the revoked set the rate limiter checks, and cached records dropped), or stop doing so.
   * A process that cached the refusal during the suspension serves the key again within KEY_CACHE_SECONDS.
   */
  async announceSuspension(keyIds: readonly string[], suspended: boolean): Promise<void> {
    if (!keyIds.length) return;
    for (const k of keyIds) this.forgetKeyId(k);
    // Refusals cached during the suspension carry no key id: drop them all in this process.
    if (!suspended) for (const [h, c] of this.cache) if (!c.principal) this.cache.delete(h);
    const m = this.redis.multi();
    if (suspended) m.sadd(this.revokedSetKey, ...keyIds);
    else m.srem(this.revokedSetKey, ...keyIds);
    for (const k of keyIds) m.publish(this.channel, k);
    await m.exec();
  }

  /**
   * Drops from the revoked set the keys Postgres says are live: a release (announceSuspension(…,
   * false)) runs after its commit, so a process that died in between left the tenant's keys refused
   * by every process's rate limiter although the tenant is released. A scheduled job runs this every
   * minute, one run at a time across the workers (ops/maintenance.ts). Adding is never needed here: a revoked or suspended key is
   * refused by authenticate() from Postgres once its cached record expires.
   */
  async healRevokedSet(): Promise<number> {
    const ids = (await this.redis.smembers(this.revokedSetKey)).filter((id) => /^[0-9a-f-]{36}$/i.test(id));
    if (!ids.length) return 0;
    const live = await this.sql`
      select k.id from api_keys k join tenants t on t.id = k.tenant_id
       where k.id = any(${ids}::uuid[]) and k.revoked_at is null and t.suspended_at is null`;
    if (!live.length) return 0;
    await this.redis.srem(this.revokedSetKey, ...live.map((r) => r.id as string));
    return live.length;
  }

  /** Called after the revocation committed in Postgres. */
  async announceRevocation(keyId: string): Promise<void> {
    this.forgetKeyId(keyId);
    await this.redis.multi().sadd(this.revokedSetKey, keyId).publish(this.channel, keyId).exec();
  }
}

export function requireScope(p: Principal, scope: string | undefined): void {
  if (!scope || p.scopes.includes('*') || p.scopes.includes(scope)) return;
  // A write scope implies reading the same resources (payments:write covers payments:read).
  if (scope.endsWith(':read') && p.scopes.includes(scope.replace(/:read$/, ':write'))) return;
  // spec: Authentication rule 2: the message names the missing scope.
  throw new ApiError('insufficient_scope', `This API key lacks the scope "${scope}" that this endpoint requires. Use a key with "${scope}" or "*".`);
}
