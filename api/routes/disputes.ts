// Disputes (decisions.md §3–4).
import { disputeList } from '../../schemas/refunds.js';
import { defineRoute } from '../route.js';

export const disputeRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/disputes',
    auth: 'api_key',
    scope: 'payments:read',
    summary: 'List disputes',
    description: 'In test mode the sim provider opens a dispute for a charge made with `tok_sim_dispute`.',
    tags: ['Disputes'],
    responses: { 200: { description: 'The disputes', schema: disputeList } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.disputes.list(ctx.principal) }),
  }),
];
