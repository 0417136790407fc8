// Error codes of reports.
import { inv, type ErrorSpec } from './spec.js';

export const REPORT_ERRORS = {
  // --- Reports ---
  'reports.invalid_period': inv('`from`/`to` must be ISO 8601 and `from` before `to`; a period close takes a real `year` and `month` (1–12).'),
  'reports.invalid_currency': inv('`currency` must be an ISO 4217 code.'),
  'reports.invalid_format': inv('`format` is required: `contpaqi` or `aspel_coi`.'),
  'reports.invalid_cursor': inv('The `cursor` is corrupt; use the `next_cursor` of the previous page as is.'),
  // Not in the spec's table (docs/reports.md):
  'reports.period_not_closable': inv('The month cannot be closed yet: it has not started on the tenant\'s clock, or an earlier month with postings is still open (close it first).'),
  'reports.invalid_account_mapping': inv('The account mapping is malformed: a ledger account (or `prefix:*`) to an accounting code of 1–20 characters (letters, digits, `.`, `-`).'),
} as const satisfies Record<string, ErrorSpec>;
