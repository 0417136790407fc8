// Mobile recharges (the spec's recharge table): carriers, products, recharges, the recharge bag's
// movements and balance. docs/billers.md has the choices made where the spec is silent. The
// money-moving POST validates its Idempotency-Key itself (spec: "validated by the endpoint itself"),
// with its own conflict code, so it declares no edge idempotency.
import { limitQuery, type LimitQuery } from '../../schemas/connect.js';
import {
  bagMovementList,
  balanceResource,
  carrierList,
  carrierResource,
  enableCarrierBody,
  productList,
  rechargeBody,
  rechargeList,
  rechargeResource,
  type EnableCarrierBody,
} from '../../schemas/billers.js';
import { LIMIT, KEY, IDEM_HEADER, REPLAYED, replayed } from './common.js';
import { defineRoute } from '../route.js';


export const rechargeRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/recharge-carriers',
    auth: 'api_key',
    scope: 'payments:read',
    summary: 'List recharge carriers (global catalog)',
    tags: ['Recharges'],
    responses: { 200: { description: 'The carriers', schema: carrierList } },
    handler: (ctx) => ({ status: 200, body: ctx.deps.recharges.carriers() }),
  }),
  defineRoute<EnableCarrierBody>({
    method: 'POST',
    path: '/v1/recharge-carriers/{code}/enable',
    auth: 'api_key',
    scope: 'payments:write',
    body: enableCarrierBody,
    summary: 'Enable (or disable) a carrier for this account',
    description: 'Body optional `{active}` (default true; false disables). No Idempotency-Key (setting a flag is idempotent). Answers the carrier with `active` = whether it is now enabled for the account.',
    tags: ['Recharges'],
    responses: { 200: { description: 'The carrier', schema: carrierResource } },
    errors: ['recharge.invalid_carrier', 'recharge.carrier_not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.recharges.enable(ctx.principal, ctx.params.code, ctx.body) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/recharge-products',
    auth: 'api_key',
    scope: 'payments:read',
    summary: 'List recharge products of the carriers enabled by this account',
    tags: ['Recharges'],
    responses: { 200: { description: 'The products', schema: productList } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.recharges.products(ctx.principal) }),
  }),
  defineRoute<Record<string, unknown>>({
    method: 'POST',
    path: '/v1/recharges',
    auth: 'api_key',
    scope: 'payments:write',
    body: rechargeBody,
    summary: 'Recharge a phone (airtime or data)',
    description:
      'Checks, in this order: live key (`recharge.livemode_unsupported`, before anything is stored or booked), fields, ' + KEY.slice(0, -2) + ', product, phone (10 digits), carrier enabled, payment intent (the account\'s, succeeded, amount = face amount), then the key: ' +
      'same key + same product, phone and payment intent returns the same recharge (`Idempotency-Replayed: true`); other data is 409 `recharge.idempotency_conflict`; a replay while the delivery is executing is 409 `recharge.retry_conflict`. ' +
      'Answers 200 with the recharge `pending`, `delivered` or `failed`. A timeout toward the aggregator leaves it `pending`; a replay never re-executes the delivery: it asks the aggregator and resolves with its evidence. ' +
      '`delivered` books recharge_clearing (face) against recharge_payable:<carrier> (face - commission) and merchant_recharge_income (commission). ' +
      'Test mode: a phone ending in 0000 fails; one ending in 1111 times out (pending; a replay resolves it delivered). The phone is answered only masked.',
    tags: ['Recharges'],
    headerParams: IDEM_HEADER('recharge.idempotency_conflict'),
    responses: { 200: { description: 'The recharge', schema: rechargeResource, headers: REPLAYED } },
    errors: [
      'recharge.livemode_unsupported', 'recharge.missing_fields', 'idempotency_key_required', 'recharge.product_not_found', 'recharge.invalid_phone', 'recharge.carrier_not_enabled',
      'recharge.payment_intent_not_found', 'recharge.payment_intent_not_succeeded', 'recharge.payment_intent_amount_mismatch', 'recharge.idempotency_conflict', 'recharge.retry_conflict',
    ],
    handler: async (ctx) => replayed(await ctx.deps.recharges.create(ctx.principal, ctx.body ?? {}, ctx.header('idempotency-key'))),
  }),
  defineRoute<unknown, LimitQuery>({
    method: 'GET',
    path: '/v1/recharges',
    auth: 'api_key',
    scope: 'payments:read',
    query: limitQuery,
    summary: 'List recharges',
    description: LIMIT,
    tags: ['Recharges'],
    responses: { 200: { description: 'The recharges', schema: rechargeList } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.recharges.list(ctx.principal, ctx.query.limit) }),
  }),
  defineRoute<unknown, LimitQuery>({
    method: 'GET',
    path: '/v1/recharges/bag-movements',
    auth: 'api_key',
    scope: 'payments:read',
    query: limitQuery,
    summary: 'List the movements of the account\'s recharge bag',
    description: 'As the bag reader stored them (every 15 minutes, over the aggregator\'s reports of today and yesterday). Newest first by `registered_at`; `limit` default 100, clamped to 500. Each credit movement also produced one `recharge.deposit.detected` event.',
    tags: ['Recharges'],
    responses: { 200: { description: 'The movements', schema: bagMovementList } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.recharges.movements(ctx.principal, ctx.query.limit) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/recharges/{id}',
    auth: 'api_key',
    scope: 'payments:read',
    notFound: 'recharge.not_found',
    summary: 'Read a recharge',
    tags: ['Recharges'],
    responses: { 200: { description: 'The recharge', schema: rechargeResource } },
    errors: ['recharge.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.recharges.get(ctx.principal, ctx.params.id) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/recharge-balance/refresh',
    auth: 'api_key',
    scope: 'payments:read',
    summary: 'Ask the aggregator for the bag\'s balance now',
    description: 'The confirmation of deposits that a movement report omits. No body, no Idempotency-Key. Live keys: `recharge.livemode_unsupported`.',
    tags: ['Recharges'],
    responses: { 200: { description: 'The balance', schema: balanceResource } },
    errors: ['recharge.livemode_unsupported'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.recharges.refreshBalance(ctx.principal) }),
  }),
];
