// Bank statements and reconciliation (service-spec: Bank reconciliation; decisions.md §3 paths, §6
// matching; docs/bank-statements.md). The import takes the file as a multipart `file` part (uWS's
// multipart parser) or as the raw body, capped while it streams in; the rules live in actors/.
import { MAX_IMPORT_BODY_BYTES, reconciliation, type LinesQuery } from '../../actors/bank-statements.js';
import { ApiError } from '../../kernel/errors.js';
import {
  importFieldsDoc,
  importRequestContent,
  lineList,
  linesQuery,
  reconciliationResource,
  statementList,
  statementListQuery,
  statementResource,
} from '../../schemas/bank-statements.js';
import { defineRoute, type RouteDef } from '../route.js';
import { uws } from '../uws.js';

const IMPORT_FIELDS = new Set(Object.keys(importFieldsDoc.properties));
/** A form field or file name as storable text: control characters (NUL: Postgres text cannot hold it) dropped. */
// eslint-disable-next-line no-control-regex
const text = (s: string) => s.replace(/[\u0000-\u001f\u007f]/g, '').trim();

/** The file and the fields of an import: a multipart form (file part `file`), or the body itself with the fields in the query. */
export function importInput(body: Buffer, contentType: string | undefined, query: Record<string, string>) {
  const fields: Record<string, string | undefined> = {};
  for (const k of Object.keys(query)) if (IMPORT_FIELDS.has(k)) fields[k] = query[k];
  if (contentType && /^multipart\/form-data\s*;/i.test(contentType)) {
    const parts = body.length ? uws.getParts(body, contentType) : undefined;
    if (!parts) throw new ApiError('bank_statement.parse_error', 'The multipart body could not be read (no parts, or a boundary that does not match the Content-Type).');
    let file: { bytes: Buffer; filename?: string } | undefined;
    for (const part of parts) {
      if (part.name === 'file') file = { bytes: Buffer.from(part.data), filename: part.filename || undefined };
      else if (IMPORT_FIELDS.has(part.name) && part.name !== 'filename') fields[part.name] = text(Buffer.from(part.data).toString('utf8'));
    }
    if (!file) throw new ApiError('bank_statement.parse_error', 'The multipart form has no `file` part: send the statement as the part named `file`.');
    return { bytes: file.bytes, filename: text(file.filename ?? '').slice(0, 255) || undefined, fields };
  }
  return { bytes: body, filename: text(query.filename ?? '').slice(0, 255) || undefined, fields };
}

const IMPORT_ERRORS = [
  'bank_statement.bank_required',
  'bank_statement.invalid_period',
  'bank_statement.invalid_tolerance',
  'bank_statement.unknown_preset',
  'bank_statement.mapping_required',
  'bank_statement.invalid_mapping',
  'bank_statement.too_large',
  'bank_statement.parse_error',
  // a NUL in a query parameter (the edge refuses it for every route)
  'request.invalid_query',
] as const;

export const bankStatementRoutes: RouteDef[] = [
  defineRoute<Buffer, Record<string, string>>({
    method: 'POST',
    path: '/v1/bank_statements',
    auth: 'api_key',
    scope: 'payments:write',
    rawBody: true,
    bodyLimit: MAX_IMPORT_BODY_BYTES,
    tooLarge: 'bank_statement.too_large',
    queryDoc: importFieldsDoc,
    requestContent: importRequestContent,
    summary: 'Import a bank statement file and reconcile it',
    description:
      'Multipart (`file` part plus the fields as form fields) or the file as the raw body with the fields in the query. No Idempotency-Key: the file\'s SHA-256 is the idempotency ' +
      '(the same bytes again answer 200 with the stored statement, `already_imported: true`, nothing stored or posted twice). ' +
      'The file is read whole before anything is stored (a parse error stores nothing); `bank_statement.parse_error` names the file\'s line and the reason. ' +
      'A body over 5 MiB plus 64 KiB (the multipart envelope) is refused while it streams in (never buffered); a file over 5 MiB is `bank_statement.too_large`. ' +
      'Credit lines are stored and matched to succeeded SPEI charges (decisions.md §6); each match posts the deposit entry (`bank:<bank>` debited, `connector_receivable:<connector>` credited) in the same transaction.',
    tags: ['Bank statements'],
    responses: {
      201: { description: 'The new statement', schema: statementResource },
      200: { description: 'The same file was imported before: the stored statement, `already_imported: true`', schema: statementResource },
    },
    errors: [...IMPORT_ERRORS],
    handler: async (ctx) => {
      const r = await ctx.deps.statements.import(ctx.principal, importInput(ctx.body, ctx.header('content-type'), ctx.query));
      return { status: r.status, body: r.body };
    },
  }),
  defineRoute<unknown, { limit?: number }>({
    method: 'GET',
    path: '/v1/bank_statements',
    auth: 'api_key',
    scope: 'reports:read',
    query: statementListQuery,
    summary: 'List bank statements, newest first',
    description: 'A simple list (service-spec Limits): the whole set up to `limit`, no cursor. Counts are computed at read time (late charges change them).',
    tags: ['Bank statements'],
    responses: { 200: { description: 'The statements', schema: statementList } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.statements.list(ctx.principal, ctx.query) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/bank_statements/{id}',
    auth: 'api_key',
    scope: 'reports:read',
    notFound: 'bank_statement.not_found',
    summary: 'Read a bank statement',
    tags: ['Bank statements'],
    responses: { 200: { description: 'The statement', schema: statementResource } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.statements.get(ctx.principal, ctx.params.id) }),
  }),
  defineRoute<unknown, LinesQuery>({
    method: 'GET',
    path: '/v1/bank_statements/{id}/lines',
    auth: 'api_key',
    scope: 'reports:read',
    query: linesQuery,
    notFound: 'bank_statement.not_found',
    summary: 'Lines of a bank statement, in file order',
    description: 'Optional `match_status` filter; cursor pagination (`next_cursor` while `has_more`).',
    tags: ['Bank statements'],
    responses: { 200: { description: 'A page of lines', schema: lineList } },
    errors: ['bank_statement.invalid_match_status', 'bank_statement.invalid_cursor'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.statements.lines(ctx.principal, ctx.params.id, ctx.query) }),
  }),
  defineRoute<unknown, LinesQuery>({
    method: 'GET',
    path: '/v1/bank_statements/{id}/reconciliation',
    auth: 'api_key',
    scope: 'reports:read',
    query: linesQuery,
    notFound: 'bank_statement.not_found',
    summary: 'Three-way reconciliation of a statement: bank line, charge and ledger entries, CFDI',
    description:
      'For each line (paged like /lines, same filter): the charge it matched (or partially matched), the charge\'s capture entry and the bank deposit entry the match posted, and the charge\'s CFDI (`uuid_fiscal`) when it has one. ' +
      '`charges_without_line`: the succeeded SPEI charges of the statement\'s period that no line of any statement matched. The statement\'s `exceptions` = partial lines + those charges.',
    tags: ['Bank statements'],
    responses: { 200: { description: 'The reconciliation', schema: reconciliationResource } },
    errors: ['bank_statement.invalid_match_status', 'bank_statement.invalid_cursor'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.statements.reconciliation(ctx.principal, ctx.params.id, ctx.query) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/bank_statements/{id}/rematch',
    auth: 'api_key',
    scope: 'payments:write',
    notFound: 'bank_statement.not_found',
    summary: 'Match the open lines of a statement again',
    description:
      'Runs the import\'s matching over the statement\'s unmatched and partial lines against the charges that exist now (a charge that succeeds after the import also matches its line by itself, in its own transaction). ' +
      'Idempotent: a charge is matched at most once and its deposit entry posted once. No body.',
    tags: ['Bank statements'],
    responses: { 200: { description: 'The statement with its new counts', schema: statementResource } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.statements.rematch(ctx.principal, ctx.params.id) }),
  }),
];
