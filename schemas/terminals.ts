// Terminals (docs/terminals.md): administered in the portal and by operators, never on /v1 (spec).
import type { FromSchema } from 'json-schema-to-ts';
import { timestamp, uuid } from './common.js';

const branch = { type: 'string', minLength: 1, maxLength: 200, 'x-error-code': 'terminal.invalid_branch', description: 'The branch (sucursal) where the terminal works; a cash cut filtered by `branch` reads the charges that carry the same `metadata.branch`.' } as const;
const register = { type: 'string', minLength: 1, maxLength: 200, 'x-error-code': 'terminal.invalid_register', description: 'The register (caja) within the branch.' } as const;
const reason = { type: 'string', minLength: 1, maxLength: 1000, description: 'Why: recorded in the audit log.' } as const;

export const registerTerminalBody = {
  type: 'object',
  additionalProperties: false,
  required: ['serial', 'branch', 'livemode'],
  properties: {
    serial: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,64}$', 'x-error-code': 'terminal.invalid_serial', 'x-required-error-code': 'terminal.invalid_serial', description: "The manufacturer's serial number: unique within the account and mode." },
    branch: { ...branch, 'x-required-error-code': 'terminal.invalid_branch' },
    register,
    label: { type: 'string', minLength: 1, maxLength: 200, description: 'A name people use for it ("Caja 2, mostrador").' },
    livemode: { type: 'boolean', description: 'The mode of the charges it takes: a test terminal serves `sk_test_` charges only.' },
    activate: { type: 'boolean', description: 'Activate it in the same call (default false: it stays `registered`).' },
    reason,
  },
} as const;
export type RegisterTerminalBody = FromSchema<typeof registerTerminalBody>;

export const reassignTerminalBody = {
  type: 'object',
  additionalProperties: false,
  required: ['branch'],
  properties: { branch: { ...branch, 'x-required-error-code': 'terminal.invalid_branch' }, register, reason },
} as const;
export type ReassignTerminalBody = FromSchema<typeof reassignTerminalBody>;

export const terminalActionBody = {
  type: 'object',
  additionalProperties: false,
  properties: { reason },
} as const;
export type TerminalActionBody = FromSchema<typeof terminalActionBody>;

export const terminalListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    livemode: { type: 'boolean', description: 'One mode only (default: both).' },
    status: { enum: ['registered', 'active', 'inactive'] },
    branch: { type: 'string', maxLength: 200 },
    limit: { type: 'integer', minimum: 1, description: 'Default 100; values above 500 are clamped to 500.' },
  },
} as const;
export type TerminalListQuery = FromSchema<typeof terminalListQuery>;

export const terminalResource = {
  type: 'object',
  required: ['id', 'object', 'serial', 'branch', 'status', 'livemode', 'created_at', 'updated_at'],
  additionalProperties: false,
  properties: {
    id: uuid,
    object: { const: 'terminal' },
    serial: { type: 'string' },
    branch: { type: 'string' },
    register: { type: 'string' },
    label: { type: 'string' },
    status: { enum: ['registered', 'active', 'inactive'], description: '`registered` (not yet in service), `active` (takes charges), `inactive` (out of service; can be activated again).' },
    livemode: { type: 'boolean' },
    activated_at: { ...timestamp, description: 'When it was last activated.' },
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;

export const terminalList = {
  type: 'object',
  required: ['object', 'data'],
  properties: { object: { const: 'list' }, data: { type: 'array', items: terminalResource } },
} as const;

/** Ours (docs/terminals.md): data = the terminal's projection after the change. */
export const TERMINAL_EVENTS = {
  'terminal.registered': { summary: 'A terminal was registered (serial, branch); it takes no charges until activated.', data: terminalResource },
  'terminal.activated': { summary: 'A terminal was activated: charges may name it in `metadata.terminal_id`.', data: terminalResource },
  'terminal.deactivated': { summary: 'A terminal was taken out of service: charges naming it are refused (`payment_intent.terminal_not_active`).', data: terminalResource },
  'terminal.reassigned': { summary: 'A terminal moved to another branch or register.', data: terminalResource },
} as const;
