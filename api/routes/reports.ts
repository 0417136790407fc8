// Reports (spec: Endpoints > Reports; decisions.md §6; docs/reports.md). Reads take `reports:read`
// and go to the replica pool when one is configured; the period close and the account mapping
// change the tenant's books and take a full-access key (`*`).
import { type CashCutQuery } from '../../actors/reports/cash-cut.js';
import { savings } from '../../actors/reports/contracts.js';
import { anomalies } from '../../actors/reports/anomalies.js';
import { polizas, XLSX_TYPE, type AccountMappingBody, type PolizaFormat } from '../../actors/reports/ledger.js';
import {
  accountMappingBody,
  accountMappingResource,
  anomaliesQuery,
  anomalyList,
  cashCutQuery,
  cashCutResource,
  feeLeakageResource,
  pagedList,
  paymentRow,
  paymentsQuery,
  periodCloseResource,
  polizasQuery,
  savingsResource,
  trialBalanceResource,
  windowQuery,
} from '../../schemas/reports.js';
import { defineRoute } from '../route.js';

type WindowQ = { from?: string; to?: string; currency?: string };
const periodErrors = ['reports.invalid_period', 'reports.invalid_currency'] as const;

export const reportRoutes = [
  defineRoute<unknown, CashCutQuery>({
    method: 'GET',
    path: '/v1/reports/cash-cut',
    auth: 'api_key',
    scope: 'reports:read',
    query: cashCutQuery,
    summary: 'Cash cut: charges and refunds of [from, to) by method, connector and branch',
    description:
      'Charges captured in [from, to) (by the time of their ledger entry; test mode: the test clock) with their tips, and the refunds that succeeded in it. ' +
      '`branch`/`register`/`terminal_id` match `metadata.branch`/`metadata.register`/`metadata.terminal_id` exactly (the charges of one terminal: docs/terminals.md); `by_branch` groups by `metadata.branch` with `(sin sucursal)` for intents without one, and is omitted when filtering by `branch`. ' +
      '`charged_minor` is the amount without tip; `total_minor` = charged + tip. A date is a day of the books (America/Mexico_City).',
    tags: ['Reports'],
    responses: { 200: { description: 'The cash cut', schema: cashCutResource } },
    errors: [...periodErrors],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.reports.cashCut(ctx.principal, ctx.query) }),
  }),
  defineRoute<unknown, WindowQ>({
    method: 'GET',
    path: '/v1/reports/savings',
    auth: 'api_key',
    scope: 'reports:read',
    query: windowQuery,
    summary: 'Savings from routing, cross-connector retries and dunning',
    description: 'Default window: the 30 days before now (the account\'s clock). Zero values are valid: the figures come from the routing capability\'s facts and are zero until it records any.',
    tags: ['Reports'],
    responses: { 200: { description: 'The savings of the window', schema: savingsResource } },
    errors: [...periodErrors],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.reports.savings(ctx.principal, ctx.query) }),
  }),
  defineRoute<unknown, { format: PolizaFormat; from?: string; to?: string }>({
    method: 'GET',
    path: '/v1/reports/polizas',
    auth: 'api_key',
    scope: 'reports:read',
    query: polizasQuery,
    summary: 'Pólizas (one journal entry per day) for CONTPAQi Contabilidad or Aspel COI',
    description:
      'A `text/plain` attachment `polizas_{format}_{from}_{to}.txt` (dates of the books). `contpaqi`: fixed-width P / M1 records (AM/AD for CFDI UUIDs). ' +
      '`aspel_coi`: the COI import grid as tab-separated text, or, with `Accept: ' + XLSX_TYPE + '`, the same grid as an .xlsx workbook (`.xlsx` file name); one calendar month per file (COI files carry only the day). ' +
      'Default window: the current month. Each day with postings gives one póliza: per ledger account a cargo with its debits and an abono with its credits, on the tenant\'s accounting codes ' +
      '(PUT /v1/reports/account_mapping) or the SAT código agrupador default. Header `X-Service-Account-Mapping-Defaults` lists, comma separated, the codes that came from the default mapping (empty when none). ' +
      'Póliza numbers are `folio_offset` + day of the month; the default offset is 9000 (9001–9031, out of the range of the company\'s own daily numbering); header `X-Service-Poliza-Folios` says the numbers used (`first-last`, and `default-offset` while the tenant has not chosen one). Every entry with a CFDI carries its UUID (CONTPAQi AM/AD, COI CFDI block).',
    tags: ['Reports'],
    responses: { 200: { description: 'The pólizas file', contentType: 'text/plain' } },
    errors: ['reports.invalid_format', 'reports.invalid_period', 'reports.invalid_account_mapping'],
    handler: async (ctx) => {
      const f = await ctx.deps.reports.polizas(ctx.principal, ctx.query, ctx.header('accept'));
      return {
        status: 200,
        text: f.body,
        contentType: f.contentType,
        headers: { 'content-disposition': `attachment; filename=${f.filename}`, 'x-service-account-mapping-defaults': f.defaults.join(','), 'x-service-poliza-folios': f.folios },
      };
    },
  }),
  defineRoute<unknown, { cursor?: string; limit?: number }>({
    method: 'GET',
    path: '/v1/reports/payments',
    auth: 'api_key',
    scope: 'reports:read',
    query: paymentsQuery,
    summary: 'Payments, newest first (opaque cursor)',
    description:
      'One row per payment intent with the method, connector, fee and status of its latest attempt and the amount refunded. Request `?cursor=<next_cursor>` while `has_more` is true; `next_cursor` is omitted on the last page. ' +
      '`limit` defaults to 20 and is clamped to 100. The cursor is signed for this account and mode: a changed or foreign cursor is `reports.invalid_cursor`.',
    tags: ['Reports'],
    responses: { 200: { description: 'A page of payments', schema: pagedList(paymentRow) } },
    errors: ['reports.invalid_cursor'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.reports.payments(ctx.principal, ctx.query) }),
  }),
  defineRoute<unknown, { from?: string; to?: string }>({
    method: 'GET',
    path: '/v1/reports/anomalies',
    auth: 'api_key',
    scope: 'reports:read',
    query: anomaliesQuery,
    summary: 'Anomalies, each with the reason it was flagged',
    description:
      'Rules: `decline_rate_spike` (a day\'s card decline rate at least 10 points and 3 standard errors above the 28 days before, with ≥ 20 attempts that day and ≥ 50 before); ' +
      '`refund_rate_spike` (refunds per captured charge, 5 points); `amount_mismatch` (a charge sent or booked for another amount than the intent\'s total); ' +
      '`duplicate_charge` (the same card charged the same total within 10 minutes); `stale_processing` (an intent processing an hour after its last change). Default window: the 30 days before now.',
    tags: ['Reports'],
    responses: { 200: { description: 'The anomalies of the window', schema: anomalyList } },
    errors: ['reports.invalid_period'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.reports.anomalies(ctx.principal, ctx.query) }),
  }),
  defineRoute<unknown, WindowQ>({
    method: 'GET',
    path: '/v1/reports/fee-leakage',
    auth: 'api_key',
    scope: 'reports:read',
    query: windowQuery,
    summary: 'Fee leakage: fees charged above each connector\'s fee table',
    description: 'Default window: the 30 days before now. Zero until the routing capability records expected and charged fees per attempt.',
    tags: ['Reports'],
    responses: { 200: { description: 'The fee leakage of the window', schema: feeLeakageResource } },
    errors: [...periodErrors],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.reports.feeLeakage(ctx.principal, ctx.query) }),
  }),
  defineRoute<unknown, WindowQ>({
    method: 'GET',
    path: '/v1/reports/balanza',
    auth: 'api_key',
    scope: 'reports:read',
    query: windowQuery,
    summary: 'Trial balance (balanza de comprobación) of a period',
    description:
      'Per ledger account of the currency: opening balance (before `from`), debits and credits in [from, to), closing balance, all debit-positive, with the tenant\'s accounting code. ' +
      'Debits always equal credits and the balances sum to zero. Days of the books (America/Mexico_City); default: the current month.',
    tags: ['Reports'],
    responses: { 200: { description: 'The trial balance', schema: trialBalanceResource } },
    errors: [...periodErrors],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.reports.trialBalance(ctx.principal, ctx.query) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/reports/periods/{year}/{month}/close',
    auth: 'api_key',
    scope: '*',
    idempotency: 'required',
    summary: 'Close a month of the books',
    description:
      'Freezes the month\'s per-account balances (returned). A posting dated in a closed month (or before it) is not refused: the ledger carries it to the first day of the first open month and keeps its original day (`carried_from`), ' +
      'for every writer (a database trigger). The current month may be closed (postings from then on go to the next month); a month that has not started cannot; months with postings close in order. ' +
      'Closing a closed month answers the first close. Needs a full-access key (`*`).',
    tags: ['Reports'],
    responses: { 200: { description: 'The period close', schema: periodCloseResource } },
    errors: ['reports.invalid_period', 'reports.period_not_closable'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.reports.closePeriod(ctx.principal, ctx.params.year, ctx.params.month, ctx.idem) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/reports/account_mapping',
    auth: 'api_key',
    scope: 'reports:read',
    summary: 'The account mapping used by pólizas and the trial balance',
    description: 'The tenant\'s rules, the code each ledger account resolves to (`source`: `tenant` or `default`, the SAT código agrupador), and the póliza settings.',
    tags: ['Reports'],
    responses: { 200: { description: 'The account mapping', schema: accountMappingResource } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.reports.getAccountMapping(ctx.principal) }),
  }),
  defineRoute<AccountMappingBody>({
    method: 'PUT',
    path: '/v1/reports/account_mapping',
    auth: 'api_key',
    scope: '*',
    idempotency: 'optional',
    body: accountMappingBody,
    summary: 'Replace the account mapping and póliza settings',
    description: 'Replaces all rules (ledger account or `prefix:*` → accounting code) and settings; omitted settings return to their defaults. Needs a full-access key (`*`).',
    tags: ['Reports'],
    responses: { 200: { description: 'The account mapping', schema: accountMappingResource } },
    errors: ['reports.invalid_account_mapping'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.reports.putAccountMapping(ctx.principal, ctx.body, ctx.idem) }),
  }),
];
