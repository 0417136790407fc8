// Four-eyes approvals (decisions.md §2): refunds and payouts above the tenant's threshold wait for an
// operator. The merchant reads an approval with its API key; the operator approves or rejects it.
// One implementation for every kind of approval (actors/approvals.ts): each kind names its paths,
// schemas, codes and the capability that owns it; the routes are made once, here.
import type { ErrorCode } from '../../kernel/error-catalog.js';
import { payoutApprovalResource, payoutResource } from '../../schemas/connect.js';
import { approveBody, refundApprovalResource, refundResource, type ApproveBody } from '../../schemas/refunds.js';
import { defineRoute, type RequestContext } from '../route.js';

/** What a capability with four-eyes approvals offers the routes. */
interface ApprovalDesk {
  getApproval(p: RequestContext['principal'], id: string): Promise<unknown>;
  approve(tenantId: string, approvalId: string, approver: string): Promise<unknown>;
  reject(tenantId: string, approvalId: string, approver: string): Promise<unknown>;
}

interface ApprovalKind {
  /** `refund` → /v1/refund_approvals, /admin/tenants/{tenantId}/refund_approvals/…, codes refund_approval.* */
  subject: 'refund' | 'payout';
  desk(ctx: RequestContext): ApprovalDesk;
  readTag: string;
  approvalSchema: object;
  subjectSchema: object;
  approve: { summary: string; description: string; answer: string; errors: ErrorCode[] };
  rejectSummary: string;
}

function approvalRoutesOf(k: ApprovalKind) {
  const code = (c: 'not_found' | 'resolution_conflict' | 'approver_conflict') => `${k.subject}_approval.${c}` as ErrorCode;
  const admin = `/admin/tenants/{tenantId}/${k.subject}_approvals/{approvalId}`;
  return [
    defineRoute({
      method: 'GET',
      path: `/v1/${k.subject}_approvals/{id}`,
      auth: 'api_key',
      scope: 'payments:read',
      notFound: code('not_found'),
      summary: `Read a ${k.subject} approval`,
      tags: [k.readTag],
      responses: { 200: { description: 'The approval', schema: k.approvalSchema } },
      errors: [code('not_found')],
      handler: async (ctx) => ({ status: 200, body: await k.desk(ctx).getApproval(ctx.principal, ctx.params.id) }),
    }),
    defineRoute<ApproveBody>({
      method: 'POST',
      path: `${admin}/approve`,
      auth: 'admin',
      body: approveBody,
      notFound: code('not_found'),
      summary: k.approve.summary,
      description: k.approve.description,
      tags: ['Operator'],
      responses: { 200: { description: k.approve.answer, schema: k.subjectSchema } },
      errors: [code('not_found'), code('resolution_conflict'), code('approver_conflict'), ...k.approve.errors],
      handler: async (ctx) => ({ status: 200, body: await k.desk(ctx).approve(ctx.params.tenantId, ctx.params.approvalId, ctx.body.approver) }),
    }),
    defineRoute<ApproveBody>({
      method: 'POST',
      path: `${admin}/reject`,
      auth: 'admin',
      body: approveBody,
      notFound: code('not_found'),
      summary: k.rejectSummary,
      tags: ['Operator'],
      responses: { 200: { description: 'The approval, rejected', schema: k.approvalSchema } },
      errors: [code('not_found'), code('resolution_conflict')],
      handler: async (ctx) => ({ status: 200, body: await k.desk(ctx).reject(ctx.params.tenantId, ctx.params.approvalId, ctx.body.approver) }),
    }),
  ];
}

export const approvalRoutes = [
  ...approvalRoutesOf({
    subject: 'refund',
    desk: (ctx) => ctx.deps.refunds,
    readTag: 'Refunds',
    approvalSchema: refundApprovalResource,
    subjectSchema: refundResource,
    approve: {
      summary: 'Approve a refund (four-eyes): the refund is created and executed',
      description: 'The approver must differ from the API key that requested the refund. Answers the refund after the provider call (succeeded or failed).',
      answer: 'The executed refund',
      errors: ['refund.exceeds_refundable', 'refund.nothing_refundable', 'refund.attempt_not_refundable'],
    },
    rejectSummary: 'Reject a refund approval: nothing is refunded',
  }),
  ...approvalRoutesOf({
    subject: 'payout',
    desk: (ctx) => ctx.deps.payouts,
    readTag: 'Payouts',
    approvalSchema: payoutApprovalResource,
    subjectSchema: payoutResource,
    approve: {
      summary: 'Operator: approve a payout (four-eyes); the payout is created and sent',
      description: 'The approver must differ from the API key that requested the payout. Answers the payout `processing`; the worker sends it.',
      answer: 'The payout, processing',
      errors: ['payout.no_route'],
    },
    rejectSummary: 'Operator: reject a payout approval; nothing is sent',
  }),
];
