// Webhook delivery (spec: Events > Delivery and retries): the relay turns committed outbox events
// into one delivery per matching active endpoint plus the internal sink; deliveries are signed
// POSTs, retried on the tenant's clock (1 min, 5 min, 30 min, 2 h, 6 h, 12 h, then 24 h), and an
// endpoint still failing a delivery 72 h after it was queued is disabled.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Redis } from 'ioredis';
import { signatureHeader, SIGNATURE_HEADER } from '../api/webhook-signature.js';
import type { Config } from '../ops/config.js';
import type { Sql } from '../ops/db.js';
import type { Logger } from '../ops/log.js';
import type { Metrics } from '../ops/metrics.js';
import { guardedLookup } from './net-guard.js';
import { ATTR, inSpan, injectTrace, SpanKind, type Carrier } from '../ops/tracing.js';

const hostOf = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid';
  }
};
import type { Queues } from './queues.js';

export const WH_QUEUE = 'wh';
export const SINK = 'sink:events';
export const API_VERSION = '2026-07-01';
export const DELIVERY_TIMEOUT_MS = 10_000;
export const DISABLE_AFTER_MS = 72 * 3600_000;
/** Waits after the 1st, 2nd, … failed attempt; from the 7th on, 24 h repeated. */
export const RETRY_WAITS_S = [60, 300, 1800, 7200, 21600, 43200];
export const retryWaitSeconds = (failures: number) => RETRY_WAITS_S[failures - 1] ?? 86400;
/** The sweeper rescues a due delivery whose job went missing after this long. */
const RESCUE_GRACE_S = 10;
const PER_ENDPOINT_IN_FLIGHT = 8;

export interface WebhookDeps {
  sql: Sql;
  redis: Redis;
  queues: Queues;
  config: Config;
  log: Logger;
  metrics?: Pick<Metrics, 'webhookDeliveries' | 'webhookLag'>;
}

export function envelope(e: { event_id: string; event_type: string; created_at: Date; livemode: boolean; data: unknown }) {
  return { event_id: e.event_id, event_type: e.event_type, created_at: e.created_at.toISOString(), api_version: API_VERSION, livemode: e.livemode, data: e.data };
}

/** Bounded in-flight deliveries per endpoint, so one slow receiver does not hold up the others. */
class PerKeyLimit {
  private active = new Map<string, number>();
  private waiting = new Map<string, Array<() => void>>();
  constructor(private max: number) {}
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    if ((this.active.get(key) ?? 0) >= this.max) await new Promise<void>((r) => this.waiting.set(key, [...(this.waiting.get(key) ?? []), r]));
    this.active.set(key, (this.active.get(key) ?? 0) + 1);
    try {
      return await fn();
    } finally {
      const n = (this.active.get(key) ?? 1) - 1;
      if (n === 0) this.active.delete(key);
      else this.active.set(key, n);
      const q = this.waiting.get(key);
      const next = q?.shift();
      if (q && !q.length) this.waiting.delete(key);
      next?.();
    }
  }
}

export class WebhookDelivery {
  private httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16 });
  private httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16 });
  private lookup;
  private limit = new PerKeyLimit(PER_ENDPOINT_IN_FLIGHT);
  private successes: number[] = [];
  private flushTimer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private d: WebhookDeps) {
    this.lookup = guardedLookup(d.config.webhookAllowHttpHosts);
  }

  // ---- relay: outbox → deliveries ------------------------------------------------------------

  /** Relays up to `batch` committed events; returns how many. */
  async relayOnce(batch = 500): Promise<number> {
    const jobs: Array<{ id: number; endpoint_id: string; attempts: number; trace?: Carrier }> = [];
    const traces = new Map<number, Carrier>();
    const n = await this.d.sql.begin(async (tx) => {
      const events = await tx`
        select e.id, e.tenant_id, e.livemode, e.event_type, e.traceparent, now() + make_interval(secs => case when e.livemode then 0 else coalesce(c.offset_ms, 0) / 1000.0 end) as tenant_now
          from outbox_events e left join test_clocks c on c.tenant_id = e.tenant_id
         where e.relayed_at is null order by e.id limit ${batch}
           for update of e skip locked`;
      if (!events.length) return 0;
      const tenants = [...new Set(events.map((e) => e.tenant_id as string))];
      const endpoints = await tx`select id, tenant_id, livemode, events from webhook_endpoints where active and tenant_id in ${tx(tenants)}`;
      const rows: Record<string, unknown>[] = [];
      for (const e of events) {
        if (e.traceparent) traces.set(Number(e.id), e.traceparent as Carrier);
        const base = { event_id: e.id, tenant_id: e.tenant_id, livemode: e.livemode, queued_at: e.tenant_now, next_attempt_at: e.tenant_now };
        rows.push({ ...base, endpoint_key: SINK, endpoint_id: null, status: 'succeeded', attempts: 1, delivered_at: e.tenant_now });
        for (const ep of endpoints) {
          if (ep.tenant_id !== e.tenant_id || ep.livemode !== e.livemode) continue;
          const allow = ep.events as string[] | null;
          if (allow && !allow.includes(e.event_type as string)) continue;
          rows.push({ ...base, endpoint_key: ep.id, endpoint_id: ep.id, status: 'pending', attempts: 0, delivered_at: null });
        }
      }
      const inserted = await tx`
        insert into webhook_deliveries ${(tx as unknown as (r: unknown, ...cols: string[]) => never)(rows, 'event_id', 'endpoint_key', 'endpoint_id', 'tenant_id', 'livemode', 'status', 'attempts', 'queued_at', 'next_attempt_at', 'delivered_at')}
        on conflict (event_id, endpoint_key) do nothing
        returning id, event_id, endpoint_id, attempts, status`;
      for (const r of inserted) if (r.status === 'pending') jobs.push({ id: Number(r.id), endpoint_id: r.endpoint_id as string, attempts: 0, trace: traces.get(Number(r.event_id)) });
      await tx`update outbox_events set relayed_at = now() where id in ${tx(events.map((e) => e.id as number))}`;
      return events.length;
    });
    await this.enqueue(jobs, 'r');
    return n;
  }

  private async enqueue(jobs: Array<{ id: number; endpoint_id: string; attempts: number; trace?: Carrier }>, tag: string, delayMs = 0) {
    for (const j of jobs) {
      await this.d.queues
        .add(WH_QUEUE, j.endpoint_id, 'webhook.deliver', { deliveryId: j.id, attempt: j.attempts, ...(j.trace ? { _trace: j.trace } : {}) }, { jobId: `dlv-${j.id}-${j.attempts}-${tag}`, delay: delayMs, attempts: 3 })
        .catch((e) => this.d.log.warn('enqueue of a delivery failed; the sweeper will rescue it', { deliveryId: j.id, err: e }));
    }
  }

  // ---- one delivery ----------------------------------------------------------------------------

  async deliver(deliveryId: number, forAttempt?: number): Promise<'succeeded' | 'failed' | 'skipped' | 'discarded'> {
    const [d] = await this.d.sql`
      select d.id, d.endpoint_id, d.tenant_id, d.livemode, d.status, d.attempts, d.queued_at, d.next_attempt_at,
             e.event_id, e.event_type, e.data, e.created_at,
             w.url, w.active, s.secret, case when s.previous_until > now() then s.previous_secret end as previous_secret,
             now() + make_interval(secs => case when d.livemode then 0 else coalesce(c.offset_ms, 0) / 1000.0 end) as tenant_now
        from webhook_deliveries d
        join outbox_events e on e.id = d.event_id
        join webhook_endpoints w on w.id = d.endpoint_id
        join webhook_secrets s on s.endpoint_id = w.id
        left join test_clocks c on c.tenant_id = d.tenant_id
       where d.id = ${deliveryId}`;
    if (!d || d.status !== 'pending') return 'skipped';
    if (forAttempt !== undefined && d.attempts !== forAttempt) return 'skipped'; // another job already made this attempt
    if (!d.active) {
      await this.d.sql`update webhook_deliveries set status = 'discarded', last_error = 'endpoint disabled' where id = ${deliveryId} and status = 'pending'`;
      return 'discarded';
    }
    const tenantNow = d.tenant_now as Date;
    if ((d.next_attempt_at as Date).getTime() > tenantNow.getTime() + 1000) return 'skipped'; // not due on the tenant's clock

    const body = JSON.stringify(envelope({ event_id: d.event_id, event_type: d.event_type, created_at: d.created_at, livemode: d.livemode, data: d.data }));
    const secrets = [d.secret as string, ...(d.previous_secret ? [d.previous_secret as string] : [])];
    const result = await inSpan(
      'webhook.deliver',
      { [ATTR.deliveryId]: deliveryId, [ATTR.endpointId]: d.endpoint_id as string, [ATTR.eventType]: d.event_type as string, [ATTR.serverAddress]: hostOf(d.url as string) },
      async (span) => {
        const r = await this.limit.run(d.endpoint_id as string, () => this.post(d.url as string, body, secrets));
        if (r.status) span.setAttribute(ATTR.httpStatus, r.status);
        span.setAttribute(ATTR.outcome, r.ok ? 'delivered' : 'failed');
        return r;
      },
      { kind: SpanKind.CLIENT },
    );
    this.d.metrics?.webhookDeliveries.inc({ outcome: result.ok ? 'delivered' : 'failed' });
    if (result.ok) {
      this.d.metrics?.webhookLag.observe((Date.now() - (d.created_at as Date).getTime()) / 1000);
      this.recordSuccess(deliveryId);
      return 'succeeded';
    }
    await this.recordFailure(d, tenantNow, result.status, result.error);
    return 'failed';
  }

  private post(url: string, body: string, secrets: string[]): Promise<{ ok: boolean; status?: number; error?: string }> {
    return new Promise((resolve) => {
      let u: URL;
      try {
        u = new URL(url);
      } catch {
        return resolve({ ok: false, error: 'invalid url' });
      }
      const isHttps = u.protocol === 'https:';
      const t = Math.floor(Date.now() / 1000); // real time: receivers compare t with their own clock
      const req = (isHttps ? httpsRequest : httpRequest)(
        u,
        {
          method: 'POST',
          agent: isHttps ? this.httpsAgent : this.httpAgent,
          lookup: this.lookup as never,
          timeout: DELIVERY_TIMEOUT_MS,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'user-agent': `Orquesta-Webhooks/${API_VERSION}`,
            [SIGNATURE_HEADER]: signatureHeader(secrets, t, body),
            ...injectTrace(), // traceparent: the receiver may join the trace
          },
        },
        (res: IncomingMessage) => {
          res.resume(); // drain: the answer's body is ignored; redirects are not followed
          res.on('end', () => resolve({ ok: !!res.statusCode && res.statusCode >= 200 && res.statusCode < 300, status: res.statusCode }));
          res.on('error', (e) => resolve({ ok: false, status: res.statusCode, error: e.message }));
        },
      );
      const deadline = setTimeout(() => req.destroy(new Error('no answer within 10 s')), DELIVERY_TIMEOUT_MS);
      req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
      req.on('error', (e) => resolve({ ok: false, error: e.message }));
      req.on('close', () => clearTimeout(deadline));
      req.end(body);
    });
  }

  /** Successes are written in batches: losing a batch in a crash only means a repeat delivery. */
  private recordSuccess(id: number) {
    this.successes.push(id);
    if (this.successes.length >= 200) void this.flush();
    else this.flushTimer ??= setTimeout(() => void this.flush(), 25);
  }

  async flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const ids = this.successes.splice(0);
    if (!ids.length) return this.flushing;
    this.flushing = this.flushing.then(async () => {
      await this.d.sql`
        update webhook_deliveries set status = 'succeeded', attempts = attempts + 1, delivered_at = now(), last_status = 200, last_error = null
         where id in ${this.d.sql(ids)} and status = 'pending'`.catch((e) => this.d.log.warn('recording delivered webhooks failed; they will be sent again', { err: e }));
    });
    return this.flushing;
  }

  private async recordFailure(d: Record<string, unknown>, tenantNow: Date, status?: number, error?: string) {
    const failures = (d.attempts as number) + 1;
    const queuedAt = (d.queued_at as Date).getTime();
    if (tenantNow.getTime() - queuedAt >= DISABLE_AFTER_MS) {
      await this.disable(d.endpoint_id as string, `a delivery failed for 72 hours (last: ${status ?? error})`);
      await this.d.sql`update webhook_deliveries set attempts = ${failures}, last_status = ${status ?? null}, last_error = ${error ?? null} where id = ${d.id as number}`;
      return;
    }
    const wait = retryWaitSeconds(failures);
    const next = new Date(tenantNow.getTime() + wait * 1000);
    const rows = await this.d.sql`
      update webhook_deliveries set attempts = ${failures}, next_attempt_at = ${next}, last_status = ${status ?? null}, last_error = ${error?.slice(0, 500) ?? null}
       where id = ${d.id as number} and status = 'pending' and attempts = ${d.attempts as number}
       returning id`;
    if (rows.length) await this.enqueue([{ id: d.id as number, endpoint_id: d.endpoint_id as string, attempts: failures }], 'retry', wait * 1000);
  }

  private async disable(endpointId: string, reason: string) {
    await this.d.sql.begin(async (tx) => {
      await tx`update webhook_endpoints set active = false, disabled_at = now(), disabled_reason = ${reason} where id = ${endpointId} and active`;
      await tx`update webhook_deliveries set status = 'discarded' where endpoint_id = ${endpointId} and status = 'pending'`;
    });
    this.d.log.warn('webhook endpoint disabled', { endpointId, reason });
  }

  // ---- sweeper ---------------------------------------------------------------------------------

  /**
   * Enqueues deliveries due on their tenant's clock whose job is missing (a crash, a flushed
   * Redis), or all due ones of one tenant right after its clock moved; disables endpoints with a
   * delivery failing for 72 h.
   */
  async sweepOnce(opts: { tenantId?: string; tag?: string } = {}): Promise<number> {
    const grace = opts.tenantId ? 0 : RESCUE_GRACE_S;
    const due = await this.d.sql`
      select d.id, d.endpoint_id, d.attempts from webhook_deliveries d left join test_clocks c on c.tenant_id = d.tenant_id
       where d.status = 'pending' and d.endpoint_id is not null ${opts.tenantId ? this.d.sql`and d.tenant_id = ${opts.tenantId}` : this.d.sql``}
         and d.next_attempt_at <= now() + make_interval(secs => case when d.livemode then 0 else coalesce(c.offset_ms, 0) / 1000.0 end - ${grace})
       order by d.next_attempt_at limit 2000`;
    await this.enqueue(due.map((r) => ({ id: Number(r.id), endpoint_id: r.endpoint_id as string, attempts: r.attempts as number })), opts.tag ?? `s${Math.floor(Date.now() / 5000)}`);
    const stale = await this.d.sql`
      select distinct d.endpoint_id from webhook_deliveries d left join test_clocks c on c.tenant_id = d.tenant_id
       where d.status = 'pending' and d.attempts > 0
         and d.queued_at <= now() + make_interval(secs => case when d.livemode then 0 else coalesce(c.offset_ms, 0) / 1000.0 end) - interval '72 hours'`;
    for (const s of stale) await this.disable(s.endpoint_id as string, 'a delivery failed for 72 hours');
    return due.length;
  }

  async close() {
    await this.flush();
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}
