// Four-eyes approvals (decisions.md §2): refunds and payouts above the tenant's threshold wait for an
// operator. The merchant reads an approval with its API key; the operator approves or rejects it.
import { payoutApprovalResource, payoutResource } from '../../schemas/connect.js';
import { approveBody, refundApprovalResource, refundResource, type ApproveBody } from '../../schemas/refunds.js';
import { defineRoute } from '../route.js';

export const approvalRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/refund_approvals/{id}',
    auth: 'api_key',
    scope: 'payments:read',
    notFound: 'refund_approval.not_found',
    summary: 'Read a refund approval',
    tags: ['Refunds'],
    responses: { 200: { description: 'The approval', schema: refundApprovalResource } },
    errors: ['refund_approval.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.refunds.getApproval(ctx.principal, ctx.params.id) }),
  }),

  defineRoute<ApproveBody>({
    method: 'POST',
    path: '/admin/tenants/{tenantId}/refund_approvals/{approvalId}/approve',
    auth: 'admin',
    body: approveBody,
    notFound: 'refund_approval.not_found',
    summary: 'Approve a refund (four-eyes): the refund is created and executed',
    description: 'The approver must differ from the API key that requested the refund. Answers the refund after the provider call (succeeded or failed).',
    tags: ['Operator'],
    responses: { 200: { description: 'The executed refund', schema: refundResource } },
    errors: ['refund_approval.not_found', 'refund_approval.resolution_conflict', 'refund_approval.approver_conflict', 'refund.exceeds_refundable', 'refund.nothing_refundable', 'refund.attempt_not_refundable'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.refunds.approve(ctx.params.tenantId, ctx.params.approvalId, ctx.body.approver) }),
  }),
  defineRoute<ApproveBody>({
    method: 'POST',
    path: '/admin/tenants/{tenantId}/refund_approvals/{approvalId}/reject',
    auth: 'admin',
    body: approveBody,
    notFound: 'refund_approval.not_found',
    summary: 'Reject a refund approval: nothing is refunded',
    tags: ['Operator'],
    responses: { 200: { description: 'The approval, rejected', schema: refundApprovalResource } },
    errors: ['refund_approval.not_found', 'refund_approval.resolution_conflict'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.refunds.reject(ctx.params.tenantId, ctx.params.approvalId, ctx.body.approver) }),
  }),

  defineRoute({
    method: 'GET',
    path: '/v1/payout_approvals/{id}',
    auth: 'api_key',
    scope: 'payments:read',
    notFound: 'payout_approval.not_found',
    summary: 'Read a payout approval',
    tags: ['Payouts'],
    responses: { 200: { description: 'The approval', schema: payoutApprovalResource } },
    errors: ['payout_approval.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.payouts.getApproval(ctx.principal, ctx.params.id) }),
  }),
  defineRoute<ApproveBody>({
    method: 'POST',
    path: '/admin/tenants/{tenantId}/payout_approvals/{approvalId}/approve',
    auth: 'admin',
    body: approveBody,
    notFound: 'payout_approval.not_found',
    summary: 'Operator: approve a payout (four-eyes); the payout is created and sent',
    description: 'The approver must differ from the API key that requested the payout. Answers the payout `processing`; the worker sends it.',
    tags: ['Operator'],
    responses: { 200: { description: 'The payout, processing', schema: payoutResource } },
    errors: ['payout_approval.not_found', 'payout_approval.resolution_conflict', 'payout_approval.approver_conflict', 'payout.no_route'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.payouts.approve(ctx.params.tenantId, ctx.params.approvalId, ctx.body.approver) }),
  }),
  defineRoute<ApproveBody>({
    method: 'POST',
    path: '/admin/tenants/{tenantId}/payout_approvals/{approvalId}/reject',
    auth: 'admin',
    body: approveBody,
    notFound: 'payout_approval.not_found',
    summary: 'Operator: reject a payout approval; nothing is sent',
    tags: ['Operator'],
    responses: { 200: { description: 'The approval, rejected', schema: payoutApprovalResource } },
    errors: ['payout_approval.not_found', 'payout_approval.resolution_conflict'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.payouts.reject(ctx.params.tenantId, ctx.params.approvalId, ctx.body.approver) }),
  }),
];
