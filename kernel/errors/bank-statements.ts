// Error codes of bank statements and reconciliation.
import { inv, type ErrorSpec } from './spec.js';

export const BANK_STATEMENT_ERRORS = {
  // --- Bank statements ---
  'bank_statement.bank_required': inv('`bank` is required.'),
  'bank_statement.invalid_period': inv('`period_start`/`period_end` must be yyyy-MM-dd and not inverted.'),
  'bank_statement.invalid_tolerance': inv('`tolerance_days` must be >= 0.'),
  'bank_statement.unknown_preset': inv('`preset` must be `bbva`, `banorte` or `santander`.'),
  'bank_statement.mapping_required': inv('Without a preset, `date_column`, `description_column`, `credit_column` and `debit_column` are required.'),
  'bank_statement.invalid_mapping': inv('A column index is not a non-negative integer, or two columns collide.'),
  'bank_statement.invalid_match_status': inv('`match_status` must be `matched`, `unmatched` or `partial`.'),
  'bank_statement.too_large': inv('The statement file is over 5 MiB.'),
  'bank_statement.parse_error': inv('A row could not be read; the message carries its number.'),
  // Not in the spec's list (its reads have no codes there): the usual not-found, and a corrupt page cursor.
  'bank_statement.not_found': inv('No bank statement with this id exists for this key (tenant and mode).'),
  'bank_statement.invalid_cursor': inv('The `cursor` is corrupt or belongs to another listing: pass the `next_cursor` of the previous page exactly as received.'),
} as const satisfies Record<string, ErrorSpec>;
