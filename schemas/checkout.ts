// Public checkout and payment links. spec: Public checkout; decisions.md §3 (payment links).
import type { FromSchema } from 'json-schema-to-ts';
import { currencyCode, listOf, metadata, timestamp, uuid } from './common.js';
import { nextActionSchema, returnUrlSchema } from './payment-intents.js';

export const publicConfirmBody = {
  type: 'object',
  additionalProperties: false,
  required: ['client_secret', 'payment_token', 'payment_method'],
  properties: {
    client_secret: { type: 'string', minLength: 1, maxLength: 200 },
    payment_token: { type: 'string', minLength: 1, maxLength: 200 },
    payment_method: { type: 'string', minLength: 1, maxLength: 40 },
    tip_minor: { type: 'integer', minimum: 0, maximum: 99_999_999_999, 'x-error-code': 'payment_intent.invalid_tip', description: 'Sent replaces the tip; omitted keeps it.' },
    return_url: returnUrlSchema,
  },
} as const;
export type PublicConfirmBody = FromSchema<typeof publicConfirmBody>;

export const publicIntentResource = {
  type: 'object',
  required: ['id', 'object', 'amount_minor', 'tip_minor', 'total_minor', 'currency', 'status'],
  description: 'The public projection: never client_secret, attempts, provider_ref, metadata or livemode.',
  properties: {
    id: uuid,
    object: { const: 'payment_intent' },
    amount_minor: { type: 'integer' },
    tip_minor: { type: 'integer' },
    total_minor: { type: 'integer' },
    currency: { type: 'string' },
    status: { type: 'string' },
    next_action: nextActionSchema,
  },
} as const;

export const checkoutConfigResource = {
  type: 'object',
  required: ['object', 'payment_intent_id', 'amount_minor', 'currency', 'allowed_methods', 'tip_suggestions', 'merchant_display_name'],
  properties: {
    object: { const: 'checkout_config' },
    payment_intent_id: uuid,
    amount_minor: { type: 'integer' },
    tip_minor: { type: 'integer' },
    total_minor: { type: 'integer' },
    currency: { type: 'string' },
    status: { type: 'string' },
    allowed_methods: { type: 'array', items: { enum: ['card', 'spei', 'codi', 'oxxo'] } },
    tip_suggestions: { type: 'array', items: { type: 'object', properties: { percent: { type: 'integer' }, amount_minor: { type: 'integer' } } }, description: 'Empty when the checkout offers no tip.' },
    tips_enabled: { type: 'boolean', description: "False on a receivable's page (B2B) and when the merchant turned tips off (PUT /v1/checkout_settings): the page shows no tip chooser." },
    merchant_display_name: { type: 'string' },
    logo_url: { type: ['string', 'null'], description: 'The merchant logo (PUT /v1/checkout_settings); null: the page shows the initials.' },
    privacy_url: { type: ['string', 'null'], description: "The merchant's privacy notice (aviso de privacidad), linked in the page footer." },
    terms_url: { type: ['string', 'null'], description: "The merchant's terms, linked in the page footer." },
    concepto: { type: 'string' },
    receipt_code: { type: 'string', pattern: '^W-[0-9A-Z]{5}$', description: 'The receipt code (shown after payment; the reference to write in a SPEI transfer).' },
    self_invoice_url: { type: ['string', 'null'], description: 'The self-invoice page with the receipt code filled in, when the merchant has self-invoicing on in this mode.' },
    spei_bank: { type: ['string', 'null'], description: 'Short name of the bank of the CLABE to transfer to (e.g. STP), while a SPEI transfer is awaited.' },
    last_payment_error: {
      type: ['object', 'null'],
      description: "Why the last attempt was declined, as a code (e.g. insufficient_funds) and its kind (hard_decline, soft_decline); the page words it in Spanish.",
      properties: { code: { type: 'string' }, decline: { type: ['string', 'null'] } },
    },
    awaiting_capture: { type: 'boolean', description: 'Processing with an authorized attempt: the merchant captures it later.' },
    test_mode: { type: 'boolean', description: 'True for test-mode intents: the kit offers the sim card tokens.' },
    test_tokens: { type: 'array', items: { type: 'string' } },
    card_tokenizer: {
      type: 'object',
      description: 'Live mode: the card connector whose browser tokenizer the checkout uses (web/tokenize.js); public keys only. The checkout confirms with `<connector>:<token>`, charged on that connector only.',
      properties: { connector: { enum: ['conekta', 'openpay'] }, public_key: { type: 'string' }, merchant_id: { type: 'string' }, sandbox: { type: 'boolean' } },
    },
  },
} as const;

const httpsUrl = { type: ['string', 'null'], maxLength: 2000, pattern: '^https://[^\\s]+$' } as const;

export const checkoutSettingsBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    logo_url: {
      type: ['string', 'null'],
      maxLength: 140_000,
      pattern: '^(https://[^\\s]+|data:image/(png|jpeg|webp|svg\\+xml);base64,[A-Za-z0-9+/=]+)$',
      description: 'An https URL or a data:image/(png|jpeg|webp|svg+xml);base64 image of up to 100 kB.',
    },
    privacy_url: { ...httpsUrl, description: 'Aviso de privacidad (https).' },
    terms_url: { ...httpsUrl, description: 'Términos y condiciones (https).' },
    allowed_origins: {
      type: ['array', 'null'],
      maxItems: 20,
      uniqueItems: true,
      'x-error-code': 'checkout.invalid_settings',
      items: { type: 'string', maxLength: 300, pattern: '^https?://[^/\\s?#]+/?$', 'x-error-message': 'Each of `allowed_origins` is an origin: scheme and host (and port), e.g. https://tienda.example.mx or http://localhost:3000, with no path.' },
      description:
        'The web origins whose pages may use the browser kit and `/public/*` for this merchant (decisions §7). Omitted or null: any origin (the client secret is the credential). ' +
        'Set: a request from another page (its `Origin`) is refused with 403 `checkout.origin_unauthorized`, and a `return_url` must be on one of them. Orquesta\'s own pages (`/pay`) are always allowed.',
    },
    tips_enabled: { type: ['boolean', 'null'], description: 'Whether the checkout offers a tip (default true; false: no tip chooser, and a tip sent to /public confirm is refused). A receivable\'s page never offers one (B2B).' },
  },
} as const;
export type CheckoutSettingsBody = FromSchema<typeof checkoutSettingsBody>;

export const checkoutSettingsResource = {
  type: 'object',
  required: ['object'],
  description: 'A field not set is omitted.',
  properties: {
    object: { const: 'checkout_settings' },
    logo_url: { type: ['string', 'null'] },
    privacy_url: { type: ['string', 'null'] },
    terms_url: { type: ['string', 'null'] },
    allowed_origins: { type: ['array', 'null'], items: { type: 'string' }, description: 'Null: any origin.' },
    tips_enabled: { type: 'boolean' },
  },
} as const;

export const createPaymentLinkBody = {
  type: 'object',
  additionalProperties: false,
  required: ['amount_minor', 'currency', 'concepto'],
  properties: {
    amount_minor: { type: 'integer', minimum: 1, maximum: 99_999_999_999, 'x-error-code': 'payment_intent.invalid_amount', 'x-required-error-code': 'payment_intent.invalid_amount', 'x-error-message': '`amount_minor` must be a positive integer of minor units.' },
    currency: { ...currencyCode, 'x-error-code': 'payment_intent.invalid_currency', 'x-required-error-code': 'payment_intent.invalid_amount', 'x-required-error-message': 'The amount has no currency: send `currency` (an ISO 4217 code such as MXN) with `amount_minor`; a missing currency is reported as payment_intent.invalid_amount (spec: Errors, "amount not positive or currency missing").' },
    concepto: { type: 'string', minLength: 1, maxLength: 300 },
    reusable: { type: 'boolean', default: false },
    metadata,
  },
} as const;
export type CreatePaymentLinkBody = FromSchema<typeof createPaymentLinkBody>;

export const paymentLinkResource = {
  type: 'object',
  required: ['id', 'object', 'slug', 'url', 'amount_minor', 'currency', 'concepto', 'reusable', 'active', 'created_at'],
  properties: {
    id: uuid,
    object: { const: 'payment_link' },
    slug: { type: 'string' },
    url: { type: 'string', description: '/pay/{slug}' },
    amount_minor: { type: 'integer' },
    currency: { type: 'string' },
    concepto: { type: 'string' },
    reusable: { type: 'boolean' },
    active: { type: 'boolean' },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    paid_at: timestamp,
    livemode: { type: 'boolean' },
    created_at: timestamp,
  },
} as const;
export const paymentLinkList = listOf(paymentLinkResource);
