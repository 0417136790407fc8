// Payment intents (spec: Endpoints > Payment intents).
import {
  confirmBody,
  confirmBodyProblem,
  createPaymentIntentBody,
  getIntentQuery,
  listIntentsQuery,
  type ListIntentsQuery,
  paymentIntentResource,
  riskReviewResource,
  type ConfirmBody,
  type CreatePaymentIntentBody,
} from '../../schemas/payment-intents.js';
import { ApiError } from '../../kernel/errors.js';
import { defineRoute } from '../route.js';
import { pageOf } from '../../schemas/common.js';

const intent200 = (description: string) => ({ 200: { description, schema: paymentIntentResource } });

export const paymentIntentRoutes = [
  defineRoute<CreatePaymentIntentBody>({
    method: 'POST',
    path: '/v1/payment_intents',
    auth: 'api_key',
    scope: 'payments:write',
    idempotency: 'required',
    // The create is one statement that includes the idempotency record: a repeat fails on it and is
    // replayed; a repeat refused by a check of stored state changed since (customer deleted, terminal
    // deactivated) is answered with the stored response too (api/edge/idempotency.ts).
    idempotencyLookup: 'at_commit',
    body: createPaymentIntentBody,
    summary: 'Create a payment intent',
    description: 'Answers 201 with the intent in `requires_payment_method`, a new `client_secret` and a `receipt_code` (`W-XXXXX`, unique per tenant). Creation is recorded in the intent history and is not dispatched as a webhook. `customer_id` (optional) ties the charge to one of this key\'s customers. ' +
      'A card-present or counter CoDi charge carries `metadata.terminal_id`: the id of an active terminal of this account (terminals are registered and activated in the portal); any other value answers `payment_intent.terminal_not_active`, the same answer for an unknown, inactive or another account\'s terminal.',
    tags: ['Payment intents'],
    responses: { 201: { description: 'The new intent', schema: paymentIntentResource } },
    errors: ['customer.not_found', 'payment_intent.terminal_not_active'],
    handler: async (ctx) => ({ status: 201, body: await ctx.deps.payments.create(ctx.principal, ctx.body, ctx.idem) }),
  }),
  defineRoute<unknown, ListIntentsQuery>({
    method: 'GET',
    path: '/v1/payment_intents',
    auth: 'api_key',
    scope: 'payments:read',
    query: listIntentsQuery,
    summary: 'List payment intents, newest first',
    description:
      'Stripe-style paging: `limit` (default 10, clamped to 100), `starting_after` = the last id of the previous page, `has_more`. ' +
      'Filters: `status`, `customer`, `created[gte|gt|lte|lt]` (ISO 8601), `metadata[branch]`, and (the portal\'s search) `receipt_code`, `amount_minor`, `method` (an attempt of that method), `customer_email`. Reads may come from the replica.',
    tags: ['Payment intents'],
    responses: { 200: { description: 'A page of intents', schema: pageOf(paymentIntentResource) } },
    errors: ['payment_intent.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.payments.list(ctx.principal, ctx.query) }),
  }),
  defineRoute<unknown, { expand?: 'attempts' }>({
    method: 'GET',
    path: '/v1/payment_intents/{id}',
    auth: 'api_key',
    scope: 'payments:read',
    query: getIntentQuery,
    notFound: 'payment_intent.not_found',
    summary: 'Read a payment intent',
    description: '`?expand=attempts` adds the attempts.',
    tags: ['Payment intents'],
    responses: intent200('The intent'),
    errors: ['payment_intent.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.payments.get(ctx.principal, ctx.params.id, ctx.query.expand === 'attempts') }),
  }),
  defineRoute<ConfirmBody>({
    method: 'POST',
    path: '/v1/payment_intents/{id}/confirm',
    auth: 'api_key',
    scope: 'payments:write',
    idempotency: 'required',
    // The confirm reads (terminal, saved card, routing table, risk rules) and commits one transaction
    // that holds the idempotency record; the provider is called by the worker after it. A repeat
    // finds the intent past confirm (refused before its commit) or fails on the record: either way
    // it is answered with the stored response (api/edge/idempotency.ts), one query less per confirm.
    idempotencyLookup: 'at_commit',
    body: confirmBody,
    notFound: 'payment_intent.not_found',
    summary: 'Confirm: create an attempt and send it to the provider',
    description:
      'Answers 200 with `status = processing` and the new attempt `pending`; the outcome arrives later (webhook or GET). ' +
      'A risk rule with action `review` answers 200 with a `risk_review` object instead, and the intent waits in `requires_confirmation` for the operator. ' +
      'A soft decline with attempts left (3 per intent) returns the intent to `requires_payment_method` for another confirm. ' +
      '`return_url` (optional, as Stripe\'s): where the 3-D Secure page (`next_action.redirect_url`) sends the shopper back once the bank decided. ' +
      'An intent whose `metadata.terminal_id` no longer names an active terminal of this account (deactivated since its creation) answers `payment_intent.terminal_not_active`.',
    tags: ['Payment intents'],
    responses: { 200: { description: 'The intent, processing, with its attempts (or a risk_review)', schema: { oneOf: [paymentIntentResource, riskReviewResource] } } },
    errors: ['payment_intent.not_found', 'payment_intent.not_confirmable', 'payment_intent.no_route', 'payment_intent.concurrent_modification', 'payment_intent.blocked_by_risk', 'payment_method.not_found', 'payment_intent.invalid_return_url', 'payment_intent.terminal_not_active'],
    handler: async (ctx) => {
      const problem = confirmBodyProblem(ctx.body);
      if (problem) throw new ApiError('request.invalid_body', problem);
      await ctx.deps.checkout.checkReturnUrl(ctx.principal.tenantId, ctx.body.return_url);
      return { status: 200, body: await ctx.deps.payments.confirm(ctx.principal, ctx.params.id, ctx.body, ctx.idem) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/payment_intents/{id}/capture',
    auth: 'api_key',
    scope: 'payments:write',
    idempotency: 'required',
    // One transaction holding the idempotency record, nothing sent before it (the void or capture job runs after): as confirm.
    idempotencyLookup: 'at_commit',
    notFound: 'payment_intent.not_found',
    summary: 'Capture an authorized attempt',
    description: 'The intent stays `processing` until the provider confirms the capture; then it is `succeeded`.',
    tags: ['Payment intents'],
    responses: intent200('The intent, still processing'),
    errors: ['payment_intent.not_found', 'attempt.not_capturable', 'payment_intent.concurrent_modification'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.payments.capture(ctx.principal, ctx.params.id, ctx.idem) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/payment_intents/{id}/cancel',
    auth: 'api_key',
    scope: 'payments:write',
    idempotency: 'required',
    // One transaction holding the idempotency record, nothing sent before it (the void or capture job runs after): as confirm.
    idempotencyLookup: 'at_commit',
    notFound: 'payment_intent.not_found',
    summary: 'Cancel a payment intent',
    description: 'Allowed in requires_payment_method, requires_confirmation, requires_action, and processing with an authorized attempt (the authorization is voided). Cancel of a canceled intent is a no-op 200. Otherwise 409 `payment_intent.cancel_conflict`.',
    tags: ['Payment intents'],
    responses: intent200('The canceled intent'),
    errors: ['payment_intent.not_found', 'payment_intent.cancel_conflict', 'payment_intent.concurrent_modification'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.payments.cancel(ctx.principal, ctx.params.id, ctx.idem) }),
  }),
];
