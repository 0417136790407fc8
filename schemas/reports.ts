// Reports (spec: Resources > Reports, Endpoints > Reports; decisions.md §6 pólizas; docs/reports.md).
import { currencyCode, timestamp, uuid } from './common.js';

const bound = (name: 'from' | 'to', what: string) =>
  ({
    type: 'string',
    maxLength: 40,
    'x-error-code': 'reports.invalid_period',
    description: `${what} ISO 8601: a date (a day of the books, America/Mexico_City) or a date-time (UTC without an offset). The window is [from, to).`,
    examples: [name === 'from' ? '2026-03-01' : '2026-04-01'],
  }) as const;

const currency = { ...currencyCode, 'x-error-code': 'reports.invalid_currency', description: 'ISO 4217, default MXN.' } as const;

export const cashCutQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['from', 'to'],
  properties: {
    from: { ...bound('from', 'Required.'), 'x-required-error-code': 'reports.invalid_period' },
    to: { ...bound('to', 'Required.'), 'x-required-error-code': 'reports.invalid_period' },
    branch: { type: 'string', maxLength: 500, description: 'Exact match on `metadata.branch`; `by_branch` is then omitted.' },
    register: { type: 'string', maxLength: 500, description: 'Exact match on `metadata.register`.' },
    terminal_id: { type: 'string', maxLength: 500, description: 'Exact match on `metadata.terminal_id`: the charges taken on one terminal (docs/terminals.md).' },
    currency,
  },
} as const;

export const windowQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { from: bound('from', 'Optional.'), to: bound('to', 'Optional.'), currency },
} as const;

export const anomaliesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { from: bound('from', 'Optional (default: 30 days before `to`).'), to: bound('to', 'Optional (default: now on the account\'s clock).') },
} as const;

export const polizasQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['format'],
  properties: {
    format: { type: 'string', enum: ['contpaqi', 'aspel_coi'], 'x-error-code': 'reports.invalid_format', 'x-required-error-code': 'reports.invalid_format', description: 'Required, no default.' },
    from: bound('from', 'Optional (default: the first day of the current month).'),
    to: bound('to', 'Optional (default: the first day of the next month).'),
  },
} as const;

export const paymentsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    cursor: { type: 'string', maxLength: 600, 'x-error-code': 'reports.invalid_cursor', description: 'The `next_cursor` of the previous page, as received.' },
    limit: { type: 'integer', minimum: 1, description: 'Default 20; values above 100 are clamped to 100.' },
  },
} as const;

export const accountMappingBody = {
  type: 'object',
  additionalProperties: false,
  'x-error-code': 'reports.invalid_account_mapping',
  properties: {
    rules: {
      type: 'object',
      maxProperties: 500,
      additionalProperties: { type: 'string' },
      'x-error-code': 'reports.invalid_account_mapping',
      description: 'Ledger account (e.g. `sales`, `connector_fees:sim`) or `prefix:*` → the tenant\'s accounting code (1–20 characters: letters, digits, `.`, `-`). An exact account wins over its prefix rule; unmapped accounts use the SAT código agrupador default.',
      examples: [{ sales: '4010100000', 'connector_fees:*': '6017500000' }],
    },
    contpaqi_poliza_type: { type: 'integer', minimum: 1, maximum: 9999, 'x-error-code': 'reports.invalid_account_mapping', description: 'CONTPAQi tipo de póliza number; default 3 (Diario).' },
    aspel_poliza_type: { type: 'string', pattern: '^[A-Za-z]{1,2}$', 'x-error-code': 'reports.invalid_account_mapping', description: 'Aspel COI tipo de póliza code; default `Dr` (Diario).' },
    folio_offset: { type: 'integer', minimum: 0, maximum: 99000, 'x-error-code': 'reports.invalid_account_mapping', description: 'Póliza number = folio_offset + day of the month; default 9000 (9001–9031: out of the range of a company\'s own daily pólizas, which a re-import would otherwise overwrite).' },
  },
} as const;

const breakdownRow = {
  type: 'object',
  required: ['key', 'charged_minor', 'tip_minor', 'total_minor', 'operation_count'],
  properties: { key: { type: 'string' }, charged_minor: { type: 'integer' }, tip_minor: { type: 'integer' }, total_minor: { type: 'integer' }, operation_count: { type: 'integer' } },
} as const;

export const cashCutResource = {
  type: 'object',
  required: ['object', 'currency', 'period_from', 'period_to', 'by_method', 'by_connector', 'totals', 'refunds'],
  properties: {
    object: { const: 'cash_cut' },
    livemode: { type: 'boolean' },
    currency: { type: 'string' },
    period_from: timestamp,
    period_to: timestamp,
    branch: { type: 'string' },
    register: { type: 'string' },
    terminal_id: { type: 'string', description: 'Present when the cut is filtered by terminal.' },
    by_method: { type: 'array', items: breakdownRow },
    by_connector: { type: 'array', items: breakdownRow },
    by_branch: { type: 'array', items: breakdownRow, description: 'Omitted when filtering by `branch`. Intents without `metadata.branch` are under `(sin sucursal)`.' },
    totals: { type: 'object', required: ['charged_minor', 'tip_minor', 'total_minor', 'operation_count'], properties: { charged_minor: { type: 'integer' }, tip_minor: { type: 'integer' }, total_minor: { type: 'integer' }, operation_count: { type: 'integer' } } },
    refunds: { type: 'object', required: ['count', 'amount_minor'], properties: { count: { type: 'integer' }, amount_minor: { type: 'integer' } } },
  },
} as const;

const savingsAmounts = {
  routing_saved_minor: { type: 'integer' },
  retry_recovered_minor: { type: 'integer' },
  dunning_recovered_minor: { type: 'integer' },
  total_minor: { type: 'integer' },
} as const;

export const savingsResource = {
  type: 'object',
  required: ['object', 'routing_saved_minor', 'retry_recovered_minor', 'dunning_recovered_minor', 'total_minor', 'by_connector', 'period_from', 'period_to'],
  properties: {
    object: { const: 'savings' },
    livemode: { type: 'boolean' },
    currency: { type: 'string' },
    period_from: timestamp,
    period_to: timestamp,
    ...savingsAmounts,
    by_connector: { type: 'array', items: { type: 'object', properties: { connector_key: { type: 'string' }, ...savingsAmounts } } },
  },
} as const;

export const paymentRow = {
  type: 'object',
  required: ['id', 'object', 'status', 'amount_minor', 'tip_minor', 'total_minor', 'currency', 'refunded_minor', 'created_at'],
  properties: {
    id: uuid,
    object: { const: 'payment' },
    payment_intent_id: uuid,
    status: { type: 'string' },
    amount_minor: { type: 'integer' },
    tip_minor: { type: 'integer' },
    total_minor: { type: 'integer' },
    currency: { type: 'string' },
    livemode: { type: 'boolean' },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    receipt_code: { type: 'string' },
    method: { type: 'string' },
    connector_key: { type: 'string' },
    attempt_id: uuid,
    attempt_status: { type: 'string' },
    fee_minor: { type: 'integer' },
    refunded_minor: { type: 'integer' },
    created_at: timestamp,
  },
} as const;

export const pagedList = (item: object) =>
  ({
    type: 'object',
    required: ['object', 'data', 'has_more'],
    properties: {
      object: { const: 'list' },
      data: { type: 'array', items: item },
      has_more: { type: 'boolean' },
      next_cursor: { type: 'string', description: 'Omitted when `has_more` is false.' },
    },
  }) as const;

export const anomalyResource = {
  type: 'object',
  required: ['object', 'rule', 'reason'],
  properties: {
    object: { const: 'anomaly' },
    rule: { type: 'string', enum: ['decline_rate_spike', 'refund_rate_spike', 'amount_mismatch', 'duplicate_charge', 'stale_processing'] },
    reason: { type: 'string', description: 'Why it was flagged, with the figures.' },
    day: { type: 'string', format: 'date' },
    occurred_at: timestamp,
    payment_intent_id: uuid,
    attempt_id: uuid,
    related_payment_intent_id: uuid,
    observed_rate: { type: 'number' },
    usual_rate: { type: 'number' },
    sample_size: { type: 'integer' },
    expected_minor: { type: 'integer' },
    observed_minor: { type: 'integer' },
  },
} as const;

export const anomalyList = {
  type: 'object',
  required: ['object', 'data'],
  properties: { object: { const: 'list' }, livemode: { type: 'boolean' }, period_from: timestamp, period_to: timestamp, data: { type: 'array', items: anomalyResource } },
} as const;

export const feeLeakageResource = {
  type: 'object',
  required: ['object', 'expected_fee_minor', 'charged_fee_minor', 'leakage_minor', 'by_connector', 'data'],
  properties: {
    object: { const: 'fee_leakage' },
    livemode: { type: 'boolean' },
    currency: { type: 'string' },
    period_from: timestamp,
    period_to: timestamp,
    expected_fee_minor: { type: 'integer' },
    charged_fee_minor: { type: 'integer' },
    leakage_minor: { type: 'integer', description: 'Sum of (charged − expected) over attempts charged more than their fee table says.' },
    by_connector: { type: 'array', items: { type: 'object' } },
    data: { type: 'array', items: { type: 'object', description: 'The largest overcharges (up to 100), each with its `reason`.' } },
  },
} as const;

const balanceRow = {
  type: 'object',
  properties: {
    account: { type: 'string' },
    code: { type: 'string' },
    code_source: { type: 'string', enum: ['tenant', 'default'] },
    name: { type: 'string' },
    opening_balance_minor: { type: 'integer' },
    debits_minor: { type: 'integer' },
    credits_minor: { type: 'integer' },
    closing_balance_minor: { type: 'integer' },
  },
} as const;

export const trialBalanceResource = {
  type: 'object',
  required: ['object', 'currency', 'period_from', 'period_to', 'accounts', 'totals', 'balanced'],
  properties: {
    object: { const: 'trial_balance' },
    livemode: { type: 'boolean' },
    currency: { type: 'string' },
    period_from: { type: 'string', format: 'date' },
    period_to: { type: 'string', format: 'date' },
    accounts: { type: 'array', items: balanceRow, description: 'Balances are debit-positive: opening + debits − credits = closing.' },
    totals: { type: 'object', description: 'Debits equal credits; opening and closing sum to zero.' },
    balanced: { type: 'boolean' },
    closed: { type: 'boolean', description: 'Whether the whole window lies in closed months.' },
    closed_through: { type: 'string', format: 'date', description: 'The books are closed before this day.' },
  },
} as const;

export const periodCloseResource = {
  type: 'object',
  required: ['object', 'year', 'month', 'status', 'closed_at', 'balances'],
  properties: {
    object: { const: 'period_close' },
    livemode: { type: 'boolean' },
    year: { type: 'integer' },
    month: { type: 'integer' },
    period_from: { type: 'string', format: 'date' },
    period_to: { type: 'string', format: 'date' },
    status: { const: 'closed' },
    closed_at: timestamp,
    balances: { type: 'array', items: { type: 'object' }, description: 'Frozen per account and currency: opening, debits, credits, closing.' },
    totals: { type: 'object' },
  },
} as const;

export const accountMappingResource = {
  type: 'object',
  required: ['object', 'rules', 'accounts'],
  properties: {
    object: { const: 'account_mapping' },
    livemode: { type: 'boolean' },
    rules: { type: 'object', additionalProperties: { type: 'string' } },
    accounts: { type: 'array', items: { type: 'object', properties: { account: { type: 'string' }, code: { type: 'string' }, source: { type: 'string', enum: ['tenant', 'default'] }, default_code: { type: 'string' }, name: { type: 'string' } } } },
    defaults: { type: 'array', items: { type: 'object' } },
    contpaqi_poliza_type: { type: 'integer' },
    aspel_poliza_type: { type: 'string' },
    folio_offset: { type: 'integer' },
    updated_at: timestamp,
  },
} as const;
