// The operators' audit log (docs/operator.md).
import type { FromSchema } from 'json-schema-to-ts';
import { timestamp, uuid } from './common.js';

const filters = {
  tenant_id: { ...uuid, description: "One tenant's rows." },
  target_id: { type: 'string', maxLength: 200, description: 'The rows about one object (a terminal, an application, …).' },
  actor_id: { type: 'string', maxLength: 200, description: "One actor's rows (an operator's id, or `admin_key`)." },
  action: { type: 'string', maxLength: 200, description: 'One action, e.g. `terminal.deactivate`.' },
} as const;

export const auditQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...filters,
    cursor: { type: 'string', pattern: '^[0-9]{1,18}$', description: 'The `next_cursor` of the previous page.' },
    limit: { type: 'integer', minimum: 1, description: 'Default 100; values above 500 are clamped to 500.' },
  },
} as const;
export type AuditQueryParams = FromSchema<typeof auditQuery>;

export const auditExportQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['format'],
  properties: { ...filters, format: { enum: ['csv', 'jsonl'], description: '`csv` (RFC 4180; cells that a spreadsheet would run as formulas are prefixed with `\'`) or `jsonl` (one entry per line).' } },
} as const;
export type AuditExportParams = FromSchema<typeof auditExportQuery>;

export const auditEntryResource = {
  type: 'object',
  required: ['seq', 'id', 'object', 'at', 'actor', 'action'],
  properties: {
    seq: { type: 'integer', description: 'Position in the log (increasing).' },
    id: uuid,
    object: { const: 'audit_entry' },
    at: timestamp,
    actor: {
      type: 'object',
      required: ['kind', 'id'],
      properties: { kind: { enum: ['admin_key', 'operator', 'member', 'system'] }, id: { type: 'string' }, name: { type: 'string' } },
    },
    action: { type: 'string', examples: ['terminal.deactivate'] },
    tenant_id: uuid,
    livemode: { type: 'boolean' },
    target: { type: 'object', required: ['kind', 'id'], properties: { kind: { type: 'string' }, id: { type: 'string' } } },
    reason: { type: 'string' },
    before: { type: 'object', description: 'The object before the action (absent on a creation).' },
    after: { type: 'object', description: 'The object after the action.' },
    request_id: { type: 'string', description: 'The `X-Request-Id` of the request that acted.' },
  },
} as const;

export const auditList = {
  type: 'object',
  required: ['object', 'data', 'has_more'],
  properties: { object: { const: 'list' }, data: { type: 'array', items: auditEntryResource }, has_more: { type: 'boolean' }, next_cursor: { type: 'string' } },
} as const;

const traceLink = {
  trace_id: { type: 'string', description: 'The OpenTelemetry trace id (absent when tracing was off).' },
  trace_url: { type: 'string', description: 'The trace in the tracing UI, from TRACE_URL_TEMPLATE (absent when unset).' },
} as const;

export const inspectionResource = {
  type: 'object',
  required: ['object', 'kind', 'id', 'livemode', 'status', 'created_at', 'steps', 'jobs', 'traces', 'job_history'],
  properties: {
    object: { const: 'inspection' },
    kind: { enum: ['payment_intent', 'refund', 'payout', 'invoice'] },
    id: uuid,
    livemode: { type: 'boolean' },
    status: { type: 'string' },
    created_at: timestamp,
    steps: {
      type: 'array',
      description: 'Every change of the object, oldest first, with the trace of the request or job that made it.',
      items: { type: 'object', required: ['at', 'event', 'to_status'], properties: { at: timestamp, event: { type: 'string' }, from_status: { type: 'string' }, to_status: { type: 'string' }, ...traceLink } },
    },
    jobs: {
      type: 'array',
      description: 'Each run of each job that named the object (for an intent, also its attempts), oldest first.',
      items: {
        type: 'object',
        required: ['job_id', 'queue', 'name', 'attempt', 'max_attempts', 'started_at', 'duration_ms', 'outcome'],
        properties: {
          job_id: { type: 'string' }, queue: { type: 'string' }, name: { type: 'string' },
          attempt: { type: 'integer', description: '1 for the first run.' }, max_attempts: { type: 'integer' },
          started_at: timestamp, duration_ms: { type: 'integer' },
          outcome: { enum: ['completed', 'retrying', 'failed'] },
          error: { type: 'string' },
          ...traceLink,
        },
      },
    },
    traces: { type: 'array', items: { type: 'object', required: ['trace_id'], properties: traceLink } },
    job_history: { enum: ['recorded', 'off'], description: '`off` when JOB_HISTORY_HOURS is 0.' },
    trace_links: { type: 'string', description: 'Present when TRACE_URL_TEMPLATE is unset.' },
  },
} as const;
