// Webhook endpoints: register (secret shown once), list (never secrets), delete (logical),
// rotate the secret (the previous one keeps signing for 24 h). Scoped by tenant and mode.
import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../api/deps.js';
import { ApiError } from '../api/errors.js';
import type { Principal } from '../api/route.js';
import { newWebhookSecret } from '../api/webhook-signature.js';
import type { CreateEndpointBody } from '../schemas/webhooks.js';
import { assertSafeWebhookUrl, UnsafeUrl } from './net-guard.js';

export const ROTATION_OVERLAP_MS = 24 * 3600_000;

function view(r: Record<string, unknown>) {
  return {
    id: r.id as string,
    object: 'webhook_endpoint' as const,
    url: r.url as string,
    events: (r.events as string[] | null) ?? null,
    active: r.active as boolean,
    disabled_reason: (r.disabled_reason as string | null) ?? null,
    livemode: r.livemode as boolean,
    created_at: (r.created_at as Date).toISOString(),
  };
}

export async function createEndpoint(deps: Pick<AppDeps, 'sql' | 'config'>, p: Principal, body: CreateEndpointBody) {
  try {
    await assertSafeWebhookUrl(body.url, deps.config.webhookAllowHttpHosts);
  } catch (e) {
    if (e instanceof UnsafeUrl) throw new ApiError('webhook_endpoint.invalid_url', e.message);
    throw e;
  }
  const id = randomUUID();
  const secret = newWebhookSecret();
  const events = body.events && body.events.length ? [...body.events] : null; // empty = whole catalog
  return deps.sql.begin(async (tx) => {
    const [row] = await tx`
      insert into webhook_endpoints (id, tenant_id, livemode, url, events) values (${id}, ${p.tenantId}, ${p.livemode}, ${body.url}, ${events})
      returning *`;
    await tx`insert into webhook_secrets (endpoint_id, secret) values (${id}, ${secret})`;
    return { ...view(row), secret };
  });
}

export async function listEndpoints(deps: Pick<AppDeps, 'sql'>, p: Principal) {
  const rows = await deps.sql`
    select * from webhook_endpoints where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and deleted_at is null
     order by created_at desc`;
  return { object: 'list' as const, data: rows.map(view) };
}

export async function deleteEndpoint(deps: Pick<AppDeps, 'sql'>, p: Principal, id: string) {
  const rows = await deps.sql`
    -- logical removal: the row stays (deliveries reference it); it receives nothing more
    update webhook_endpoints set active = false, deleted_at = coalesce(deleted_at, now()), disabled_reason = coalesce(disabled_reason, 'deleted')
     where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode} and deleted_at is null
     returning id`;
  if (!rows.length) throw new ApiError('webhook_endpoint.not_found');
  await deps.sql`update webhook_deliveries set status = 'discarded', last_error = 'endpoint deleted' where endpoint_id = ${id} and status = 'pending'`;
  return { id, object: 'webhook_endpoint' as const, deleted: true as const };
}

export async function rotateSecret(deps: Pick<AppDeps, 'sql'>, p: Principal, id: string) {
  const secret = newWebhookSecret();
  return deps.sql.begin(async (tx) => {
    const [ep] = await tx`select * from webhook_endpoints where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode} and deleted_at is null`;
    if (!ep) throw new ApiError('webhook_endpoint.not_found');
    await tx`
      update webhook_secrets set previous_secret = secret, previous_until = now() + make_interval(secs => ${ROTATION_OVERLAP_MS / 1000}), secret = ${secret}
       where endpoint_id = ${id}`;
    return { ...view(ep), secret };
  });
}
