// Routing (issue 20; docs/routing.md): the tenant's connector table per mode, the decisions
// recorded with each attempt, the connectors' recent scores.
import type { PutConnectorBody } from '../../actors/routing.js';
import { decisionsQuery, putConnectorBody, routingConnectorDetail, routingConnectorList, routingConnectorResource, routingDecisionResource, routingScoreList } from '../../schemas/routing.js';
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
  defineRoute({
    method: 'GET',
    path: '/v1/routing/connectors/{connector}',
    auth: 'api_key',
    scope: 'payments:read',
    summary: 'One connector of the routing table (this key\'s mode), with what its provider needs from the tenant',
    description:
      'As in the list, plus `webhook` (the URL to register at the provider; Conekta\'s webhook public key as stored; Openpay\'s webhook user and the verification code of its last registration ping, to type into Openpay\'s dashboard) and `status` ' +
      '(`invalid_credentials` when the provider refused the stored credentials, `unreachable` when calls got no answer for minutes). Never a private key or password.',
    tags: ['Routing'],
    responses: { 200: { description: 'The connector', schema: routingConnectorDetail } },
    errors: ['routing.connector_not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.routing.get(ctx.principal, ctx.params.connector!) }),
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
