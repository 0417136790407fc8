// Service payments to billers (decisions.md §3). docs/billers.md has the choices made where the spec
// is silent. The money-moving POST validates its Idempotency-Key itself (spec: "validated by the
// endpoint itself"), with its own conflict code, so it declares no edge idempotency.
import { limitQuery, type LimitQuery } from '../../schemas/connect.js';
import { servicePaymentBody, servicePaymentList, servicePaymentResource } from '../../schemas/billers.js';
import { LIMIT, KEY, IDEM_HEADER, REPLAYED, replayed } from './common.js';
import { defineRoute } from '../route.js';


export const servicePaymentRoutes = [
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
];
