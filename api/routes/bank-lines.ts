// Reconciliation by hand (issue 29; actors/portal-reconcile.ts): match an open bank statement line to
// a succeeded charge, or undo a match. The portal's reconciliation review uses them (re-served under
// /portal/api/v1 like every /v1 route).
import { defineRoute, type RouteDef } from '../route.js';
import { lineResource } from '../../schemas/bank-statements.js';

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
      'Posts the bank deposit entry for the line\'s amount in the same transaction, as a matched line of an import does (docs/bank-statements.md): `bank_suspense` debited where the import posted the open line there (else `bank:<bank>`), `connector_receivable:<connector>` credited net of the charge\'s fee and `connector_fees_payable:<connector>` with the fee; `matched_by: "manual"`. ' +
      'A charge already matched to another line, a line already matched or a `duplicate` line is 409 `bank_statement.line_match_conflict`. Scope `invoices:write` (the accountant\'s).',
    tags: ['Bank statements'],
    responses: { 200: { description: 'The line, matched', schema: lineResource } },
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
    description: 'The line (matched or partial) is open again (`unmatched`); the deposit entry its match posted is reversed by a `bank.deposit_reversal` entry (the books are append-only), the bank\'s side back in `bank_suspense` where the import posted open lines there. A `rematch` may match it again. A line not matched is 409 `bank_statement.line_match_conflict`.',
    tags: ['Bank statements'],
    responses: { 200: { description: 'The line, unmatched', schema: lineResource } },
    errors: ['bank_statement.line_not_found', 'bank_statement.line_match_conflict'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.manualReconciliation.unmatch(ctx.principal, ctx.params.id, ctx.params.line) }),
  }),
];
