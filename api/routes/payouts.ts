// Payouts (decisions.md §3), the operator's payout settings and simulations (§2), the tenant's STP
// credentials and STP's status callbacks. docs/connect.md has the choices made where the spec is silent.
import {
  createPayoutBody,
  credentialsResource,
  limitQuery,
  payoutApprovalResource,
  payoutList,
  payoutResource,
  payoutSettingsBody,
  stpCallbackAck,
  stpCredentialsBody,
  type CreatePayoutBody,
  type LimitQuery,
  type PayoutSettingsBody,
  type StpCredentialsBody,
} from '../../schemas/connect.js';
import { LIMIT } from './common.js';
import { defineRoute } from '../route.js';


export const payoutRoutes = [
  // ---- payouts -------------------------------------------------------------------------------------
  defineRoute<CreatePayoutBody>({
    method: 'POST',
    path: '/v1/payouts',
    auth: 'api_key',
    scope: 'payouts:write',
    idempotency: 'required',
    // The create (or, above the threshold, the approval request) is one statement with the
    // idempotency record (actors/payouts.ts create): a repeat fails on it and is replayed; one
    // query less per payout (bench/cost).
    idempotencyLookup: 'at_commit',
    body: createPayoutBody,
    summary: 'Send a SPEI payout from your own account',
    description:
      'Money leaves the merchant\'s own account at the rail (no custody). Answers 201 with the payout `processing`; a worker sends the order (STP registraOrden; simulated in test mode) and records `provider_ref`, `tracking_key` (clave de rastreo) and, on failure, `failure_reason`. Outcome events: `payout.paid`, `payout.failed`, and `payout.returned` for a devolución after success. ' +
      'A payout is never sent twice: its rail key and clave de rastreo derive from its id, and a payout that may have reached the rail is asked about before anything is sent again. ' +
      'Above the tenant\'s approval threshold it answers 202 with a pending `payout_approval` instead (four-eyes). Test mode: `beneficiary_name` `FAIL` fails with a `failure_reason`; `SLOW` is paid after about 2 s. Live mode needs STP credentials (`payout.no_route` otherwise).',
    tags: ['Payouts'],
    responses: { 201: { description: 'The payout, processing', schema: payoutResource }, 202: { description: 'A pending payout approval', schema: payoutApprovalResource } },
    errors: ['payout.missing_fields', 'payout.invalid_amount', 'payout.invalid_currency', 'payout.unsupported_currency', 'payout.invalid_clabe', 'payout.invalid_beneficiary_rfc', 'payout.invalid_reference', 'payout.invalid_connector', 'payout.no_route'],
    handler: async (ctx) => {
      const r = await ctx.deps.payouts.create(ctx.principal, ctx.body as never, ctx.idem);
      return { status: r.status, body: r.body };
    },
  }),
  defineRoute<unknown, LimitQuery>({
    method: 'GET',
    path: '/v1/payouts',
    auth: 'api_key',
    scope: 'payments:read',
    query: limitQuery,
    summary: 'List payouts',
    description: LIMIT,
    tags: ['Payouts'],
    responses: { 200: { description: 'The payouts', schema: payoutList } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.payouts.list(ctx.principal, ctx.query.limit) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/payouts/{id}',
    auth: 'api_key',
    scope: 'payments:read',
    notFound: 'payout.not_found',
    summary: 'Read a payout',
    tags: ['Payouts'],
    responses: { 200: { description: 'The payout', schema: payoutResource } },
    errors: ['payout.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.payouts.get(ctx.principal, ctx.params.id) }),
  }),
  defineRoute<PayoutSettingsBody>({
    method: 'PATCH',
    path: '/admin/tenants/{tenantId}/payout_settings',
    auth: 'admin',
    body: payoutSettingsBody,
    notFound: 'tenant.not_found',
    summary: "Operator: a tenant's payout four-eyes threshold",
    description: '`payout_approval_threshold_minor`: payouts above it answer 202 with a pending payout_approval; `payout_approval_disabled: true` removes it. Split payouts of Connect transfers are not held.',
    tags: ['Operator'],
    responses: { 200: { description: 'The settings' } },
    errors: ['tenant.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.payouts.updateSettings(ctx.params.tenantId, ctx.body) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/tenants/{tenantId}/payouts/{id}/simulate-return',
    auth: 'admin',
    notFound: 'payout.not_found',
    summary: 'Operator simulation (test mode): the beneficiary bank returns a paid payout',
    description: 'The simulated rail turns the order into a devolución; the worker takes it as the rail\'s evidence and the payout becomes `returned` (event `payout.returned`, ledger reversal).',
    tags: ['Operator'],
    responses: { 200: { description: 'Acknowledgement; the payout moves asynchronously' } },
    errors: ['payout.not_found', 'payout.not_returnable'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.payouts.simulateReturn(ctx.params.tenantId, ctx.params.id) }),
  }),

  // ---- STP ----------------------------------------------------------------------------------------
  defineRoute<StpCredentialsBody>({
    method: 'PUT',
    path: '/v1/connectors/stp/credentials',
    auth: 'api_key',
    scope: 'payouts:write',
    body: stpCredentialsBody,
    summary: 'Store your STP credentials for this mode (never readable back)',
    description: '`empresa` (company code STP assigned), `cuenta_ordenante` (your STP account: payouts leave it), the company RSA private key (PEM) and its passphrase. The key must open with the passphrase. Stored encrypted; answers only the company, the masked account and the public key fingerprint. Live payouts need them.',
    tags: ['Payouts'],
    responses: { 200: { description: 'The stored credentials, without secrets', schema: credentialsResource } },
    errors: ['payout_credentials.invalid'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.payoutCredentials.putStp(ctx.principal, ctx.body) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/connectors/stp/credentials',
    auth: 'api_key',
    scope: 'payouts:write',
    summary: 'Read which STP credentials are stored (no secrets)',
    tags: ['Payouts'],
    responses: { 200: { description: 'The stored credentials, without secrets', schema: credentialsResource } },
    errors: ['payout_credentials.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.payoutCredentials.getStp(ctx.principal) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/webhooks/in/stp/{tenantId}',
    auth: 'none',
    body: { type: 'object' },
    notFound: 'tenant.not_found',
    bodyLimit: 64 * 1024,
    summary: "STP's status callback of a sent order (provider evidence)",
    description:
      'STP posts `{id, empresa, folioOrigen, estado, causaDevolucion, tsLiquidacion}` (or its legacy `{id, Estado, Detalle}`). STP does not sign callbacks (it restricts them by network), so the body is a claim: it must name the tenant\'s STP company, it is stored before it is acknowledged, and the worker asks STP for the order\'s state (a signed query) before the payout changes. Answers `{"mensaje": "recibido"}`.',
    tags: ['Payouts'],
    responses: { 200: { description: 'Acknowledgement STP expects', schema: stpCallbackAck } },
    errors: ['tenant.not_found', 'stp_callback.invalid'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.payouts.stpCallback(ctx.params.tenantId, JSON.stringify(ctx.body)) }),
  }),
];
