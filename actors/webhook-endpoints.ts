// Webhook endpoints: register (secret shown once), list (never secrets), delete (logical),
// rotate the secret (the previous one keeps signing for 24 h). Scoped by tenant and mode.
import { randomUUID } from 'node:crypto';
import type { Sql } from '../kernel/db.js';
import { ApiError } from '../kernel/errors.js';
import type { Principal } from '../kernel/principal.js';
import { newWebhookSecret } from '../kernel/signing.js';
import type { CreateEndpointBody } from '../schemas/webhooks.js';
import { assertSafeWebhookUrl, LOCAL_WEBHOOK_HOSTS, registrationPolicy, UnsafeUrl, type LocalRuleConfig } from './net-guard.js';

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

export async function createEndpoint(deps: { sql: Sql; config: LocalRuleConfig }, p: Principal, body: CreateEndpointBody) {
  try {
    assertSafeWebhookUrl(body.url, registrationPolicy(deps.config, p.livemode));
  } catch (e) {
    if (e instanceof UnsafeUrl) throw new ApiError('webhook_endpoint.invalid_url', e.message + localHint(deps.config, p.livemode, body.url));
    throw e;
  }
  const id = randomUUID();
  const secret = newWebhookSecret();
  const events = body.events && body.events.length ? [...body.events] : null; // empty = whole catalog
  return deps.sql.begin(async (tx) => {
    const [row] = await tx`
      insert into webhook_endpoints (id, tenant_id, livemode, url, events) values (${id}, ${p.tenantId}, ${p.livemode}, ${body.url}, ${events})
      returning *`;
    await tx`insert into webhook_secrets (endpoint_id, tenant_id, secret) values (${id}, ${p.tenantId}, ${secret})`;
    return { ...view(row), secret };
  });
}

/** Why a local URL was refused, when local endpoints are what the developer was after. */
function localHint(config: LocalRuleConfig, livemode: boolean, raw: string): string {
  let host: string;
  try {
    host = new URL(raw).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return '';
  }
  if (!LOCAL_WEBHOOK_HOSTS.includes(host)) return '';
  if (config.webhookLocalEndpoints && livemode) return ' Local endpoints (localhost, 127.0.0.1, [::1]) are accepted for test-mode keys only: use your sk_test_ key.';
  if (!config.webhookLocalEndpoints && config.env !== 'production') return ' Local endpoints are accepted only by a development server bound to a loopback address (NODE_ENV unset or development, HOST=127.0.0.1; see WEBHOOK_LOCAL_ENDPOINTS in README.md).';
  return '';
}

/** Every endpoint of the key's tenant and mode, deleted ones included (decisions §7: `active: false`, the row is kept). */
export async function listEndpoints(deps: { sql: Sql }, p: Principal) {
  const rows = await deps.sql`
    select * from webhook_endpoints where tenant_id = ${p.tenantId} and livemode = ${p.livemode}
     order by created_at desc`;
  return { object: 'list' as const, data: rows.map(view) };
}

/** One endpoint; a deleted one reads as it is listed (`active: false`, `disabled_reason: deleted`). */
export async function getEndpoint(deps: { sql: Sql }, p: Principal, id: string) {
  const [row] = await deps.sql`select * from webhook_endpoints where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
  if (!row) throw new ApiError('webhook_endpoint.not_found');
  return view(row);
}

export async function deleteEndpoint(deps: { sql: Sql }, p: Principal, id: string) {
  const rows = await deps.sql`
    -- logical removal: the row stays (deliveries reference it); it receives nothing more
    update webhook_endpoints set active = false, deleted_at = coalesce(deleted_at, now()), disabled_reason = coalesce(disabled_reason, 'deleted')
     where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode} and deleted_at is null
     returning id`;
  if (!rows.length) throw new ApiError('webhook_endpoint.not_found');
  await deps.sql`update webhook_deliveries set status = 'discarded', last_error = 'endpoint deleted' where tenant_id = ${p.tenantId} and endpoint_id = ${id} and status = 'pending'`;
  return { id, object: 'webhook_endpoint' as const, deleted: true as const };
}

export async function rotateSecret(deps: { sql: Sql }, p: Principal, id: string) {
  const secret = newWebhookSecret();
  return deps.sql.begin(async (tx) => {
    const [ep] = await tx`select * from webhook_endpoints where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode} and deleted_at is null`;
    if (!ep) throw new ApiError('webhook_endpoint.not_found');
    await tx`
      update webhook_secrets set previous_secret = secret, previous_until = now() + make_interval(secs => ${ROTATION_OVERLAP_MS / 1000}), secret = ${secret}
       where endpoint_id = ${id} and tenant_id = ${p.tenantId}`;
    return { ...view(ep), secret };
  });
}
