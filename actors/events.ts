// The polling stream (spec: Endpoints > GET /v1/events): committed events of the tenant and mode,
// ascending by integer id after an exclusive cursor; only while the tenant has an active endpoint.
import type { AppDeps } from '../api/deps.js';
import type { Principal } from '../api/route.js';
import { envelope } from './webhook-delivery.js';

export async function listEvents(deps: Pick<AppDeps, 'sql'>, p: Principal, afterId = 0, limit = 50) {
  const n = Math.max(1, Math.min(limit, 200)); // spec: default 50, larger values clamped to 200
  const active = await deps.sql`select 1 from webhook_endpoints where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and active limit 1`;
  if (!active.length) return { object: 'list' as const, data: [], has_more: false };
  const rows = await deps.sql`
    select e.id, e.event_id, e.event_type, e.livemode, e.data, e.created_at,
           (e.relayed_at is not null and not exists (select 1 from webhook_deliveries d where d.event_id = e.id and d.status <> 'succeeded')) as delivered
      from outbox_events e
     where e.tenant_id = ${p.tenantId} and e.livemode = ${p.livemode} and e.id > ${afterId}
     order by e.id limit ${n + 1}`;
  const page = rows.slice(0, n);
  return {
    object: 'list' as const,
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
  };
}
