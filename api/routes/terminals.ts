// Terminals (docs/terminals.md): the operator's routes (X-Admin-Key). The spec makes terminal
// administration a portal action, not a /v1 endpoint; the operator console and the merchant portal
// call the same actor (actors/terminals.ts). Every change is audited (actors/audit.ts).
import { auditActorOf } from './operator-console.js';
import {
  reassignTerminalBody, registerTerminalBody, terminalActionBody, terminalList, terminalListQuery, terminalResource,
  type ReassignTerminalBody, type RegisterTerminalBody, type TerminalActionBody, type TerminalListQuery,
} from '../../schemas/terminals.js';
import { ApiError } from '../../kernel/errors.js';
import { defineRoute, type RequestContext } from '../route.js';

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

// ---- the merchant portal: a tenant's own admins (owner, admin: scope "*" or settings:manage) ------

const memberBy = (ctx: RequestContext, reason?: string) => {
  const m = ctx.principal.member;
  if (!m) throw new ApiError('portal.session_invalid');
  if (!ctx.principal.scopes.includes('*') && !ctx.principal.scopes.includes('settings:manage')) {
    throw new ApiError('insufficient_scope', 'Terminals are administered by the team\'s owner or admins (scope "settings:manage").');
  }
  return { actor: { kind: 'member' as const, id: m.id, name: m.email }, reason, requestId: ctx.requestId };
};
const portalBase = { auth: 'session' as const, hidden: true, rateLimitExempt: true, tags: ['Portal'] };
const { livemode: _lm, ...portalRegisterProps } = registerTerminalBody.properties;
const portalRegisterBody = { type: 'object', additionalProperties: false, required: ['serial', 'branch'], properties: portalRegisterProps } as const;
const scopeOf = (ctx: RequestContext) => ({ tenantId: ctx.principal.tenantId, livemode: ctx.principal.livemode });

/** The portal's terminal screens (Configuración → terminales): the same actor, the member as the audit actor, the mode of the toggle. */
export const portalTerminalRoutes = [
  defineRoute<Omit<RegisterTerminalBody, 'livemode'>>({
    ...portalBase, method: 'POST', path: '/portal/api/terminals',
    body: portalRegisterBody,
    summary: 'Register a terminal of this account (the mode shown by the portal\'s toggle)',
    responses: { 201: { description: 'The terminal', schema: terminalResource } },
    errors: ['terminal.invalid_serial', 'terminal.invalid_branch', 'terminal.invalid_register', 'terminal.serial_conflict'],
    handler: async (ctx) => {
      const by2 = memberBy(ctx, ctx.body.reason);
      const { reason: _r, ...body } = ctx.body;
      return { status: 201, body: await ctx.deps.terminals.register(scopeOf(ctx), body, by2) };
    },
  }),
  defineRoute<unknown, TerminalListQuery>({
    ...portalBase, method: 'GET', path: '/portal/api/terminals', query: terminalListQuery,
    summary: "This account's terminals (the mode of the toggle)", responses: { 200: { description: 'The terminals', schema: terminalList } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.terminals.list(scopeOf(ctx), ctx.query) }),
  }),
  ...(['activate', 'deactivate'] as const).map((action) =>
    defineRoute<TerminalActionBody>({
      ...portalBase, method: 'POST', path: `/portal/api/terminals/{id}/${action}`, body: terminalActionBody, notFound: 'terminal.not_found',
      summary: action === 'activate' ? 'Activate one of this account\'s terminals' : 'Deactivate one of this account\'s terminals',
      responses: { 200: { description: 'The terminal', schema: terminalResource } },
      errors: ['terminal.not_found', 'terminal.concurrent_modification'],
      handler: async (ctx) => ({ status: 200, body: await ctx.deps.terminals.change(scopeOf(ctx), ctx.params.id, { kind: action, ...memberBy(ctx, ctx.body?.reason) }) }),
    }),
  ),
  defineRoute<ReassignTerminalBody>({
    ...portalBase, method: 'POST', path: '/portal/api/terminals/{id}/reassign', body: reassignTerminalBody, notFound: 'terminal.not_found',
    summary: 'Move one of this account\'s terminals to another branch or register',
    responses: { 200: { description: 'The terminal', schema: terminalResource } },
    errors: ['terminal.not_found', 'terminal.invalid_branch', 'terminal.invalid_register', 'terminal.concurrent_modification'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.terminals.change(scopeOf(ctx), ctx.params.id, { kind: 'reassign', branch: ctx.body.branch, register: ctx.body.register, ...memberBy(ctx, ctx.body.reason) }) }),
  }),
];
