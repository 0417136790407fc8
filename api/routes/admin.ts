// Operator API (decisions.md §2), behind X-Admin-Key.
import { createApiKey, createTenant, revokeApiKey, updateSettings } from '../../actors/tenants.js';
import { apiKeyResource, createApiKeyBody, createTenantBody, tenantResource, type CreateApiKeyBody, type CreateTenantBody } from '../../schemas/admin.js';
import { defineRoute } from '../route.js';
import { simulateInbound } from '../../actors/inbound.js';
import { createRule } from '../../actors/risk.js';
import { riskReviewResource, riskRuleBody, simulateInboundBody, type RiskRuleBody } from '../../schemas/payment-intents.js';
import { approveBody, refundApprovalResource, refundResource, tenantSettingsBody, type ApproveBody, type TenantSettingsBody } from '../../schemas/refunds.js';


export const adminRoutes = [
  defineRoute<CreateTenantBody>({
    method: 'POST',
    path: '/admin/tenants',
    auth: 'admin',
    body: createTenantBody,
    summary: 'Create a tenant with one sk_test_ and one sk_live_ key (scope "*")',
    description: 'The full keys are shown only in this response; only their hashes are stored.',
    tags: ['Operator'],
    responses: { 201: { description: 'The tenant and its two keys', schema: tenantResource } },
    handler: async (ctx) => ({ status: 201, body: await createTenant(ctx.deps, ctx.body.name) }),
  }),
  defineRoute<CreateApiKeyBody>({
    method: 'POST',
    path: '/admin/tenants/{tenantId}/api_keys',
    auth: 'admin',
    body: createApiKeyBody,
    notFound: 'tenant.not_found',
    summary: 'Issue an API key with the given mode and scopes',
    tags: ['Operator'],
    responses: { 201: { description: 'The key, shown in full only here', schema: apiKeyResource } },
    errors: ['tenant.not_found'],
    handler: async (ctx) => ({
      status: 201,
      body: await createApiKey(ctx.deps, ctx.params.tenantId, ctx.body.livemode, [...ctx.body.scopes]),
    }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/admin/tenants/{tenantId}/api_keys/{keyId}',
    auth: 'admin',
    notFound: 'api_key.not_found',
    summary: 'Revoke an API key; it answers 401 on every API process at once',
    tags: ['Operator'],
    responses: { 200: { description: 'The revoked key', schema: apiKeyResource } },
    errors: ['tenant.not_found', 'api_key.not_found'],
    handler: async (ctx) => {
      const k = await revokeApiKey(ctx.deps, ctx.params.tenantId, ctx.params.keyId);
      return { status: 200, body: { id: k.id, object: 'api_key', revoked: true } };
    },
  }),
  defineRoute<{ provider_ref: string }>({
    method: 'POST',
    path: '/admin/tenants/{tenantId}/simulate-inbound',
    auth: 'admin',
    body: simulateInboundBody,
    notFound: 'tenant.not_found',
    summary: 'Simulate an incoming payment (SPEI, CoDi, OXXO) or a completed 3-D Secure step',
    description: '`provider_ref` is `attempts[0].provider_ref` of the intent. The worker treats it as provider evidence: a `requires_action` intent becomes `succeeded`.',
    tags: ['Operator'],
    responses: { 200: { description: 'Acknowledgement; the intent moves asynchronously' } },
    errors: ['tenant.not_found', 'attempt.not_found'],
    handler: async (ctx) => ({ status: 200, body: await simulateInbound(ctx.deps, ctx.params.tenantId, ctx.body.provider_ref) }),
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
    handler: async (ctx) => ({ status: 201, body: await createRule(ctx.deps.sql, ctx.params.tenantId, ctx.body as never) }),
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
  defineRoute<TenantSettingsBody>({
    method: 'PATCH',
    path: '/admin/tenants/{tenantId}/settings',
    auth: 'admin',
    body: tenantSettingsBody,
    notFound: 'tenant.not_found',
    summary: "Change a tenant's settings (refund four-eyes threshold)",
    description: '`refund_approval_threshold_minor`: refunds above it answer 202 with a pending refund_approval; `refund_approval_disabled: true` removes it.',
    tags: ['Operator'],
    responses: { 200: { description: 'The settings' } },
    errors: ['tenant.not_found'],
    handler: async (ctx) => ({ status: 200, body: await updateSettings(ctx.deps, ctx.params.tenantId, ctx.body) }),
  }),
  defineRoute<ApproveBody>({
    method: 'POST',
    path: '/admin/tenants/{tenantId}/refund_approvals/{approvalId}/approve',
    auth: 'admin',
    body: approveBody,
    notFound: 'refund_approval.not_found',
    summary: 'Approve a refund (four-eyes): the refund is created and executed',
    description: 'The approver must differ from the API key that requested the refund. Answers the refund after the provider call (succeeded or failed).',
    tags: ['Operator'],
    responses: { 200: { description: 'The executed refund', schema: refundResource } },
    errors: ['refund_approval.not_found', 'refund_approval.resolution_conflict', 'refund_approval.approver_conflict', 'refund.exceeds_refundable', 'refund.nothing_refundable', 'refund.attempt_not_refundable'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.refunds.approve(ctx.params.tenantId, ctx.params.approvalId, ctx.body.approver) }),
  }),
  defineRoute<ApproveBody>({
    method: 'POST',
    path: '/admin/tenants/{tenantId}/refund_approvals/{approvalId}/reject',
    auth: 'admin',
    body: approveBody,
    notFound: 'refund_approval.not_found',
    summary: 'Reject a refund approval: nothing is refunded',
    tags: ['Operator'],
    responses: { 200: { description: 'The approval, rejected', schema: refundApprovalResource } },
    errors: ['refund_approval.not_found', 'refund_approval.resolution_conflict'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.refunds.reject(ctx.params.tenantId, ctx.params.approvalId, ctx.body.approver) }),
  }),
];
