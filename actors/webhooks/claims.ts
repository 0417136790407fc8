// Claims and the sweep: the leases of a worker's deliveries in Postgres. A sweep claims, in batches,
// the pending deliveries due on their tenant's clock that no live worker holds (due retries, a
// crashed worker's lapsed leases, deliveries the relay could not lease) and disables endpoints
// failing for 72 h. It claims one tenant at a time (every claim statement names the tenant, so
// under Citus its FOR UPDATE SKIP LOCKED is a single-shard query: docs/scaling.md): the tenants
// with due deliveries are found first with a lock-free `select distinct tenant_id … limit n`
// (after the previous sweep's last one, so every tenant gets its turn), then claimed round robin,
// one batch per tenant per round; a wake-up after a test-clock advance names its tenant and claims
// that tenant's only. Sweeps run every SWEEP_INTERVAL_MS (the worker's timer), at a retry's due time
// in this process, and at once when an API process publishes a wake-up after a test-clock advance.
// Leases last JOB_LOCK_MS and are renewed every third of it while a delivery waits in memory or is
// in flight, so a slow receiver never gets a second concurrent copy from another worker.
import { duplicateClient, type RedisClient } from '../../kernel/redis.js';
import type { Sql } from '../../kernel/db.js';
import { clockOffsetOfSql, clockOffsets, maxClockOffsetMsSql, tenantClockBoundMsSql, tenantClockJoinSql } from '../../kernel/clock.js';
import type { Logger } from '../../kernel/log.js';
import type { Dispatcher } from './dispatcher.js';
import { idArray, ItemBatch } from './item.js';
import type { Target } from './http-client.js';
import type { Lease, OutcomeWriter } from './outcomes.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Deliveries claimed per sweep statement. */
const CLAIM_BATCH = 500;
/** Tenants one sweep finds (the next sweep goes on after the last of them). */
export const CLAIM_SWEEP_TENANTS = 100;

export interface ClaimsDeps {
  sql: Sql;
  redis: RedisClient;
  log: Logger;
  /** Channel of the wake-ups published after a test-clock advance (`<prefix>:wh:wake`). */
  wakeChannel: string;
  lease: Lease;
  dispatcher: Dispatcher;
  outcomes: OutcomeWriter;
  targetOf(url: string): Target | null;
}

/**
 * The uuid just before `t` (so that `tenant_id > previousTenant(t)` includes t): the sweep's place
 * when it ran out of room at t.
 */
function previousTenant(t: string): string | undefined {
  const hex = t.replace(/-/g, '');
  const n = BigInt(`0x${hex}`);
  if (n === 0n) return undefined;
  const p = (n - 1n).toString(16).padStart(32, '0');
  return `${p.slice(0, 8)}-${p.slice(8, 12)}-${p.slice(12, 16)}-${p.slice(16, 20)}-${p.slice(20)}`;
}

export class Claims {
  private sub?: RedisClient;
  private renewTimer?: NodeJS.Timeout;
  private retryTimer?: NodeJS.Timeout;
  private retryAt = Infinity;
  private sweeping?: Promise<number>;
  private sweepAgain = false;
  private clockTenants = new Set<string>();
  /** Tenants named by wake-ups since the last sweep took them. */
  private wanted = new Set<string>();
  /** A sweep over every tenant is due (the timer, a retry's due time, a wake-up naming none). */
  private sweepAll = false;
  /** The sweep's place in tenant order: the next one starts after it (none: from the first). */
  private after?: string;

  constructor(private readonly d: ClaimsDeps) {}

  /** Renews leases every third of their length and listens for wake-ups (a worker process). */
  async start() {
    const { d } = this;
    this.renewTimer = setInterval(() => void this.renew().catch((e) => d.log.warn('renewing webhook delivery leases failed', { err: e })), Math.max(200, Math.floor(d.lease.ms / 3)));
    this.sub = duplicateClient(d.redis, { enableAutoPipelining: false });
    this.sub.on('message', (_channel: string, tenantId: string) => void this.sweepOnce({ tenantId: tenantId || undefined }).catch((e) => d.log.warn('webhook sweep after a wake-up failed', { err: e })));
    this.sub.on('error', (e) => d.log.warn('webhook wake-up subscription error', { err: e }));
    await this.sub.subscribe(d.wakeChannel);
  }

  stop() {
    clearInterval(this.renewTimer);
    clearTimeout(this.retryTimer);
    this.retryAt = Infinity;
    this.sub?.disconnect();
    this.sub = undefined;
  }

  /** Resolves when the sweep in progress (if any) has ended. */
  async settled() {
    await this.sweeping?.catch(() => 0);
  }

  /**
   * In a worker: claims what is due (see the file's head) after re-reading the test clock of
   * `tenantId` when given (it was just advanced). In an API process (no dispatcher): publishes a
   * wake-up so that workers do it now. Concurrent calls coalesce into one more pass.
   */
  async sweepOnce(opts: { tenantId?: string } = {}): Promise<number> {
    const { d } = this;
    if (!d.dispatcher.running) {
      await d.redis.publish(d.wakeChannel, opts.tenantId ?? '');
      return 0;
    }
    if (opts.tenantId && UUID.test(opts.tenantId)) {
      this.clockTenants.add(opts.tenantId);
      this.wanted.add(opts.tenantId);
    } else this.sweepAll = true;
    if (this.sweeping) {
      this.sweepAgain = true;
      return this.sweeping;
    }
    this.sweeping = (async () => {
      let n = 0;
      try {
        do {
          this.sweepAgain = false;
          await this.refreshClocks();
          const named = [...this.wanted];
          this.wanted.clear();
          const all = this.sweepAll;
          this.sweepAll = false;
          // The named tenants, then (a sweep over all) the tenants found with due deliveries.
          const tenants = all ? [...new Set([...named, ...(await this.dueTenants())])] : named;
          // Round robin: one batch per tenant per round while its batches come back full.
          let round = tenants;
          rounds: while (round.length) {
            const next: string[] = [];
            for (const t of round) {
              const room = Math.min(CLAIM_BATCH, d.dispatcher.room);
              if (room <= 0 || !d.dispatcher.running) {
                // No room left: the next sweep starts with this tenant (fairness across sweeps).
                if (all) this.after = previousTenant(t);
                break rounds;
              }
              const got = await this.claim(room, t);
              n += got;
              if (got === room) next.push(t);
            }
            round = next;
          }
          for (const endpointId of await d.outcomes.staleEndpoints()) await this.disable(endpointId, 'a delivery failed for 72 hours');
        } while (this.sweepAgain && d.dispatcher.running);
      } finally {
        this.sweeping = undefined;
      }
      return n;
    })();
    return this.sweeping;
  }

  /** Sweeps again when a retry recorded here is due (by the local clock; a clock advance wakes it sooner). */
  wakeAt(at: number) {
    if (!this.d.dispatcher.running || at >= this.retryAt) return;
    clearTimeout(this.retryTimer);
    this.retryAt = at;
    this.retryTimer = setTimeout(() => {
      this.retryAt = Infinity;
      void this.sweepOnce().catch((e) => this.d.log.warn('webhook retry sweep failed', { err: e }));
    }, Math.max(0, at - Date.now()));
    this.retryTimer.unref();
  }

  /** Gives back the leases of deliveries this process will not send (stopping). */
  async release(ids: number[]) {
    if (!ids.length) return;
    await this.d.sql`
      update webhook_deliveries set lease_until = null, lease_owner = null
       where id = any(${idArray(ids)}::bigint[]) and status = 'pending' and lease_owner = ${this.d.lease.owner}`.catch((e) =>
      this.d.log.warn('releasing webhook leases failed; they lapse on their own', { err: e }),
    );
  }

  /** Disables an endpoint: this process sends nothing more to it, its pending deliveries are discarded. */
  async disable(endpointId: string, reason: string) {
    this.d.dispatcher.disabled.add(endpointId);
    await this.d.outcomes.disable(endpointId, reason);
  }

  /**
   * The test clock of a tenant was advanced: the deliveries held for it (waiting or in flight) take
   * the new offset, so an answer that comes back after the advance counts its retry wait from the
   * tenant's new now.
   */
  private async refreshClocks() {
    if (!this.clockTenants.size) return;
    const tenants = [...this.clockTenants];
    this.clockTenants.clear();
    const offsets = await clockOffsets(this.d.sql, tenants);
    for (const i of this.d.dispatcher.held.values()) {
      const o = offsets.get(i.tenantId);
      if (o !== undefined && !i.livemode) i.offsetMs = o;
    }
  }

  /**
   * The tenants with deliveries due that no live worker holds, at most `limit`, in tenant order after
   * the previous sweep's place (from the first again once a sweep found fewer). No row lock: under
   * Citus a plain multi-shard read, each shard reading its partial index (tenant_id, next_attempt_at)
   * where pending; the due test is the one claim() makes, so a tenant listed has something to claim
   * unless another worker claims it first.
   */
  async dueTenants(limit = CLAIM_SWEEP_TENANTS): Promise<string[]> {
    const { d } = this;
    const after = this.after;
    const rows = await d.sql`
      select distinct d.tenant_id from webhook_deliveries d
        ${tenantClockJoinSql(d.sql, 'c', 'd.tenant_id', 'd.livemode')}
       where d.status = 'pending' and d.endpoint_id is not null
         and (d.lease_until is null or d.lease_until < now())
         and d.next_attempt_at <= now() + make_interval(secs => ${maxClockOffsetMsSql(d.sql)} / 1000.0)
         and d.next_attempt_at <= now() + make_interval(secs => ${clockOffsetOfSql(d.sql, 'c')} / 1000.0)
         ${after ? d.sql`and d.tenant_id > ${after}` : d.sql``}
       order by d.tenant_id limit ${limit}`;
    const tenants = rows.map((r) => r.tenant_id as string);
    this.after = tenants.length === limit ? tenants[tenants.length - 1] : undefined;
    return tenants;
  }

  private async claim(limit: number, tenantId: string): Promise<number> {
    const { d } = this;
    const t0 = Date.now();
    // One tenant: the first bound on next_attempt_at (the tenant's test-clock offset, a constant of
    // the statement) lets the partial index on (tenant_id, next_attempt_at) where pending stop the
    // scan; the second is the delivery's own clock (live mode: none).
    const rows = await d.sql`
      with due as (
        select d.id from webhook_deliveries d
          ${tenantClockJoinSql(d.sql, 'c', 'd.tenant_id', 'd.livemode')}
         where d.tenant_id = ${tenantId} and d.status = 'pending' and d.endpoint_id is not null
           and (d.lease_until is null or d.lease_until < now())
           and d.next_attempt_at <= now() + make_interval(secs => ${tenantClockBoundMsSql(d.sql, tenantId)} / 1000.0)
           and d.next_attempt_at <= now() + make_interval(secs => ${clockOffsetOfSql(d.sql, 'c')} / 1000.0)
         order by d.next_attempt_at limit ${limit}
           for update of d skip locked
      ), claimed as (
        update webhook_deliveries d set lease_until = now() + make_interval(secs => ${d.lease.ms / 1000}), lease_owner = ${d.lease.owner}
          from due where d.id = due.id and d.tenant_id = ${tenantId}
        returning d.id, d.event_id, d.endpoint_id, d.tenant_id, d.livemode, d.attempts, d.queued_at
      )
      select cl.id, cl.endpoint_id, cl.tenant_id, cl.livemode, cl.attempts, cl.queued_at,
             e.event_id, e.event_type, e.data, e.created_at, e.traceparent,
             w.url, w.active, s.secret, case when s.previous_until > now() then s.previous_secret end as previous_secret,
             ${clockOffsetOfSql(d.sql, 'c')}::float8 as offset_ms
        from claimed cl
        join outbox_events e on e.id = cl.event_id and e.tenant_id = cl.tenant_id
        join webhook_endpoints w on w.id = cl.endpoint_id and w.tenant_id = cl.tenant_id
        join webhook_secrets s on s.endpoint_id = w.id and s.tenant_id = w.tenant_id
        ${tenantClockJoinSql(d.sql, 'c', 'cl.tenant_id', 'cl.livemode')}`;
    const inactive: number[] = [];
    const batch = new ItemBatch(d.targetOf, t0 + d.lease.ms);
    for (const r of rows) {
      const id = Number(r.id);
      if (!r.active || d.dispatcher.disabled.has(r.endpoint_id as string)) {
        inactive.push(id);
        continue;
      }
      const existing = d.dispatcher.held.get(id);
      if (existing) {
        existing.leaseUntil = t0 + d.lease.ms; // ours already (a renewal that came late): keep the copy we hold
        continue;
      }
      d.dispatcher.hold(batch.fromRows(id, r.endpoint_id as string, r, r, r.attempts as number, (r.queued_at as Date).getTime(), Number(r.offset_ms)));
    }
    if (inactive.length) {
      await d.sql`update webhook_deliveries set status = 'discarded', last_error = 'endpoint disabled', lease_until = null, lease_owner = null
                   where id = any(${idArray(inactive)}::bigint[]) and status = 'pending'`;
    }
    d.dispatcher.pump();
    return rows.length;
  }

  /** Renews the leases of everything this worker holds; drops what is no longer pending or no longer ours. */
  private async renew() {
    const { d } = this;
    const ids = [...d.dispatcher.held.keys()];
    if (!ids.length) return;
    const t0 = Date.now();
    const rows = await d.sql`
      update webhook_deliveries set lease_until = now() + make_interval(secs => ${d.lease.ms / 1000})
       where id = any(${idArray(ids)}::bigint[]) and status = 'pending' and lease_owner = ${d.lease.owner}
       returning id`;
    const kept = new Set(rows.map((r) => Number(r.id)));
    for (const id of ids) {
      const i = d.dispatcher.held.get(id);
      if (!i) continue;
      if (kept.has(id)) i.leaseUntil = t0 + d.lease.ms;
      else if (!i.inFlight) d.dispatcher.held.delete(id); // delivered or discarded elsewhere, or claimed by another worker: not sent here
    }
  }
}
