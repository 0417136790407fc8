// Bank statements and reconciliation (service-spec: bank_statement and bank_statement_line, Bank
// reconciliation; decisions.md §3, §6; docs/bank-statements.md).
import { timestamp, uuid } from './common.js';

const day = { type: 'string', format: 'date', description: 'yyyy-MM-dd' } as const;
const column = (what: string) => ({ type: 'string', pattern: '^[0-9]+$', description: `0-based column number of ${what}.` }) as const;

/** The import's fields: query parameters of a raw-body import, or form fields of a multipart one (a form field wins over the query). */
export const importFieldsDoc = {
  type: 'object',
  properties: {
    bank: { type: 'string', maxLength: 100, description: 'Required: the bank or account the statement comes from (free text, e.g. `BBVA 0123`). Names the ledger account `bank:<bank>` a match debits. Missing: `bank_statement.bank_required`.' },
    period_start: { ...day, description: 'Required, yyyy-MM-dd. Missing, invalid or after `period_end`: `bank_statement.invalid_period`.' },
    period_end: { ...day, description: 'Required, yyyy-MM-dd, not before `period_start`.' },
    tolerance_days: { type: 'string', pattern: '^[0-9]+$', description: 'Days allowed between a line\'s value date and the day its charge succeeded (America/Mexico_City). Default 3; 0 to 366. Negative or not an integer: `bank_statement.invalid_tolerance`.' },
    preset: { type: 'string', enum: ['bbva', 'banorte', 'santander'], description: 'The bank export layout, read by header name (docs/bank-statements.md). Another value: `bank_statement.unknown_preset`. With a preset the explicit columns are ignored (except `reference_column`).' },
    date_column: column('the value date'),
    description_column: column('the description'),
    credit_column: column('the credit (abono, deposit)'),
    debit_column: column('the debit (cargo, withdrawal)'),
    reference_column: column('the reference compared with the charge (optional; overrides the preset\'s)'),
    has_header: { type: 'string', enum: ['true', 'false'], description: 'Default true. With a preset the header row is found by its names among the first 30 rows; with columns it is the first row wide enough for them (title lines above it are skipped).' },
    filename: { type: 'string', maxLength: 255, description: 'Raw-body import only: the file name to keep (a multipart import takes the `file` part\'s).' },
  },
} as const;

export const importRequestContent = {
  'multipart/form-data': {
    schema: {
      type: 'object',
      required: ['file'],
      properties: { file: { type: 'string', contentMediaType: 'text/csv', description: 'The statement as downloaded from the bank (CSV/TXT; UTF-8 with or without BOM, or Windows-1252). At most 5 MiB.' }, ...importFieldsDoc.properties },
    },
    encoding: { file: { contentType: 'text/csv, text/plain, application/octet-stream' } },
  },
  'text/csv': { schema: { type: 'string', description: 'The file itself as the body (fields in the query). At most 5 MiB.' } },
  'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
} as const;

export const statementResource = {
  type: 'object',
  required: ['id', 'object', 'bank', 'period_start', 'period_end', 'lines_total', 'matched', 'partial', 'unmatched', 'exceptions', 'already_imported'],
  properties: {
    id: uuid,
    object: { const: 'bank_statement' },
    bank: { type: 'string' },
    period_start: day,
    period_end: day,
    filename: { type: 'string' },
    tolerance_days: { type: 'integer' },
    preset: { type: 'string', enum: ['bbva', 'banorte', 'santander'] },
    lines_total: { type: 'integer', description: 'Credit lines stored (debit rows are read and checked but not stored: see `debit_rows`).' },
    matched: { type: 'integer' },
    partial: { type: 'integer' },
    unmatched: { type: 'integer' },
    exceptions: { type: 'integer', description: '`partial` lines plus `charges_without_line`: what a person must look at.' },
    charges_without_line: { type: 'integer', description: 'Succeeded SPEI charges whose day (America/Mexico_City) is in the period and that no line of any statement matched.' },
    debit_rows: { type: 'integer', description: 'Debit (cargo) rows of the file (commissions, transfers out): stored apart and posted against `bank_suspense` (issue 27).' },
    duplicates: { type: 'integer', description: 'Lines (credit or debit) that repeat a line already imported from the same bank (a re-export of the same movements): neither matched nor posted.' },
    file_sha256: { type: 'string', description: 'The idempotency of the import: the same file again answers this statement with `already_imported: true`.' },
    already_imported: { type: 'boolean', description: 'True when this answer is an earlier import of the same file (nothing was stored or posted again).' },
    livemode: { type: 'boolean' },
    created_at: timestamp,
  },
} as const;

export const lineResource = {
  type: 'object',
  required: ['id', 'object', 'value_date', 'description', 'credit_minor', 'currency', 'match_status'],
  properties: {
    id: { type: 'integer' },
    object: { const: 'bank_statement_line' },
    statement_id: uuid,
    row_number: { type: 'integer', description: 'Line of the file.' },
    value_date: day,
    description: { type: 'string' },
    reference: { type: 'string', description: 'Compared with the SPEI attempt\'s `provider_ref` and the intent\'s `receipt_code`. Omitted when the line has none.' },
    credit_minor: { type: 'integer' },
    currency: { type: 'string' },
    match_status: { type: 'string', enum: ['matched', 'unmatched', 'partial', 'duplicate'], description: 'matched: a reference (the reference column or a token of the concept equal to the charge\'s clave de rastreo / provider_ref or receipt code, or the referencia numérica of its SPEI instructions within the date tolerance), the amount and the date (within `tolerance_days`) agree with a succeeded SPEI charge; partial: the reference names a charge but the amount differs, or only the amount and date agree with exactly one charge (`match_rule` amount_date); duplicate: the line repeats one already imported from the same bank; unmatched: none of these. Unmatched and partial lines are posted to `bank_suspense` at import.' },
    match_rule: { type: 'string', enum: ['clave_rastreo', 'reference', 'concept', 'referencia_numerica', 'amount_date'], description: 'What tied the line to its charge: `referencia_numerica` = the reference column or a token of the concept is the 7-digit referencia numérica of the charge\'s SPEI instructions (zero-padded or not), within the date tolerance.' },
    payment_intent_id: { ...uuid, description: 'The charge of a matched or partial line.' },
    attempt_id: uuid,
    matched_by: { type: 'string', enum: ['import', 'charge_succeeded', 'rematch', 'manual'], description: 'manual: POST /v1/bank_statements/{id}/lines/{line}/match.' },
    matched_at: timestamp,
  },
} as const;

export const statementList = { type: 'object', required: ['object', 'data'], properties: { object: { const: 'list' }, data: { type: 'array', items: statementResource } } } as const;

const paged = (item: object) =>
  ({
    type: 'object',
    required: ['object', 'data', 'has_more'],
    properties: { object: { const: 'list' }, data: { type: 'array', items: item }, has_more: { type: 'boolean' }, next_cursor: { type: 'string', description: 'Omitted when `has_more` is false.' } },
  }) as const;

export const lineList = paged(lineResource);

export const reconciliationResource = {
  type: 'object',
  required: ['object', 'statement', 'lines', 'charges_without_line'],
  properties: {
    object: { const: 'bank_reconciliation' },
    statement: statementResource,
    lines: paged({
      type: 'object',
      properties: {
        line: lineResource,
        charge: {
          type: 'object',
          description: 'The charge of a matched or partial line.',
          properties: {
            payment_intent_id: uuid, attempt_id: uuid, status: { type: 'string' }, amount_minor: { type: 'integer', description: 'Total charged (amount + tip).' },
            receipt_code: { type: 'string' }, provider_ref: { type: 'string' }, connector_key: { type: 'string' }, succeeded_at: timestamp,
          },
        },
        ledger: { type: 'object', properties: { capture_entry_id: uuid, bank_deposit_entry_id: { ...uuid, description: 'The entry the match posted (bank debited, the rail\'s clearing account credited); omitted for a partial line.' } } },
        invoice: { type: 'object', description: 'The CFDI of the charge, when there is one.', properties: { id: uuid, uuid_fiscal: { type: 'string' }, status: { type: 'string' } } },
      },
    }),
    charges_without_line: {
      type: 'array',
      description: 'Succeeded SPEI charges of the period that no line of any statement matched (at most 1,000, oldest first).',
      items: {
        type: 'object',
        properties: {
          payment_intent_id: uuid, attempt_id: uuid, amount_minor: { type: 'integer' }, currency: { type: 'string' }, receipt_code: { type: 'string' },
          provider_ref: { type: 'string' }, succeeded_at: timestamp, capture_entry_id: uuid, uuid_fiscal: { type: 'string' },
        },
      },
    },
  },
} as const;

export const linesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    match_status: { type: 'string', enum: ['matched', 'unmatched', 'partial', 'duplicate'], 'x-error-code': 'bank_statement.invalid_match_status', description: 'Only lines with this status.' },
    cursor: { type: 'string', maxLength: 100, 'x-error-code': 'bank_statement.invalid_cursor', description: 'The `next_cursor` of the previous page, as received.' },
    limit: { type: 'integer', minimum: 1, description: 'Default 100; values above 500 are clamped to 500.' },
  },
} as const;

export const statementListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'integer', minimum: 1, description: 'Default 100; values above 500 are clamped to 500.' } },
} as const;
