// Refunds, refund approvals, saved payment methods, disputes. spec: Resources > refund,
// payment_method; Errors > Refunds, Customers and payment methods; decisions.md §2–4.
import type { FromSchema } from 'json-schema-to-ts';
import { currencyCode, listOf, timestamp, uuid } from './common.js';

export const createRefundBody = {
  type: 'object',
  additionalProperties: false,
  required: ['attempt_id'],
  properties: {
    attempt_id: { ...uuid, description: 'The attempt (attempts[].id), not the payment intent.', 'x-error-code': 'attempt.not_found', 'x-required-error-code': 'request.invalid_body', 'x-error-message': '`attempt_id` must be the UUID of an attempt.' },
    amount_minor: { type: 'integer', minimum: 1, maximum: 99_999_999_999, 'x-error-code': 'refund.invalid_amount', 'x-error-message': '`amount_minor` must be a strictly positive integer of minor units; omit it to refund what remains.' },
    currency: { ...currencyCode, 'x-error-code': 'refund.currency_mismatch', description: 'Optional; when sent it must be the charge currency.' },
    reason: { type: 'string', maxLength: 500 },
  },
} as const;
export type CreateRefundBody = FromSchema<typeof createRefundBody>;

export const refundResource = {
  type: 'object',
  required: ['id', 'object', 'attempt_id', 'amount_minor', 'currency', 'status', 'created_at'],
  properties: {
    id: uuid,
    object: { const: 'refund' },
    attempt_id: uuid,
    payment_intent_id: uuid,
    amount_minor: { type: 'integer' },
    currency: { type: 'string' },
    status: { enum: ['requested', 'succeeded', 'failed'] },
    reason: { type: 'string' },
    provider_ref: { type: 'string', description: 'After execution.' },
    failure_code: { type: 'string' },
    failure_message: { type: 'string' },
    livemode: { type: 'boolean' },
    created_at: timestamp,
  },
} as const;

export const refundApprovalResource = {
  type: 'object',
  required: ['id', 'object', 'status', 'attempt_id', 'amount_minor', 'currency'],
  properties: {
    id: uuid,
    object: { const: 'refund_approval' },
    status: { enum: ['pending', 'approved', 'rejected'] },
    attempt_id: uuid,
    amount_minor: { type: 'integer' },
    currency: { type: 'string' },
    reason: { type: 'string' },
    approver: { type: 'string' },
    refund_id: uuid,
    livemode: { type: 'boolean' },
    created_at: timestamp,
    resolved_at: timestamp,
  },
} as const;

export const approveBody = {
  type: 'object',
  additionalProperties: false,
  required: ['approver'],
  properties: { approver: { type: 'string', minLength: 1, maxLength: 200, description: 'Who approves: must differ from the requesting API key id (four-eyes).' } },
} as const;
export type ApproveBody = FromSchema<typeof approveBody>;

export const tenantSettingsBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  'x-error-code': 'tenant_settings.invalid',
  properties: {
    refund_approval_threshold_minor: { type: 'integer', format: 'int64', minimum: 0, description: 'Refunds above this amount need a second approver.' },
    refund_approval_disabled: { const: true, description: 'Removes the threshold.' },
  },
} as const;
export type TenantSettingsBody = FromSchema<typeof tenantSettingsBody>;

export const savePaymentMethodBody = {
  type: 'object',
  additionalProperties: false,
  required: ['payment_token'],
  properties: {
    payment_token: { type: 'string', minLength: 1, maxLength: 200, 'x-error-code': 'payment_method.invalid_token', 'x-error-message': '`payment_token` is required: the single-use token of the card to save.' },
    connector: { type: 'string', minLength: 1, maxLength: 40, description: 'Optional; default `sim`. A connector that cannot save answers payment_method.no_route.' },
  },
} as const;
export type SavePaymentMethodBody = FromSchema<typeof savePaymentMethodBody>;

export const paymentMethodResource = {
  type: 'object',
  required: ['id', 'object', 'customer_id', 'connector', 'status', 'livemode', 'created_at', 'updated_at'],
  properties: {
    id: uuid,
    object: { const: 'payment_method' },
    customer_id: uuid,
    connector: { type: 'string' },
    brand: { type: 'string', description: 'Once active.' },
    last4: { type: 'string', description: 'Once active.' },
    status: { enum: ['pending', 'active', 'detached'] },
    livemode: { type: 'boolean' },
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;
export const paymentMethodList = listOf(paymentMethodResource);

export const disputeResource = {
  type: 'object',
  required: ['id', 'object', 'payment_intent_id', 'attempt_id', 'amount_minor', 'currency', 'reason', 'status', 'evidence_due_by', 'created_at'],
  properties: {
    id: uuid,
    object: { const: 'dispute' },
    payment_intent_id: uuid,
    attempt_id: uuid,
    amount_minor: { type: 'integer' },
    currency: { type: 'string' },
    reason: { type: 'string' },
    status: { enum: ['needs_response', 'under_review', 'won', 'lost'] },
    evidence_due_by: timestamp,
    created_at: timestamp,
  },
} as const;
export const disputeList = listOf(disputeResource);

export const listRefundsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, description: 'Default 10; values above 100 are clamped.' },
    starting_after: { ...uuid, description: 'The id of the last refund of the previous page.' },
    payment_intent: { ...uuid, description: 'Only the refunds of this payment intent.' },
    attempt: { ...uuid, description: 'Only the refunds of this attempt.' },
  },
} as const;
