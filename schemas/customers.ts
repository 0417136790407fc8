// Customers. spec: Resources > customer; decisions.md §3 paths.
import type { FromSchema } from 'json-schema-to-ts';
import { listOf, metadata, timestamp, uuid } from './common.js';

export const createCustomerBody = {
  type: 'object',
  additionalProperties: false,
  description: 'All fields are optional; an empty body is allowed.',
  properties: {
    name: { type: 'string', maxLength: 300 },
    email: { type: 'string', format: 'email', maxLength: 320 },
    metadata,
  },
} as const;
export type CreateCustomerBody = FromSchema<typeof createCustomerBody>;

export const customerResource = {
  type: 'object',
  required: ['id', 'object', 'livemode', 'created_at', 'updated_at'],
  properties: {
    id: uuid,
    object: { const: 'customer' },
    name: { type: 'string' },
    email: { type: 'string' },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    livemode: { type: 'boolean' },
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;

export const customerList = listOf(customerResource);

export const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'integer', format: 'int64', minimum: 1, description: 'Optional; values above 500 are clamped.' } },
} as const;

export const customerListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...listQuery.properties, email: { type: 'string', maxLength: 320, description: 'Only customers with this email (exact, case-insensitive).' } },
} as const;

export const customerDeleted = {
  type: 'object',
  required: ['id', 'object', 'deleted'],
  properties: { id: uuid, object: { const: 'customer' }, deleted: { const: true } },
} as const;
