// The operator console (issue 30; docs/operator.md).
//
// 1. Operator reads and actions the admin API lacked (X-Admin-Key): tenants (list, detail, suspend,
//    release), queues across tenants (applications, risk reviews, refund and payout approvals,
//    Connect accounts), an application's review (documents, verifier, 69-B), the risk rules editor,
//    operators (the admin key bootstraps the first one).
// 2. Every /admin route re-served for named operators under /portal/api/operator/* with a portal
//    session (the portal's accounts, TOTP and sessions; api/session-auth.ts): the same definitions
//    and handlers, the operator's role checked, and the change audited with the operator's name. No
//    business rule is written twice.
// 3. Four-eyes in the console: approving an above-threshold payout, releasing a suspended tenant and
//    approving an application the verifier flagged only ask: an approval of kind operator_decision
//    (actors/operator-decisions.ts on the approvals entity); another operator decides, and approving
//    carries the operation out in the approval's transaction.
// 4. Every change through /admin, by the admin key or an operator, writes an audit row (who, what,
//    why, before, after) unless its actor writes its own in its transaction (terminals, operators,
//    suspensions, decisions).
import { ADMIN_KEY_ACTOR, type AuditActor } from '../../actors/audit.js';
import type { DecisionAction } from '../../actors/operator-decisions.js';
import { OPERATOR_ROLES, type OperatorActor, type Permission } from '../../actors/operators.js';
import { ApiError } from '../../kernel/errors.js';
import { defineRoute, type Reply, type RequestContext, type RouteDef } from '../route.js';

export const CONSOLE_PREFIX = '/portal/api/operator';

/** The operator acting in a request (set by the console's re-served routes), else the admin key. */
const operatorOfCtx = new WeakMap<object, OperatorActor>();
export const auditActorOf = (ctx: object): AuditActor => operatorOfCtx.get(ctx) ?? ADMIN_KEY_ACTOR;

const lim = { limit: { type: 'integer', minimum: 1, description: 'Default 100; values above 500 are clamped to 500.' } } as const;
const statusQ = (values: string[]) => ({ type: 'object', additionalProperties: false, properties: { status: { enum: values }, ...lim } }) as const;
const reasonBody = { type: 'object', additionalProperties: false, properties: { reason: { type: 'string', minLength: 1, maxLength: 1000 } } } as const;
const ok = (description: string) => ({ 200: { description, schema: { type: 'object' } } });

// ---- 1. operator reads and actions on the admin API --------------------------------------------

export const operatorAdminRoutes: RouteDef[] = [
  defineRoute<unknown, { suspended?: boolean; limit?: number }>({
    method: 'GET', path: '/admin/tenants', auth: 'admin', tags: ['Operator'],
    query: { type: 'object', additionalProperties: false, properties: { suspended: { type: 'boolean' }, ...lim } },
    summary: 'List tenants, newest first (operator listing)',
    responses: ok('The tenants'),
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.operatorViews.listTenants(ctx.query) }),
  }),
  defineRoute({
    method: 'GET', path: '/admin/tenants/{tenantId}', auth: 'admin', tags: ['Operator'], notFound: 'tenant.not_found',
    summary: 'A tenant: settings, API keys (never the keys themselves), suspension, counts',
    responses: ok('The tenant'), errors: ['tenant.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.operatorViews.tenantDetail(ctx.params.tenantId) }),
  }),
  ...(['suspend', 'release'] as const).map((action) =>
    defineRoute<{ reason?: string }>({
      method: 'POST', path: `/admin/tenants/{tenantId}/${action}`, auth: 'admin', tags: ['Operator'], notFound: 'tenant.not_found', body: reasonBody,
      summary: action === 'suspend' ? 'Suspend a tenant: its API keys answer 401 at once' : 'Release a suspended tenant (in the console: a second operator decides)',
      description: 'Audited with the optional `reason`. A released tenant\'s keys work again within KEY_CACHE_SECONDS on every process.',
      responses: ok('The tenant'), errors: ['tenant.not_found', 'tenant.status_conflict'],
      handler: async (ctx) => {
        const f = action === 'suspend' ? ctx.deps.operatorViews.suspendTenant : ctx.deps.operatorViews.releaseTenant;
        return { status: 200, body: await f(auditActorOf(ctx), ctx.params.tenantId, ctx.body?.reason, ctx.requestId) };
      },
    }),
  ),
  defineRoute<unknown, { status?: string; tenant_id?: string; limit?: number }>({
    method: 'GET', path: '/admin/onboarding/applications', auth: 'admin', tags: ['Operator'],
    query: { type: 'object', additionalProperties: false, properties: { status: { enum: ['draft', 'needs_info', 'approved', 'rejected'] }, tenant_id: { type: 'string', format: 'uuid' }, ...lim } },
    summary: 'Onboarding applications of every tenant (the review queue); `flagged`: the verifier asked for information',
    responses: ok('The applications'),
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.operatorViews.listApplications(ctx.query) }),
  }),
  defineRoute({
    method: 'GET', path: '/admin/tenants/{tenantId}/onboarding/applications/{id}', auth: 'admin', tags: ['Operator'], notFound: 'onboarding_application.not_found',
    summary: "An application for review: documents, the verifier's result, a fresh 69-B screening of its RFC",
    responses: ok('The application'), errors: ['onboarding_application.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.operatorViews.applicationReview(ctx.params.tenantId, ctx.params.id) }),
  }),
  defineRoute<unknown, { status?: string; limit?: number }>({
    method: 'GET', path: '/admin/risk_reviews', auth: 'admin', tags: ['Operator'], query: statusQ(['pending', 'approved', 'rejected']),
    summary: 'Risk reviews of every tenant (the queue)', responses: ok('The reviews'),
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.operatorViews.listRiskReviews(ctx.query) }),
  }),
  defineRoute({
    method: 'GET', path: '/admin/tenants/{tenantId}/risk_rules', auth: 'admin', tags: ['Operator'], notFound: 'tenant.not_found',
    summary: "A tenant's risk rules (the editor)", responses: ok('The rules'),
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.operatorViews.listRiskRules(ctx.params.tenantId) }),
  }),
  defineRoute({
    method: 'POST', path: '/admin/tenants/{tenantId}/risk_rules/{ruleId}/deactivate', auth: 'admin', tags: ['Operator'], notFound: 'risk_rule.not_found',
    summary: 'Turn a risk rule off (kept for the reviews that name it)', responses: ok('The rule'), errors: ['risk_rule.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.operatorViews.deactivateRiskRule(ctx.params.tenantId, ctx.params.ruleId) }),
  }),
  ...(['refund', 'payout'] as const).map((kind) =>
    defineRoute<unknown, { status?: string; limit?: number }>({
      method: 'GET', path: `/admin/${kind}_approvals`, auth: 'admin', tags: ['Operator'], query: statusQ(['pending', 'approved', 'rejected']),
      summary: `${kind === 'refund' ? 'Refund' : 'Payout'} approvals of every tenant (four-eyes queue)`, responses: ok('The approvals'),
      handler: async (ctx) => ({ status: 200, body: await ctx.deps.operatorViews.listApprovals(kind, ctx.query) }),
    }),
  ),
  defineRoute<unknown, { status?: string; limit?: number }>({
    method: 'GET', path: '/admin/connect/accounts', auth: 'admin', tags: ['Operator'], query: statusQ(['active', 'suspended']),
    summary: 'Connect accounts of every tenant', responses: ok('The accounts'),
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.operatorViews.listConnectAccounts(ctx.query) }),
  }),
  defineRoute<{ email: string; name: string; role: (typeof OPERATOR_ROLES)[number]; password?: string }>({
    method: 'POST', path: '/admin/operators', auth: 'admin', tags: ['Operator'],
    body: {
      type: 'object', additionalProperties: false, required: ['email', 'name', 'role'],
      properties: {
        email: { type: 'string', maxLength: 254, 'x-error-code': 'operator.invalid_email', 'x-required-error-code': 'operator.invalid_email' },
        name: { type: 'string', minLength: 1, maxLength: 200 },
        role: { enum: [...OPERATOR_ROLES], 'x-error-code': 'operator.invalid_role', 'x-required-error-code': 'operator.invalid_role' },
        password: { type: 'string', maxLength: 200, 'x-error-code': 'operator.invalid_password', description: 'At least 12 characters; omitted: a link to choose one is sent (the portal\'s password reset).' },
      },
    },
    summary: 'Create a named operator (the admin key bootstraps the first; then operator admins in the console)',
    description: 'An operator signs in to /portal/operator with email, password and a second factor (TOTP, set up at the first sign-in).',
    responses: { 201: { description: 'The operator', schema: { type: 'object' } } },
    errors: ['operator.invalid_email', 'operator.invalid_role', 'operator.invalid_password', 'operator.email_conflict'],
    handler: async (ctx) => ({ status: 201, body: await ctx.deps.operators.create(auditActorOf(ctx), ctx.body, ctx.requestId) }),
  }),
  defineRoute({
    method: 'GET', path: '/admin/operators', auth: 'admin', tags: ['Operator'],
    summary: 'The operators, with role and whether their second factor is set up', responses: ok('The operators'),
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.operators.list() }),
  }),
  defineRoute<{ role?: (typeof OPERATOR_ROLES)[number]; status?: 'active' | 'disabled' }>({
    method: 'PATCH', path: '/admin/operators/{id}', auth: 'admin', tags: ['Operator'], notFound: 'operator.not_found',
    body: { type: 'object', additionalProperties: false, properties: { role: { enum: [...OPERATOR_ROLES], 'x-error-code': 'operator.invalid_role' }, status: { enum: ['active', 'disabled'] } } },
    summary: "Change an operator's role, or disable them (their sessions end)", responses: ok('The operator'),
    errors: ['operator.not_found', 'operator.invalid_role', 'operator.self_change_conflict'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.operators.update(auditActorOf(ctx), ctx.params.id, ctx.body, ctx.requestId, headerReason(ctx)) }),
  }),
];

/** Routes that write their own audit rows in their transaction (the generic wrapper leaves them alone). */
const SELF_AUDITED = /\/terminals(\/|$)|\/operators(\/|$)|\/(suspend|release)$/;

// ---- 2-4. the console: permissions, four-eyes, audit -----------------------------------------

/** What an /admin route needs of an operator's role. */
export function permissionFor(r: Pick<RouteDef, 'method' | 'path'>): Permission {
  if (r.method === 'GET') return 'read';
  if (/\/terminals(\/|$)/.test(r.path)) return 'terminals';
  if (/simulate/.test(r.path)) return 'simulate';
  if (/^\/admin\/operators/.test(r.path)) return 'operators';
  if (r.path === '/admin/tenants' || /\/(api_keys|settings|payout_settings|suspend|release|risk_rules)(\/|$)/.test(r.path)) return 'tenants';
  return 'decide';
}

/** A snapshot of what a change is about to touch, for the audit row's `before` (actors/operator-snapshots.ts). */
const snapshot = (ctx: RequestContext, path: string) => ctx.deps.audit.snapshot(path, ctx.params);

/** `risk_review.approve` from `/admin/tenants/{tenantId}/risk_reviews/{reviewId}/approve`, else method and path. */
export function actionOf(method: string, path: string): string {
  // DELETE of an item (the only one: an API key) revokes it.
  const del = method === 'DELETE' ? /\/([a-z_]+)\/\{[A-Za-z]+\}$/.exec(path) : null;
  if (del) return `${del[1]!.replace(/s$/, '')}.revoke`;
  const m = /\/([a-z_]+)\/\{[A-Za-z]+\}\/([a-z_-]+)$/.exec(path);
  if (m) return `${m[1]!.replace(/s$/, '').replace(/^application$/, 'onboarding_application')}.${m[2]!.replace(/-/g, '_')}`;
  return `${method} ${path}`;
}

/** X-Operator-Reason (URI-encoded): the console's reason for operations whose body has no `reason`. */
function headerReason(ctx: RequestContext): string | undefined {
  const v = ctx.header('x-operator-reason');
  if (!v) return undefined;
  try {
    return decodeURIComponent(v).slice(0, 1000) || undefined;
  } catch {
    return undefined;
  }
}

/** The kind of the audited object: the collection of a trailing `{id}` (`api_keys/{keyId}`), else the one before the verb (`tenants/{tenantId}/suspend`). */
const targetKindOf = (path: string) => {
  const named = path.split('/').filter((s) => s && !s.startsWith('{'));
  return ((path.endsWith('}') ? named.at(-1) : named.at(-2)) ?? 'admin').replace(/s$/, '');
};

const targetOf = (p: Readonly<Record<string, string>>) => p.id ?? p.approvalId ?? p.reviewId ?? p.keyId ?? p.ruleId ?? p.tenantId;

/** Runs an /admin handler and writes its audit row (a change that answered below 400). */
async function audited(r: RouteDef, ctx: RequestContext, extraReason?: string): Promise<Reply> {
  if (r.method === 'GET' || SELF_AUDITED.test(r.path)) return r.handler(ctx);
  const before = await snapshot(ctx, r.path);
  const out = await r.handler(ctx);
  if (out.status < 400) {
    const body = ctx.body as { reason?: string } | undefined;
    const reason = [typeof body?.reason === 'string' ? body.reason : headerReason(ctx), extraReason].filter(Boolean).join(' · ') || undefined;
    const after = out.body && typeof out.body === 'object' && !Array.isArray(out.body) ? (out.body as Record<string, unknown>) : null;
    await ctx.deps.audit.append({
      actor: auditActorOf(ctx), action: actionOf(r.method, r.path), tenantId: ctx.params.tenantId, targetKind: targetKindOf(r.path),
      targetId: targetOf(ctx.params), reason, before, after, requestId: ctx.requestId,
    });
  }
  return out;
}

/** The /admin routes with their changes audited (actor: the admin key). */
export function auditedAdminRoutes(routes: readonly RouteDef[]): RouteDef[] {
  return routes.map((r) => (r.auth === 'admin' && r.method !== 'GET' && !SELF_AUDITED.test(r.path) ? { ...r, handler: (ctx: RequestContext) => audited(r, ctx) } : r));
}

/** The operation that needs a second operator in the console, or undefined. */
async function fourEyes(r: RouteDef, ctx: RequestContext): Promise<{ action: DecisionAction; targetKind: string; targetId: string; livemode: boolean; snapshot: Record<string, unknown> | null; amountMinor?: number; currency?: string } | undefined> {
  const p = ctx.params;
  if (r.method !== 'POST') return undefined;
  if (r.path === '/admin/tenants/{tenantId}/release') {
    const t = await ctx.deps.operatorViews.tenantDetail(p.tenantId!);
    return { action: 'tenant.release', targetKind: 'tenant', targetId: p.tenantId!, livemode: true, snapshot: { name: t.name, suspended: t.suspended, suspended_reason: t.suspended_reason } };
  }
  if (r.path === '/admin/tenants/{tenantId}/payout_approvals/{approvalId}/approve') {
    const s = await snapshot(ctx, r.path);
    if (!s) throw new ApiError('payout_approval.not_found');
    if (s.status !== 'pending') return undefined; // the route answers its own resolution_conflict
    const livemode = await ctx.deps.audit.payoutApprovalLivemode(p.approvalId!);
    const amountMinor = Number(s.amount_minor);
    return { action: 'payout_approval.approve', targetKind: 'payout_approval', targetId: p.approvalId!, livemode, snapshot: { ...s, amount_minor: amountMinor }, amountMinor, currency: s.currency as string };
  }
  if (r.path === '/admin/tenants/{tenantId}/onboarding/applications/{id}/approve') {
    const a = await ctx.deps.operatorViews.applicationReview(p.tenantId!, p.id!);
    if (!a.approval_needs_second_operator) return undefined;
    return { action: 'onboarding_application.approve', targetKind: 'onboarding_application', targetId: p.id!, livemode: a.livemode as boolean, snapshot: { status: a.status, legal_name: a.legal_name, rfc: a.rfc, status_reason: a.status_reason, list_hits: a.list_hits } };
  }
  return undefined;
}

const consolePath = (adminPath: string) => CONSOLE_PREFIX + adminPath.slice('/admin'.length);

/** Every /admin route re-served for named operators (hidden from the API description). */
export function operatorConsoleRoutes(routes: readonly RouteDef[]): RouteDef[] {
  const admin = routes.filter((r) => r.auth === 'admin' && r.path.startsWith('/admin/'));
  const reserved = admin.map((r): RouteDef => ({
    ...r,
    path: consolePath(r.path),
    auth: 'session',
    scope: undefined,
    hidden: true,
    rateLimitExempt: true,
    tags: ['Operator console'],
    handler: async (ctx) => {
      const op = await ctx.deps.operators.require(ctx.principal, permissionFor(r));
      operatorOfCtx.set(ctx, op);
      const sensitive = await fourEyes(r, ctx);
      if (sensitive) {
        const body = ctx.body as { reason?: string } | undefined;
        const d = await ctx.deps.operatorDecisions.request(op, {
          ...sensitive, tenantId: ctx.params.tenantId!, reason: body?.reason ?? headerReason(ctx), params: { ...ctx.params }, body: (ctx.body as Record<string, unknown> | undefined) ?? undefined,
        }, ctx.requestId);
        return { status: 202, body: d };
      }
      return audited(r, ctx);
    },
  }));

  const decide = (kind: 'approve' | 'reject') =>
    defineRoute<{ note?: string }>({
      method: 'POST', path: `${CONSOLE_PREFIX}/decisions/{id}/${kind}`, auth: 'session', hidden: true, rateLimitExempt: true, tags: ['Operator console'],
      notFound: 'operator_decision.not_found',
      body: { type: 'object', additionalProperties: false, properties: { note: { type: 'string', minLength: 1, maxLength: 1000 } } },
      summary: kind === 'approve' ? 'Second operator: approve (the asked operation is carried out in the same transaction)' : 'Reject (nothing runs); the operator who asked may withdraw it so',
      responses: ok('The decision'),
      errors: ['operator_decision.not_found', 'operator_decision.resolution_conflict', 'operator_decision.self_approval_conflict'],
      handler: async (ctx) => {
        const op = await ctx.deps.operators.require(ctx.principal, 'decide');
        const d = kind === 'approve'
          ? await ctx.deps.operatorDecisions.approve(op, ctx.params.id!, ctx.body?.note, ctx.requestId)
          : await ctx.deps.operatorDecisions.reject(op, ctx.params.id!, ctx.body?.note, ctx.requestId);
        return { status: 200, body: d };
      },
    });

  return [
    ...reserved,
    defineRoute({
      method: 'GET', path: `${CONSOLE_PREFIX}/me`, auth: 'session', hidden: true, rateLimitExempt: true, tags: ['Operator console'],
      summary: 'The signed-in operator: role and what it may do', responses: ok('The operator'),
      handler: async (ctx) => {
        const op = await ctx.deps.operators.require(ctx.principal, 'read');
        return { status: 200, body: await ctx.deps.operators.get(op.id) };
      },
    }),
    defineRoute<unknown, { status?: string; limit?: number }>({
      method: 'GET', path: `${CONSOLE_PREFIX}/decisions`, auth: 'session', hidden: true, rateLimitExempt: true, tags: ['Operator console'],
      query: statusQ(['pending', 'approved', 'rejected']),
      summary: 'Four-eyes decisions (newest first)', responses: ok('The decisions'),
      handler: async (ctx) => {
        await ctx.deps.operators.require(ctx.principal, 'read');
        return { status: 200, body: await ctx.deps.operatorDecisions.list(ctx.query) };
      },
    }),
    decide('approve'),
    decide('reject'),
  ];
}
