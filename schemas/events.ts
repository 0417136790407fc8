// The event catalog (spec: Events > Catalog): every event type with what it means and the shape of
// its `data`. Webhook endpoints filter on these types, `/v1/events` carries them, and the OpenAPI
// description lists them under `webhooks`. A capability adds its events here (its own object of
// entries, spread into EVENT_CATALOG).
import { timestamp, uuid } from './common.js';
import { applicationResource, payoutResource } from './connect.js';
import { creditNoteResource, invoicePaymentResource, invoiceResource } from './invoices.js';
import { bagMovementResource } from './billers.js';
import { receivableResource } from './receivables.js';
import { TERMINAL_EVENTS } from './terminals.js';

export interface EventSpec {
  readonly summary: string;
  /** JSON Schema of the envelope's `data`. */
  readonly data: object;
}

/** spec: "For payment_intent.* events data holds id, object, status, amounts, currency, metadata (object or explicit null). It never carries attempts." */
export const paymentIntentEventData = {
  type: 'object',
  required: ['id', 'object', 'status', 'amount_minor', 'tip_minor', 'total_minor', 'currency', 'metadata'],
  additionalProperties: false,
  properties: {
    id: uuid,
    object: { const: 'payment_intent' },
    status: { type: 'string' },
    amount_minor: { type: 'integer' },
    tip_minor: { type: 'integer' },
    total_minor: { type: 'integer' },
    currency: { type: 'string' },
    metadata: { type: ['object', 'null'], additionalProperties: { type: 'string' } },
  },
} as const;

/** Ours (the spec does not show it): the refund's projection, absent fields omitted as in every authenticated projection. */
export const refundEventData = {
  type: 'object',
  required: ['id', 'object', 'attempt_id', 'payment_intent_id', 'amount_minor', 'currency', 'status', 'created_at'],
  additionalProperties: false,
  properties: {
    id: uuid,
    object: { const: 'refund' },
    attempt_id: uuid,
    payment_intent_id: uuid,
    amount_minor: { type: 'integer' },
    currency: { type: 'string' },
    status: { enum: ['succeeded', 'failed'] },
    reason: { type: 'string', description: 'Present when the refund was requested with one.' },
    provider_ref: { type: 'string', description: 'The provider’s reference of a succeeded refund.' },
    failure_code: { type: 'string', description: 'Why the provider refused it (refund.failed).' },
    failure_message: { type: 'string' },
    created_at: timestamp,
  },
} as const;

export const PAYMENT_EVENTS = {
  'payment_intent.succeeded': { summary: 'The charge was captured.', data: paymentIntentEventData },
  'payment_intent.requires_action': { summary: 'Payer action needed (QR, CLABE, reference, redirect).', data: paymentIntentEventData },
  'payment_intent.failed': { summary: 'Definitive failure: a hard decline, or a soft decline with no retry left.', data: paymentIntentEventData },
  'payment_intent.expired': { summary: 'The pending action (QR, voucher, CLABE) expired unpaid, by the tenant’s clock.', data: paymentIntentEventData },
  'payment_intent.canceled': { summary: 'The cancel operation.', data: paymentIntentEventData },
  'refund.succeeded': { summary: 'The refund completed at the provider.', data: refundEventData },
  'refund.failed': { summary: 'The provider refused the refund (its amount is refundable again).', data: refundEventData },
} as const satisfies Record<string, EventSpec>;

export const RECHARGE_EVENTS = {
  'recharge.deposit.detected': {
    summary: 'A credit movement of a recharge bag was seen for the first time (event_id derived from the movement).',
    data: bagMovementResource,
  },
} as const satisfies Record<string, EventSpec>;

/**
 * Ours: the payout's projection with absent fields omitted, `livemode` on the envelope, and the
 * CLABE masked as `clabe_masked` instead of the resource's full `clabe` (no full CLABE in events).
 */
const { livemode: _pl, clabe: _clabe, ...payoutProps } = payoutResource.properties;
export const payoutEventData = {
  type: 'object',
  required: [...payoutResource.required.filter((k) => k !== 'livemode' && k !== 'clabe'), 'clabe_masked'],
  additionalProperties: false,
  properties: { ...payoutProps, clabe_masked: { type: 'string', description: 'Bank code and last four digits; the full CLABE is on the payout (GET /v1/payouts/{id}).', examples: ['646***********0007'] } },
} as const;

/** Ours: the application's list projection (no documents; CLABE masked), absent fields omitted. */
const { documents: _d, ...applicationProps } = applicationResource.properties;
export const applicationEventData = { type: 'object', required: applicationResource.required, additionalProperties: false, properties: applicationProps } as const;

export const CONNECT_EVENTS = {
  'payout.paid': { summary: 'A payout settled in the beneficiary account (the rail reported it paid).', data: payoutEventData },
  'payout.failed': { summary: 'The rail refused or cancelled a payout; `failure_reason` says why; no money moved.', data: payoutEventData },
  'payout.returned': { summary: "A paid payout was sent back by the beneficiary's bank (devolución); the money is back in the merchant's account.", data: payoutEventData },
  'onboarding_application.approved': { summary: 'An onboarding application was approved (by the automatic verifier or an operator).', data: applicationEventData },
  'onboarding_application.needs_info': { summary: 'An onboarding application needs corrections; `status_reason` says which.', data: applicationEventData },
  'onboarding_application.rejected': { summary: 'An onboarding application was rejected (a list match, or an operator).', data: applicationEventData },
} as const satisfies Record<string, EventSpec>;

/** Ours (docs/invoices.md): data = the resource's projection at event time. */
export const INVOICE_EVENTS = {
  'invoice.stamped': { summary: 'An invoice (PUE or PPD) was stamped by the PAC: it has its uuid_fiscal.', data: invoiceResource },
  'invoice.failed': { summary: 'The PAC rejected the invoice, or never stamped one whose answer was lost: status error, not live.', data: invoiceResource },
  'invoice.cancelled': { summary: 'SAT cancelled the invoice.', data: invoiceResource },
  'invoice_payment.stamped': { summary: 'A payment complement (REP, Pagos 2.0) of a PPD invoice was stamped.', data: invoicePaymentResource },
  'credit_note.stamped': { summary: 'A credit note (CFDI egreso related with TipoRelacion 01) was stamped.', data: creditNoteResource },
  'invoice_payment.cancelled': { summary: 'SAT cancelled a payment complement: its amount and NumParcialidad went back to the invoice.', data: invoicePaymentResource },
  'credit_note.cancelled': { summary: 'SAT cancelled a credit note: its amount went back to the invoice (and to its saldo, PPD).', data: creditNoteResource },
} as const satisfies Record<string, EventSpec>;

/** Ours (docs/receivables.md): data = the receivable's projection at event time (phone masked). */
export const RECEIVABLE_EVENTS = {
  'receivable.paid': { summary: 'The payment link of a receivable was paid (any rail); committed with the payment itself.', data: receivableResource },
  'receivable.overdue': { summary: 'A receivable passed its due date unpaid, by the tenant\'s clock (a durable timer, not polling).', data: receivableResource },
  'receivable.canceled': { summary: 'A receivable was canceled; its payment link takes no more payments.', data: receivableResource },
} as const satisfies Record<string, EventSpec>;

export const EVENT_CATALOG = {
  ...PAYMENT_EVENTS,
  ...INVOICE_EVENTS,
  ...RECHARGE_EVENTS,
  ...CONNECT_EVENTS,
  ...RECEIVABLE_EVENTS,
  ...TERMINAL_EVENTS,
} as const satisfies Record<string, EventSpec>;

export type EventType = keyof typeof EVENT_CATALOG;
export const EVENT_TYPES = Object.keys(EVENT_CATALOG) as EventType[];
