// Payment intents. spec: Endpoints > Payment intents; Errors > Payment intents and attempts.
import type { FromSchema } from 'json-schema-to-ts';
import { currencyCode, metadata, timestamp, uuid } from './common.js';

const amount = {
  type: 'integer',
  minimum: 1,
  maximum: 99_999_999_999,
  'x-error-code': 'payment_intent.invalid_amount',
  'x-error-message': '`amount_minor` must be a positive integer of minor units (cents), e.g. 15000 for MXN 150.00.',
} as const;
const tip = {
  type: 'integer',
  minimum: 0,
  maximum: 99_999_999_999,
  'x-error-code': 'payment_intent.invalid_tip',
  'x-error-message': '`tip_minor` must be an integer >= 0 (minor units).',
} as const;

/** Where the sim's 3-D Secure page sends the shopper back (Stripe's `return_url` at confirm). */
export const returnUrlSchema = {
  type: 'string',
  maxLength: 2000,
  pattern: '^https?://[^\\s]+$',
  'x-error-code': 'payment_intent.invalid_return_url',
  'x-error-message': '`return_url` must be an absolute http(s) URL of at most 2000 characters, such as https://tienda.example.mx/pedido/123.',
  description:
    'Optional. Where the 3-D Secure page sends the shopper once the bank decided (approved or not): the page that follows the payment, usually the one that confirmed. ' +
    'When the merchant lists `allowed_origins` in its checkout settings, it must be on one of them. The spec\'s other fields are unchanged.',
} as const;

export const createPaymentIntentBody = {
  type: 'object',
  additionalProperties: false,
  required: ['amount_minor', 'currency'],
  properties: {
    amount_minor: { ...amount, 'x-required-error-code': 'payment_intent.invalid_amount', 'x-required-error-message': '`amount_minor` is required: a positive integer of minor units (cents).' },
    currency: {
      ...currencyCode,
      'x-error-code': 'payment_intent.invalid_currency',
      // spec: invalid_amount is "amount not positive or currency missing"
      'x-required-error-code': 'payment_intent.invalid_amount',
      'x-required-error-message': 'The amount has no currency: send `currency` (an ISO 4217 code such as MXN) with `amount_minor`; a missing currency is reported as payment_intent.invalid_amount (spec: Errors, "amount not positive or currency missing").',
    },
    payment_method_types: { type: 'array', items: { type: 'string', maxLength: 40 }, maxItems: 20, description: 'Informational only: recorded in the history, not stored on the intent, does not select the method.' },
    metadata,
    tip_minor: tip,
    customer_id: { ...uuid, description: 'The customer the charge belongs to (Stripe: `customer`); must be one of this key\'s customers. A one-click charge of a saved method sets it to the method\'s customer.' },
  },
} as const;
export type CreatePaymentIntentBody = FromSchema<typeof createPaymentIntentBody>;

export const confirmBody = {
  type: 'object',
  additionalProperties: false,
  description: 'Either `payment_token` + `payment_method`, or `payment_method_id` (a saved method).',
  properties: {
    payment_token: { type: 'string', minLength: 1, maxLength: 200 },
    payment_method: { type: 'string', minLength: 1, maxLength: 40, description: '`card`, `spei`, `codi`, `dimo` or `oxxo`; any other value answers payment_intent.no_route.' },
    payment_method_id: uuid,
    tip_minor: { ...tip, description: 'When sent it replaces the existing tip; omitted or null keeps it.' },
    return_url: returnUrlSchema,
    payer_ip: { type: 'string', minLength: 2, maxLength: 45, pattern: '^[0-9A-Fa-f:.]+$', description: 'The shopper\'s IP address (IPv4 or IPv6). Openpay requires it (sent as `X-Forwarded-For`); the public checkout fills it from the browser\'s address.' },
    off_session: { type: 'boolean', description: 'With `payment_method_id`: a merchant-initiated charge of a saved card (a subscription). Its soft declines are retried 1, 3 and 5 days later by the account\'s clock (dunning) before the intent fails.' },
  },
} as const;
export type ConfirmBody = FromSchema<typeof confirmBody>;

/** The cross-field rule of confirm's body, which JSON Schema would only report obscurely. */
export function confirmBodyProblem(b: ConfirmBody): string | undefined {
  if (b.off_session && !b.payment_method_id) return '`off_session` needs `payment_method_id` (a saved card).';
  if (b.payment_method_id) return b.payment_token || b.payment_method ? 'Send either payment_method_id, or payment_token with payment_method, not both.' : undefined;
  if (!b.payment_token || !b.payment_method) return 'confirm needs `payment_token` and `payment_method` (or `payment_method_id` of a saved method).';
  return undefined;
}

export const nextActionSchema = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: ['redirect', 'bank_transfer', 'codi_qr', 'oxxo_voucher'] },
    redirect_url: { type: 'string' },
    clabe: { type: 'string', pattern: '^\\d{18}$' },
    beneficiary: { type: 'string' },
    qr_payload: { type: 'string' },
    reference: { type: 'string' },
    referencia_numerica: { type: 'integer', minimum: 1000000, maximum: 9999999, description: 'bank_transfer (SPEI) only, additive to the spec: the number the payer types as SPEI\'s "referencia numérica" (referenciaNumerica, ≤ 7 digits). It identifies the payment: a bank statement line that shows it (its reference column, or a token of its concept, zero-padded or not) matches the charge when the amount and the date agree (docs/bank-statements.md). Always 7 digits; no two SPEI instructions share one until 9,000,000 more have been issued.' },
    expires_at: timestamp,
  },
} as const;

export const attemptResource = {
  type: 'object',
  required: ['id', 'object', 'status', 'connector_key', 'method', 'created_at'],
  properties: {
    id: uuid,
    object: { const: 'attempt' },
    status: { enum: ['pending', 'authorized', 'requires_action', 'captured', 'settled', 'partially_refunded', 'refunded', 'failed', 'canceled', 'expired'] },
    connector_key: { type: 'string' },
    method: { enum: ['card', 'spei', 'codi', 'dimo', 'oxxo'] },
    amount_minor: { type: 'integer' },
    currency: { type: 'string' },
    provider_ref: { type: 'string', description: 'Omitted until the provider answers.' },
    failure_code: { type: 'string' },
    failure_message: { type: 'string' },
    created_at: timestamp,
  },
} as const;

export const paymentIntentResource = {
  type: 'object',
  required: ['id', 'object', 'amount_minor', 'tip_minor', 'total_minor', 'currency', 'status', 'client_secret', 'livemode', 'receipt_code', 'created_at', 'updated_at'],
  properties: {
    id: uuid,
    object: { const: 'payment_intent' },
    amount_minor: { type: 'integer' },
    tip_minor: { type: 'integer' },
    total_minor: { type: 'integer', description: 'amount_minor + tip_minor: what is captured.' },
    amount_refunded_minor: { type: 'integer', description: 'What succeeded refunds returned (ours; equal to total_minor once fully refunded). Commands answer 0: only a captured charge has refunds.' },
    customer_id: { ...uuid, description: 'The customer the charge belongs to, when it has one.' },
    currency: { type: 'string' },
    status: { enum: ['requires_payment_method', 'requires_confirmation', 'processing', 'requires_action', 'succeeded', 'failed', 'expired', 'canceled'] },
    client_secret: { type: 'string' },
    livemode: { type: 'boolean' },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    receipt_code: { type: 'string', pattern: '^W-[0-9A-Z]{5}$' },
    next_action: nextActionSchema,
    last_payment_error: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } } },
    attempts: { type: 'array', items: attemptResource, description: 'Only with ?expand=attempts, and in confirm/capture responses.' },
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;

export const riskReviewResource = {
  type: 'object',
  required: ['id', 'object', 'status', 'payment_intent_id'],
  properties: {
    id: uuid,
    object: { const: 'risk_review' },
    status: { enum: ['pending', 'approved', 'rejected'] },
    payment_intent_id: uuid,
    rule_id: uuid,
    livemode: { type: 'boolean' },
    created_at: timestamp,
    resolved_at: timestamp,
  },
} as const;

export const getIntentQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { expand: { type: 'string', enum: ['attempts'] } },
} as const;

export const clockAdvanceBody = {
  type: 'object',
  additionalProperties: false,
  'x-error-code': 'test_clock.invalid_advance',
  properties: {
    seconds: { type: 'integer', minimum: 1, maximum: 10 * 365 * 86400 },
    to: timestamp,
  },
  minProperties: 1,
  maxProperties: 1,
  'x-error-message': 'Send exactly one of `seconds` (integer > 0) or `to` (a timestamp later than now).',
} as const;
export type ClockAdvanceBody = FromSchema<typeof clockAdvanceBody>;

export const testClockResource = {
  type: 'object',
  required: ['object', 'now', 'livemode'],
  properties: { object: { const: 'test_clock' }, now: timestamp, livemode: { const: false } },
} as const;

export const simulateInboundBody = {
  type: 'object',
  additionalProperties: false,
  required: ['provider_ref'],
  properties: { provider_ref: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

export const riskRuleBody = {
  type: 'object',
  additionalProperties: false,
  required: ['field', 'operator', 'value', 'action'],
  'x-error-code': 'risk_rule.invalid',
  properties: {
    field: { type: 'string', pattern: '^(amount_minor|tip_minor|total_minor|currency|payment_method|metadata\\.[A-Za-z0-9_]{1,40})$' },
    operator: { enum: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in'] },
    value: { type: ['string', 'integer', 'array'], items: { type: ['string', 'integer'] } },
    action: { enum: ['block', 'review'] },
  },
} as const;
export type RiskRuleBody = FromSchema<typeof riskRuleBody>;

const isoInstant = { type: 'string', format: 'date-time', description: 'ISO 8601 timestamp' } as const;

/** Stripe's list of intents: newest first, `limit` (default 10, clamped to 100), `starting_after`, filters. */
export const listIntentsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, description: 'Default 10; values above 100 are clamped.' },
    starting_after: { ...uuid, description: 'The id of the last intent of the previous page.' },
    status: { enum: ['requires_payment_method', 'requires_confirmation', 'processing', 'requires_action', 'succeeded', 'failed', 'expired', 'canceled'] },
    customer: { ...uuid, description: 'Only the intents of this customer.' },
    'created[gte]': isoInstant,
    'created[gt]': isoInstant,
    'created[lte]': isoInstant,
    'created[lt]': isoInstant,
    'metadata[branch]': { type: 'string', maxLength: 500, description: 'Exact match on `metadata.branch`.' },
    receipt_code: { type: 'string', minLength: 1, maxLength: 20, description: 'The intent with this receipt code (`W-XXXXX`, case-insensitive).' },
    amount_minor: { type: 'integer', minimum: 0, description: 'Exact amount in minor units (without tip).' },
    method: { enum: ['card', 'spei', 'codi', 'dimo', 'oxxo'], description: 'Intents with an attempt of this method.' },
    customer_email: { type: 'string', minLength: 1, maxLength: 254, description: "Intents of the customers with this email (case-insensitive)." },
  },
} as const;
export type ListIntentsQuery = FromSchema<typeof listIntentsQuery>;
