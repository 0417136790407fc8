// The relay: committed outbox events → deliveries, one tenant at a time. One transaction per batch of
// a tenant's events (FOR UPDATE SKIP LOCKED, so several workers relay side by side; every statement
// names the tenant, so under Citus each is a single-shard query: docs/scaling.md) inserts one
// delivery per matching active endpoint (none when the account has no endpoint: the event is relayed
// all the same); the pending ones are leased to this worker and, after the commit, handed to its
// dispatcher in memory with body, URL and secrets already read (no query per delivery). `RelayLoop`
// runs it: at once for the tenant whose commit woke it (kernel/outbox.ts `wakeRelay`), and every
// RELAY_INTERVAL_MS as the safety net, a sweep that finds the tenants with unrelayed events with a
// lock-free `select distinct tenant_id … limit n` and relays each in turn.
import { duplicateClient, type RedisClient } from '../../kernel/redis.js';
import { atomically, type Sql } from '../../kernel/db.js';
import { clockOffsetOfSql, tenantClockJoinSql, tenantOffsetMsSql } from '../../kernel/clock.js';
import type { Logger } from '../../kernel/log.js';
import { onRelayWake, relayWakeChannel } from '../../kernel/outbox.js';
import type { Dispatcher } from './dispatcher.js';
import type { Target } from './http-client.js';
import { idArray, ItemBatch, type DeliveryItem } from './item.js';
import type { Lease } from './outcomes.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Events per relay transaction; the first of a burst is smaller (its deliveries start sooner). */
export const RELAY_BATCH = 500;
export const RELAY_FIRST_BATCH = 100;
/** After a pass, a wake-up that came during it starts the next one this much later (commits in a row cost a pass per gap, not one each). */
export const RELAY_WAKE_GAP_MS = 10;
/** Tenants one sweep finds (the next sweep goes on after the last of them, so every tenant gets its turn). */
export const RELAY_SWEEP_TENANTS = 100;

export interface RelayDeps {
  sql: Sql;
  lease: Lease;
  dispatcher: Dispatcher;
  targetOf(url: string): Target | null;
}

export class Relay {
  /** The sweep's place in tenant order: the next one starts after it (none: from the first). */
  private after?: string;

  constructor(private readonly d: RelayDeps) {}

  /**
   * The tenants with unrelayed events, at most `limit`, in tenant order after the previous sweep's
   * last one (from the first again once a sweep found fewer): no row lock, so under Citus a plain
   * multi-shard read, each shard reading its partial index (tenant_id, id) where relayed_at is null.
   */
  async tenantsToRelay(limit = RELAY_SWEEP_TENANTS): Promise<string[]> {
    const { sql } = this.d;
    const rows = await sql`
      select distinct tenant_id from outbox_events
       where relayed_at is null ${this.after ? sql`and tenant_id > ${this.after}` : sql``}
       order by tenant_id limit ${limit}`;
    const tenants = rows.map((r) => r.tenant_id as string);
    // A full page: the next sweep goes on after it. A short one: it reached the end; start over.
    this.after = tenants.length === limit ? tenants[tenants.length - 1] : undefined;
    return tenants;
  }

  /**
   * Relays up to `batch` committed events: of `tenantId` when given (what a commit's wake-up names),
   * else of the tenants a sweep finds (tenantsToRelay), round robin: each tenant a share of the batch
   * per round, so that one tenant's backlog does not hold up the others. Returns how many.
   */
  async relayOnce(batch = RELAY_BATCH, tenantId?: string): Promise<number> {
    if (tenantId) return this.relayTenant(tenantId, batch);
    let round = await this.tenantsToRelay();
    let n = 0;
    while (round.length && n < batch) {
      const share = Math.max(1, Math.ceil((batch - n) / round.length));
      const next: string[] = [];
      for (const t of round) {
        const want = Math.min(share, batch - n);
        if (want <= 0) break;
        const got = await this.relayTenant(t, want);
        n += got;
        if (got === want) next.push(t); // maybe more
        if (got === 0 && this.d.dispatcher.paused) return n; // backpressure: the events wait in the outbox
      }
      round = next;
    }
    return n;
  }

  /**
   * Relays up to `batch` committed events; returns how many. The deliveries are built by Postgres
   * (events × matching active endpoints), leased to this worker and handed to its dispatcher after
   * the commit.
   *
   * The spec's internal sink (`sink:events`, which always accepts) has no row: it used to get one
   * per event, inserted `succeeded`, which nothing read (the portal and the resend read an
   * endpoint's deliveries; `delivered` in /v1/events ignores succeeded rows) and which cost every
   * payment a row, two index entries and, for an account without endpoints, the whole statement
   * with its planning (bench/cost). The stream (/v1/events) reads the outbox itself, so it stays
   * available whatever happens to external endpoints, which is what the sink promises.
   */
  private async relayTenant(tenantId: string, batch: number): Promise<number> {
    const { sql, lease, dispatcher } = this.d;
    // Backpressure: a running dispatcher that already holds half its fill takes no new events now.
    // They wait, committed, in the outbox until it drains (or another worker relays them). Relaying
    // past the fill would leave deliveries unleased, for the slower sweep claims (measured: a
    // 32,000-delivery burst fell from ~12k/s to ~6k/s that way).
    if (dispatcher.paused) return 0;
    const handoff: DeliveryItem[] = [];
    const started = Date.now(); // no later than the transaction's now(), from which the leases run
    const leased = dispatcher.running && dispatcher.room > 0;
    // `atomically`: BEGIN, the claim and the endpoints' read go out in one flight, and COMMIT with
    // the deliveries' insert (or alone) in the next: two round trips a pass instead of four or five
    // (BEGIN, claim, endpoints, insert, COMMIT each waited for the one before). Fragments are built
    // with the pool's `sql` (one built with `tx` would be sent as a statement of its own).
    const n = await atomically(sql, async (tx) => {
      const [events, endpoints] = await Promise.all([
        tx`
        with ev as (select id from outbox_events where tenant_id = ${tenantId} and relayed_at is null order by id limit ${batch} for update skip locked)
        update outbox_events e set relayed_at = now() from ev where e.id = ev.id and e.tenant_id = ${tenantId}
        returning e.id, e.event_id, e.tenant_id, e.livemode, e.event_type, e.data, e.created_at, e.traceparent,
                  ${tenantOffsetMsSql(sql, 'e.tenant_id', 'e.livemode')}::float8 as offset_ms,
                  (extract(epoch from now()) * 1000)::float8 as now_ms`,
        tx`
        select w.id, w.url, s.secret, case when s.previous_until > now() then s.previous_secret end as previous_secret
          from webhook_endpoints w join webhook_secrets s on s.endpoint_id = w.id and s.tenant_id = w.tenant_id
         where w.active and w.tenant_id = ${tenantId}`,
      ]);
      if (!events.length) return 0;
      if (!endpoints.length) return events.length;
      const epIds = `{${endpoints.map((w) => w.id as string).join(',')}}`;
      const inserted = await tx`
        insert into webhook_deliveries (event_id, endpoint_key, endpoint_id, tenant_id, livemode, status, attempts, queued_at, next_attempt_at, delivered_at, lease_until, lease_owner)
        select e.id, w.id::text, w.id, e.tenant_id, e.livemode, 'pending', 0, t.now, t.now, null,
               case when ${leased}::boolean then now() + make_interval(secs => ${lease.ms / 1000}) end,
               case when ${leased}::boolean then ${lease.owner}::text end
          from outbox_events e
          ${tenantClockJoinSql(sql, 'c', 'e.tenant_id', 'e.livemode')}
          cross join lateral (select now() + make_interval(secs => ${clockOffsetOfSql(sql, 'c')} / 1000.0) as now) t
          join webhook_endpoints w on w.id = any(${epIds}::uuid[]) and w.tenant_id = e.tenant_id and w.tenant_id = ${tenantId}
               -- spec: recharge deposit events reach the account's endpoints of both environments
               and (w.livemode = e.livemode or e.event_type = 'recharge.deposit.detected')
               and (w.events is null or e.event_type = any(w.events))
         where e.id = any(${idArray(events.map((e) => Number(e.id)))}::bigint[]) and e.tenant_id = ${tenantId}
        on conflict (event_id, endpoint_key, tenant_id) do nothing
        returning id, event_id, endpoint_id`;
      if (!leased) return events.length;
      const evById = new Map(events.map((e) => [Number(e.id), e]));
      const epById = new Map(endpoints.map((w) => [w.id as string, w]));
      const items = new ItemBatch(this.d.targetOf, started + lease.ms);
      for (const r of inserted) {
        const e = evById.get(Number(r.event_id));
        const ep = epById.get(r.endpoint_id as string);
        if (!e || !ep) continue; // not expected; the lease lapses and a sweep sends it
        // queued_at: the transaction's now() on the tenant's clock
        handoff.push(items.fromRows(Number(r.id), ep.id as string, e, ep, 0, Number(e.now_ms) + Number(e.offset_ms), Number(e.offset_ms)));
      }
      return events.length;
    });
    // After the commit only: a rolled-back relay sends nothing.
    for (const i of handoff) dispatcher.hold(i);
    dispatcher.pump();
    return n;
  }
}

export interface RelayLoopDeps {
  /**
   * At most `batch` events of `tenantId` (one relay transaction), or, without a tenant, of the
   * tenants a sweep finds; returns how many it relayed.
   */
  relayOnce(batch: number, tenantId?: string): Promise<number>;
  /** False while the relay would relay nothing (backpressure): a wake-up is then left to other processes. */
  accepting?(): boolean;
  redis: RedisClient;
  /** The deployment's Redis prefix: the wake-up channel's and the in-process registration's. */
  prefix: string;
  /** The poll (RELAY_INTERVAL_MS): the safety net for lost wake-ups and for writers that send none. */
  intervalMs: number;
  log: Logger;
  wakeGapMs?: number;
}

/**
 * Runs relay passes: on a wake-up (in-process from `wakeRelay`, or over Redis pub/sub from another
 * process), on the poll, and when asked (`now`, the worker's tick). One pass at a time. A wake-up
 * names the tenant whose commit it follows: the pass relays the woken tenants' events, round robin
 * (each a small first batch, then full ones while they come back full, one batch per tenant per
 * round, so that a tenant's large backlog does not delay another's next event by more than a batch
 * per tenant). The poll, `now()` and a wake-up without a tenant sweep: the tenants with unrelayed
 * events, found without locks (Relay.relayOnce without a tenant). Wake-ups that arrive during a pass
 * cost exactly one more pass (RELAY_WAKE_GAP_MS after it); those of one event-loop turn while idle
 * cost one pass.
 */
export class RelayLoop {
  /** Passes run so far (tests, debugging). */
  passes = 0;
  private stopped = true;
  private pass?: Promise<void>;
  private again = false;
  private woken?: NodeJS.Immediate;
  private timer?: NodeJS.Timeout;
  private sub?: RedisClient;
  private unregister?: () => void;
  /** Tenants woken since the last pass took them. */
  private tenants = new Set<string>();
  /** A sweep is due (poll, now(), a wake-up naming no tenant). */
  private sweep = false;

  constructor(private readonly d: RelayLoopDeps) {}

  async start(): Promise<this> {
    if (!this.stopped) return this;
    const { d } = this;
    this.stopped = false;
    this.timer = setInterval(() => void this.now(), d.intervalMs);
    this.unregister = onRelayWake(d.prefix, (tenantId) => this.wake(tenantId));
    this.sub = duplicateClient(d.redis, { enableAutoPipelining: false });
    // The message: the tenants of one turn of commits in another process, comma-separated ('' = sweep).
    this.sub.on('message', (_channel: string, message: string) => {
      if (!message) void this.wake();
      else for (const t of message.split(',')) if (UUID.test(t)) void this.wake(t);
    });
    this.sub.on('error', (e) => d.log.warn('relay wake-up subscription error', { err: e }));
    await this.sub.subscribe(relayWakeChannel(d.prefix));
    return this;
  }

  /** Stops the poll and the wake-ups; resolves when the pass in progress (if any) has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    if (this.woken) clearImmediate(this.woken);
    this.woken = undefined;
    this.unregister?.();
    this.unregister = undefined;
    this.sub?.disconnect();
    this.sub = undefined;
    await this.pass;
  }

  /** A wake-up: a pass soon (this turn's wake-ups share it), or one more after the pass in progress. Returns whether this relay takes it. */
  wake(tenantId?: string): boolean {
    if (this.stopped || (this.d.accepting && !this.d.accepting())) return false;
    if (tenantId) this.tenants.add(tenantId);
    else this.sweep = true;
    if (this.pass) this.again = true;
    else this.woken ??= setImmediate(() => {
      this.woken = undefined;
      this.pass ??= this.run(); // what the wake-ups asked for: their tenants, or a sweep
    });
    return true;
  }

  /** A pass now (a sweep), or the one in progress. */
  now(): Promise<void> {
    if (this.pass) return this.pass;
    this.sweep = true;
    this.pass = this.run();
    return this.pass;
  }

  private async run() {
    const { d } = this;
    try {
      do {
        if (this.again) {
          this.again = false;
          await new Promise((r) => setTimeout(r, d.wakeGapMs ?? RELAY_WAKE_GAP_MS));
          if (this.stopped) break;
        }
        this.passes++;
        const woken = [...this.tenants];
        this.tenants.clear();
        const sweep = this.sweep || !woken.length;
        this.sweep = false;
        // A small first batch, so that the first deliveries of a burst start sooner; then full
        // batches, one per tenant per round, while they come back full.
        let round = woken;
        for (let batch = RELAY_FIRST_BATCH; round.length && !this.stopped; batch = RELAY_BATCH) {
          const next: string[] = [];
          for (const t of round) if ((await d.relayOnce(batch, t)) === batch) next.push(t);
          round = next;
        }
        if (sweep) for (let batch = RELAY_FIRST_BATCH; !this.stopped && (await d.relayOnce(batch)) === batch; batch = RELAY_BATCH);
      } while (this.again && !this.stopped);
    } catch (e) {
      d.log.warn('outbox relay failed', { err: e });
    } finally {
      this.pass = undefined;
    }
  }
}
