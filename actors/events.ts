// The polling stream (spec: Endpoints > GET /v1/events): committed events of the tenant and mode,
// ascending by integer id after an exclusive cursor; only while the tenant has an active endpoint.
// Alongside the page (the spec's list shape, unchanged) it reports the stream's head, the id of the
// tenant's newest event in this mode, whether or not rows are listed, so a follower such as
// `orquesta listen` can start "from now" by cursor instead of by clock; and, when rows are withheld
// for want of an endpoint, why, in words a developer can act on.
import type { Sql } from '../kernel/db.js';
import type { Principal } from '../kernel/principal.js';
import { envelope } from './webhook-delivery.js';

export interface EventStreamPage {
  list: {
    object: 'list';
    data: Array<{ id: number; object: 'event'; event_id: string; event_type: string; delivered: boolean; created_at: string; data: ReturnType<typeof envelope> }>;
    has_more: boolean;
  };
  /** The id of the newest event of the tenant in this mode (0: none yet), listed or not. */
  latestId: number;
  /** Set when rows are withheld: the reason code, a sentence saying what to do, and whether this deployment takes local URLs for this mode. */
  withheld?: { reason: 'no_active_endpoint'; notice: string; localEndpoints: boolean };
}

export async function listEvents(deps: { sql: Sql; config: { webhookLocalEndpoints: boolean } }, p: Principal, afterId = 0, limit = 50): Promise<EventStreamPage> {
  const n = Math.max(1, Math.min(limit, 200)); // spec: default 50, larger values clamped to 200
  const [state] = await deps.sql`
    select exists (select 1 from webhook_endpoints where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and active) as active,
           coalesce((select max(id) from outbox_events where tenant_id = ${p.tenantId} and livemode = ${p.livemode}), 0) as latest`;
  const latestId = Number(state.latest);
  if (!state.active) {
    const localEndpoints = deps.config.webhookLocalEndpoints && !p.livemode;
    return { list: { object: 'list', data: [], has_more: false }, latestId, withheld: { reason: 'no_active_endpoint', notice: withheldNotice(p.livemode, latestId, localEndpoints), localEndpoints } };
  }
  const rows = await deps.sql`
    select e.id, e.event_id, e.event_type, e.livemode, e.data, e.created_at,
           (e.relayed_at is not null and not exists (select 1 from webhook_deliveries d where d.event_id = e.id and d.status <> 'succeeded')) as delivered
      from outbox_events e
     where e.tenant_id = ${p.tenantId} and e.livemode = ${p.livemode} and e.id > ${afterId}
     order by e.id limit ${n + 1}`;
  const page = rows.slice(0, n);
  return {
    list: {
      object: 'list',
      data: page.map((r) => ({
        id: Number(r.id),
        object: 'event' as const,
        event_id: r.event_id as string,
        event_type: r.event_type as string,
        delivered: r.delivered as boolean,
        created_at: (r.created_at as Date).toISOString(),
        data: envelope({ event_id: r.event_id, event_type: r.event_type, created_at: r.created_at, livemode: r.livemode, data: r.data }),
      })),
      has_more: rows.length > n,
    },
    latestId,
  };
}

/** Why the stream is empty, and the registration that fixes it on this deployment. */
function withheldNotice(livemode: boolean, latestId: number, localEndpoints: boolean): string {
  const mode = livemode ? 'live' : 'test';
  const recorded = latestId ? `events are recorded (newest id ${latestId})` : 'events will be recorded';
  const url = localEndpoints ? 'a local URL such as http://localhost:3000/webhooks is accepted by this development server' : 'an https:// URL of yours';
  return `No active webhook endpoint in ${mode} mode: ${recorded} but GET /v1/events lists them only while one is active. Register one with POST /v1/webhook_endpoints (${url}).`;
}
