// What the portal added to /v1 (issue 29; docs/portal.md), for API users too: a payment's activity,
// a webhook endpoint's delivery log, and resending a delivery. Re-served under /portal/api/v1 like
// every /v1 route.
import { defineRoute, type RouteDef } from '../route.js';

const obj = { type: 'object' } as const;

export const activityRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET',
    path: '/v1/payment_intents/{id}/activity',
    auth: 'api_key',
    scope: 'payments:read',
    notFound: 'payment_intent.not_found',
    summary: "A payment's activity: history, events, webhook deliveries, trace id",
    description:
      'The timeline of the intent and of its attempts and refunds (their entity history, oldest first), the events they emitted with each event\'s webhook deliveries ' +
      '(status, attempts, last answer), and `trace_id`: the OpenTelemetry trace of the transitions that wrote the events (null when tracing was off).',
    tags: ['Payment intents'],
    responses: { 200: { description: 'The activity', schema: { ...obj, required: ['object', 'payment_intent_id', 'history', 'events'], properties: { object: { const: 'payment_intent_activity' }, payment_intent_id: { type: 'string', format: 'uuid' }, trace_id: { type: ['string', 'null'] }, history: { type: 'array', items: obj }, events: { type: 'array', items: obj } } } } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.portalViews.intentActivity(ctx.principal, ctx.params.id) }),
  }),
  defineRoute<unknown, { limit?: number; status?: 'pending' | 'succeeded' | 'discarded' }>({
    method: 'GET',
    path: '/v1/webhook_endpoints/{id}/deliveries',
    auth: 'api_key',
    scope: 'webhooks:manage',
    notFound: 'webhook_endpoint.not_found',
    query: { type: 'object', additionalProperties: false, properties: { limit: { type: 'integer', minimum: 1, maximum: 100 }, status: { enum: ['pending', 'succeeded', 'discarded'] } } },
    summary: "An endpoint's delivery log, newest first",
    description: 'Each delivery of an event to this endpoint: `status` (pending while retried, succeeded, discarded when the endpoint was disabled), `attempts`, the last HTTP status or error, when it was queued and delivered.',
    tags: ['Webhooks'],
    responses: { 200: { description: 'Deliveries', schema: { ...obj, properties: { object: { const: 'list' }, data: { type: 'array', items: obj }, has_more: { type: 'boolean' } } } } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.portalViews.deliveries(ctx.principal, ctx.params.id, ctx.query) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/webhook_deliveries/{delivery}/resend',
    auth: 'api_key',
    scope: 'webhooks:manage',
    summary: 'Resend a webhook delivery',
    description:
      'The delivery (its numeric `id` from the delivery log) starts over: pending, no attempts, a new 72-hour retry window from now (the tenant\'s clock in test mode), sent at once by a worker. ' +
      'The same event and `event_id` (receivers deduplicate on it). Its endpoint must be active; a delivery being sent right now answers 409 `webhook_delivery.resend_conflict`.',
    tags: ['Webhooks'],
    responses: { 200: { description: 'The delivery, pending again', schema: obj } },
    errors: ['webhook_delivery.not_found', 'webhook_delivery.resend_conflict'],
    handler: async (ctx) => {
      return { status: 200, body: await ctx.deps.portalViews.resend(ctx.principal, ctx.params.delivery) };
    },
  }),
];
