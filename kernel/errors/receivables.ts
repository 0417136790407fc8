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
  // --- Ours (docs/receivables.md) ---
  'receivable.invalid_phone': inv('`customer_phone` must be a phone number: 10 digits (Mexico) or international form with `+` and 11 to 15 digits.'),
  'receivable.invalid_fiscal_receptor': inv('The four fiscal fields are present but SAT would refuse them (RFC form, c_UsoCFDI, c_RegimenFiscal, 5-digit CP); the message says which.'),
  'receivable.invalid_invoice': inv('`ppd_invoice_id` must name a stamped PPD invoice of this key, in the receivable\'s currency, whose remaining balance covers `amount_minor`.'),
  'receivable.cancel_conflict': inv('The receivable cannot be canceled: it is paid, or a payment of its link is being processed right now (retry once it resolves).'),
  'receivable.concurrent_modification': inv('Another request is changing this receivable right now; read it again and retry.'),
} as const satisfies Record<string, ErrorSpec>;
