// The operators' audit log (docs/operator.md), behind X-Admin-Key: read a page, or export it all.
import { exportAudit, listAudit } from '../../actors/audit.js';
import { auditExportQuery, auditList, auditQuery, type AuditExportParams, type AuditQueryParams } from '../../schemas/operator.js';
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
      body: await listAudit(ctx.deps.sql, { ...ctx.query, before_seq: ctx.query.cursor !== undefined ? Number(ctx.query.cursor) : undefined }),
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
      const text = await exportAudit(ctx.deps.sql, filters, format);
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
