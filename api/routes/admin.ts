// Operator API (decisions.md §2), behind X-Admin-Key.
import { createApiKey, createTenant, revokeApiKey } from '../../actors/tenants.js';
import { apiKeyResource, createApiKeyBody, createTenantBody, tenantResource, type CreateApiKeyBody, type CreateTenantBody } from '../../schemas/admin.js';
import { defineRoute } from '../route.js';
import { simulateInbound } from '../../actors/inbound.js';
import { createRule } from '../../actors/risk.js';
import { ApiError } from '../errors.js';
import { riskReviewResource, riskRuleBody, simulateInboundBody, type RiskRuleBody } from '../../schemas/payment-intents.js';

async function assertTenant(sql: import('../../ops/db.js').Sql, id: string) {
  if (!(await sql`select 1 from tenants where id = ${id}`).length) throw new ApiError('tenant.not_found', `No tenant ${id}.`);
}

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
    handler: async (ctx) => {
      await assertTenant(ctx.deps.sql, ctx.params.tenantId);
      const numeric = ['gt', 'gte', 'lt', 'lte'].includes(ctx.body.operator);
      if (numeric && typeof ctx.body.value !== 'number') throw new ApiError('risk_rule.invalid', `Operator ${ctx.body.operator} needs a number value.`);
      if (ctx.body.operator === 'in' && !Array.isArray(ctx.body.value)) throw new ApiError('risk_rule.invalid', 'Operator in needs an array value.');
      return { status: 201, body: await createRule(ctx.deps.sql, ctx.params.tenantId, ctx.body as never) };
    },
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
