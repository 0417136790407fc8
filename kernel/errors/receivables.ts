// Error codes of receivables.
import { inv, type ErrorSpec } from './spec.js';

export const RECEIVABLE_ERRORS = {
  // --- Receivables ---
  'receivable.missing_fields': inv('`customer_name`, `customer_email` and `concepto` are required.'),
  'receivable.invalid_amount': inv('`amount_minor` must be a positive integer.'),
  'receivable.invalid_currency': inv('`currency` must be an ISO 4217 code.'),
  'receivable.invalid_date': inv('`due_date` must be an ISO 8601 date-time.'),
  'receivable.incomplete_fiscal_receptor': inv('Fiscal fields go all four together (`customer_rfc`, `customer_uso_cfdi`, `customer_regimen_fiscal`, `customer_cp`) or none.'),
  'receivable.not_found': inv('No receivable with this id exists for this key.'),
  'receivable.no_phone': inv('The messaging link needs `customer_phone` on the receivable.'),
} as const satisfies Record<string, ErrorSpec>;
