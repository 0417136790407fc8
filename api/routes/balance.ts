// The account's balance per currency (spec: Endpoints > Balance).
import { balance } from '../../actors/balance.js';
import { defineRoute } from '../route.js';

export const balanceRoutes = [
  defineRoute<unknown, { currency?: string }>({
    method: 'GET',
    path: '/v1/balance',
    auth: 'api_key',
    scope: 'payments:read',
    query: { type: 'object', additionalProperties: false, properties: { currency: { type: 'string', maxLength: 3, 'x-error-code': 'balance.invalid_currency' } } },
    summary: 'What the connectors owe the merchant: pending and available, per currency and connector',
    description:
      'Orquesta holds no funds: this reads each connector\'s receivable in the ledger (captures less fees, refunds and disputes). ' +
      'A capture becomes `available` `settlement_delay_days` after it (by the account\'s clock; sim 1, sim_b 2, conekta 2, openpay 1), `pending` before. Optional `currency` filter.',
    tags: ['Routing'],
    responses: { 200: { description: 'The balance', schema: { type: 'object', required: ['object', 'available', 'pending', 'by_connector'], properties: { object: { const: 'balance' }, livemode: { type: 'boolean' }, as_of: { type: 'string', format: 'date-time' }, available: { type: 'array', items: { type: 'object' } }, pending: { type: 'array', items: { type: 'object' } }, by_connector: { type: 'array', items: { type: 'object' } } } } } },
    errors: ['balance.invalid_currency'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.balance.get(ctx.principal, ctx.query) }),
  }),
];
