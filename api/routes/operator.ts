// The operator's reads (docs/operator.md), behind X-Admin-Key: the audit log (a page, or an export),
// and an object's steps with their traces and its job history.
import { INSPECT_KINDS } from '../../actors/inspect.js';
import { auditExportQuery, auditList, auditQuery, inspectionResource, type AuditExportParams, type AuditQueryParams } from '../../schemas/operator.js';
import { defineRoute } from '../route.js';

export const operatorRoutes = [
  defineRoute<unknown, AuditQueryParams>({
    method: 'GET',
    path: '/admin/audit_log',
    auth: 'admin',
    query: auditQuery,
    summary: 'The audit log of operator actions, newest first',
    description: 'Who (the admin key, a named operator, a merchant member), when, what, why, the object before and after. Append-only: the database refuses updates and deletes. Pages: `cursor` = the previous page\'s `next_cursor` while `has_more`.',
    tags: ['Operator'],
    responses: { 200: { description: 'A page of entries', schema: auditList } },
    handler: async (ctx) => ({
      status: 200,
      body: await ctx.deps.audit.list({ ...ctx.query, before_seq: ctx.query.cursor !== undefined ? Number(ctx.query.cursor) : undefined }),
    }),
  }),
  defineRoute<unknown, AuditExportParams>({
    method: 'GET',
    path: '/admin/audit_log/export',
    auth: 'admin',
    query: auditExportQuery,
    summary: 'Export the audit log (CSV or JSON Lines), oldest first',
    tags: ['Operator'],
    responses: { 200: { description: 'The entries', contentType: 'text/csv' } },
    handler: async (ctx) => {
      const { format, ...filters } = ctx.query;
      const text = await ctx.deps.audit.export(filters, format);
      const stamp = new Date().toISOString().slice(0, 10);
      return {
        status: 200,
        text,
        contentType: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson',
        headers: { 'content-disposition': `attachment; filename="orquesta-audit-${stamp}.${format}"` },
      };
    },
  }),
];

export const inspectRoutes = INSPECT_KINDS.map((kind) =>
  defineRoute({
    method: 'GET',
    path: `/admin/tenants/{tenantId}/inspect/${kind}s/{id}`,
    auth: 'admin',
    notFound: `${kind}.not_found` as const,
    summary: `A ${kind.replace('_', ' ')}'s steps with their trace ids and links, and its job history`,
    description:
      'Each step (history) with the OpenTelemetry trace id of the request or job that made it and, when TRACE_URL_TEMPLATE is set, a link to it; ' +
      'each run of each job that named the object (attempt, outcome, error, trace), kept JOB_HISTORY_HOURS.' + (kind === 'payment_intent' ? ' Includes the jobs of its attempts.' : ''),
    tags: ['Operator'],
    responses: { 200: { description: 'The inspection', schema: inspectionResource } },
    errors: [`${kind}.not_found` as const],
    handler: async (ctx) => ({
      status: 200,
      body: await ctx.deps.inspect.get(ctx.params.tenantId, kind, ctx.params.id),
    }),
  }),
);
