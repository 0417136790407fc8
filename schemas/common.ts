// Building blocks shared by the request and resource schemas. Custom keywords read by api/validation.ts:
//   x-error-code          spec error code when this value is invalid
//   x-required-error-code spec error code when this property is missing (defaults to x-error-code)
//   x-error-message       message for a person, instead of the generic one built from the schema

export const uuid = { type: 'string', format: 'uuid' } as const;
export const timestamp = { type: 'string', format: 'date-time' } as const;

/** spec: metadata is an object string to string. */
export const metadata = {
  type: 'object',
  additionalProperties: { type: 'string', maxLength: 500 },
  maxProperties: 50,
  propertyNames: { maxLength: 40 },
  description: 'Up to 50 string keys (40 chars) with string values (500 chars).',
} as const;

export const currencyCode = {
  type: 'string',
  pattern: '^[A-Z]{3}$',
  'x-iso4217': true,
  description: 'ISO 4217 code in upper case. Only MXN works end to end.',
  examples: ['MXN'],
} as const;

export const scope = {
  type: 'string',
  enum: ['*', 'payments:write', 'payments:read', 'refunds:write', 'payouts:write', 'webhooks:manage', 'invoices:write', 'reports:read'],
} as const;

export const listOf = <T extends object>(item: T) =>
  ({
    type: 'object',
    required: ['object', 'data'],
    properties: { object: { const: 'list' }, data: { type: 'array', items: item } },
  }) as const;

/** A page of a Stripe-style list: newest first, `has_more` says whether `starting_after` the last id gives more. */
export const pageOf = <T extends object>(item: T) =>
  ({
    type: 'object',
    required: ['object', 'data', 'has_more'],
    properties: { object: { const: 'list' }, data: { type: 'array', items: item }, has_more: { type: 'boolean' } },
  }) as const;
