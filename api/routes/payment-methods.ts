// A customer's saved payment methods (decisions.md §3–4).
import { paymentMethodList, paymentMethodResource, savePaymentMethodBody, type SavePaymentMethodBody } from '../../schemas/refunds.js';
import { defineRoute } from '../route.js';

export const paymentMethodRoutes = [
  defineRoute<SavePaymentMethodBody>({
    method: 'POST',
    path: '/v1/customers/{id}/payment_methods',
    auth: 'api_key',
    scope: 'payments:write',
    idempotency: 'required',
    body: savePaymentMethodBody,
    notFound: 'customer.not_found',
    summary: 'Save a payment method for a customer (card on file)',
    description: 'Answers 201 with the method `pending`; a worker activates it (`active`, with `brand` and `last4`). Nothing of the card but brand and last4 is stored.',
    tags: ['Customers'],
    responses: { 201: { description: 'The method, pending', schema: paymentMethodResource } },
    errors: ['customer.not_found', 'payment_method.invalid_token', 'payment_method.no_route'],
    handler: async (ctx) => ({ status: 201, body: await ctx.deps.methods.save(ctx.principal, ctx.params.id, ctx.body, ctx.idem) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/customers/{id}/payment_methods',
    auth: 'api_key',
    scope: 'payments:read',
    notFound: 'customer.not_found',
    summary: "List a customer's saved methods (detached included)",
    tags: ['Customers'],
    responses: { 200: { description: 'The methods', schema: paymentMethodList } },
    errors: ['customer.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.methods.list(ctx.principal, ctx.params.id) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/customers/{id}/payment_methods/{paymentMethodId}/detach',
    auth: 'api_key',
    scope: 'payments:write',
    notFound: 'payment_method.not_found',
    summary: 'Detach a saved method (idempotent)',
    tags: ['Customers'],
    responses: { 200: { description: 'The method, detached', schema: paymentMethodResource } },
    errors: ['customer.not_found', 'payment_method.not_found', 'payment_method.concurrent_modification'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.methods.detach(ctx.principal, ctx.params.id, ctx.params.paymentMethodId) }),
  }),
];
