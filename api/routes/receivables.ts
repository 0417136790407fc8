// Receivables (spec: Endpoints > Receivables; decisions.md §3 paths; docs/receivables.md). Handlers
// map HTTP to the receivables capability; the rules live in actors/receivables.ts.
import {
  ageingQuery,
  ageingResource,
  createReceivableBody,
  receivableListQuery,
  receivablePage,
  receivableResource,
  statementQuery,
  statementResource,
  whatsappResource,
  type AgeingQuery,
  type CreateReceivableBody,
  type ReceivableListQuery,
  type StatementQuery,
} from '../../schemas/receivables.js';
import { defineRoute, type RouteDef } from '../route.js';

const TAGS = ['Receivables'];

export const receivableRoutes: RouteDef[] = [
  defineRoute<CreateReceivableBody>({
    method: 'POST',
    path: '/v1/receivables',
    auth: 'api_key',
    scope: 'payments:write',
    idempotency: 'required',
    body: createReceivableBody,
    summary: 'Create a receivable (and its single-use payment link)',
    description:
      'What a customer owes. Creates, in the same transaction, a single-use payment link (`payment_link_url` = `/pay/{slug}`, the public checkout: card, SPEI, CoDi, OXXO) and the durable timer that marks it `overdue` ' +
      'by the tenant\'s clock (test clock with a test key). A replay with the same Idempotency-Key answers the same receivable and link. ' +
      '`customer_name`, `customer_email`, `concepto` missing → `receivable.missing_fields`; the four fiscal fields go together or none (`receivable.incomplete_fiscal_receptor`): with them, paying it stamps a PUE CFDI automatically ' +
      '(the tenant\'s fiscal profile); with `ppd_invoice_id`, paying it stamps the REP of that PPD invoice instead. `customer_phone` is answered masked. Only MXN can be paid end to end.',
    tags: TAGS,
    responses: { 201: { description: 'The receivable', schema: receivableResource } },
    errors: ['receivable.missing_fields', 'receivable.invalid_amount', 'receivable.invalid_currency', 'receivable.invalid_date', 'receivable.incomplete_fiscal_receptor', 'receivable.invalid_fiscal_receptor', 'receivable.invalid_phone', 'receivable.invalid_invoice'],
    handler: async (ctx) => ({ status: 201, body: await ctx.deps.receivables.create(ctx.principal, ctx.body, ctx.idem) }),
  }),
  defineRoute<unknown, ReceivableListQuery>({
    method: 'GET',
    path: '/v1/receivables',
    auth: 'api_key',
    scope: 'payments:read',
    query: receivableListQuery,
    summary: 'List receivables, newest first (opaque cursor)',
    description:
      'Filters: `status` (derived by the tenant\'s clock), `customer_email` (case-insensitive), `due_from` ≤ due_date < `due_to`. Paged like the report listings: request `?cursor=<next_cursor>` while `has_more` is true; ' +
      '`limit` defaults to 20, clamped to 100; a changed or foreign cursor is `reports.invalid_cursor`.',
    tags: TAGS,
    responses: { 200: { description: 'A page of receivables', schema: receivablePage } },
    errors: ['reports.invalid_cursor'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.receivables.list(ctx.principal, ctx.query) }),
  }),
  defineRoute<unknown, StatementQuery>({
    method: 'GET',
    path: '/v1/receivables/statement',
    auth: 'api_key',
    scope: 'payments:read',
    query: statementQuery,
    summary: 'Customer statement: every receivable of a customer with open, overdue and paid totals',
    description: 'Statuses and totals by the tenant\'s clock (`as_of`). One currency per statement (`currency`, default MXN). A customer with no receivables answers an empty statement with zero totals.',
    tags: TAGS,
    responses: { 200: { description: 'The statement', schema: statementResource } },
    errors: ['receivable.missing_fields', 'receivable.invalid_currency'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.receivables.statement(ctx.principal, ctx.query) }),
  }),
  defineRoute<unknown, AgeingQuery>({
    method: 'GET',
    path: '/v1/receivables/ageing',
    auth: 'api_key',
    scope: 'payments:read',
    query: ageingQuery,
    summary: 'Ageing by customer: unpaid past-due amounts in 0–30, 31–60, 61–90 and 90+ days',
    description:
      'One row per customer and currency with unpaid receivables past due by the tenant\'s clock (`as_of`); whole days past due: 0–30 (due today counts as 0), 31–60, 61–90, over 90. ' +
      'Receivables not yet due, paid or canceled are not aged. Largest total first.',
    tags: TAGS,
    responses: { 200: { description: 'The ageing rows', schema: ageingResource } },
    errors: ['receivable.invalid_currency'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.receivables.ageing(ctx.principal, ctx.query) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/receivables/{id}',
    auth: 'api_key',
    scope: 'payments:read',
    notFound: 'receivable.not_found',
    summary: 'Read a receivable',
    tags: TAGS,
    responses: { 200: { description: 'The receivable', schema: receivableResource } },
    errors: ['receivable.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.receivables.get(ctx.principal, ctx.params.id) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/receivables/{id}/cancel',
    auth: 'api_key',
    scope: 'payments:write',
    idempotency: 'optional',
    notFound: 'receivable.not_found',
    summary: 'Cancel a receivable: its payment link takes no more payments',
    description:
      'Ours (the spec names no cancel operation). `open` or `overdue` → `canceled`, in the same transaction the link is deactivated (its page says it is no longer active); the intent the link had opened ' +
      '(a SPEI CLABE, an OXXO voucher) is canceled right after. Canceling a canceled receivable answers it unchanged. A paid receivable, or one whose link payment is `processing` right now, is `receivable.cancel_conflict` (409). Emits `receivable.canceled`.',
    tags: TAGS,
    responses: { 200: { description: 'The canceled receivable', schema: receivableResource } },
    errors: ['receivable.not_found', 'receivable.cancel_conflict', 'receivable.concurrent_modification'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.receivables.cancel(ctx.principal, ctx.params.id, ctx.idem) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/receivables/{id}/whatsapp_link',
    auth: 'api_key',
    scope: 'payments:write',
    notFound: 'receivable.not_found',
    summary: 'A WhatsApp link that sends the customer the payment link',
    description:
      '`{url}` = `https://wa.me/<number>?text=<message>`: the customer\'s phone in international form (10 digits are Mexican: 52 is prefixed) and a Spanish message with the amount, the concepto, the due date (Mexico City) and the absolute payment-link URL (`PUBLIC_BASE_URL` + `/pay/{slug}`). ' +
      'Nothing is sent: the merchant opens the link. Without `customer_phone`: `receivable.no_phone`.',
    tags: TAGS,
    responses: { 200: { description: 'The link', schema: whatsappResource } },
    errors: ['receivable.not_found', 'receivable.no_phone'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.receivables.whatsappLink(ctx.principal, ctx.params.id) }),
  }),
];
