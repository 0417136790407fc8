// Reconciliation by hand (issue 29; actors/portal-reconcile.ts): match an open bank statement line to
// a succeeded charge, or undo a match. The portal's reconciliation review uses them (re-served under
// /portal/api/v1 like every /v1 route).
import { defineRoute, type RouteDef } from '../route.js';

const body = {
  type: 'object',
  additionalProperties: false,
  'x-error-code': 'bank_statement.invalid_manual_match',
  properties: {
    payment_intent_id: { type: 'string', format: 'uuid', 'x-error-code': 'bank_statement.invalid_manual_match' },
    receipt_code: { type: 'string', minLength: 1, maxLength: 20, 'x-error-code': 'bank_statement.invalid_manual_match' },
  },
} as const;

export const bankLineRoutes: RouteDef[] = [
  defineRoute<{ payment_intent_id?: string; receipt_code?: string }>({
    method: 'POST',
    path: '/v1/bank_statements/{id}/lines/{line}/match',
    auth: 'api_key',
    scope: 'invoices:write',
    notFound: 'bank_statement.not_found',
    body,
    summary: 'Match a bank statement line to a charge by hand',
    description:
      'For a credit line the automatic rules left open (or partial): the succeeded charge of the intent named by `payment_intent_id` or `receipt_code`. ' +
      'Posts the bank deposit entry for the line\'s amount (`bank:<bank>` debited, `connector_receivable:<connector>` credited) in the same transaction; `matched_by: "manual"`. ' +
      'A charge already matched to another line, or a line already matched, is 409 `bank_statement.line_match_conflict`. Scope `invoices:write` (the accountant\'s).',
    tags: ['Bank statements'],
    responses: { 200: { description: 'The line, matched', schema: { type: 'object' } } },
    errors: ['bank_statement.line_not_found', 'bank_statement.line_match_conflict', 'bank_statement.charge_not_found', 'bank_statement.invalid_manual_match'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.manualReconciliation.match(ctx.principal, ctx.params.id, ctx.params.line, ctx.body) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/bank_statements/{id}/lines/{line}/unmatch',
    auth: 'api_key',
    scope: 'invoices:write',
    notFound: 'bank_statement.not_found',
    summary: 'Undo the match of a bank statement line',
    description: 'The line is open again (`unmatched`); the deposit entry its match posted is reversed by a `bank.deposit_reversal` entry (the books are append-only). A `rematch` may match it again.',
    tags: ['Bank statements'],
    responses: { 200: { description: 'The line, unmatched', schema: { type: 'object' } } },
    errors: ['bank_statement.line_not_found', 'bank_statement.line_match_conflict'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.manualReconciliation.unmatch(ctx.principal, ctx.params.id, ctx.params.line) }),
  }),
];
