// Routing: the tenant's connector table, decisions, scores (issue 20; docs/routing.md); balance.
import { timestamp, uuid } from './common.js';

const schedule = {
  type: 'object',
  additionalProperties: false,
  required: ['bps', 'fixed_minor'],
  'x-error-code': 'routing.invalid_fees',
  properties: {
    bps: { type: 'integer', minimum: 0, maximum: 10000, 'x-error-code': 'routing.invalid_fees', description: 'MDR in basis points of the charged total (290 = 2.90%).' },
    fixed_minor: { type: 'integer', minimum: 0, maximum: 1_000_000, 'x-error-code': 'routing.invalid_fees', description: 'Fixed fee per charge, minor units.' },
  },
} as const;

const methodFees = {
  ...schedule,
  properties: {
    ...schedule.properties,
    brands: {
      type: 'object',
      maxProperties: 10,
      'x-error-code': 'routing.invalid_fees',
      propertyNames: { enum: ['visa', 'mastercard', 'amex', 'carnet'] },
      additionalProperties: schedule,
      description: 'Card brand schedules that replace the method\'s when the brand is known (a saved card).',
    },
  },
} as const;

const feesObject = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  'x-error-code': 'routing.invalid_fees',
  properties: { card: methodFees, spei: methodFees, codi: methodFees, oxxo: methodFees, dimo: methodFees },
} as const;

export const putConnectorBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: { type: 'boolean', 'x-error-code': 'routing.invalid_fees', description: 'Default true. A disabled connector stays stored but is never routed to.' },
    default: { type: 'boolean', 'x-error-code': 'routing.invalid_fees', description: 'The connector routing savings are measured against (one per mode); default: the first configured.' },
    fees: { ...feesObject, description: 'Per method. Omitted: the connector\'s published fees (sim, sim_b).' },
    credentials: {
      type: 'object',
      'x-error-code': 'routing.invalid_credentials',
      additionalProperties: { type: 'string', minLength: 1, maxLength: 4000 },
      description: 'conekta: `private_key`, `public_key`?, `webhook_public_key`? (PEM); openpay: `merchant_id`, `private_key`, `public_key`?, `webhook_user`?, `webhook_password`?. Stored sealed, never readable back; omitted keeps the stored ones.',
    },
  },
} as const;

const feesOut = { type: 'object', additionalProperties: { type: 'object' } } as const;

export const routingConnectorResource = {
  type: 'object',
  required: ['object', 'connector_key', 'enabled', 'default', 'fees', 'credentials'],
  properties: {
    object: { const: 'routing_connector' },
    connector_key: { type: 'string' },
    enabled: { type: 'boolean' },
    default: { type: 'boolean' },
    livemode: { type: 'boolean' },
    fees: feesOut,
    credentials: { type: 'object', properties: { configured: { type: 'boolean' }, hint: { type: 'string' } } },
    updated_at: timestamp,
  },
} as const;

/** One connector with what the provider needs from the tenant and its state (GET /v1/routing/connectors/{connector}). */
export const routingConnectorDetail = {
  type: 'object',
  required: [...routingConnectorResource.required, 'status'],
  properties: {
    ...routingConnectorResource.properties,
    webhook: {
      type: 'object',
      description: 'Where the provider delivers its webhooks and what the tenant registers there. Public values only.',
      properties: {
        url: { type: 'string', description: 'Path of this deployment to register at the provider (prefix the public origin).' },
        public_key: { type: 'string', description: 'Conekta: the webhook key (public half, PEM) the deliveries are checked with, as stored in the credentials.' },
        user: { type: 'string', description: 'Openpay: the webhook user the deliveries must carry (HTTP Basic).' },
        verification_code: { type: 'string', description: 'Openpay: the code of the last registration ping, to type into Openpay\'s dashboard to verify the webhook.' },
        verification_received_at: timestamp,
      },
    },
    status: {
      type: 'object',
      required: ['state'],
      description: 'From the latest calls since the configuration last changed: `ok`, `unused` (no call yet), `not_configured` (credentials missing), `invalid_credentials` (the provider refused them), `unreachable` (calls older than 2 minutes still without an answer: network access).',
      properties: {
        state: { enum: ['ok', 'unused', 'not_configured', 'invalid_credentials', 'unreachable'] },
        detail: { type: 'string' },
        at: timestamp,
      },
    },
  },
} as const;

export const routingConnectorList = {
  type: 'object',
  required: ['object', 'configured', 'data'],
  properties: { object: { const: 'list' }, configured: { type: 'boolean' }, data: { type: 'array', items: routingConnectorResource } },
} as const;

export const routingDecisionResource = {
  type: 'object',
  required: ['id', 'object', 'payment_intent_id', 'attempt_id', 'candidates', 'chosen', 'reason'],
  properties: {
    id: uuid,
    object: { const: 'routing_decision' },
    payment_intent_id: uuid,
    attempt_id: uuid,
    livemode: { type: 'boolean' },
    method: { type: 'string' },
    brand: { type: 'string' },
    amount_minor: { type: 'integer' },
    currency: { type: 'string' },
    candidates: {
      type: 'array',
      items: {
        type: 'object',
        properties: { connector_key: { type: 'string' }, fee_minor: { type: 'integer' }, eligible: { type: 'boolean' }, reason: { type: 'string' } },
      },
    },
    chosen: { type: 'string' },
    reason: { type: 'string', enum: ['cheapest', 'retry', 'dunning'] },
    default_connector: { type: 'string' },
    default_fee_minor: { type: 'integer' },
    chosen_fee_minor: { type: 'integer' },
    saved_minor: { type: 'integer' },
    outcome: { type: 'string' },
    latency_ms: { type: 'integer' },
    created_at: timestamp,
  },
} as const;

export const decisionsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 100, 'x-error-code': 'routing.invalid_query' },
    payment_intent: { ...uuid, 'x-error-code': 'routing.invalid_query' },
    starting_after: { ...uuid, 'x-error-code': 'routing.invalid_query' },
  },
} as const;

export const routingScoreList = {
  type: 'object',
  required: ['object', 'data'],
  properties: {
    object: { const: 'list' },
    window_hours: { type: 'integer' },
    data: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          object: { const: 'routing_score' },
          connector_key: { type: 'string' },
          attempts: { type: 'integer' },
          approved: { type: 'integer' },
          soft_declines: { type: 'integer' },
          hard_declines: { type: 'integer' },
          authorization_rate: { type: 'number' },
          latency_p50_ms: { type: 'integer' },
          latency_p95_ms: { type: 'integer' },
        },
      },
    },
  },
} as const;
