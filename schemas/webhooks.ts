// Webhook endpoints and the event stream. spec: Endpoints > Webhook endpoints and events; Events.
import type { FromSchema } from 'json-schema-to-ts';
import { listOf, timestamp, uuid } from './common.js';
import { EVENT_TYPES } from './events.js';

export { EVENT_TYPES } from './events.js';

export const createEndpointBody = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  'x-error-code': 'webhook_endpoint.invalid_url',
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 2048, 'x-error-code': 'webhook_endpoint.invalid_url', 'x-error-message': '`url` is required: an https:// URL.' },
    events: {
      type: 'array',
      items: { enum: EVENT_TYPES },
      uniqueItems: true,
      'x-error-code': 'webhook_endpoint.invalid_events',
      'x-error-message': `\`events\` must list event types of the catalog: ${EVENT_TYPES.join(', ')}.`,
    },
  },
} as const;
export type CreateEndpointBody = FromSchema<typeof createEndpointBody>;

export const endpointResource = {
  type: 'object',
  required: ['id', 'object', 'url', 'active', 'created_at'],
  properties: {
    id: uuid,
    object: { const: 'webhook_endpoint' },
    url: { type: 'string' },
    events: { type: 'array', items: { type: 'string' } },
    secret: { type: 'string', description: '`whsec_…`: only in the creation and rotation responses.' },
    active: { type: 'boolean' },
    disabled_reason: { type: 'string' },
    livemode: { type: 'boolean' },
    created_at: timestamp,
  },
} as const;
export const endpointList = listOf(endpointResource);

export const eventsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    after_id: { type: 'integer', format: 'int64', minimum: 0, description: 'Exclusive cursor: events with id > after_id. Default 0.' },
    limit: { type: 'integer', format: 'int64', minimum: 1, description: 'Default 50; values above 200 are clamped.' },
  },
} as const;

export const envelopeSchema = {
  type: 'object',
  required: ['event_id', 'event_type', 'created_at', 'api_version', 'livemode', 'data'],
  properties: {
    event_id: uuid,
    event_type: { enum: EVENT_TYPES },
    created_at: timestamp,
    api_version: { const: '2026-07-01' },
    livemode: { type: 'boolean' },
    data: { type: 'object' },
  },
} as const;

export const eventResource = {
  type: 'object',
  required: ['id', 'object', 'event_id', 'event_type', 'delivered', 'created_at', 'data'],
  properties: {
    id: { type: 'integer' },
    object: { const: 'event' },
    event_id: uuid,
    event_type: { type: 'string' },
    delivered: { type: 'boolean', description: 'True once the event is relayed and every delivery of it to the account\'s endpoints succeeded; a discarded delivery keeps it false.' },
    created_at: timestamp,
    data: envelopeSchema,
  },
} as const;
export const eventList = {
  type: 'object',
  required: ['object', 'data', 'has_more'],
  properties: { object: { const: 'list' }, data: { type: 'array', items: eventResource }, has_more: { type: 'boolean' } },
} as const;
