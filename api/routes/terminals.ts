// Terminals (docs/terminals.md): the operator's routes (X-Admin-Key). The spec makes terminal
// administration a portal action, not a /v1 endpoint; the operator console and the merchant portal
// call the same actor (actors/terminals.ts). Every change is audited (actors/audit.ts).
import { auditActorOf } from './operator-console.js';
import {
  reassignTerminalBody, registerTerminalBody, terminalActionBody, terminalList, terminalListQuery, terminalResource,
  type ReassignTerminalBody, type RegisterTerminalBody, type TerminalActionBody, type TerminalListQuery,
} from '../../schemas/terminals.js';
import { defineRoute } from '../route.js';

/** The admin key, or the operator of the console's re-served route (api/routes/operator-console.ts). */
const by = (ctx: { requestId: string }, reason?: string) => ({ actor: auditActorOf(ctx), reason, requestId: ctx.requestId });

export const terminalRoutes = [
  defineRoute<RegisterTerminalBody>({
    method: 'POST',
    path: '/admin/tenants/{tenantId}/terminals',
    auth: 'admin',
    body: registerTerminalBody,
    notFound: 'tenant.not_found',
    summary: 'Register a terminal (serial, branch) for a tenant',
    description: 'Answers the terminal `registered` (or `active` with `activate: true`). Charges may name it in `metadata.terminal_id` only once it is active. The change is in the audit log and emits `terminal.registered` (and `terminal.activated`).',
    tags: ['Operator'],
    responses: { 201: { description: 'The terminal', schema: terminalResource } },
    errors: ['tenant.not_found', 'terminal.invalid_serial', 'terminal.invalid_branch', 'terminal.invalid_register', 'terminal.serial_conflict'],
    handler: async (ctx) => ({ status: 201, body: await ctx.deps.terminals.registerFor(ctx.params.tenantId, ctx.body, by(ctx, ctx.body.reason)) }),
  }),
  defineRoute<unknown, TerminalListQuery>({
    method: 'GET',
    path: '/admin/tenants/{tenantId}/terminals',
    auth: 'admin',
    query: terminalListQuery,
    notFound: 'tenant.not_found',
    summary: "List a tenant's terminals, newest first",
    tags: ['Operator'],
    responses: { 200: { description: 'The terminals', schema: terminalList } },
    errors: ['tenant.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.terminals.listFor(ctx.params.tenantId, ctx.query) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/admin/tenants/{tenantId}/terminals/{id}',
    auth: 'admin',
    notFound: 'terminal.not_found',
    summary: 'Read a terminal',
    tags: ['Operator'],
    responses: { 200: { description: 'The terminal', schema: terminalResource } },
    errors: ['terminal.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.terminals.getFor(ctx.params.tenantId, ctx.params.id) }),
  }),
  ...(['activate', 'deactivate'] as const).map((action) =>
    defineRoute<TerminalActionBody>({
      method: 'POST',
      path: `/admin/tenants/{tenantId}/terminals/{id}/${action}`,
      auth: 'admin',
      body: terminalActionBody,
      notFound: 'terminal.not_found',
      summary: action === 'activate' ? 'Activate a terminal: charges may name it' : 'Deactivate a terminal: charges naming it are refused',
      description: `Idempotent (${action === 'activate' ? 'an active terminal stays active' : 'an inactive terminal stays inactive'}, nothing is written). Emits \`terminal.${action}d\`; audited with the optional \`reason\`.`,
      tags: ['Operator'],
      responses: { 200: { description: 'The terminal', schema: terminalResource } },
      errors: ['terminal.not_found', 'terminal.concurrent_modification'],
      handler: async (ctx) => ({ status: 200, body: await ctx.deps.terminals.changeFor(ctx.params.tenantId, ctx.params.id, { kind: action, ...by(ctx, ctx.body?.reason) }) }),
    }),
  ),
  defineRoute<ReassignTerminalBody>({
    method: 'POST',
    path: '/admin/tenants/{tenantId}/terminals/{id}/reassign',
    auth: 'admin',
    body: reassignTerminalBody,
    notFound: 'terminal.not_found',
    summary: 'Reassign a terminal to another branch (and register)',
    description: 'In any state; the status does not change. `register` omitted keeps the current one. Emits `terminal.reassigned`; audited.',
    tags: ['Operator'],
    responses: { 200: { description: 'The terminal', schema: terminalResource } },
    errors: ['terminal.not_found', 'terminal.invalid_branch', 'terminal.invalid_register', 'terminal.concurrent_modification'],
    handler: async (ctx) => ({
      status: 200,
      body: await ctx.deps.terminals.changeFor(ctx.params.tenantId, ctx.params.id, { kind: 'reassign', branch: ctx.body.branch, register: ctx.body.register, ...by(ctx, ctx.body.reason) }),
    }),
  }),
];
