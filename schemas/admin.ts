// Operator API bodies and resources. spec: decisions.md §2.
import type { FromSchema } from 'json-schema-to-ts';
import { scope, timestamp, uuid } from './common.js';

export const createTenantBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;
export type CreateTenantBody = FromSchema<typeof createTenantBody>;

export const createApiKeyBody = {
  type: 'object',
  additionalProperties: false,
  required: ['livemode', 'scopes'],
  properties: {
    livemode: { type: 'boolean' },
    scopes: { type: 'array', items: scope, minItems: 1, uniqueItems: true },
  },
} as const;
export type CreateApiKeyBody = FromSchema<typeof createApiKeyBody>;

export const apiKeyResource = {
  type: 'object',
  required: ['id', 'object', 'livemode', 'scopes'],
  properties: {
    id: uuid,
    object: { const: 'api_key' },
    key: { type: 'string', description: 'The full key, shown only in the creation response.' },
    livemode: { type: 'boolean' },
    scopes: { type: 'array', items: scope },
    revoked: { type: 'boolean' },
  },
} as const;

export const tenantResource = {
  type: 'object',
  required: ['id', 'object', 'name', 'created_at'],
  properties: {
    id: uuid,
    object: { const: 'tenant' },
    name: { type: 'string' },
    api_keys: { type: 'array', items: apiKeyResource },
    created_at: timestamp,
  },
} as const;
