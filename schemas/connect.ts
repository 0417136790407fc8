// Onboarding applications, Connect accounts and transfers, payouts and their approvals, STP
// credentials. spec: Resources > onboarding_application, connect_account and connect_transfer,
// payout; Endpoints > Sub-merchant onboarding, Connect, Payouts; Errors > Onboarding, Connect,
// Payouts; decisions.md §2, §3, §5, §6.
import type { FromSchema } from 'json-schema-to-ts';
import { currencyCode, listOf, timestamp, uuid } from './common.js';

const DOCUMENT_TYPES = ['ine', 'comprobante_domicilio', 'constancia_fiscal', 'caratula_estado_cuenta'] as const;
const MAX_MINOR = 99_999_999_999;

// ---- onboarding ------------------------------------------------------------------------------

const legalName = { type: 'string', minLength: 1, maxLength: 300, 'x-error-code': 'onboarding_application.invalid_legal_name', 'x-error-message': '`legal_name` must be a non-empty string (the razón social or the person\'s full name).' } as const;
const personType = { enum: ['fisica', 'moral'], 'x-error-code': 'onboarding_application.invalid_person_type', 'x-error-message': '`person_type` must be `fisica` (13-character RFC) or `moral` (12-character RFC).' } as const;
const contactEmail = { type: 'string', format: 'email', maxLength: 254, 'x-error-code': 'onboarding_application.invalid_contact_email', 'x-error-message': '`contact_email` must be an email address.' } as const;

export const createApplicationBody = {
  type: 'object',
  additionalProperties: false,
  required: ['legal_name', 'person_type', 'contact_email'],
  properties: {
    legal_name: legalName,
    person_type: personType,
    contact_email: contactEmail,
    rfc: { type: 'string', minLength: 1, maxLength: 20, description: 'Checked at submit (validate-rfc; 13 characters for a persona física, 12 for a moral).' },
    clabe: { type: 'string', minLength: 1, maxLength: 40, description: 'Settlement account; checked at submit (18 digits, 3-7-1 check digit, a known bank). Stored encrypted, shown only as `clabe_masked`.' },
  },
} as const;
export type CreateApplicationBody = FromSchema<typeof createApplicationBody>;

export const applicationDocument = {
  type: 'object',
  additionalProperties: false,
  required: ['document_type', 'reference', 'reference_hash'],
  'x-error-code': 'onboarding_application.invalid_document',
  properties: {
    document_type: { enum: DOCUMENT_TYPES, 'x-error-code': 'onboarding_application.invalid_document', 'x-error-message': `\`document_type\` must be one of: ${DOCUMENT_TYPES.join(', ')}.` },
    reference: { type: 'string', minLength: 1, maxLength: 500, 'x-error-code': 'onboarding_application.invalid_document', 'x-error-message': 'Each document needs `reference`: where the file is kept (an id or URL of your storage).' },
    reference_hash: { type: 'string', minLength: 1, maxLength: 200, 'x-error-code': 'onboarding_application.invalid_document', 'x-error-message': 'Each document needs `reference_hash`: a digest of the file (e.g. its SHA-256 in hex).' },
  },
} as const;

export const patchApplicationBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...createApplicationBody.properties,
    documents: {
      type: 'array',
      maxItems: 20,
      items: applicationDocument,
      'x-error-code': 'onboarding_application.invalid_document',
      description: 'Each document replaces an earlier one of the same `document_type`; the others stay.',
    },
  },
} as const;
export type PatchApplicationBody = FromSchema<typeof patchApplicationBody>;

export const decisionBody = {
  type: 'object',
  additionalProperties: false,
  properties: { reason: { type: 'string', minLength: 1, maxLength: 1000, description: 'Recorded as `status_reason`.' } },
} as const;
export type DecisionBody = FromSchema<typeof decisionBody>;

export const applicationResource = {
  type: 'object',
  required: ['id', 'object', 'status', 'legal_name', 'person_type', 'contact_email', 'created_at', 'updated_at'],
  properties: {
    id: uuid,
    object: { const: 'onboarding_application' },
    status: { enum: ['draft', 'needs_info', 'approved', 'rejected'] },
    legal_name: { type: 'string' },
    person_type: { enum: ['fisica', 'moral'] },
    contact_email: { type: 'string' },
    rfc: { type: 'string' },
    clabe_masked: { type: 'string', description: 'Bank code and last four digits; the full CLABE is never shown.', examples: ['646***********0007'] },
    documents: {
      type: 'array',
      description: 'On read; not in lists.',
      items: {
        type: 'object',
        required: ['document_type', 'reference', 'reference_hash', 'created_at'],
        properties: { document_type: { enum: DOCUMENT_TYPES }, reference: { type: 'string' }, reference_hash: { type: 'string' }, created_at: timestamp },
      },
    },
    status_reason: { type: 'string' },
    resolved_by: { type: 'string', description: '`automatic_verifier` (submit) or `operator` (operator API).' },
    submitted_at: timestamp,
    resolved_at: timestamp,
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;
export const applicationList = listOf(applicationResource);

export const applicationListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { enum: ['draft', 'needs_info', 'approved', 'rejected'] },
    limit: { type: 'integer', minimum: 1, description: 'Default 100; values above 500 are clamped to 500.' },
  },
} as const;
export type ApplicationListQuery = FromSchema<typeof applicationListQuery>;

export const limitQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'integer', minimum: 1, description: 'Default 100; values above 500 are clamped to 500.' } },
} as const;
export type LimitQuery = FromSchema<typeof limitQuery>;

// ---- Connect ---------------------------------------------------------------------------------

export const createAccountBody = {
  type: 'object',
  additionalProperties: false,
  required: ['onboarding_application_id'],
  properties: {
    onboarding_application_id: { ...uuid, 'x-error-code': 'connect.invalid_application_id', 'x-error-message': '`onboarding_application_id` must be the UUID of an approved onboarding application.' },
    connector_key: { enum: ['stp', 'sim'], default: 'stp', 'x-error-code': 'payout.invalid_connector', 'x-error-message': '`connector_key` must be `stp` (simulated in test mode) or `sim` (test mode only).', description: 'Payout rail of the account; default `stp`, simulated in test mode.' },
  },
} as const;
export type CreateAccountBody = FromSchema<typeof createAccountBody>;

export const accountResource = {
  type: 'object',
  required: ['id', 'object', 'onboarding_application_id', 'settlement_clabe_masked', 'sub_merchant_name', 'status', 'connector_key', 'livemode', 'created_at'],
  properties: {
    id: uuid,
    object: { const: 'connect_account' },
    onboarding_application_id: uuid,
    settlement_clabe_masked: { type: 'string', description: 'The full CLABE is never exposed.' },
    sub_merchant_name: { type: 'string' },
    status: { enum: ['active', 'suspended'], description: '`suspended` accounts refuse transfers (connect.account_suspended).' },
    connector_key: { type: 'string' },
    livemode: { type: 'boolean' },
    created_at: timestamp,
  },
} as const;
export const accountList = listOf(accountResource);

export const createTransferBody = {
  type: 'object',
  additionalProperties: false,
  required: ['payment_intent_id', 'charge_amount_minor', 'application_fee_minor', 'currency', 'splits'],
  properties: {
    payment_intent_id: { ...uuid, 'x-error-code': 'connect.invalid_payment_intent', 'x-error-message': '`payment_intent_id` must be the UUID of a succeeded payment intent of this account.' },
    charge_amount_minor: { type: 'integer', minimum: 1, maximum: MAX_MINOR, 'x-error-code': 'connect.invalid_charge', 'x-error-message': '`charge_amount_minor` must be a positive integer of minor units.' },
    application_fee_minor: { type: 'integer', minimum: 0, maximum: MAX_MINOR, 'x-error-code': 'connect.invalid_charge', 'x-error-message': '`application_fee_minor` must be an integer of minor units, 0 or more.' },
    currency: { ...currencyCode, 'x-error-code': 'connect.invalid_currency' },
    splits: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      'x-error-code': 'connect.missing_allocations',
      'x-error-message': '`splits` needs at least one `{connect_account_id, amount_minor}`.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['connect_account_id', 'amount_minor'],
        'x-error-code': 'connect.invalid_allocation',
        properties: {
          connect_account_id: { ...uuid, 'x-error-code': 'connect.invalid_allocation', 'x-error-message': 'Each split needs `connect_account_id`, the UUID of a connect account.' },
          amount_minor: { type: 'integer', minimum: 1, maximum: MAX_MINOR, 'x-error-code': 'connect.invalid_allocation', 'x-error-message': 'Each split needs `amount_minor`, a positive integer of minor units.' },
        },
      },
    },
  },
} as const;
export type CreateTransferBody = FromSchema<typeof createTransferBody>;

export const transferResource = {
  type: 'object',
  required: ['id', 'object', 'payment_intent_id', 'charge_amount_minor', 'application_fee_minor', 'currency', 'status', 'created_at', 'splits'],
  properties: {
    id: uuid,
    object: { const: 'connect_transfer' },
    payment_intent_id: uuid,
    charge_amount_minor: { type: 'integer' },
    application_fee_minor: { type: 'integer' },
    currency: { type: 'string' },
    status: { const: 'split' },
    livemode: { type: 'boolean' },
    created_at: timestamp,
    splits: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'connect_account_id', 'amount_minor', 'status', 'payout_id'],
        properties: {
          id: uuid,
          connect_account_id: uuid,
          amount_minor: { type: 'integer' },
          status: { enum: ['dispersing', 'paid', 'failed', 'returned'], description: '`dispersing` while its payout is `processing`, then the payout\'s outcome.' },
          payout_id: uuid,
        },
      },
    },
  },
} as const;
export const transferList = listOf(transferResource);

// ---- payouts ---------------------------------------------------------------------------------

const missing = { 'x-error-code': 'payout.missing_fields' } as const;
export const createPayoutBody = {
  type: 'object',
  additionalProperties: false,
  required: ['amount_minor', 'currency'],
  properties: {
    clabe: { type: 'string', maxLength: 40, 'x-error-code': 'payout.invalid_clabe', description: 'Required. 18 digits with a valid check digit (3-7-1) and a known bank code. The payout shows it in full; events carry it masked.' },
    beneficiary_name: { type: 'string', maxLength: 200, ...missing, description: 'Required. Sent to SPEI folded to ASCII and cut at 39 characters. Test mode: `FAIL` makes the order fail.' },
    beneficiary_rfc: { type: 'string', maxLength: 20, 'x-error-code': 'payout.invalid_beneficiary_rfc', description: 'Optional; a valid RFC when sent.' },
    amount_minor: { type: 'integer', minimum: 1, maximum: MAX_MINOR, 'x-error-code': 'payout.invalid_amount', 'x-error-message': '`amount_minor` must be a positive integer of minor units (centavos).' },
    currency: { ...currencyCode, 'x-error-code': 'payout.invalid_currency' },
    concepto: { type: 'string', maxLength: 200, ...missing, description: 'Required. Sent to SPEI folded to ASCII and cut at 39 characters.' },
    reference: { type: 'string', minLength: 1, maxLength: 7, pattern: '^[0-9]{1,7}$', 'x-error-code': 'payout.invalid_reference', 'x-error-message': '`reference` must be 1 to 7 digits (SPEI referencia numérica); omit it to have one generated.' },
    connector_key: { enum: ['stp', 'sim'], default: 'stp', 'x-error-code': 'payout.invalid_connector', 'x-error-message': '`connector_key` must be `stp` (simulated in test mode) or `sim` (test mode only).' },
  },
} as const;
export type CreatePayoutBody = FromSchema<typeof createPayoutBody>;

export const payoutResource = {
  type: 'object',
  required: ['id', 'object', 'clabe', 'beneficiary_name', 'amount_minor', 'currency', 'concepto', 'reference', 'status', 'connector_key', 'livemode', 'created_at'],
  properties: {
    id: uuid,
    object: { const: 'payout' },
    clabe: { type: 'string', pattern: '^\\d{18}$', description: "The beneficiary's full CLABE (spec: payout). Stored sealed; never in logs, events (whose data carries `clabe_masked`) or traces.", examples: ['646180110400000007'] },
    beneficiary_name: { type: 'string' },
    beneficiary_rfc: { type: 'string' },
    amount_minor: { type: 'integer' },
    currency: { const: 'MXN' },
    concepto: { type: 'string' },
    reference: { type: 'string', description: 'Referencia numérica (generated when not sent).' },
    status: { enum: ['processing', 'paid', 'failed', 'returned'], description: '`processing` until the rail settles it (`paid`) or refuses it (`failed`); a paid payout sent back by the beneficiary\'s bank (devolución) is `returned`.' },
    connector_key: { type: 'string' },
    livemode: { type: 'boolean' },
    created_at: timestamp,
    provider_ref: { type: 'string', description: 'The rail\'s order id, once the worker sent it.' },
    tracking_key: { type: 'string', description: 'Clave de rastreo (SPEI tracking key), once the worker sent it.' },
    failure_reason: { type: 'string', description: 'When `failed` or `returned`; also on a `processing` payout while the rail refuses the connection to ask about an order that may have been sent (a configuration error: no VPN, an IP not registered): the payout is not failed, and the reason clears when the rail answers.' },
  },
} as const;
export const payoutList = listOf(payoutResource);

export const payoutApprovalResource = {
  type: 'object',
  required: ['id', 'object', 'status', 'amount_minor', 'currency', 'clabe', 'clabe_masked', 'beneficiary_name', 'concepto', 'livemode', 'created_at'],
  properties: {
    id: uuid,
    object: { const: 'payout_approval' },
    status: { enum: ['pending', 'approved', 'rejected'] },
    amount_minor: { type: 'integer' },
    currency: { type: 'string' },
    clabe: { type: 'string', description: 'The CLABE the payout will go to, as requested (in full, like the payout it asks for).' },
    clabe_masked: { type: 'string', description: 'The same CLABE masked.' },
    beneficiary_name: { type: 'string' },
    concepto: { type: 'string' },
    approver: { type: 'string' },
    payout_id: uuid,
    livemode: { type: 'boolean' },
    created_at: timestamp,
    resolved_at: timestamp,
  },
} as const;

export const payoutSettingsBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  'x-error-code': 'tenant_settings.invalid',
  properties: {
    payout_approval_threshold_minor: { type: 'integer', minimum: 0, description: 'Payouts above this amount need a second approver (202 with a pending payout_approval).' },
    payout_approval_disabled: { const: true, description: 'Removes the threshold.' },
  },
} as const;
export type PayoutSettingsBody = FromSchema<typeof payoutSettingsBody>;

export const stpCredentialsBody = {
  type: 'object',
  additionalProperties: false,
  required: ['empresa', 'cuenta_ordenante', 'private_key_pem', 'passphrase'],
  'x-error-code': 'payout_credentials.invalid',
  properties: {
    empresa: { type: 'string', minLength: 1, maxLength: 50, description: 'Company code STP assigned.' },
    cuenta_ordenante: { type: 'string', pattern: '^[0-9]{18}$', description: 'Your own STP account (CLABE) that pays: the money leaves it.' },
    nombre_ordenante: { type: 'string', maxLength: 100 },
    rfc_curp_ordenante: { type: 'string', maxLength: 18 },
    private_key_pem: { type: 'string', minLength: 64, maxLength: 20_000, description: 'The company private key STP knows the public half of (PEM; usually encrypted).' },
    passphrase: { type: 'string', maxLength: 200 },
  },
} as const;
export type StpCredentialsBody = FromSchema<typeof stpCredentialsBody>;

export const credentialsResource = {
  type: 'object',
  required: ['object', 'connector_key', 'empresa', 'cuenta_ordenante_masked', 'livemode', 'updated_at'],
  properties: {
    object: { const: 'payout_credentials' },
    connector_key: { const: 'stp' },
    empresa: { type: 'string' },
    cuenta_ordenante_masked: { type: 'string' },
    key_fingerprint: { type: 'string', description: 'SHA-256 of the public key (hex, first 16): tells keys apart; the private key and passphrase are never readable back.' },
    livemode: { type: 'boolean' },
    updated_at: timestamp,
  },
} as const;

export const stpCallbackAck = { type: 'object', properties: { mensaje: { const: 'recibido' } } } as const;
