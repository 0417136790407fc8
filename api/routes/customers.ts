// Customers (decisions.md §3). Handlers map HTTP to commands and back.
import { createCustomer, getCustomer, listCustomers } from '../../actors/customers.js';
import { createCustomerBody, customerList, customerResource, listQuery, type CreateCustomerBody } from '../../schemas/customers.js';
import { defineRoute } from '../route.js';

export const customerRoutes = [
  defineRoute<CreateCustomerBody>({
    method: 'POST',
    path: '/v1/customers',
    auth: 'api_key',
    scope: 'payments:write',
    idempotency: 'optional',
    body: createCustomerBody,
    summary: 'Create a customer',
    description: 'All fields are optional; an empty body is allowed. An Idempotency-Key is honoured when sent.',
    tags: ['Customers'],
    responses: { 201: { description: 'The customer', schema: customerResource } },
    handler: async (ctx) => ({ status: 201, body: await createCustomer(ctx.deps, ctx.principal, ctx.body, ctx.idem) }),
  }),
  defineRoute<unknown, { limit?: number }>({
    method: 'GET',
    path: '/v1/customers',
    auth: 'api_key',
    scope: 'payments:read',
    query: listQuery,
    summary: 'List customers, newest first',
    tags: ['Customers'],
    responses: { 200: { description: 'The customers of this tenant and mode', schema: customerList } },
    handler: async (ctx) => ({ status: 200, body: await listCustomers(ctx.deps, ctx.principal, ctx.query.limit) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/customers/{id}',
    auth: 'api_key',
    scope: 'payments:read',
    notFound: 'customer.not_found',
    summary: 'Read a customer',
    tags: ['Customers'],
    responses: { 200: { description: 'The customer', schema: customerResource } },
    errors: ['customer.not_found'],
    handler: async (ctx) => ({ status: 200, body: await getCustomer(ctx.deps, ctx.principal, ctx.params.id) }),
  }),
];
