// Connect accounts and transfers (decisions.md §3) and the operator's account actions (§2).
// docs/connect.md has the choices made where the spec is silent.
import {
  accountList,
  accountResource,
  createAccountBody,
  createTransferBody,
  limitQuery,
  transferList,
  transferResource,
  type CreateAccountBody,
  type CreateTransferBody,
  type LimitQuery,
} from '../../schemas/connect.js';
import { LIMIT } from './common.js';
import { defineRoute } from '../route.js';


export const connectRoutes = [
  // ---- Connect accounts ----------------------------------------------------------------------------
  defineRoute<CreateAccountBody>({
    method: 'POST',
    path: '/v1/connect/accounts',
    auth: 'api_key',
    scope: 'payments:write',
    idempotency: 'optional',
    body: createAccountBody,
    summary: 'Create a Connect account from an approved application',
    description: 'One account per application (`connect.account_conflict`). The settlement CLABE is the application\'s, shown only masked. `connector_key` default `stp` (simulated in test mode).',
    tags: ['Connect'],
    responses: { 201: { description: 'The account, active', schema: accountResource } },
    errors: ['connect.invalid_application_id', 'connect.application_not_found', 'connect.application_not_approved', 'connect.account_conflict', 'payout.invalid_connector'],
    handler: async (ctx) => ({ status: 201, body: await ctx.deps.connect.createAccount(ctx.principal, ctx.body, ctx.idem) }),
  }),
  defineRoute<unknown, LimitQuery>({
    method: 'GET',
    path: '/v1/connect/accounts',
    auth: 'api_key',
    scope: 'payments:read',
    query: limitQuery,
    summary: 'List Connect accounts',
    description: LIMIT,
    tags: ['Connect'],
    responses: { 200: { description: 'The accounts', schema: accountList } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.connect.listAccounts(ctx.principal, ctx.query.limit) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/connect/accounts/{id}',
    auth: 'api_key',
    scope: 'payments:read',
    notFound: 'connect.account_not_found',
    summary: 'Read a Connect account',
    tags: ['Connect'],
    responses: { 200: { description: 'The account', schema: accountResource } },
    errors: ['connect.account_not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.connect.getAccount(ctx.principal, ctx.params.id) }),
  }),
  ...(['suspend', 'reactivate'] as const).map((action) =>
    defineRoute({
      method: 'POST',
      path: `/admin/tenants/{tenantId}/connect/accounts/{id}/${action}`,
      auth: 'admin',
      notFound: 'connect.account_not_found',
      summary: action === 'suspend' ? 'Operator: suspend a Connect account (it refuses transfers)' : 'Operator: reactivate a suspended Connect account',
      description: 'Idempotent. Payouts already under way are not stopped.',
      tags: ['Operator'],
      responses: { 200: { description: 'The account', schema: accountResource } },
      errors: ['connect.account_not_found', 'connect.concurrent_modification'],
      handler: async (ctx) => ({ status: 200, body: await ctx.deps.connect.setAccountStatus(ctx.params.tenantId, ctx.params.id, action) }),
    }),
  ),

  // ---- Connect transfers ---------------------------------------------------------------------------
  defineRoute<CreateTransferBody>({
    method: 'POST',
    path: '/v1/connect/transfers',
    auth: 'api_key',
    scope: 'payments:write',
    idempotency: 'required',
    body: createTransferBody,
    summary: 'Split a succeeded charge between Connect accounts',
    description:
      '`application_fee_minor + Σ splits[].amount_minor = charge_amount_minor` exactly (`connect.split_mismatch`). The payment intent must be this account\'s and `succeeded`; a charge is never split for more than it captured (less refunds), also under concurrent requests (`connect.invalid_charge`). ' +
      'Each split becomes a payout to the sub-merchant\'s CLABE (`payout_id` on the split); a split is `dispersing` while its payout is processing, then the payout\'s outcome (`paid`, `failed`, `returned`). Ledger: the sale divided into `platform_fee_income` and one `connect_payable:<account>` per split. Suspended accounts refuse transfers.',
    tags: ['Connect'],
    responses: { 201: { description: 'The transfer, split', schema: transferResource } },
    errors: [
      'connect.invalid_payment_intent', 'connect.invalid_charge', 'connect.invalid_currency', 'connect.missing_allocations', 'connect.invalid_allocation',
      'connect.split_mismatch', 'connect.account_not_found', 'connect.account_suspended', 'payout.no_route',
    ],
    handler: async (ctx) => ({ status: 201, body: await ctx.deps.connect.createTransfer(ctx.principal, ctx.body, ctx.idem) }),
  }),
  defineRoute<unknown, LimitQuery>({
    method: 'GET',
    path: '/v1/connect/transfers',
    auth: 'api_key',
    scope: 'payments:read',
    query: limitQuery,
    summary: 'List Connect transfers with their splits',
    description: LIMIT,
    tags: ['Connect'],
    responses: { 200: { description: 'The transfers', schema: transferList } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.connect.listTransfers(ctx.principal, ctx.query.limit) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/connect/transfers/{id}',
    auth: 'api_key',
    scope: 'payments:read',
    notFound: 'connect.transfer_not_found',
    summary: 'Read a Connect transfer with its splits',
    tags: ['Connect'],
    responses: { 200: { description: 'The transfer', schema: transferResource } },
    errors: ['connect.transfer_not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.connect.getTransfer(ctx.principal, ctx.params.id) }),
  }),
];
