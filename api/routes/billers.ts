// Billers and service payments (decisions.md §3), mobile recharges (the spec's recharge table),
// the recharge bag's movements and balance. docs/billers.md has the choices made where the spec is
// silent. The two money-moving POSTs validate their Idempotency-Key themselves (spec: "validated
// by the endpoint itself"), with their own conflict codes, so they declare no edge idempotency.
import { limitQuery, type LimitQuery } from '../../schemas/connect.js';
import {
  bagMovementList,
  balanceResource,
  billerList,
  billerListQuery,
  carrierList,
  carrierResource,
  enableCarrierBody,
  inquiryBody,
  inquiryResource,
  productList,
  rechargeBody,
  rechargeList,
  rechargeResource,
  servicePaymentBody,
  servicePaymentList,
  servicePaymentResource,
  type BillerListQuery,
  type EnableCarrierBody,
} from '../../schemas/billers.js';
import { createEndpoint } from '../../actors/webhook-endpoints.js';
import { createEndpointBody, endpointResource, type CreateEndpointBody } from '../../schemas/webhooks.js';
import { ApiError } from '../../kernel/errors.js';
import { requireScope } from '../auth.js';
import { defineRoute, type Reply } from '../route.js';

const LIMIT = 'List `limit`: default 100; a larger value is clamped to 500. Newest first.';
const KEY = 'Idempotency-Key (UUID) required, checked by this endpoint: a missing or malformed key is 400 `idempotency_key_required`; ';
const IDEM_HEADER = (conflict: string) => [{
  name: 'Idempotency-Key',
  required: true,
  description: `UUID, validated by this endpoint (400 \`idempotency_key_required\`). Same key + same request answers the same resource with \`Idempotency-Replayed: true\`; same key + other data is 409 \`${conflict}\`.`,
  schema: { type: 'string', format: 'uuid' },
}];
const REPLAYED = { 'Idempotency-Replayed': { description: '`true` when the answer is the resource of an earlier request with the same key.', schema: { type: 'string', enum: ['true'] } } };
const replayed = (r: { body: unknown; replayed: boolean }): Reply => ({ status: 200, body: r.body, headers: r.replayed ? { 'Idempotency-Replayed': 'true' } : undefined });

export const billerRoutes = [
  defineRoute<unknown, BillerListQuery>({
    method: 'GET',
    path: '/v1/billers',
    auth: 'api_key',
    scope: 'payments:read',
    query: billerListQuery,
    summary: 'List billers (global catalog)',
    description: 'cfe, telmex, izzi, agua_cdmx, with the label of their reference. Optional `category` filter.',
    tags: ['Billers'],
    responses: { 200: { description: 'The billers', schema: billerList } },
    handler: (ctx) => ({ status: 200, body: ctx.deps.billers.list(ctx.query.category) }),
  }),
  defineRoute<{ reference?: unknown }>({
    method: 'POST',
    path: '/v1/billers/{code}/inquiry',
    auth: 'api_key',
    scope: 'payments:read',
    body: inquiryBody,
    summary: 'Ask a biller for the amount due of a reference (no money moves)',
    description: 'No Idempotency-Key. The reference is checked against the biller\'s format (digits and length: cfe 12, telmex 10, izzi 8 to 10, agua_cdmx 16; decisions §5 has no check digit). Test mode: the amount due derives from the reference; all zeros is `biller.reference_not_found`. Live keys: `biller.livemode_unsupported` (no live biller aggregator).',
    tags: ['Billers'],
    responses: { 200: { description: 'The amount due', schema: inquiryResource } },
    errors: ['biller.missing_reference', 'biller.not_found', 'biller.invalid_reference', 'biller.reference_not_found', 'biller.livemode_unsupported'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.billers.inquiry(ctx.principal, ctx.params.code, ctx.body) }),
  }),
  defineRoute<Record<string, unknown>>({
    method: 'POST',
    path: '/v1/service_payments',
    auth: 'api_key',
    scope: 'payments:write',
    body: servicePaymentBody,
    summary: 'Pay a bill',
    description:
      KEY + 'same key + same body replays the payment (header `Idempotency-Replayed: true`); same key + another body is 409 `service_payment.idempotency_conflict`. ' +
      'Answers 200 with the payment `paid` (with `provider_ref`) or `failed` (with `failure_reason`). The amount paid is the amount due; `amount_minor`, when sent, must equal it. ' +
      'Test mode: a reference ending in 0000 is paid as `failed`. A paid bill books service_payment_clearing against biller_payable:<biller_code>.',
    tags: ['Billers'],
    headerParams: IDEM_HEADER('service_payment.idempotency_conflict'),
    responses: { 200: { description: 'The service payment', schema: servicePaymentResource, headers: REPLAYED } },
    errors: ['service_payment.missing_fields', 'idempotency_key_required', 'idempotency_key_in_progress', 'service_payment.idempotency_conflict', 'biller.not_found', 'biller.invalid_reference', 'biller.reference_not_found', 'service_payment.amount_mismatch', 'biller.livemode_unsupported'],
    handler: async (ctx) => replayed(await ctx.deps.billers.pay(ctx.principal, ctx.body ?? {}, ctx.header('idempotency-key'))),
  }),
  defineRoute<unknown, LimitQuery>({
    method: 'GET',
    path: '/v1/service_payments',
    auth: 'api_key',
    scope: 'payments:read',
    query: limitQuery,
    summary: 'List service payments',
    description: LIMIT,
    tags: ['Billers'],
    responses: { 200: { description: 'The service payments', schema: servicePaymentList } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.billers.listPayments(ctx.principal, ctx.query.limit) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/service_payments/{id}',
    auth: 'api_key',
    scope: 'payments:read',
    notFound: 'service_payment.not_found',
    summary: 'Read a service payment',
    tags: ['Billers'],
    responses: { 200: { description: 'The service payment', schema: servicePaymentResource } },
    errors: ['service_payment.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.billers.get(ctx.principal, ctx.params.id) }),
  }),

  // ---- recharges -----------------------------------------------------------------------------------
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
      return { status: 201, body: await createEndpoint(ctx.deps, p, { ...ctx.body, events: ['recharge.deposit.detected'] }) };
    },
  }),
];
