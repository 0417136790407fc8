// Webhook endpoints and the event stream (spec: Endpoints > Webhook endpoints and events), and the
// account-level endpoint registration of the billers spec.
import {
  createEndpointBody,
  endpointList,
  endpointResource,
  eventList,
  eventsQuery,
  type CreateEndpointBody,
} from '../../schemas/webhooks.js';
import { ApiError } from '../../kernel/errors.js';
import { requireScope } from '../auth.js';
import { defineRoute } from '../route.js';

/** The event stream's answer headers (documented in the OpenAPI description). */
const EVENT_STREAM_HEADERS = {
  'Orquesta-Latest-Event-Id': { description: 'The id of the newest event of the account in this mode (0: none yet), whether or not rows are listed: the stream\'s head.', schema: { type: 'integer', minimum: 0 } },
  'Orquesta-Events-Withheld': {
    description:
      'Present when rows are withheld: `no_active_endpoint` (the account has no active webhook endpoint in this mode), with the parameter `; local_endpoints=accepted` when this deployment accepts local endpoint URLs (http://localhost…) for this key (a development server, test mode; README "Webhooks on this machine").',
    schema: { type: 'string', enum: ['no_active_endpoint', 'no_active_endpoint; local_endpoints=accepted'] },
  },
  'Orquesta-Notice': { description: 'Present with Orquesta-Events-Withheld: why the list is empty and how to register an endpoint on this deployment.', schema: { type: 'string' } },
};

export const webhookRoutes = [
  defineRoute<CreateEndpointBody>({
    method: 'POST',
    path: '/v1/webhook_endpoints',
    auth: 'api_key',
    scope: 'webhooks:manage',
    body: createEndpointBody,
    summary: 'Register a webhook endpoint',
    description:
      'Answers 201 with the `whsec_` secret, shown only here. `url` must be https:// (plain http:// only for hosts in WEBHOOK_ALLOW_HTTP_HOSTS) with a DNS name or a public literal address; no DNS lookup happens here (a host that does not resolve yet is accepted). Every delivery connects only to public addresses (every IANA special-purpose range is refused; outside production, hosts in WEBHOOK_ALLOW_HTTP_HOSTS may be private or loopback), and redirects are not followed. On a development server bound to a loopback address, test-mode keys may also register http(s)://localhost, 127.0.0.1 and [::1] (never in production: README "Webhooks on this machine"). `events` (optional) is an allow-list; empty or omitted = the whole catalog. An Idempotency-Key is ignored.',
    tags: ['Webhooks'],
    responses: { 201: { description: 'The endpoint with its secret', schema: endpointResource } },
    handler: async (ctx) => ({ status: 201, body: await ctx.deps.webhookEndpoints.create(ctx.principal, ctx.body) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/webhook_endpoints',
    auth: 'api_key',
    scope: 'webhooks:manage',
    summary: 'List webhook endpoints (never with secrets)',
    description: 'Every endpoint of the key\'s mode, newest first: disabled ones and deleted ones too (`active: false`, with `disabled_reason`; `deleted` for a deleted one: the row is kept, decisions §7). Never carries secrets.',
    tags: ['Webhooks'],
    responses: { 200: { description: 'The endpoints', schema: endpointList } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.webhookEndpoints.list(ctx.principal) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/webhook_endpoints/{id}',
    auth: 'api_key',
    scope: 'webhooks:manage',
    notFound: 'webhook_endpoint.not_found',
    summary: 'Read a webhook endpoint (never with its secret)',
    tags: ['Webhooks'],
    responses: { 200: { description: 'The endpoint', schema: endpointResource } },
    errors: ['webhook_endpoint.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.webhookEndpoints.get(ctx.principal, ctx.params.id) }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/webhook_endpoints/{id}',
    auth: 'api_key',
    scope: 'webhooks:manage',
    notFound: 'webhook_endpoint.not_found',
    summary: 'Delete a webhook endpoint (logical: it stops receiving, the row is kept)',
    tags: ['Webhooks'],
    responses: { 200: { description: '`{id, object, deleted: true}`' } },
    errors: ['webhook_endpoint.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.webhookEndpoints.delete(ctx.principal, ctx.params.id) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/webhook_endpoints/{id}/rotate_secret',
    auth: 'api_key',
    scope: 'webhooks:manage',
    notFound: 'webhook_endpoint.not_found',
    summary: 'Rotate the signing secret',
    description: 'Returns the new secret (shown only here). For 24 hours deliveries carry one `v1` signature per secret (`t=…,v1=<new>,v1=<previous>`).',
    tags: ['Webhooks'],
    responses: { 200: { description: 'The endpoint with its new secret', schema: endpointResource } },
    errors: ['webhook_endpoint.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.webhookEndpoints.rotateSecret(ctx.principal, ctx.params.id) }),
  }),
  defineRoute<unknown, { after_id?: number; limit?: number }>({
    method: 'GET',
    path: '/v1/events',
    auth: 'api_key',
    scope: 'payments:read',
    query: eventsQuery,
    summary: 'The event stream',
    description:
      'Ascending by integer `id`, after the exclusive cursor `after_id` (default 0); `limit` default 50, larger values clamped to 200. Rows appear only while the tenant (in this mode) has at least one active webhook endpoint. `delivered` is true once every delivery of the event succeeded. ' +
      'Every answer carries `Orquesta-Latest-Event-Id`, the id of the newest event of the account in this mode (0: none), listed or not: a follower that wants only new events starts from it (`orquesta listen` does). ' +
      'When rows are withheld because no endpoint is active, the answer says so in `Orquesta-Events-Withheld: no_active_endpoint` (with `; local_endpoints=accepted` when this deployment takes http://localhost endpoint URLs for this key) and in words in `Orquesta-Notice`; the body keeps the list shape.',
    tags: ['Webhooks'],
    responses: { 200: { description: 'A page of events', schema: eventList, headers: EVENT_STREAM_HEADERS } },
    // The envelopes keep `metadata: null` (the spec's exception to null omission); nothing else here is null.
    handler: async (ctx) => {
      const page = await ctx.deps.events.list(ctx.principal, ctx.query.after_id ?? 0, ctx.query.limit ?? 50);
      const headers: Record<string, string> = { 'Orquesta-Latest-Event-Id': String(page.latestId) };
      if (page.withheld) {
        headers['Orquesta-Events-Withheld'] = page.withheld.localEndpoints ? `${page.withheld.reason}; local_endpoints=accepted` : page.withheld.reason;
        headers['Orquesta-Notice'] = page.withheld.notice;
      }
      return { status: 200, keepNulls: true, body: page.list, headers };
    },
  }),
  defineRoute<CreateEndpointBody>({
    method: 'POST',
    path: '/v1/account/webhook_endpoints',
    auth: 'none',
    body: createEndpointBody,
    summary: 'Register an account-level webhook endpoint (recharge deposit events) with the Service-Account-Key header',
    description:
      'spec: Authentication: account-level webhooks of an own account (recharge deposit events) are registered with the account\'s credential in header `Service-Account-Key` (an API key with `webhooks:manage`; no Authorization header). ' +
      'Registers an endpoint of the key\'s account that receives `recharge.deposit.detected` (the only event it takes; `events`, when sent, must be that one). Like every endpoint of the account, it receives deposit events of both environments: check `livemode` before crediting anything. Answers 201 with the `whsec_` secret, shown only here; list, delete and rotate it with /v1/webhook_endpoints.',
    tags: ['Recharges'],
    headerParams: [{ name: 'Service-Account-Key', required: true, description: 'The account\'s API key (`sk_test_…` or `sk_live_…`) with scope `webhooks:manage`.', schema: { type: 'string' } }],
    responses: { 201: { description: 'The endpoint with its secret', schema: endpointResource } },
    errors: ['api_key.missing_or_invalid', 'insufficient_scope', 'webhook_endpoint.invalid_url', 'webhook_endpoint.invalid_events'],
    handler: async (ctx) => {
      const raw = ctx.header('service-account-key');
      if (!raw) throw new ApiError('api_key.missing_or_invalid');
      const p = await ctx.deps.keys.authenticate(`Bearer ${raw.trim()}`);
      requireScope(p, 'webhooks:manage');
      const events = ctx.body.events ?? [];
      if (events.some((e) => e !== 'recharge.deposit.detected')) {
        throw new ApiError('webhook_endpoint.invalid_events', 'An account-level endpoint takes `recharge.deposit.detected` only; register other events with POST /v1/webhook_endpoints.');
      }
      return { status: 201, body: await ctx.deps.webhookEndpoints.create(p, { ...ctx.body, events: ['recharge.deposit.detected'] }) };
    },
  }),
];
