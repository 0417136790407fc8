// The test clock of a tenant's test mode (spec: Endpoints > Test clock).
import { clockAdvanceBody, testClockResource, type ClockAdvanceBody } from '../../schemas/payment-intents.js';
import { defineRoute } from '../route.js';

export const testClockRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/test/clock',
    auth: 'api_key',
    scope: 'payments:read',
    summary: "The tenant's test clock",
    description: 'Test keys only; live keys get 403 `test_clock.unauthorized`.',
    tags: ['Test clock'],
    responses: { 200: { description: 'The clock', schema: testClockResource } },
    errors: ['test_clock.unauthorized'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.testClock.get(ctx.principal) }),
  }),
  defineRoute<ClockAdvanceBody>({
    method: 'POST',
    path: '/v1/test/clock/advance',
    auth: 'api_key',
    scope: 'payments:write',
    body: clockAdvanceBody,
    summary: "Move the tenant's test clock forward",
    description: '`{seconds: int > 0}` or `{to: timestamp later than now}`. Timers that become due (push-payment expiry, …) fire at once.',
    tags: ['Test clock'],
    responses: { 200: { description: 'The clock', schema: testClockResource } },
    errors: ['test_clock.unauthorized', 'test_clock.invalid_advance'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.testClock.advance(ctx.principal, ctx.body) }),
  }),
];
