// Refunds (decisions.md §3–4); their four-eyes approvals are in approvals.ts.
import {
  createRefundBody,
  listRefundsQuery,
  refundApprovalResource,
  refundResource,
  type CreateRefundBody,
} from '../../schemas/refunds.js';
import { defineRoute } from '../route.js';
import { pageOf } from '../../schemas/common.js';

export const refundRoutes = [
  defineRoute<CreateRefundBody>({
    method: 'POST',
    path: '/v1/refunds',
    auth: 'api_key',
    scope: 'refunds:write',
    idempotency: 'required',
    body: createRefundBody,
    summary: 'Refund a captured attempt',
    description:
      '`amount_minor` omitted = what remains refundable (charged minus live refunds). Answers 201 with the refund `requested`; the outcome arrives later (`refund.succeeded` / `refund.failed`). ' +
      'Above the tenant\'s approval threshold it answers 202 with a pending `refund_approval` instead (four-eyes). Test mode: a refund whose cents are 98 is declined by the sim provider.',
    tags: ['Refunds'],
    responses: { 201: { description: 'The refund, requested', schema: refundResource }, 202: { description: 'A pending refund approval', schema: refundApprovalResource } },
    errors: ['attempt.not_found', 'refund.invalid_amount', 'refund.attempt_not_refundable', 'refund.currency_mismatch', 'refund.nothing_refundable', 'refund.exceeds_refundable'],
    handler: async (ctx) => {
      const r = await ctx.deps.refunds.create(ctx.principal, ctx.body, ctx.idem);
      return { status: r.status, body: r.body };
    },
  }),
  defineRoute<unknown, { limit?: number; starting_after?: string; payment_intent?: string; attempt?: string }>({
    method: 'GET',
    path: '/v1/refunds',
    auth: 'api_key',
    scope: 'payments:read',
    query: listRefundsQuery,
    summary: 'List refunds, newest first',
    description: 'Stripe-style paging: `limit` (default 10, clamped to 100), `starting_after` = the last id of the previous page, `has_more`. Filters: `payment_intent`, `attempt`.',
    tags: ['Refunds'],
    responses: { 200: { description: 'A page of refunds', schema: pageOf(refundResource) } },
    errors: ['refund.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.refunds.list(ctx.principal, ctx.query) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/refunds/{id}',
    auth: 'api_key',
    scope: 'payments:read',
    notFound: 'refund.not_found',
    summary: 'Read a refund',
    tags: ['Refunds'],
    responses: { 200: { description: 'The refund', schema: refundResource } },
    errors: ['refund.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.refunds.get(ctx.principal, ctx.params.id) }),
  }),
];
