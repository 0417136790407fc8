// Billers, service payments, recharge carriers, products, recharges and bag movements: request
// bodies and resource projections (spec: Resources > biller…, Recharge resources). The money-moving
// bodies are checked by their endpoints (the spec's order of codes, the live-key refusal first),
// so their schemas here describe the fields without refusing anything themselves.
import type { FromSchema } from 'json-schema-to-ts';
import { listOf, timestamp, uuid } from './common.js';

export const billerResource = {
  type: 'object',
  required: ['object', 'code', 'name', 'category', 'reference_label', 'active'],
  properties: {
    object: { const: 'biller' },
    code: { type: 'string', examples: ['cfe'] },
    name: { type: 'string' },
    category: { enum: ['electricity', 'telecom', 'water'] },
    reference_label: { type: 'string', description: 'What the payer calls the reference on the bill.' },
    active: { type: 'boolean' },
  },
} as const;
export const billerList = listOf(billerResource);

export const billerListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { category: { type: 'string', description: 'Only billers of this category (`electricity`, `telecom`, `water`); an unknown one gives an empty list.' } },
} as const;
export type BillerListQuery = FromSchema<typeof billerListQuery>;

export const inquiryBody = {
  type: 'object',
  properties: { reference: { description: 'The bill reference, digits only: cfe 12, telmex 10, izzi 8 to 10, agua_cdmx 16 (decisions §5; no check digit). Required (`biller.missing_reference`).' } },
} as const;

export const inquiryResource = {
  type: 'object',
  required: ['object', 'biller_code', 'biller_name', 'reference', 'amount_due_minor', 'currency', 'service_holder_name', 'due_date'],
  properties: {
    object: { const: 'biller_inquiry' },
    biller_code: { type: 'string' },
    biller_name: { type: 'string' },
    reference: { type: 'string' },
    amount_due_minor: { type: 'integer' },
    currency: { const: 'MXN' },
    service_holder_name: { type: 'string' },
    due_date: { type: 'string', format: 'date' },
  },
} as const;

export const servicePaymentBody = {
  type: 'object',
  properties: {
    biller_code: { description: 'string, required (`service_payment.missing_fields`).', examples: ['cfe'] },
    reference: { description: 'string, required (`service_payment.missing_fields`); the biller\'s format (`biller.invalid_reference`).' },
    amount_minor: { description: 'int64, optional: when sent it must equal the current amount due (`service_payment.amount_mismatch`).' },
    payment_intent_id: { description: 'uuid, optional: correlation only.' },
  },
} as const;

export const servicePaymentResource = {
  type: 'object',
  required: ['id', 'object', 'biller_code', 'reference', 'amount_minor', 'currency', 'status', 'livemode', 'created_at', 'updated_at'],
  properties: {
    id: uuid,
    object: { const: 'service_payment' },
    biller_code: { type: 'string' },
    reference: { type: 'string' },
    amount_minor: { type: 'integer', description: 'The amount due at payment time.' },
    currency: { const: 'MXN' },
    status: { enum: ['paid', 'failed', 'pending'], description: '`paid` or `failed`; `pending` only while the aggregator\'s answer is unknown (a lost answer or a crash), resolved by asking it.' },
    provider_ref: { type: 'string' },
    failure_reason: { type: 'string', description: 'Present when `failed`.' },
    payment_intent_id: uuid,
    livemode: { type: 'boolean' },
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;
export const servicePaymentList = listOf(servicePaymentResource);

export const carrierResource = {
  type: 'object',
  required: ['object', 'code', 'name', 'active'],
  properties: {
    object: { const: 'recharge_carrier' },
    code: { type: 'string', examples: ['telcel'] },
    name: { type: 'string' },
    active: { type: 'boolean', description: 'In the list: the carrier is active in the global catalog. In the enable answer: whether the carrier is now enabled for the account.' },
  },
} as const;
export const carrierList = listOf(carrierResource);

export const enableCarrierBody = {
  type: 'object',
  additionalProperties: false,
  properties: { active: { type: 'boolean', default: true, description: '`false` disables the carrier for the account.' } },
} as const;
export type EnableCarrierBody = FromSchema<typeof enableCarrierBody>;

export const productResource = {
  type: 'object',
  required: ['object', 'code', 'carrier_code', 'kind', 'name', 'face_amount_minor', 'merchant_commission_minor', 'currency', 'active'],
  properties: {
    object: { const: 'recharge_product' },
    code: { type: 'string', examples: ['telcel_50'] },
    carrier_code: { type: 'string' },
    kind: { enum: ['airtime', 'data'] },
    name: { type: 'string' },
    face_amount_minor: { type: 'integer', description: 'Nominal value: what the handset receives and the payer is charged.' },
    merchant_commission_minor: { type: 'integer', description: 'Already inside the face amount; wholesale cost = face - commission.' },
    currency: { const: 'MXN' },
    active: { type: 'boolean' },
  },
} as const;
export const productList = listOf(productResource);

export const rechargeBody = {
  type: 'object',
  properties: {
    product_code: { description: 'string, required (`recharge.missing_fields`), an active product (`recharge.product_not_found`).', examples: ['telcel_50'] },
    phone_number: { description: 'string of exactly 10 digits, required (`recharge.invalid_phone`). Never answered in full.', examples: ['5512345678'] },
    payment_intent_id: { description: 'uuid, optional: a succeeded payment intent of this account whose amount equals the product face amount.' },
  },
} as const;

export const rechargeResource = {
  type: 'object',
  required: ['id', 'object', 'carrier_code', 'product_code', 'phone_masked', 'face_amount_minor', 'merchant_commission_minor', 'currency', 'status', 'livemode', 'created_at', 'updated_at'],
  properties: {
    id: uuid,
    object: { const: 'recharge' },
    carrier_code: { type: 'string' },
    product_code: { type: 'string' },
    phone_masked: { type: 'string', pattern: '^\\d{2}\\*{4}\\d{4}$', examples: ['55****5678'], description: 'First two digits, asterisks, last four.' },
    face_amount_minor: { type: 'integer' },
    merchant_commission_minor: { type: 'integer' },
    currency: { const: 'MXN' },
    status: { enum: ['pending', 'delivered', 'failed'] },
    provider_ref: { type: 'string' },
    failure_reason: { type: 'string' },
    payment_intent_id: uuid,
    livemode: { type: 'boolean' },
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;
export const rechargeList = listOf(rechargeResource);

export const bagMovementResource = {
  type: 'object',
  required: ['object', 'account_id', 'provider_key', 'source_id', 'movement_id', 'registered_at', 'observed_at', 'pouch_id', 'pouch_name', 'movement_type', 'is_deposit', 'amount_minor', 'currency', 'raw_amount', 'status', 'via'],
  properties: {
    object: { const: 'recharge_bag_movement' },
    account_id: { ...uuid, description: 'The account (tenant) that owns the bag.' },
    provider_key: { type: 'string', examples: ['sim'] },
    source_id: { type: 'string', description: 'The aggregator report the movement was read from.' },
    movement_id: { type: 'string', description: 'The aggregator\'s id of the movement (unique per provider and account).' },
    registered_at: timestamp,
    observed_at: { ...timestamp, description: 'When the reader stored it first.' },
    pouch_id: { type: 'string' },
    pouch_name: { type: 'string' },
    movement_type: { type: 'string', examples: ['deposito', 'venta'] },
    is_deposit: { type: 'boolean' },
    amount_minor: { type: 'integer', description: 'Positive for a credit (deposit), negative for a debit (sale).' },
    currency: { const: 'MXN' },
    raw_amount: { type: 'string', description: 'The amount as the report prints it (decimal string).' },
    units: { type: ['integer', 'null'] },
    additional_folio: { type: ['string', 'null'] },
    status: { type: 'string' },
    via: { type: 'string' },
  },
} as const;
export const bagMovementList = listOf(bagMovementResource);

export const balanceResource = {
  type: 'object',
  required: ['object', 'account_id', 'provider_key', 'balance_minor', 'currency', 'refreshed_at', 'livemode'],
  properties: {
    object: { const: 'recharge_balance' },
    account_id: uuid,
    provider_key: { type: 'string' },
    balance_minor: { type: 'integer' },
    currency: { const: 'MXN' },
    refreshed_at: timestamp,
    livemode: { type: 'boolean' },
  },
} as const;
