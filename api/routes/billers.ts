// Billers: the catalogue and a reference inquiry (decisions.md §3). docs/billers.md.
import { billerList, billerListQuery, inquiryBody, inquiryResource, type BillerListQuery } from '../../schemas/billers.js';
import { defineRoute } from '../route.js';

export const billerRoutes = [
  defineRoute<unknown, BillerListQuery>({
    method: 'GET',
    path: '/v1/billers',
    auth: 'api_key',
    scope: 'payments:read',
    query: billerListQuery,
    summary: 'List billers (global catalog)',
    description: 'cfe, telmex, izzi, agua_cdmx, with the label of their reference. Optional `category` filter.',
    tags: ['Billers'],
    responses: { 200: { description: 'The billers', schema: billerList } },
    handler: (ctx) => ({ status: 200, body: ctx.deps.billers.list(ctx.query.category) }),
  }),
  defineRoute<{ reference?: unknown }>({
    method: 'POST',
    path: '/v1/billers/{code}/inquiry',
    auth: 'api_key',
    scope: 'payments:read',
    body: inquiryBody,
    summary: 'Ask a biller for the amount due of a reference (no money moves)',
    description: 'No Idempotency-Key. The reference is checked against the biller\'s format (digits and length: cfe 12, telmex 10, izzi 8 to 10, agua_cdmx 16; decisions §5 has no check digit). Test mode: the amount due derives from the reference; all zeros is `biller.reference_not_found`. Live keys: `biller.livemode_unsupported` (no live biller aggregator).',
    tags: ['Billers'],
    responses: { 200: { description: 'The amount due', schema: inquiryResource } },
    errors: ['biller.missing_reference', 'biller.not_found', 'biller.invalid_reference', 'biller.reference_not_found', 'biller.livemode_unsupported'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.billers.inquiry(ctx.principal, ctx.params.code, ctx.body) }),
  }),
];
