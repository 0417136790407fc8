// Webhook endpoints and the event stream (spec: Endpoints > Webhook endpoints and events).
import { listEvents } from '../../actors/events.js';
import { createEndpoint, deleteEndpoint, listEndpoints, rotateSecret } from '../../actors/webhook-endpoints.js';
import { createEndpointBody, endpointList, endpointResource, eventList, eventsQuery, type CreateEndpointBody } from '../../schemas/webhooks.js';
import { defineRoute } from '../route.js';

export const webhookRoutes = [
  defineRoute<CreateEndpointBody>({
    method: 'POST',
    path: '/v1/webhook_endpoints',
    auth: 'api_key',
    scope: 'webhooks:manage',
    body: createEndpointBody,
    summary: 'Register a webhook endpoint',
    description:
      'Answers 201 with the `whsec_` secret, shown only here. `url` must be https:// and resolve to a public address (plain http:// and private addresses only for hosts in WEBHOOK_ALLOW_HTTP_HOSTS); the address is checked again at every delivery and redirects are not followed. `events` (optional) is an allow-list; empty or omitted = the whole catalog. An Idempotency-Key is ignored.',
    tags: ['Webhooks'],
    responses: { 201: { description: 'The endpoint with its secret', schema: endpointResource } },
    handler: async (ctx) => ({ status: 201, body: await createEndpoint(ctx.deps, ctx.principal, ctx.body) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/webhook_endpoints',
    auth: 'api_key',
    scope: 'webhooks:manage',
    summary: 'List webhook endpoints (never with secrets)',
    description: 'Includes disabled endpoints (`active: false`, with `disabled_reason`); deleted ones are not listed.',
    tags: ['Webhooks'],
    responses: { 200: { description: 'The endpoints', schema: endpointList } },
    handler: async (ctx) => ({ status: 200, body: await listEndpoints(ctx.deps, ctx.principal) }),
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
    handler: async (ctx) => ({ status: 200, body: await deleteEndpoint(ctx.deps, ctx.principal, ctx.params.id) }),
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
    handler: async (ctx) => ({ status: 200, body: await rotateSecret(ctx.deps, ctx.principal, ctx.params.id) }),
  }),
  defineRoute<unknown, { after_id?: number; limit?: number }>({
    method: 'GET',
    path: '/v1/events',
    auth: 'api_key',
    scope: 'payments:read',
    query: eventsQuery,
    summary: 'The event stream',
    description: 'Ascending by integer `id`, after the exclusive cursor `after_id` (default 0); `limit` default 50, larger values clamped to 200. Rows appear only while the tenant (in this mode) has at least one active webhook endpoint. `delivered` is true once every delivery of the event succeeded.',
    tags: ['Webhooks'],
    responses: { 200: { description: 'A page of events', schema: eventList } },
    // The envelopes keep `metadata: null` (the spec's exception to null omission); nothing else here is null.
    handler: async (ctx) => ({ status: 200, keepNulls: true, body: await listEvents(ctx.deps, ctx.principal, ctx.query.after_id ?? 0, ctx.query.limit ?? 50) }),
  }),
];
