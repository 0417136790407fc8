// Risk: the operator's rules and decisions on held payments (decisions.md §2), the merchant's read of a
// risk review.
import { riskReviewResource, riskRuleBody, type RiskRuleBody } from '../../schemas/payment-intents.js';
import { defineRoute } from '../route.js';

export const riskRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/risk_reviews/{id}',
    auth: 'api_key',
    scope: 'payments:read',
    notFound: 'risk_review.not_found',
    summary: 'Read a risk review',
    tags: ['Risk'],
    responses: { 200: { description: 'The review', schema: riskReviewResource } },
    errors: ['risk_review.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.risk.review(ctx.principal.tenantId, ctx.params.id, ctx.principal.livemode) }),
  }),

  defineRoute<RiskRuleBody>({
    method: 'POST',
    path: '/admin/tenants/{tenantId}/risk_rules',
    auth: 'admin',
    body: riskRuleBody,
    notFound: 'tenant.not_found',
    summary: 'Add a risk rule (`amount_minor gte 5000000 block`)',
    description: 'Fields: amount_minor, tip_minor, total_minor, currency, payment_method, metadata.<key>. Operators: eq, neq, gt, gte, lt, lte (numbers), in (array). A block rule wins over a review rule. Applies to both modes of the tenant.',
    tags: ['Operator'],
    responses: { 201: { description: 'The rule' } },
    errors: ['tenant.not_found'],
    handler: async (ctx) => ({ status: 201, body: await ctx.deps.risk.createRule(ctx.params.tenantId, ctx.body as never) }),
  }),
  ...(['approve', 'reject'] as const).map((decision) =>
    defineRoute({
      method: 'POST',
      path: `/admin/tenants/{tenantId}/risk_reviews/{reviewId}/${decision}`,
      auth: 'admin',
      notFound: 'risk_review.not_found',
      summary: decision === 'approve' ? 'Approve a risk review: the intent proceeds (attempt created)' : 'Reject a risk review: the intent fails',
      tags: ['Operator'],
      responses: { 200: { description: 'The review', schema: riskReviewResource } },
      errors: ['risk_review.not_found', 'risk_review.resolution_conflict', 'payment_intent.concurrent_modification'],
      handler: async (ctx) => ({ status: 200, body: await ctx.deps.payments.decideReview(ctx.params.tenantId, ctx.params.reviewId, decision) }),
    }),
  ),
];
