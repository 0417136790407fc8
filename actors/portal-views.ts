// Read models and small commands the portal needs on top of the existing resources (issue 29;
// docs/portal.md), served as /v1 routes so API users get them too: a payment's activity (its and its
// attempts' and refunds' history, events, their webhook deliveries, the trace id), an endpoint's
// delivery log and a resend, and the refund approvals waiting for a second member.
import { ApiError } from '../kernel/errors.js';
import { tenantNowSql } from '../kernel/clock.js';
import type { Sql } from '../kernel/db.js';

interface Scope { tenantId: string; livemode: boolean }

const iso = (d: unknown) => (d ? (d as Date).toISOString() : null);
/** The trace id of a stored W3C trace context (`00-<trace id>-<span id>-<flags>`). */
const traceIdOf = (tp: unknown): string | null => {
  const s = typeof tp === 'string' ? tp : (tp as { traceparent?: string } | null)?.traceparent;
  const m = s ? /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(s) : null;
  return m && !/^0+$/.test(m[1]) ? m[1] : null;
};

function deliveryView(d: Record<string, unknown>) {
  return {
    id: String(d.id),
    object: 'webhook_delivery' as const,
    endpoint_id: (d.endpoint_id as string | null) ?? null,
    event_id: (d.event_uuid as string | undefined) ?? undefined,
    event_type: (d.event_type as string | undefined) ?? undefined,
    status: d.status as string,
    attempts: d.attempts as number,
    last_status: (d.last_status as number | null) ?? null,
    last_error: (d.last_error as string | null) ?? null,
    queued_at: iso(d.queued_at),
    next_attempt_at: d.status === 'pending' ? iso(d.next_attempt_at) : null,
    delivered_at: iso(d.delivered_at),
  };
}

export class PortalViews {
  constructor(private d: { sql: Sql; readSql: Sql; /** Wakes the webhook workers for a tenant (a resend is sent at once). */ wake?: (tenantId: string) => Promise<unknown> }) {}

  /** GET /v1/payment_intents/{id}/activity */
  async intentActivity(p: Scope, id: string) {
    const sql = this.d.readSql;
    const [pi] = await sql`select id from payment_intents where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (!pi) throw new ApiError('payment_intent.not_found');
    const related = await sql`
      select id, 'attempt' as kind from attempts where payment_intent_id = ${id}
      union all select id, 'refund' from refunds where payment_intent_id = ${id}`;
    const ids = [id, ...related.map((r) => r.id as string)];
    const history = await sql`
      select * from (
        select 'payment_intent' as kind, payment_intent_id as entity_id, event, from_status, to_status, data, created_at, id
          from payment_intent_history where payment_intent_id = ${id} and tenant_id = ${p.tenantId}
        union all
        select entity_kind, entity_id, event, from_status, to_status, data, created_at, id
          from entity_history where entity_id = any(${ids}::uuid[]) and tenant_id = ${p.tenantId}) h
       order by created_at, id`;
    const events = await sql`
      select id, event_id, event_type, entity_id, created_at, traceparent from outbox_events
       where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and entity_id = any(${ids}::uuid[]) order by id`;
    const deliveries = events.length
      ? await sql`
          select * from webhook_deliveries where event_id = any(${events.map((e) => Number(e.id))}::bigint[]) and endpoint_id is not null order by id`
      : [];
    const traceId = events.map((e) => traceIdOf(e.traceparent)).find((x) => x) ?? null;
    return {
      object: 'payment_intent_activity' as const,
      payment_intent_id: id,
      trace_id: traceId,
      history: history.map((h) => ({
        kind: h.kind as string, entity_id: h.entity_id as string, event: h.event as string,
        from_status: (h.from_status as string | null) ?? null, to_status: h.to_status as string, data: h.data ?? null, created_at: iso(h.created_at),
      })),
      events: events.map((e) => ({
        id: e.event_id as string, event_type: e.event_type as string, entity_id: e.entity_id as string, created_at: iso(e.created_at), trace_id: traceIdOf(e.traceparent),
        deliveries: deliveries.filter((d) => Number(d.event_id) === Number(e.id)).map(deliveryView),
      })),
    };
  }

  /** GET /v1/webhook_endpoints/{id}/deliveries: newest first. */
  async deliveries(p: Scope, endpointId: string, q: { limit?: number; status?: string }) {
    const sql = this.d.readSql;
    const [ep] = await sql`select id from webhook_endpoints where id = ${endpointId} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (!ep) throw new ApiError('webhook_endpoint.not_found');
    const limit = Math.min(q.limit ?? 20, 100);
    const rows = await sql`
      select d.*, e.event_id as event_uuid, e.event_type from webhook_deliveries d join outbox_events e on e.id = d.event_id and e.tenant_id = d.tenant_id
       where d.tenant_id = ${p.tenantId} and d.endpoint_id = ${endpointId} ${q.status ? sql`and d.status = ${q.status}` : sql``}
       order by d.id desc limit ${limit + 1}`;
    return { object: 'list' as const, data: rows.slice(0, limit).map(deliveryView), has_more: rows.length > limit };
  }

  /**
   * POST /v1/webhook_deliveries/{delivery}/resend: the delivery starts over (pending, no attempts,
   * queued now on the tenant's clock, so its 72-hour retry window is new) if its endpoint is active.
   */
  async resend(p: Scope, deliveryId: string) {
    if (!/^[0-9]{1,18}$/.test(deliveryId)) throw new ApiError('webhook_delivery.not_found');
    const [d] = await this.d.sql`
      update webhook_deliveries d
         set status = 'pending', attempts = 0, last_error = null, last_status = null, delivered_at = null, lease_until = null, lease_owner = null,
             queued_at = ${tenantNowSql(this.d.sql, 'd.tenant_id', 'd.livemode')}, next_attempt_at = ${tenantNowSql(this.d.sql, 'd.tenant_id', 'd.livemode')}
       where d.id = ${deliveryId} and d.tenant_id = ${p.tenantId} and d.livemode = ${p.livemode} and d.endpoint_id is not null
         and exists (select 1 from webhook_endpoints e where e.id = d.endpoint_id and e.active)
         and (d.status <> 'pending' or d.lease_until is null or d.lease_until < now())
      returning d.*`;
    if (!d) {
      const [any] = await this.d.sql`select status from webhook_deliveries where id = ${deliveryId} and tenant_id = ${p.tenantId} and livemode = ${p.livemode} and endpoint_id is not null`;
      if (!any) throw new ApiError('webhook_delivery.not_found');
      throw new ApiError('webhook_delivery.resend_conflict');
    }
    const [e] = await this.d.sql`select event_id, event_type from outbox_events where id = ${d.event_id as number}`;
    await this.d.wake?.(p.tenantId).catch(() => 0);
    return deliveryView({ ...d, event_uuid: e.event_id, event_type: e.event_type });
  }

  /**
   * The refund or payout approvals (actors/approvals.ts, table `approvals`) of the mode shown, newest
   * first, with who asked and who decided (a member's email, or an API key id). A payout's CLABE only
   * masked; a refund's payment.
   */
  async approvals(p: Scope, kind: 'refund' | 'payout', status?: string) {
    const sql = this.d.sql;
    const rows = await sql`
      select ap.id, ap.status, ap.request, ap.secret_masked, ap.amount_minor, ap.currency, ap.requested_by, ap.approver, ap.subject_id, ap.created_at,
             a.payment_intent_id, m.email as requested_by_email, am.email as approver_email
        from approvals ap
        left join attempts a on ${kind === 'refund'} and a.id = (ap.request->>'attempt_id')::uuid and a.tenant_id = ap.tenant_id
        left join portal_members m on m.id::text = ap.requested_by and m.tenant_id = ap.tenant_id
        left join portal_members am on am.id::text = ap.approver and am.tenant_id = ap.tenant_id
       where ap.tenant_id = ${p.tenantId} and ap.livemode = ${p.livemode} and ap.subject_kind = ${kind} ${status ? sql`and ap.status = ${status}` : sql``}
       order by ap.created_at desc limit 100`;
    return {
      object: 'list' as const,
      data: rows.map((r) => {
        const req = (r.request ?? {}) as Record<string, string | null | undefined>;
        return {
          id: r.id as string, object: `${kind}_approval` as const, status: r.status as string, amount_minor: Number(r.amount_minor), currency: r.currency as string,
          ...(kind === 'refund'
            ? { payment_intent_id: r.payment_intent_id as string, attempt_id: req.attempt_id as string, reason: req.reason ?? null }
            : { clabe_masked: r.secret_masked as string, beneficiary_name: req.beneficiary_name ?? null, concepto: req.concepto ?? null, payout_id: (r.subject_id as string | null) ?? null }),
          requested_by: r.requested_by as string, requested_by_email: (r.requested_by_email as string | null) ?? null,
          approver: (r.approver as string | null) ?? null, approver_email: (r.approver_email as string | null) ?? null,
          created_at: iso(r.created_at),
        };
      }),
    };
  }
}
