// Webhook delivery (spec: Events > Delivery and retries): the relay turns committed outbox events
// into one delivery per matching active endpoint plus the internal sink; deliveries are signed
// POSTs, retried on the tenant's clock (1 min, 5 min, 30 min, 2 h, 6 h, 12 h, then 24 h), and an
// endpoint still failing a delivery 72 h after it was queued is disabled.
//
// Deliveries are claimed from Postgres, not from a queue (bench/RESULTS.md, "bench/webhooks": one
// BullMQ job plus one 5-table SELECT per delivery held the worker to 0.056x of a bare POST loop):
// - the relay inserts the new deliveries already leased to this worker process (lease_until,
//   lease_owner) and hands them to the dispatcher in memory with everything needed to sign and
//   POST, so the hot path costs no query per delivery;
// - due retries and orphans (a crashed worker's lapsed lease, a lost wake-up) are claimed in
//   batches by `sweepOnce`: every SWEEP_INTERVAL_MS, at a retry's due time in this process, and at
//   once when an API process publishes a wake-up after a test-clock advance;
// - the lease lasts JOB_LOCK_MS and is renewed every third of it while the delivery waits in memory
//   or is in flight, so a slow receiver never gets a second concurrent copy from another worker,
//   and a dead worker's deliveries are claimed by others about JOB_LOCK_MS after its last renewal;
// - outcomes are written in batches (one UPDATE per outcome kind per flush): a batch lost in a crash
//   only means the delivery is sent again once its lease lapses (at-least-once, same event_id).
import { hostname } from 'node:os';
import { Pool } from 'undici';
import type { Redis } from 'ioredis';
import { signatureHeader, SIGNATURE_HEADER } from '../api/webhook-signature.js';
import type { Config } from '../ops/config.js';
import type { Sql } from '../ops/db.js';
import type { Logger } from '../ops/log.js';
import type { Metrics } from '../ops/metrics.js';
import { guardedLookup } from './net-guard.js';
import { ATTR, extractTrace, inSpan, injectTrace, SpanKind, type Carrier } from '../ops/tracing.js';

export const SINK = 'sink:events';
export const API_VERSION = '2026-07-01';
export const DELIVERY_TIMEOUT_MS = 10_000;
export const DISABLE_AFTER_MS = 72 * 3600_000;
/** Waits after the 1st, 2nd, … failed attempt; from the 7th on, 24 h repeated. */
export const RETRY_WAITS_S = [60, 300, 1800, 7200, 21600, 43200];
export const retryWaitSeconds = (failures: number) => RETRY_WAITS_S[failures - 1] ?? 86400;
/** In-flight deliveries per endpoint, so one slow receiver does not hold up the others. */
export const PER_ENDPOINT_IN_FLIGHT = 8;
/** Deliveries a worker holds (waiting in memory or in flight) at most; beyond, the relay inserts them unleased. */
/** Deliveries one dispatcher holds in memory at most (WebhookDeps.maxHeld overrides, for tests). */
const MAX_HELD = 10_000;
/** Deliveries claimed per sweep statement. */
const CLAIM_BATCH = 500;
/** Events per relay transaction; the first of a burst is smaller (its deliveries start sooner). */
export const RELAY_BATCH = 500;
export const RELAY_FIRST_BATCH = 100;
const FLUSH_MS = 25;
const FLUSH_AT = 500;

export interface WebhookDeps {
  sql: Sql;
  redis: Redis;
  config: Config;
  log: Logger;
  metrics?: Pick<Metrics, 'webhookDeliveries' | 'webhookLag'>;
  /** Deliveries held in memory at most (default MAX_HELD); the relay pauses at half of it. */
  maxHeld?: number;
}

export function envelope(e: { event_id: string; event_type: string; created_at: Date; livemode: boolean; data: unknown }) {
  return { event_id: e.event_id, event_type: e.event_type, created_at: e.created_at.toISOString(), api_version: API_VERSION, livemode: e.livemode, data: e.data };
}

/** Where a URL's requests go, parsed once per endpoint URL: the origin's connection pool and the path. */
interface Target {
  origin: string;
  pool: Pool;
  path: string;
  host: string;
}

const USER_AGENT = `Orquesta-Webhooks/${API_VERSION}`;
const TIMEOUT_MESSAGE = `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`;
/** Connections per origin at most (several endpoints may share an origin; each endpoint has at most 8 in flight). */
const CONNECTIONS_PER_ORIGIN = 64;

/** One claimed delivery, with what signing and POSTing it needs. */
interface Item {
  id: number;
  endpointId: string;
  target: Target | null;
  secrets: string[];
  body: string;
  eventType: string;
  attempts: number;
  createdAtMs: number;
  /** queued_at on the tenant's clock. */
  queuedAtMs: number;
  livemode: boolean;
  /** The tenant's test-clock offset when claimed (0 in live mode). */
  offsetMs: number;
  trace: Carrier | null;
  /** Local deadline of the lease (local clock, taken before the statement that set it). */
  leaseUntil: number;
  inFlight: boolean;
}

/**
 * One POST's undici handler: success is a final 2xx status once the whole answer has arrived; the
 * body is dropped chunk by chunk (no redirect is followed: undici follows none unless asked).
 */
class PostHandler {
  private status = 0;
  private abort: ((err?: Error) => void) | null = null;
  private timedOut = false;
  private done = false;
  constructor(
    readonly until: number,
    private resolve: (o: Outcome) => void,
    private pending: Set<PostHandler>,
  ) {}
  onConnect(abort: (err?: Error) => void) {
    if (this.timedOut) abort(new Error(TIMEOUT_MESSAGE));
    else this.abort = abort;
  }
  onHeaders(statusCode: number) {
    this.status = statusCode; // 1xx first, then the final status
    return true;
  }
  onData() {
    return true;
  }
  onComplete() {
    this.finish({ ok: this.status >= 200 && this.status < 300, status: this.status });
  }
  onError(err: Error) {
    this.finish({ ok: false, status: this.status || undefined, error: err.message });
  }
  /** Past the deadline: aborts the request (closing its connection), or gives up on it while it waits for one. */
  expire() {
    this.timedOut = true;
    if (this.abort) this.abort(new Error(TIMEOUT_MESSAGE));
    else this.finish({ ok: false, error: TIMEOUT_MESSAGE });
  }
  private finish(o: Outcome) {
    if (this.done) return;
    this.done = true;
    this.pending.delete(this);
    this.resolve(o);
  }
}

/** One endpoint's deliveries waiting in this process, and how many of its POSTs are in flight. */
class EndpointQueue {
  items: Item[] = [];
  head = 0;
  inFlight = 0;
  inRing = false;
  constructor(readonly id: string) {}
  get waiting() {
    return this.items.length - this.head;
  }
  push(i: Item) {
    this.items.push(i);
  }
  shift(): Item | undefined {
    if (this.head >= this.items.length) return undefined;
    const i = this.items[this.head];
    this.items[this.head++] = undefined as never;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return i;
  }
}

type Outcome = { ok: boolean; status?: number; error?: string };
type Failure = { id: number; attempts: number; wait_s: number; status: number | null; error: string | null };

export class WebhookDelivery {
  /** One keep-alive pool per origin (undici); connections resolve through the DNS guard. */
  private pools = new Map<string, Pool>();
  private lookup;
  private targets = new Map<string, Target | null>();

  // dispatcher state (worker processes only: `start`)
  private running = false;
  private owner = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  private leaseMs: number;
  private maxInFlight: number;
  private held = new Map<number, Item>();
  private readonly maxHeld: number;
  private endpoints = new Map<string, EndpointQueue>();
  private ring: EndpointQueue[] = [];
  private ringHead = 0;
  private inFlight = 0;
  private disabled = new Set<string>();
  private sub?: Redis;
  private renewTimer?: NodeJS.Timeout;
  private retryTimer?: NodeJS.Timeout;
  private retryAt = Infinity;
  private sweeping?: Promise<number>;
  private sweepAgain = false;
  private idle: Array<() => void> = [];

  // outcome batches
  private successes: number[] = [];
  private failures: Failure[] = [];
  private flushTimer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  private delivered;
  private failedCount;

  constructor(private d: WebhookDeps) {
    this.delivered = d.metrics?.webhookDeliveries.labels('delivered');
    this.failedCount = d.metrics?.webhookDeliveries.labels('failed');
    this.lookup = guardedLookup(d.config.webhookAllowHttpHosts);
    this.leaseMs = d.config.jobLockMs;
    this.maxInFlight = d.config.webhookConcurrency;
    this.maxHeld = d.maxHeld ?? MAX_HELD;
  }

  private get wakeChannel() {
    return `${this.d.config.redisPrefix}:wh:wake`;
  }

  // ---- lifecycle ---------------------------------------------------------------------------------

  /** Starts the dispatcher in a worker process: claims, sends, renews leases, listens for wake-ups. */
  async start(instanceId?: string): Promise<void> {
    if (this.running) return;
    if (instanceId) this.owner = instanceId;
    this.running = true;
    this.renewTimer = setInterval(() => void this.renew().catch((e) => this.d.log.warn('renewing webhook delivery leases failed', { err: e })), Math.max(200, Math.floor(this.leaseMs / 3)));
    this.sub = this.d.redis.duplicate({ enableAutoPipelining: false });
    this.sub.on('message', () => void this.sweepOnce().catch((e) => this.d.log.warn('webhook sweep after a wake-up failed', { err: e })));
    this.sub.on('error', (e) => this.d.log.warn('webhook wake-up subscription error', { err: e }));
    await this.sub.subscribe(this.wakeChannel);
  }

  /** Stops claiming; waits (up to timeoutMs) for in-flight POSTs, writes outcomes, gives back unsent leases, closes the connections. */
  async stop(timeoutMs = 11_000): Promise<void> {
    if (!this.running) return this.flush();
    this.running = false;
    clearInterval(this.renewTimer);
    clearTimeout(this.retryTimer);
    this.sub?.disconnect();
    this.sub = undefined;
    // Nothing new starts: drop what waits in memory (its lease is released below).
    const unsent: number[] = [];
    for (const q of this.endpoints.values()) for (let i = q.shift(); i; i = q.shift()) if (!i.inFlight && this.held.delete(i.id)) unsent.push(i.id);
    this.ring = [];
    this.ringHead = 0;
    if (this.inFlight > 0) await Promise.race([new Promise<void>((r) => this.idle.push(r)), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
    await this.sweeping?.catch(() => 0);
    await this.flush();
    if (unsent.length) {
      await this.d.sql`
        update webhook_deliveries set lease_until = null, lease_owner = null
         where id = any(${idArray(unsent)}::bigint[]) and status = 'pending' and lease_owner = ${this.owner}`.catch((e) => this.d.log.warn('releasing webhook leases failed; they lapse on their own', { err: e }));
    }
    await this.destroyPools(); // no idle keep-alive socket outlives the dispatcher
  }

  async close() {
    await this.stop();
    clearInterval(this.deadlines);
    await this.destroyPools();
  }

  /** Closes every connection (a POST still running past stop's wait is aborted); a later POST opens new pools. */
  private async destroyPools() {
    const pools = [...this.pools.values()];
    this.pools.clear();
    this.targets.clear();
    await Promise.all(pools.map((p) => p.destroy().catch(() => undefined)));
  }

  // ---- relay: outbox → deliveries ------------------------------------------------------------

  /**
   * Relays up to `batch` committed events; returns how many. The deliveries are built by Postgres
   * (events × matching active endpoints, plus the sink), the pending ones leased to this worker and
   * handed to its dispatcher after the commit, with the body, URL and secrets already read.
   */
  async relayOnce(batch = RELAY_BATCH): Promise<number> {
    // Backpressure: a running dispatcher that already holds half its fill takes no new events now.
    // They wait, committed, in the outbox until it drains (or another worker relays them). Relaying
    // past the fill would leave deliveries unleased, for the slower sweep claims (measured: a
    // 32,000-delivery burst fell from ~12k/s to ~6k/s that way).
    if (this.running && this.held.size >= this.maxHeld / 2) return 0;
    const handoff: Item[] = [];
    const started = Date.now(); // no later than the transaction's now(), from which the leases run
    const lease = this.running && this.held.size < this.maxHeld;
    const n = await this.d.sql.begin(async (tx) => {
      const events = await tx`
        with ev as (select id from outbox_events where relayed_at is null order by id limit ${batch} for update skip locked)
        update outbox_events e set relayed_at = now() from ev where e.id = ev.id
        returning e.id, e.event_id, e.tenant_id, e.livemode, e.event_type, e.data, e.created_at, e.traceparent,
                  case when e.livemode then 0 else coalesce((select c.offset_ms from test_clocks c where c.tenant_id = e.tenant_id), 0) end::float8 as offset_ms,
                  (extract(epoch from now()) * 1000)::float8 as now_ms`;
      if (!events.length) return 0;
      const tenants = [...new Set(events.map((e) => e.tenant_id as string))];
      const endpoints = await tx`
        select w.id, w.url, s.secret, case when s.previous_until > now() then s.previous_secret end as previous_secret
          from webhook_endpoints w join webhook_secrets s on s.endpoint_id = w.id
         where w.active and w.tenant_id in ${tx(tenants)}`;
      const epIds = `{${endpoints.map((w) => w.id as string).join(',')}}`;
      const inserted = await tx`
        insert into webhook_deliveries (event_id, endpoint_key, endpoint_id, tenant_id, livemode, status, attempts, queued_at, next_attempt_at, delivered_at, lease_until, lease_owner)
        select e.id, coalesce(w.id::text, ${SINK}::text), w.id, e.tenant_id, e.livemode,
               case when w.id is null then 'succeeded' else 'pending' end, case when w.id is null then 1 else 0 end,
               t.now, t.now, case when w.id is null then t.now end,
               case when w.id is not null and ${lease}::boolean then now() + make_interval(secs => ${this.leaseMs / 1000}) end,
               case when w.id is not null and ${lease}::boolean then ${this.owner}::text end
          from outbox_events e
          left join test_clocks c on c.tenant_id = e.tenant_id and not e.livemode
          cross join lateral (select now() + make_interval(secs => coalesce(c.offset_ms, 0) / 1000.0) as now) t
          cross join lateral (
            select null::uuid as id
            union all
            select w.id from webhook_endpoints w
             where w.id = any(${epIds}::uuid[]) and w.tenant_id = e.tenant_id and w.livemode = e.livemode
               and (w.events is null or e.event_type = any(w.events))) w
         where e.id = any(${idArray(events.map((e) => Number(e.id)))}::bigint[])
        on conflict (event_id, endpoint_key) do nothing
        returning id, event_id, endpoint_id`;
      if (!lease) return events.length;
      const evById = new Map(events.map((e) => [Number(e.id), e]));
      const epById = new Map(endpoints.map((w) => [w.id as string, w]));
      const bodies = new Map<number, string>();
      for (const r of inserted) {
        if (r.endpoint_id === null) continue; // the sink's row
        const e = evById.get(Number(r.event_id));
        const ep = epById.get(r.endpoint_id as string);
        if (!e || !ep) continue; // not expected; the lease lapses and a sweep sends it
        let body = bodies.get(Number(e.id)); // one body per event, shared by its endpoints
        if (body === undefined) {
          body = JSON.stringify(envelope({ event_id: e.event_id, event_type: e.event_type, created_at: e.created_at, livemode: e.livemode, data: e.data }));
          bodies.set(Number(e.id), body);
        }
        handoff.push({
          id: Number(r.id),
          endpointId: ep.id as string,
          target: this.target(ep.url as string),
          secrets: ep.previous_secret ? [ep.secret as string, ep.previous_secret as string] : [ep.secret as string],
          body,
          eventType: e.event_type as string,
          attempts: 0,
          createdAtMs: (e.created_at as Date).getTime(),
          queuedAtMs: Number(e.now_ms) + Number(e.offset_ms), // queued_at: the transaction's now() on the tenant's clock
          livemode: e.livemode as boolean,
          offsetMs: Number(e.offset_ms),
          trace: (e.traceparent as Carrier | null) ?? null,
          leaseUntil: started + this.leaseMs,
          inFlight: false,
        });
      }
      return events.length;
    });
    // After the commit only: a rolled-back relay sends nothing.
    for (const i of handoff) this.hold(i);
    this.pump();
    return n;
  }

  // ---- claims: due retries and orphans ------------------------------------------------------------

  /**
   * In a worker: claims deliveries due on their tenant's clock that no live worker holds (retries,
   * a crashed worker's, ones the relay could not lease), and disables endpoints with a delivery
   * failing for 72 h. In an API process (no dispatcher): publishes a wake-up so that workers do it
   * now (after a test-clock advance). Concurrent calls coalesce into one more pass.
   */
  async sweepOnce(opts: { tenantId?: string } = {}): Promise<number> {
    if (!this.running) {
      await this.d.redis.publish(this.wakeChannel, opts.tenantId ?? '');
      return 0;
    }
    if (this.sweeping) {
      this.sweepAgain = true;
      return this.sweeping;
    }
    this.sweeping = (async () => {
      let n = 0;
      try {
        do {
          this.sweepAgain = false;
          for (;;) {
            const room = Math.min(CLAIM_BATCH, this.maxHeld - this.held.size);
            if (room <= 0 || !this.running) break;
            const got = await this.claim(room);
            n += got;
            if (got < room) break;
          }
          await this.disableStale();
        } while (this.sweepAgain && this.running);
      } finally {
        this.sweeping = undefined;
      }
      return n;
    })();
    return this.sweeping;
  }

  private async claim(limit: number): Promise<number> {
    const t0 = Date.now();
    // The first bound on next_attempt_at (the largest test-clock offset) lets the partial index on
    // (next_attempt_at) where pending stop the scan; the second is the delivery's own tenant clock.
    const rows = await this.d.sql`
      with due as (
        select d.id from webhook_deliveries d
          left join test_clocks c on c.tenant_id = d.tenant_id and not d.livemode
         where d.status = 'pending' and d.endpoint_id is not null
           and (d.lease_until is null or d.lease_until < now())
           and d.next_attempt_at <= now() + make_interval(secs => greatest(0, (select coalesce(max(offset_ms), 0) from test_clocks)) / 1000.0)
           and d.next_attempt_at <= now() + make_interval(secs => coalesce(c.offset_ms, 0) / 1000.0)
         order by d.next_attempt_at limit ${limit}
           for update of d skip locked
      ), claimed as (
        update webhook_deliveries d set lease_until = now() + make_interval(secs => ${this.leaseMs / 1000}), lease_owner = ${this.owner}
          from due where d.id = due.id
        returning d.id, d.event_id, d.endpoint_id, d.tenant_id, d.livemode, d.attempts, d.queued_at
      )
      select cl.id, cl.endpoint_id, cl.livemode, cl.attempts, cl.queued_at,
             e.event_id, e.event_type, e.data, e.created_at, e.traceparent,
             w.url, w.active, s.secret, case when s.previous_until > now() then s.previous_secret end as previous_secret,
             case when cl.livemode then 0 else coalesce(c.offset_ms, 0) end::float8 as offset_ms
        from claimed cl
        join outbox_events e on e.id = cl.event_id
        join webhook_endpoints w on w.id = cl.endpoint_id
        join webhook_secrets s on s.endpoint_id = w.id
        left join test_clocks c on c.tenant_id = cl.tenant_id`;
    const inactive: number[] = [];
    const bodies = new Map<string, string>();
    for (const r of rows) {
      const id = Number(r.id);
      if (!r.active || this.disabled.has(r.endpoint_id as string)) {
        inactive.push(id);
        continue;
      }
      const existing = this.held.get(id);
      if (existing) {
        existing.leaseUntil = t0 + this.leaseMs; // ours already (a renewal that came late): keep the copy we hold
        continue;
      }
      let body = bodies.get(r.event_id as string); // one body per event, shared by its endpoints
      if (body === undefined) {
        body = JSON.stringify(envelope({ event_id: r.event_id, event_type: r.event_type, created_at: r.created_at, livemode: r.livemode, data: r.data }));
        bodies.set(r.event_id as string, body);
      }
      this.hold({
        id,
        endpointId: r.endpoint_id as string,
        target: this.target(r.url as string),
        secrets: r.previous_secret ? [r.secret as string, r.previous_secret as string] : [r.secret as string],
        body,
        eventType: r.event_type as string,
        attempts: r.attempts as number,
        createdAtMs: (r.created_at as Date).getTime(),
        queuedAtMs: (r.queued_at as Date).getTime(),
        livemode: r.livemode as boolean,
        offsetMs: Number(r.offset_ms),
        trace: (r.traceparent as Carrier | null) ?? null,
        leaseUntil: t0 + this.leaseMs,
        inFlight: false,
      });
    }
    if (inactive.length) {
      await this.d.sql`update webhook_deliveries set status = 'discarded', last_error = 'endpoint disabled', lease_until = null, lease_owner = null
                        where id = any(${idArray(inactive)}::bigint[]) and status = 'pending'`;
    }
    this.pump();
    return rows.length;
  }

  /** Renews the leases of everything this worker holds; drops what is no longer pending or no longer ours. */
  private async renew() {
    const ids = [...this.held.keys()];
    if (!ids.length) return;
    const t0 = Date.now();
    const rows = await this.d.sql`
      update webhook_deliveries set lease_until = now() + make_interval(secs => ${this.leaseMs / 1000})
       where id = any(${idArray(ids)}::bigint[]) and status = 'pending' and lease_owner = ${this.owner}
       returning id`;
    const kept = new Set(rows.map((r) => Number(r.id)));
    for (const id of ids) {
      const i = this.held.get(id);
      if (!i) continue;
      if (kept.has(id)) i.leaseUntil = t0 + this.leaseMs;
      else if (!i.inFlight) this.held.delete(id); // delivered or discarded elsewhere, or claimed by another worker: not sent here
    }
  }

  // ---- dispatcher --------------------------------------------------------------------------------

  private hold(i: Item) {
    this.held.set(i.id, i);
    let q = this.endpoints.get(i.endpointId);
    if (!q) this.endpoints.set(i.endpointId, (q = new EndpointQueue(i.endpointId)));
    q.push(i);
    this.ready(q);
  }

  private ready(q: EndpointQueue) {
    if (!q.inRing && q.waiting > 0 && q.inFlight < PER_ENDPOINT_IN_FLIGHT) {
      q.inRing = true;
      this.ring.push(q);
    }
  }

  /** Starts POSTs while there is room: round robin over endpoints, at most PER_ENDPOINT_IN_FLIGHT each. */
  private pump() {
    while (this.running && this.inFlight < this.maxInFlight && this.ringHead < this.ring.length) {
      const q = this.ring[this.ringHead++];
      q.inRing = false;
      const i = q.shift();
      if (i) {
        if (this.held.get(i.id) !== i) {
          // dropped (no longer ours)
        } else if (this.disabled.has(i.endpointId)) {
          this.held.delete(i.id);
        } else if (i.leaseUntil <= Date.now()) {
          this.held.delete(i.id); // the lease lapsed (renewals failed): whoever claims it next sends it
        } else {
          this.send(q, i);
        }
      }
      this.ready(q);
      if (q.waiting === 0 && q.inFlight === 0) this.endpoints.delete(q.id);
    }
    if (this.ringHead > 1024 && this.ringHead * 2 > this.ring.length) {
      this.ring = this.ring.slice(this.ringHead);
      this.ringHead = 0;
    }
  }

  private send(q: EndpointQueue, i: Item) {
    i.inFlight = true;
    q.inFlight++;
    this.inFlight++;
    this.deliver(i)
      .catch((e) => {
        this.d.log.warn('webhook delivery failed unexpectedly', { deliveryId: i.id, err: e });
      })
      .finally(() => {
        this.held.delete(i.id);
        q.inFlight--;
        this.inFlight--;
        this.ready(q);
        if (q.waiting === 0 && q.inFlight === 0 && this.endpoints.get(q.id) === q) this.endpoints.delete(q.id);
        if (this.inFlight === 0) for (const r of this.idle.splice(0)) r();
        this.pump();
      });
  }

  /** One attempt: a consumer span that continues the event's trace, the signed POST in a client span, the outcome batched. */
  private async deliver(i: Item): Promise<void> {
    const result = await inSpan(
      'job webhook.deliver',
      { [ATTR.jobName]: 'webhook.deliver', [ATTR.queue]: 'webhook_deliveries', [ATTR.jobId]: String(i.id) },
      () =>
        inSpan(
          'webhook.deliver',
          { [ATTR.deliveryId]: i.id, [ATTR.endpointId]: i.endpointId, [ATTR.eventType]: i.eventType, [ATTR.serverAddress]: i.target?.host ?? 'invalid' },
          async (span) => {
            const r = await this.post(i.target, i.body, i.secrets);
            if (r.status) span.setAttribute(ATTR.httpStatus, r.status);
            span.setAttribute(ATTR.outcome, r.ok ? 'delivered' : 'failed');
            return r;
          },
          { kind: SpanKind.CLIENT },
        ),
      { parent: extractTrace(i.trace), kind: SpanKind.CONSUMER },
    );
    (result.ok ? this.delivered : this.failedCount)?.inc();
    if (result.ok) {
      this.d.metrics?.webhookLag.observe((Date.now() - i.createdAtMs) / 1000);
      this.successes.push(i.id);
    } else {
      const failures = i.attempts + 1;
      const tenantNow = Date.now() + i.offsetMs;
      if (tenantNow - i.queuedAtMs >= DISABLE_AFTER_MS) {
        await this.disable(i.endpointId, `a delivery failed for 72 hours (last: ${result.status ?? result.error})`);
        await this.d.sql`update webhook_deliveries set attempts = ${failures}, last_status = ${result.status ?? null}, last_error = ${result.error?.slice(0, 500) ?? null}, lease_until = null, lease_owner = null where id = ${i.id}`;
        return;
      }
      this.failures.push({ id: i.id, attempts: i.attempts, wait_s: retryWaitSeconds(failures), status: result.status ?? null, error: result.error?.slice(0, 500) ?? null });
      // This worker looks again when the retry is due (by the clock it knows; a clock advance wakes it too).
      this.wakeAt(Date.now() + retryWaitSeconds(failures) * 1000 + 50);
    }
    if (this.successes.length + this.failures.length >= FLUSH_AT) void this.flush();
    else this.flushTimer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  private wakeAt(at: number) {
    if (!this.running || at >= this.retryAt) return;
    clearTimeout(this.retryTimer);
    this.retryAt = at;
    this.retryTimer = setTimeout(() => {
      this.retryAt = Infinity;
      void this.sweepOnce().catch((e) => this.d.log.warn('webhook retry sweep failed', { err: e }));
    }, Math.max(0, at - Date.now()));
    this.retryTimer.unref();
  }

  private target(url: string): Target | null {
    let t = this.targets.get(url);
    if (t !== undefined) return t;
    try {
      const u = new URL(url);
      if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('not http(s)');
      t = { origin: u.origin, pool: this.pool(u.origin), path: `${u.pathname}${u.search}`, host: u.host };
    } catch {
      t = null;
    }
    if (this.targets.size > 10_000) this.targets.clear();
    this.targets.set(url, t);
    return t;
  }

  /**
   * The origin's pool: keep-alive, one request per connection at a time (no pipelining), no
   * redirects (undici follows none unless asked), TLS verified (the default), and every connection
   * resolved through `guardedLookup` so a name rebound to a private address is refused at connect.
   */
  private pool(origin: string): Pool {
    let p = this.pools.get(origin);
    if (p) return p;
    if (this.pools.size >= 1_000) {
      for (const [o, q] of this.pools) {
        if (q.stats.connected === 0 && q.stats.size === 0) {
          this.pools.delete(o);
          void q.close().catch(() => undefined);
        }
      }
    }
    p = new Pool(origin, {
      connections: CONNECTIONS_PER_ORIGIN,
      pipelining: 1,
      connect: { lookup: this.lookup as never },
      // Backstops only: `expire` aborts any request whose whole answer took longer than DELIVERY_TIMEOUT_MS.
      headersTimeout: DELIVERY_TIMEOUT_MS + 5_000,
      bodyTimeout: DELIVERY_TIMEOUT_MS + 5_000,
    });
    this.pools.set(origin, p);
    return p;
  }

  private pending = new Set<PostHandler>();
  private deadlines?: NodeJS.Timeout;

  private expire() {
    const now = Date.now();
    for (const h of this.pending) if (h.until <= now) h.expire();
    if (!this.pending.size) {
      clearInterval(this.deadlines);
      this.deadlines = undefined;
    }
  }

  /**
   * One signed POST through the origin's pool. `dispatch` with a small handler rather than
   * `request()`: no response stream, AbortController or promise per request inside undici (measured,
   * bench/RESULTS.md); the answer's body is read and dropped as it arrives, so the connection is reused.
   */
  private post(target: Target | null, body: string, secrets: string[]): Promise<Outcome> {
    if (!target) return Promise.resolve({ ok: false, error: 'invalid url' });
    if (target.pool.destroyed) target.pool = this.pool(target.origin); // held across a stop()
    const t = Math.floor(Date.now() / 1000); // real time: receivers compare t with their own clock
    const headers = ['content-type', 'application/json', 'user-agent', USER_AGENT, SIGNATURE_HEADER, signatureHeader(secrets, t, body)];
    const tp = injectTrace(); // traceparent: the receiver may join the trace
    for (const k in tp) headers.push(k, tp[k]);
    return new Promise((resolve) => {
      // The whole answer within DELIVERY_TIMEOUT_MS: one interval checks every request (no timer per request).
      const h = new PostHandler(Date.now() + DELIVERY_TIMEOUT_MS, resolve, this.pending);
      this.pending.add(h);
      this.deadlines ??= setInterval(() => this.expire(), 250).unref();
      target.pool.dispatch({ path: target.path, method: 'POST', headers, body }, h);
    });
  }

  // ---- outcomes, in batches ------------------------------------------------------------------------

  /**
   * Writes the recorded outcomes: one UPDATE for the successes, one for the failures (attempts,
   * next_attempt_at on the tenant's clock, last status and error, lease released). Losing a batch in a
   * crash means the delivery is sent again when its lease lapses: a repeat, never a loss.
   */
  async flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const ok = this.successes.splice(0);
    const failed = this.failures.splice(0);
    if (!ok.length && !failed.length) return this.flushing;
    this.flushing = this.flushing.then(async () => {
      await Promise.all([
        ok.length
          ? this.d.sql`
              update webhook_deliveries set status = 'succeeded', attempts = attempts + 1, delivered_at = now(), last_status = 200, last_error = null, lease_until = null, lease_owner = null
               where id = any(${idArray(ok)}::bigint[]) and status = 'pending'`.catch((e) => this.d.log.warn('recording delivered webhooks failed; they will be sent again', { err: e }))
          : undefined,
        failed.length
          ? this.d.sql`
              update webhook_deliveries d
                 set attempts = f.attempts + 1,
                     next_attempt_at = now() + make_interval(secs => f.wait_s + case when d.livemode then 0 else coalesce((select c.offset_ms from test_clocks c where c.tenant_id = d.tenant_id), 0) / 1000.0 end),
                     last_status = f.status, last_error = f.error, lease_until = null, lease_owner = null
                from jsonb_to_recordset(${this.d.sql.json(failed as never)}) as f(id bigint, attempts int, wait_s int, status int, error text)
               where d.id = f.id and d.status = 'pending' and d.attempts = f.attempts and d.lease_owner = ${this.owner}`.catch((e) =>
              this.d.log.warn('recording failed webhook attempts failed; they will be retried when their lease lapses', { err: e }),
            )
          : undefined,
      ]);
    });
    return this.flushing;
  }

  private async disable(endpointId: string, reason: string) {
    this.disabled.add(endpointId);
    await this.d.sql.begin(async (tx) => {
      await tx`update webhook_endpoints set active = false, disabled_at = now(), disabled_reason = ${reason} where id = ${endpointId} and active`;
      await tx`update webhook_deliveries set status = 'discarded', lease_until = null, lease_owner = null where endpoint_id = ${endpointId} and status = 'pending'`;
    });
    this.d.log.warn('webhook endpoint disabled', { endpointId, reason });
  }

  /** Disables endpoints that have a delivery failing for 72 h on its tenant's clock. */
  private async disableStale() {
    const stale = await this.d.sql`
      select distinct d.endpoint_id from webhook_deliveries d left join test_clocks c on c.tenant_id = d.tenant_id
       where d.status = 'pending' and d.attempts > 0
         and d.queued_at <= now() + make_interval(secs => case when d.livemode then 0 else coalesce(c.offset_ms, 0) / 1000.0 end) - interval '72 hours'`;
    for (const s of stale) await this.disable(s.endpoint_id as string, 'a delivery failed for 72 hours');
  }
}

/** A bigint[] literal for `= any(…::bigint[])`: one parameter whatever the count. */
const idArray = (ids: number[]) => `{${ids.join(',')}}`;
