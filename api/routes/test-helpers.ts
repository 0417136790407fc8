// Test helpers for the merchant's own test key (decisions §7), modelled on Stripe's test_helpers:
// pay a push payment, approve or fail a 3-D Secure challenge. Rules in actors/test-helpers.ts. And the
// operator's simulation of an inbound payment (decisions §2).
import { simulateInboundBody } from '../../schemas/payment-intents.js';
import { defineRoute, type RouteDef } from '../route.js';

const resultSchema = {
  type: 'object',
  required: ['object', 'action', 'payment_intent_id', 'attempt_id', 'livemode'],
  properties: {
    object: { const: 'test_helper_result' },
    action: { enum: ['pay', 'three_d_secure.approve', 'three_d_secure.fail'] },
    payment_intent_id: { type: 'string', format: 'uuid' },
    attempt_id: { type: 'string', format: 'uuid' },
    livemode: { const: false },
  },
} as const;

const common = {
  method: 'POST' as const,
  auth: 'api_key' as const,
  scope: 'payments:write' as const,
  idempotency: 'optional' as const,
  notFound: 'payment_intent.not_found' as const,
  tags: ['Test helpers'],
  errors: ['payment_intent.not_found', 'test_helpers.unauthorized', 'test_helpers.state_conflict'] as const,
};
const after =
  ' Test mode only: a live key answers 403 `test_helpers.unauthorized` (as the test clock does). The answer comes first; the worker then moves the intent with the provider\'s word, ' +
  'so the outcome arrives as it would in production: the `payment_intent.*` webhook, or a later GET. The operator\'s `POST /admin/tenants/{tenantId}/simulate-inbound` does the same with the admin key.';

const threeDs = (outcome: 'approve' | 'fail') =>
  defineRoute({
    ...common,
    errors: [...common.errors],
    path: `/v1/test_helpers/payment_intents/{id}/three_d_secure/${outcome}`,
    summary: outcome === 'approve' ? 'Test helper: the cardholder passes the 3-D Secure challenge' : 'Test helper: the cardholder fails the 3-D Secure challenge',
    description:
      `For a card intent in \`requires_action\` with \`next_action.type = redirect\` (\`tok_sim_3ds\`): what the shopper does on the redirect page. ` +
      (outcome === 'approve' ? 'The charge is then captured: `succeeded`.' : 'The attempt is then declined `authentication_failed`: the intent fails.') +
      after,
    responses: { 200: { description: 'Received; the intent moves asynchronously', schema: resultSchema } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.testHelpers.threeDSecure(ctx.principal, ctx.params.id, outcome) }),
  });

export const testHelperRoutes: RouteDef[] = [
  defineRoute({
    ...common,
    errors: [...common.errors],
    path: '/v1/test_helpers/payment_intents/{id}/pay',
    summary: 'Test helper: the payer pays the SPEI transfer, OXXO voucher or CoDi QR',
    description: 'For a `spei`, `oxxo` or `codi` intent in `requires_action`: the payment the payer makes outside the API arrives, in full. The intent then `succeeded`.' + after,
    responses: { 200: { description: 'Received; the intent moves asynchronously', schema: resultSchema } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.testHelpers.pay(ctx.principal, ctx.params.id) }),
  }),
  threeDs('approve'),
  threeDs('fail'),
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
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.inbound.simulate(ctx.params.tenantId, ctx.body.provider_ref) }),
  }),
];
