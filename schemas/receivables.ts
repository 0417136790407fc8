// Receivables (spec: Resources > "the service" = receivable, Endpoints > Receivables, Errors >
// Receivables; decisions.md §3 paths). docs/receivables.md has the rules and the choices.
import type { FromSchema } from 'json-schema-to-ts';
import { currencyCode, metadata, timestamp, uuid } from './common.js';

/** The machine's states (machines/receivable.ts; test/vocabulary.test.ts checks they agree). */
const RECEIVABLE_STATES = ['open', 'overdue', 'paid', 'canceled'] as const;

const fiscal = (description: string, maxLength: number) =>
  ({ type: 'string', minLength: 1, maxLength, 'x-error-code': 'receivable.invalid_fiscal_receptor', description: `${description} All four fiscal fields go together or none (\`receivable.incomplete_fiscal_receptor\`).` }) as const;

export const createReceivableBody = {
  type: 'object',
  additionalProperties: false,
  'x-error-code': 'receivable.missing_fields',
  required: ['customer_name', 'customer_email', 'concepto', 'amount_minor', 'currency', 'due_date'],
  properties: {
    customer_name: { type: 'string', minLength: 1, maxLength: 254, 'x-error-code': 'receivable.missing_fields', description: 'Who owes (also the CFDI receptor name when the fiscal fields are set).' },
    customer_email: { type: 'string', minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$', 'x-error-code': 'receivable.missing_fields', description: 'Compared case-insensitively (stored lower-cased): the key of the customer statement and of ageing rows.' },
    customer_phone: { type: 'string', minLength: 1, maxLength: 32, 'x-error-code': 'receivable.invalid_phone', description: 'Optional; needed for the WhatsApp link. 10 digits (Mexico, +52 is assumed) or international form `+<country><number>`; spaces, dashes, dots and parentheses are ignored.' },
    customer_rfc: fiscal('RFC of the customer for the automatic CFDI.', 13),
    customer_uso_cfdi: fiscal('c_UsoCFDI (e.g. G03).', 4),
    customer_regimen_fiscal: fiscal('c_RegimenFiscal (e.g. 601).', 3),
    customer_cp: fiscal('Postal code of the customer domicilio fiscal (5 digits).', 5),
    concepto: { type: 'string', minLength: 1, maxLength: 1000, 'x-error-code': 'receivable.missing_fields', description: 'What is owed; shown on the payment page, the WhatsApp message and the CFDI concept.' },
    amount_minor: { type: 'integer', minimum: 1, maximum: 99_999_999_999, 'x-error-code': 'receivable.invalid_amount', 'x-error-message': '`amount_minor` must be a positive integer of minor units.' },
    currency: { ...currencyCode, 'x-error-code': 'receivable.invalid_currency' },
    due_date: {
      type: 'string',
      minLength: 1,
      maxLength: 40,
      'x-error-code': 'receivable.invalid_date',
      description: 'ISO 8601 date-time with offset (e.g. `2026-12-31T23:59:59-06:00`), or a calendar date `YYYY-MM-DD`, which means the end of that day in Mexico City (UTC−6). Past dates are accepted (an old debt is overdue at once).',
    },
    ppd_invoice_id: { ...uuid, 'x-error-code': 'receivable.invalid_invoice', description: 'Optional: a stamped PPD invoice this receivable pays part of; each payment then stamps its payment complement (REP) instead of a PUE invoice.' },
    metadata,
  },
} as const;
export type CreateReceivableBody = FromSchema<typeof createReceivableBody>;

export const receivableResource = {
  type: 'object',
  required: ['id', 'object', 'customer_name', 'customer_email', 'concepto', 'amount_minor', 'currency', 'due_date', 'status', 'payment_link_id', 'payment_link_url', 'created_at'],
  properties: {
    id: uuid,
    object: { const: 'receivable' },
    customer_name: { type: 'string' },
    customer_email: { type: 'string' },
    customer_phone: { type: 'string', description: 'Masked: two digits, asterisks, the last four (phone numbers are never answered in full).' },
    customer_rfc: { type: 'string' },
    customer_uso_cfdi: { type: 'string' },
    customer_regimen_fiscal: { type: 'string' },
    customer_cp: { type: 'string' },
    concepto: { type: 'string' },
    amount_minor: { type: 'integer' },
    currency: { type: 'string' },
    due_date: timestamp,
    status: { enum: RECEIVABLE_STATES, description: 'Derived by the tenant\'s clock (test clock in test mode): `overdue` once `due_date` passed unpaid, whether or not the overdue timer has fired yet.' },
    payment_link_id: uuid,
    payment_link_url: { type: 'string', description: 'Relative path `/pay/{slug}` of the single-use payment link (the public checkout).' },
    payment_intent_id: { ...uuid, description: 'Ours: the intent that paid it.' },
    paid_at: timestamp,
    canceled_at: timestamp,
    ppd_invoice_id: uuid,
    invoice_status: { enum: ['none', 'pending', 'stamped', 'error'], description: 'Ours: the automatic CFDI. `none`: no fiscal fields (or not paid yet); `pending`: being stamped or retried after a PAC failure (`invoice_error` says the last one); `stamped`; `error`: the PAC rejected it (not retried with the same data).' },
    invoice_id: { ...uuid, description: 'The PUE invoice of the payment, or the PPD invoice its REP belongs to.' },
    invoice_payment_id: { ...uuid, description: 'The REP (invoice_payment) of the payment, for a receivable of a PPD invoice.' },
    invoice_error: { type: 'string' },
    metadata,
    livemode: { type: 'boolean' },
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;

export const receivableListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { enum: RECEIVABLE_STATES, description: 'Derived status (by the tenant\'s clock).' },
    customer_email: { type: 'string', minLength: 1, maxLength: 254, description: 'Exact, case-insensitive.' },
    due_from: { type: 'string', format: 'date-time', description: 'Due on or after (ISO 8601).' },
    due_to: { type: 'string', format: 'date-time', description: 'Due before (ISO 8601; half-open).' },
    cursor: { type: 'string', maxLength: 600, 'x-error-code': 'reports.invalid_cursor', description: 'The `next_cursor` of the previous page, as received.' },
    limit: { type: 'integer', minimum: 1, description: 'Default 20; values above 100 are clamped to 100.' },
  },
} as const;
export type ReceivableListQuery = FromSchema<typeof receivableListQuery>;

export const receivablePage = {
  type: 'object',
  required: ['object', 'data', 'has_more'],
  properties: {
    object: { const: 'list' },
    data: { type: 'array', items: receivableResource },
    has_more: { type: 'boolean' },
    next_cursor: { type: 'string', description: 'Omitted when `has_more` is false.' },
  },
} as const;

export const statementQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['customer_email'],
  properties: {
    customer_email: { type: 'string', minLength: 1, maxLength: 254, 'x-error-code': 'receivable.missing_fields', description: 'The customer (case-insensitive).' },
    currency: { ...currencyCode, 'x-error-code': 'receivable.invalid_currency', description: 'Only receivables in this currency (default MXN): totals never mix currencies.' },
  },
} as const;
export type StatementQuery = FromSchema<typeof statementQuery>;

export const statementResource = {
  type: 'object',
  required: ['object', 'customer_email', 'currency', 'receivables', 'total_open_minor', 'total_overdue_minor', 'total_paid_minor', 'as_of'],
  properties: {
    object: { const: 'receivable_statement' },
    customer_email: { type: 'string' },
    customer_name: { type: 'string', description: 'The name on the customer\'s latest receivable.' },
    currency: { type: 'string' },
    receivables: { type: 'array', items: receivableResource, description: 'Every receivable of the customer in the currency, by due date (canceled ones included, counted in no total).' },
    total_open_minor: { type: 'integer', description: 'Unpaid and not yet due.' },
    total_overdue_minor: { type: 'integer', description: 'Unpaid and past due.' },
    total_paid_minor: { type: 'integer' },
    as_of: { ...timestamp, description: 'The tenant clock the statuses were derived with.' },
  },
} as const;

export const ageingQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    customer_email: { type: 'string', minLength: 1, maxLength: 254, description: 'Only this customer.' },
    currency: { ...currencyCode, 'x-error-code': 'receivable.invalid_currency', description: 'Only this currency (rows are per customer and currency).' },
  },
} as const;
export type AgeingQuery = FromSchema<typeof ageingQuery>;

export const ageingRow = {
  type: 'object',
  required: ['customer_email', 'customer_name', 'currency', 'bucket0_to30_minor', 'bucket31_to60_minor', 'bucket61_to90_minor', 'bucket90_plus_minor', 'total_minor'],
  properties: {
    customer_email: { type: 'string' },
    customer_name: { type: 'string', description: 'The name on the customer\'s unpaid receivables (the greatest, alphabetically, if they differ).' },
    currency: { type: 'string' },
    bucket0_to30_minor: { type: 'integer', description: 'Unpaid, 0 to 30 whole days past due (due today counts as 0).' },
    bucket31_to60_minor: { type: 'integer' },
    bucket61_to90_minor: { type: 'integer' },
    bucket90_plus_minor: { type: 'integer', description: 'More than 90 whole days past due (91 and over).' },
    total_minor: { type: 'integer' },
  },
} as const;

export const ageingResource = {
  type: 'object',
  required: ['object', 'data', 'as_of'],
  properties: { object: { const: 'list' }, data: { type: 'array', items: ageingRow }, as_of: timestamp },
} as const;

export const whatsappResource = {
  type: 'object',
  required: ['url'],
  properties: { url: { type: 'string', description: '`https://wa.me/<international number>?text=<Spanish message with amount, concepto, due date and the absolute payment-link URL>`' } },
} as const;
