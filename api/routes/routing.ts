// Routing (issue 20; docs/routing.md): the tenant's connector table per mode, the decisions
// recorded with each attempt, the connectors' recent scores.
import type { PutConnectorBody } from '../../actors/routing.js';
import { balance } from '../../actors/balance.js';
import { decisionsQuery, putConnectorBody, routingConnectorList, routingConnectorResource, routingDecisionResource, routingScoreList } from '../../schemas/routing.js';
import { pageOf } from '../../schemas/common.js';
import { defineRoute } from '../route.js';

export const routingRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/routing/connectors',
    auth: 'api_key',
    scope: 'payments:read',
    summary: 'The connectors this key\'s mode routes to, with their fee tables',
    description: '`configured: false`: the tenant has no table of its own and the deployment\'s default applies (`sim` in test mode, nothing in live mode). Credentials are never answered: `credentials.configured` and a hint only.',
    tags: ['Routing'],
    responses: { 200: { description: 'The routing table', schema: routingConnectorList } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.routing.list(ctx.principal) }),
  }),
  defineRoute<PutConnectorBody>({
    method: 'PUT',
    path: '/v1/routing/connectors/{connector}',
    auth: 'api_key',
    scope: '*',
    body: putConnectorBody,
    summary: 'Enable or change one connector of the routing table (this key\'s mode)',
    description:
      'Each confirm goes to the cheapest eligible connector of the table (fee = round(total × bps / 10000) + fixed_minor, by method and, when known, card brand); a soft decline is retried on the next cheapest not yet tried. ' +
      'The first PUT of a mode replaces the deployment\'s default table with the tenant\'s own. Simulators (`sim`, `sim_b`) are refused for live keys; `conekta` and `openpay` need `credentials` the first time.',
    tags: ['Routing'],
    responses: { 200: { description: 'The connector as stored', schema: routingConnectorResource } },
    errors: ['routing.invalid_connector', 'routing.invalid_fees', 'routing.credentials_required', 'routing.invalid_credentials'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.routing.put(ctx.principal, ctx.params.connector!, ctx.body) }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/routing/connectors/{connector}',
    auth: 'api_key',
    scope: '*',
    summary: 'Remove a connector from the routing table (its sealed credentials with it)',
    tags: ['Routing'],
    responses: { 200: { description: 'Removed', schema: { type: 'object' } } },
    errors: ['routing.connector_not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.routing.remove(ctx.principal, ctx.params.connector!) }),
  }),
  defineRoute<unknown, { limit?: number; payment_intent?: string; starting_after?: string }>({
    method: 'GET',
    path: '/v1/routing/decisions',
    auth: 'api_key',
    scope: 'payments:read',
    query: decisionsQuery,
    summary: 'Routing decisions, newest first: one per attempt',
    description: 'Each: the intent and attempt, the candidates in ranking order with the fee each would charge (ineligible ones with a reason), the chosen connector, the reason (`cheapest`, `retry` after a soft decline, `dunning`), the default connector\'s fee and the saving, and the attempt\'s first answer and latency once known. Filter `payment_intent`; paging `limit` (20, ≤ 100) and `starting_after`.',
    tags: ['Routing'],
    responses: { 200: { description: 'A page of decisions', schema: pageOf(routingDecisionResource) } },
    errors: ['routing.invalid_query'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.routing.decisions(ctx.principal, ctx.query) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/routing/scores',
    auth: 'api_key',
    scope: 'payments:read',
    summary: 'Each connector\'s authorization rate and latency over the last 24 hours',
    description: 'From the first answer of each attempt routed in this mode: `approved` = captured, authorized or asking for payer action; latency = from the attempt\'s creation to that answer (queue wait included), p50 and p95 in ms.',
    tags: ['Routing'],
    responses: { 200: { description: 'Scores per connector', schema: routingScoreList } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.routing.scores(ctx.principal) }),
  }),
];

const ack = { type: 'object', properties: { object: { const: 'inbound_acknowledgement' }, received: { type: 'boolean' }, provider: { type: 'string' }, type: { type: 'string' }, matched: { type: 'boolean' } } } as const;

/** Inbound notices of the real card connectors (spec: `POST /webhooks/in/{provider}/{tenantId}`). */
export const cardWebhookRoutes = [
  defineRoute({
    method: 'POST',
    path: '/webhooks/in/conekta/{tenantId}',
    auth: 'none',
    body: { type: 'object' },
    signedBody: true,
    notFound: 'tenant.not_found',
    bodyLimit: 256 * 1024,
    summary: "Conekta's webhook delivery (provider evidence)",
    description:
      'Verified with the tenant\'s `webhook_public_key` (Conekta\'s webhook key, stored with the connector\'s credentials): header `DIGEST` is an RSA-SHA256 signature of the raw body. ' +
      'An event about an order (`order.*`, `charge.*`) becomes a notice about its attempt; the worker asks Conekta for the order before the intent changes. A chargeback event opens the attempt\'s dispute. Unknown orders are acknowledged (`matched: false`).',
    tags: ['Routing'],
    responses: { 200: { description: 'Acknowledgement', schema: ack } },
    errors: ['webhook_in.invalid_signature', 'webhook_in.invalid_body'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.cardWebhooks.conekta(ctx.params.tenantId!, ctx.rawBody ?? JSON.stringify(ctx.body), ctx.header('digest')) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/webhooks/in/openpay/{tenantId}',
    auth: 'none',
    body: { type: 'object' },
    notFound: 'tenant.not_found',
    bodyLimit: 256 * 1024,
    summary: "Openpay's webhook delivery (provider evidence)",
    description:
      'Openpay signs nothing: the delivery must carry the webhook\'s user and password (HTTP Basic) that the tenant stored as `webhook_user`/`webhook_password`, and the charge is re-read from Openpay before anything changes. `verification` pings are acknowledged. A chargeback event opens the attempt\'s dispute.',
    tags: ['Routing'],
    responses: { 200: { description: 'Acknowledgement', schema: ack } },
    errors: ['webhook_in.invalid_signature', 'webhook_in.invalid_body'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.cardWebhooks.openpay(ctx.params.tenantId!, ctx.body, ctx.header('authorization')) }),
  }),
];

export const balanceRoutes = [
  defineRoute<unknown, { currency?: string }>({
    method: 'GET',
    path: '/v1/balance',
    auth: 'api_key',
    scope: 'payments:read',
    query: { type: 'object', additionalProperties: false, properties: { currency: { type: 'string', maxLength: 3, 'x-error-code': 'balance.invalid_currency' } } },
    summary: 'What the connectors owe the merchant: pending and available, per currency and connector',
    description:
      'Orquesta holds no funds: this reads each connector\'s receivable in the ledger (captures less fees, refunds and disputes). ' +
      'A capture becomes `available` `settlement_delay_days` after it (by the account\'s clock; sim 1, sim_b 2, conekta 2, openpay 1), `pending` before. Optional `currency` filter.',
    tags: ['Routing'],
    responses: { 200: { description: 'The balance', schema: { type: 'object', required: ['object', 'available', 'pending', 'by_connector'], properties: { object: { const: 'balance' }, livemode: { type: 'boolean' }, as_of: { type: 'string', format: 'date-time' }, available: { type: 'array', items: { type: 'object' } }, pending: { type: 'array', items: { type: 'object' } }, by_connector: { type: 'array', items: { type: 'object' } } } } } },
    errors: ['balance.invalid_currency'],
    handler: async (ctx) => ({ status: 200, body: await balance(ctx.deps, ctx.principal, ctx.query) }),
  }),
];
