// The /v1 route table re-served for the portal under /portal/api/v1/* (issue 29 part 3; docs/portal.md):
// the same definitions, bodies, validation, idempotency and handlers, with a member's session instead
// of an API key. The member's role gives the scopes (kernel/roles.ts); a change whose route declares no
// scope needs payments:write, so a viewer changes nothing. No business rule is written twice: the
// only thing added is the audit log line of every change made from the portal.
import { portalScopeFor } from '../../kernel/roles.js';
import type { Scope } from '../../kernel/principal.js';
import type { Reply, RequestContext, RouteDef } from '../route.js';
import { actorOf } from './portal.js';

export const PORTAL_API_PREFIX = '/portal/api';

export function portalApiRoutes(routes: readonly RouteDef[]): RouteDef[] {
  return routes
    .filter((r) => r.auth === 'api_key' && r.path.startsWith('/v1/'))
    .map((r): RouteDef => {
      const audited = async (ctx: RequestContext): Promise<Reply> => {
        const out = await r.handler(ctx);
        if (out.status < 400) {
          const body = out.body as { id?: unknown } | undefined;
          const target = ctx.params.id ?? (typeof body?.id === 'string' ? body.id : null);
          await ctx.deps.portal.audit(actorOf(ctx), `${r.method} ${r.path}`, target, { status: out.status, livemode: ctx.principal.livemode });
        }
        return out;
      };
      return {
        ...r,
        path: PORTAL_API_PREFIX + r.path,
        auth: 'session',
        scope: portalScopeFor(r.method, r.scope) as Scope | undefined,
        hidden: true,
        rateLimitExempt: true,
        handler: r.method === 'GET' ? r.handler : audited,
      };
    });
}
