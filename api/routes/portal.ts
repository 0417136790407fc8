// The merchant portal's own routes (issue 29; docs/portal.md): the page and its built files, sign-in
// with a second factor, the member's account, the team, API keys and the audit log. Everything else
// the portal does goes through the /v1 routes re-served under /portal/api/v1 (api/routes/portal-api.ts).
// Not part of the public API description (hidden): the portal is their only client.
import QRCode from 'qrcode';
import { ApiError } from '../../kernel/errors.js';
import { GRANTABLE_SCOPES, ROLES } from '../../kernel/roles.js';
import type { Actor } from '../../actors/portal-accounts.js';
import { clearedCookie, cookieToken, sameOrigin, sessionCookie } from '../session-auth.js';
import { defineRoute, type RequestContext, type RouteDef } from '../route.js';

/** No inline script or style, no frames, nothing from elsewhere (issue 29 part 5). */
export const PORTAL_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
/** The headers of the portal's pages (and the operator console's: api/routes/operator-page.ts). */
export const SECURITY_HEADERS = {
  'Content-Security-Policy': PORTAL_CSP,
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

const PORTAL_HTML = `<!doctype html>
<html lang="es"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Orquesta · Portal</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/portal/assets/portal.css"></head>
<body><div id="app"><noscript>El portal necesita JavaScript. · The portal needs JavaScript.</noscript></div>
<script type="module" src="/portal/assets/portal.js"></script></body></html>`;

const str = (max: number, min = 0) => ({ type: 'string', minLength: min, maxLength: max, 'x-error-code': 'portal.invalid_body' }) as const;
const obj = (required: string[], properties: Record<string, object>) => ({ type: 'object', additionalProperties: false, required, properties, 'x-error-code': 'portal.invalid_body' }) as const;
const email = { type: 'string', maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$', 'x-error-code': 'portal.invalid_body' } as const;
const password = str(200, 10);
const code = { type: 'string', pattern: '^[0-9]{6}$', 'x-error-code': 'portal.totp_invalid' } as const;
const json = { 200: { description: 'OK', schema: { type: 'object' } } };

const secure = (ctx: RequestContext) => ctx.deps.config.publicBaseUrl.startsWith('https:');
const portalUrl = (ctx: RequestContext) => `${ctx.deps.config.publicBaseUrl}/portal`;

/** Who is acting, for the audit log: the session's member. */
export function actorOf(ctx: RequestContext): Actor {
  const m = ctx.principal.member;
  if (!m) throw new ApiError('portal.session_invalid');
  return { tenantId: ctx.principal.tenantId, memberId: m.id, email: m.email, ip: ctx.ip };
}

/** Sign-in steps have no session yet: the request must still come from the portal's own origin. */
function checkOrigin(ctx: RequestContext) {
  if (!sameOrigin(ctx.header('origin'), ctx.header('host'), ctx.deps.config.publicBaseUrl)) throw new ApiError('portal.csrf_unauthorized');
}

const session = (s: { token: string; stage: string; csrfToken: string; member: unknown; maxAgeSeconds: number }, ctx: RequestContext) => ({
  status: 200,
  body: { object: 'portal_session', stage: s.stage, csrf_token: s.csrfToken, member: s.stage === 'full' ? s.member : undefined },
  headers: { 'Set-Cookie': sessionCookie(s.token, s.maxAgeSeconds, secure(ctx)), 'Cache-Control': 'no-store' },
});

const base = { tags: ['Portal'] as string[], hidden: true, rateLimitExempt: true };

export const portalRoutes: RouteDef[] = [
  defineRoute({
    ...base,
    method: 'GET',
    path: '/portal',
    auth: 'none',
    summary: 'The merchant portal (a page; its script and styles are the built files of /portal/assets)',
    responses: { 200: { description: 'HTML', contentType: 'text/html' } },
    handler: () => ({ status: 200, contentType: 'text/html', text: PORTAL_HTML, headers: SECURITY_HEADERS }),
  }),
  defineRoute<unknown, unknown>({
    ...base,
    method: 'GET',
    path: '/portal/assets/{file}',
    auth: 'none',
    summary: "The portal's built script, styles and images",
    responses: { 200: { description: 'A file' } },
    handler: (ctx) => {
      const f = ctx.deps.portalAsset(ctx.params.file);
      if (!f) throw new ApiError('route.not_found', `No portal file ${ctx.params.file}: this build has no such file in dist/web/portal.`);
      return { status: 200, contentType: f.type, text: f.body, headers: { 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff' } };
    },
  }),

  // ---- sign-in ----
  defineRoute<{ email: string; password: string }>({
    ...base,
    method: 'POST',
    path: '/portal/api/session',
    auth: 'none',
    body: obj(['email', 'password'], { email: str(254, 1), password: str(200, 1) }),
    bodyLimit: 4096,
    summary: 'Sign in: email and password; a second step follows when the member has two-factor on',
    responses: json,
    errors: ['portal.sign_in_invalid', 'portal.tenant_suspended_unauthorized', 'portal.invalid_body', 'portal.csrf_unauthorized'],
    handler: async (ctx) => {
      checkOrigin(ctx);
      return session(await ctx.deps.portal.signIn(ctx.body.email, ctx.body.password, ctx.ip), ctx);
    },
  }),
  defineRoute<{ code: string }>({
    ...base,
    method: 'POST',
    path: '/portal/api/session/totp',
    auth: 'none',
    body: obj(['code'], { code }),
    bodyLimit: 1024,
    summary: 'The second step of sign-in: the code of the authenticator app (the session is rotated)',
    responses: json,
    errors: ['portal.totp_invalid', 'portal.session_invalid', 'portal.csrf_unauthorized'],
    handler: async (ctx) => {
      checkOrigin(ctx);
      return session(await ctx.deps.portal.signInTotp(cookieToken(ctx.header('cookie')), ctx.body.code, ctx.ip), ctx);
    },
  }),
  defineRoute({
    ...base,
    method: 'GET',
    path: '/portal/api/session',
    auth: 'session',
    summary: 'The signed-in member, the tenant, the CSRF token for changes',
    responses: json,
    handler: async (ctx) => {
      const s = await ctx.deps.portal.lookup(cookieToken(ctx.header('cookie'))!, false);
      if (!s) throw new ApiError('portal.session_invalid');
      return {
        status: 200,
        headers: { 'Cache-Control': 'no-store' },
        body: { object: 'portal_session', stage: s.stage, csrf_token: s.csrfToken, member: s.member, tenant: { id: s.tenantId, name: s.tenantName }, totp_setup_required: s.totpSetupOwed, expires_at: s.expiresAt.toISOString() },
      };
    },
  }),
  defineRoute({
    ...base,
    method: 'DELETE',
    path: '/portal/api/session',
    auth: 'session',
    summary: 'Sign out',
    responses: json,
    handler: async (ctx) => {
      await ctx.deps.portal.signOut(cookieToken(ctx.header('cookie'))!, actorOf(ctx));
      return { status: 200, body: { object: 'portal_session', stage: 'ended' }, headers: { 'Set-Cookie': clearedCookie(secure(ctx)) } };
    },
  }),

  // ---- password reset and invitations (no session) ----
  defineRoute<{ email: string }>({
    ...base,
    method: 'POST',
    path: '/portal/api/password_resets',
    auth: 'none',
    body: obj(['email'], { email: str(254, 1) }),
    bodyLimit: 1024,
    summary: 'Forgot password: a reset link by email (the same answer whether or not the email has an account)',
    responses: { 202: { description: 'Sent if the account exists' } },
    handler: async (ctx) => {
      checkOrigin(ctx);
      await ctx.deps.portal.requestReset(ctx.body.email, portalUrl(ctx));
      return { status: 202, body: { object: 'portal_password_reset', status: 'sent_if_exists' } };
    },
  }),
  defineRoute<{ token: string; password: string }>({
    ...base,
    method: 'POST',
    path: '/portal/api/password_resets/confirm',
    auth: 'none',
    body: obj(['token', 'password'], { token: str(100, 20), password }),
    bodyLimit: 1024,
    summary: 'A new password from a reset link; every session of the member ends',
    responses: json,
    errors: ['portal.reset_not_found'],
    handler: async (ctx) => {
      checkOrigin(ctx);
      await ctx.deps.portal.confirmReset(ctx.body.token, ctx.body.password);
      return { status: 200, body: { object: 'portal_password_reset', status: 'done' } };
    },
  }),
  defineRoute<{ token: string; name: string; password: string }>({
    ...base,
    method: 'POST',
    path: '/portal/api/invitations/accept',
    auth: 'none',
    body: obj(['token', 'name', 'password'], { token: str(100, 20), name: str(200, 1), password }),
    bodyLimit: 2048,
    summary: 'Accept an invitation: choose a password; signed in at once',
    responses: json,
    errors: ['portal.invitation_not_found', 'portal.member_conflict'],
    handler: async (ctx) => {
      checkOrigin(ctx);
      return session(await ctx.deps.portal.acceptInvitation(ctx.body.token, ctx.body, ctx.ip), ctx);
    },
  }),

  // ---- the member's own account ----
  defineRoute<{ name?: string; locale?: 'es' | 'en' }>({
    ...base,
    method: 'PATCH',
    path: '/portal/api/me',
    auth: 'session',
    body: obj([], { name: str(200, 1), locale: { enum: ['es', 'en'], 'x-error-code': 'portal.invalid_body' } }),
    summary: 'Name and language of the member',
    responses: json,
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.portal.updateMe(actorOf(ctx), ctx.body) }),
  }),
  defineRoute<{ current_password: string; new_password: string }>({
    ...base,
    method: 'POST',
    path: '/portal/api/me/password',
    auth: 'session',
    body: obj(['current_password', 'new_password'], { current_password: str(200, 1), new_password: password }),
    summary: 'Change the password',
    responses: json,
    handler: async (ctx) => {
      await ctx.deps.portal.changePassword(actorOf(ctx), ctx.body.current_password, ctx.body.new_password);
      return { status: 200, body: { object: 'portal_member_password', status: 'changed' } };
    },
  }),
  defineRoute({
    ...base,
    method: 'POST',
    path: '/portal/api/me/totp',
    auth: 'session',
    summary: 'Set up two-factor sign-in: a new secret for the authenticator app (off until confirmed)',
    responses: json,
    errors: ['portal.totp_conflict'],
    handler: async (ctx) => {
      const s = await ctx.deps.portal.totpBegin(actorOf(ctx));
      // The QR as a data: image (the portal's CSP allows img-src data:), drawn here: the secret goes to no other service.
      const svg = await QRCode.toString(s.otpauth_url, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
      return { status: 200, headers: { 'Cache-Control': 'no-store' }, body: { object: 'portal_totp_setup', ...s, qr_svg: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` } };
    },
  }),
  defineRoute<{ code: string }>({
    ...base,
    method: 'POST',
    path: '/portal/api/me/totp/confirm',
    auth: 'session',
    body: obj(['code'], { code }),
    summary: 'Turn two-factor sign-in on with a code from the app',
    responses: json,
    errors: ['portal.totp_invalid', 'portal.totp_conflict'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.portal.totpConfirm(actorOf(ctx), ctx.body.code) }),
  }),

  // ---- the team ----
  defineRoute({
    ...base,
    method: 'GET',
    path: '/portal/api/team',
    auth: 'session',
    summary: 'Members, pending invitations and the team-wide two-factor rule',
    responses: json,
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.portal.team(ctx.principal.tenantId) }),
  }),
  defineRoute<{ email: string; role: (typeof ROLES)[number] }>({
    ...base,
    method: 'POST',
    path: '/portal/api/team/invitations',
    auth: 'session',
    scope: 'team:manage',
    body: obj(['email', 'role'], { email, role: { enum: ROLES.filter((r) => r !== 'owner'), 'x-error-code': 'portal.invalid_body' } }),
    summary: 'Invite someone by email with a role (link valid 7 days)',
    responses: { 201: { description: 'Invited' } },
    errors: ['portal.member_conflict'],
    handler: async (ctx) => ({ status: 201, body: await ctx.deps.portal.invite(actorOf(ctx), ctx.body, portalUrl(ctx)) }),
  }),
  defineRoute({
    ...base,
    method: 'DELETE',
    path: '/portal/api/team/invitations/{id}',
    auth: 'session',
    scope: 'team:manage',
    notFound: 'portal.invitation_not_found',
    summary: 'Revoke a pending invitation',
    responses: json,
    handler: async (ctx) => {
      await ctx.deps.portal.revokeInvitation(actorOf(ctx), ctx.params.id);
      return { status: 200, body: { id: ctx.params.id, object: 'portal_invitation', revoked: true } };
    },
  }),
  defineRoute<{ role?: (typeof ROLES)[number]; extra_scopes?: string[]; status?: 'active' | 'disabled' }>({
    ...base,
    method: 'PATCH',
    path: '/portal/api/team/members/{id}',
    auth: 'session',
    scope: 'team:manage',
    notFound: 'portal.member_not_found',
    body: obj([], {
      role: { enum: ROLES, 'x-error-code': 'portal.invalid_body' },
      extra_scopes: { type: 'array', maxItems: 10, uniqueItems: true, items: { enum: GRANTABLE_SCOPES, 'x-error-code': 'portal.invalid_body' }, 'x-error-code': 'portal.invalid_body' },
      status: { enum: ['active', 'disabled'], 'x-error-code': 'portal.invalid_body' },
    }),
    summary: "Change a member's role, extra scopes or status",
    responses: json,
    errors: ['portal.last_owner_conflict'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.portal.updateMember(actorOf(ctx), ctx.params.id, ctx.body, ctx.principal.member?.role ?? '') }),
  }),
  defineRoute<{ require_totp: boolean }>({
    ...base,
    method: 'PUT',
    path: '/portal/api/team/settings',
    auth: 'session',
    scope: 'team:manage',
    body: obj(['require_totp'], { require_totp: { type: 'boolean', 'x-error-code': 'portal.invalid_body' } }),
    summary: 'Require two-factor sign-in for the whole team',
    responses: json,
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.portal.setRequireTotp(actorOf(ctx), ctx.body.require_totp, ctx.principal.member?.role ?? '') }),
  }),
  defineRoute<unknown, { limit?: number; before?: number }>({
    ...base,
    method: 'GET',
    path: '/portal/api/audit',
    auth: 'session',
    scope: 'audit:read',
    query: { type: 'object', additionalProperties: false, properties: { limit: { type: 'integer', minimum: 1, maximum: 200 }, before: { type: 'integer', minimum: 1 } } },
    summary: 'The audit log: every portal action, newest first',
    responses: json,
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.portal.auditLog(ctx.principal.tenantId, ctx.query) }),
  }),

  // ---- four eyes: refund and payout approvals decided by another member ----
  ...(['refund', 'payout'] as const).flatMap((kind) => [
    defineRoute<unknown, { status?: 'pending' | 'approved' | 'rejected' }>({
      ...base,
      method: 'GET',
      path: `/portal/api/${kind}_approvals`,
      auth: 'session',
      scope: 'payments:read',
      query: { type: 'object', additionalProperties: false, properties: { status: { enum: ['pending', 'approved', 'rejected'] } } },
      summary: `${kind === 'refund' ? 'Refund' : 'Payout'} approvals of the mode shown, with who asked`,
      responses: json,
      handler: async (ctx) => ({ status: 200, body: await ctx.deps.portalViews.approvals(ctx.principal, kind, ctx.query.status) }),
    }),
    ...(['approve', 'reject'] as const).map((decision) =>
      defineRoute({
        ...base,
        method: 'POST',
        path: `/portal/api/${kind}_approvals/{id}/${decision}`,
        auth: 'session',
        scope: kind === 'refund' ? 'refunds:write' : 'payouts:write',
        notFound: `${kind}_approval.not_found`,
        summary: decision === 'approve' ? `Approve a ${kind} another member asked for (never one's own)${kind === 'payout' ? '; it is sent' : ''}` : `Reject a ${kind} waiting for approval`,
        responses: json,
        errors: [`${kind}_approval.approver_conflict`],
        handler: async (ctx) => {
          const a = actorOf(ctx);
          // The approver is the member: the approvals entity refuses the member who asked (four eyes).
          const desk = kind === 'refund' ? ctx.deps.refunds : ctx.deps.payouts;
          const out = await desk[decision](ctx.principal.tenantId, ctx.params.id, a.memberId);
          await ctx.deps.portal.audit(a, `${kind}_approval.${decision === 'approve' ? 'approved' : 'rejected'}`, ctx.params.id, {});
          return { status: 200, body: out };
        },
      }),
    ),
  ]),

  // ---- API keys ----
  defineRoute({
    ...base,
    method: 'GET',
    path: '/portal/api/api_keys',
    auth: 'session',
    scope: 'keys:manage',
    summary: 'The API keys of the mode shown (never their secrets)',
    responses: json,
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.portal.keys(ctx.principal.tenantId, ctx.principal.livemode) }),
  }),
  defineRoute<{ scopes: string[] }>({
    ...base,
    method: 'POST',
    path: '/portal/api/api_keys',
    auth: 'session',
    scope: 'keys:manage',
    body: obj(['scopes'], { scopes: { type: 'array', minItems: 1, maxItems: 10, uniqueItems: true, items: { enum: ['*', ...GRANTABLE_SCOPES.filter((s) => s !== 'keys:manage')], 'x-error-code': 'portal.invalid_body' }, 'x-error-code': 'portal.invalid_body' } }),
    summary: 'Issue a key of the mode shown; its secret is in this answer only',
    responses: { 201: { description: 'The key, with its secret once' } },
    handler: async (ctx) => ({ status: 201, headers: { 'Cache-Control': 'no-store' }, body: await ctx.deps.portal.issueKey(actorOf(ctx), ctx.principal.livemode, ctx.body.scopes) }),
  }),
  defineRoute({
    ...base,
    method: 'POST',
    path: '/portal/api/api_keys/{id}/roll',
    auth: 'session',
    scope: 'keys:manage',
    notFound: 'portal.api_key_not_found',
    summary: 'Roll a key: a new one with the same scopes; the old one stops working at once',
    responses: { 201: { description: 'The new key, with its secret once' } },
    handler: async (ctx) => ({ status: 201, headers: { 'Cache-Control': 'no-store' }, body: await ctx.deps.portal.rollKey(actorOf(ctx), ctx.params.id) }),
  }),
  defineRoute({
    ...base,
    method: 'DELETE',
    path: '/portal/api/api_keys/{id}',
    auth: 'session',
    scope: 'keys:manage',
    notFound: 'portal.api_key_not_found',
    summary: 'Revoke a key',
    responses: json,
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.portal.revokeKey(actorOf(ctx), ctx.params.id) }),
  }),
];
