// Error codes of invoices (CFDI) and self-invoicing.
import { inv, type ErrorSpec } from './spec.js';

export const INVOICE_ERRORS = {
  // --- Invoices (CFDI) ---
  'invoice.invalid_body': inv('`payment_intent_id` is missing (invoices, payments) or `total_minor` is not positive (PPD).'),
  'invoice.invalid_receptor': inv('`receptor` or one of `rfc`, `nombre`, `uso_cfdi`, `regimen_fiscal`, `cp` is missing.'),
  'invoice.invalid_currency': inv('Invalid currency on a PPD invoice.'),
  'invoice.pac_error': inv('The stamping provider (PAC) rejected the CFDI; the message carries its reason.'),
  'invoice.not_stamped': inv('The invoice is not stamped yet: no XML/PDF and no payment complement.'),
  'invoice.not_found': inv('No invoice with this id exists for this key.'),
  'invoice.receptor_incoherente': inv('A generic RFC (public or foreign) needs nombre of the general public, regimen `616` and uso `S01`.'),
  'invoice.intent_not_found': inv('The payment intent is unknown or not the caller\'s.'),
  'invoice.intent_not_succeeded': inv('The charge is not `succeeded` yet.'),
  'invoice.already_exists': inv('The charge already has a live invoice.'),
  'invoice.conceptos_sum_mismatch': inv('The sum of concept `importe_minor` differs from the total.'),
  'invoice.livemode_mismatch': inv('The charge mode differs from the stamping provider environment.'),
  'invoice.fiscal_profile_missing': inv('The tenant has no fiscal profile: PUT /v1/fiscal_profile first.'),
  'invoice.pac_credentials_missing': inv('The fiscal profile has no PAC credentials for this environment.'),
  'invoice.pac_credentials_incomplete': inv('The PAC user or password is missing.'),
  'invoice.pac_unreachable': inv('The PAC is unreachable; retry with the same Idempotency-Key.'),
  'invoice.pac_bad_response': inv('The PAC answered something that could not be interpreted.'),
  'invoice.pac_no_uuid': inv('The PAC answered without a stamp UUID.'),
  // Codes Orquesta adds (docs/invoices.md): the spec leaves these cases open.
  'invoice.not_ppd': inv('Payment complements (REP) are registered only against a PPD invoice; this one is PUE.'),
  'invoice.payment_exceeds_balance': inv('The charge is larger than the invoice\'s remaining balance (saldo insoluto); the message carries the balance in cents.'),
  'invoice.payment_already_applied': inv('This charge already settles another invoice or payment complement; a charge is applied once.'),
  'invoice.payment_currency_mismatch': inv('The charge\'s currency differs from the invoice\'s.'),
  'invoice.folio_sustitucion_required': inv('Cancellation motive `01` (issued with errors, with relation) needs `folio_sustitucion`: the UUID of the CFDI that replaces this one.'),
  'invoice.cancel_rejected': inv('SAT (through the PAC) refused the cancellation; the message carries its status code.'),
  'invoice.credit_note_exceeds_total': inv('The credit note would take the live credit notes of the invoice over its total; the message carries what is left.'),
  'invoice.concurrent_modification': inv('Another request changed this invoice at the same moment; retry with the same Idempotency-Key.'),
  'invoice.csd_invalid': inv('The uploaded CSD could not be used: not a SAT certificate, the key does not open with the password, the key is not the certificate\'s, it is expired, or its RFC is not the profile\'s.'),
  'invoice.csd_missing': inv('Live mode seals with the tenant\'s own CSD: upload it with PUT /v1/fiscal_profile (`csd`).'),
  'invoice.test_csd_in_live': inv('SAT\'s public test CSD (AAA010101AAA) is refused in live mode.'),
  'fiscal_profile.invalid': inv('A fiscal profile field is missing or malformed; the message names it.'),
  'fiscal_profile.slug_conflict': inv('The self_invoice_slug is taken by another fiscal profile.'),
  // --- Self-invoice ---
  'autofactura.invalid_body': inv('A required self-invoice field is missing.'),
  'autofactura.invalid_rfc': inv('The RFC is not in the tax authority\'s format.'),
  'autofactura.not_available': inv('Self-invoicing is not available at this address (unknown slug or disabled).'),
  'autofactura.receipt_not_found': inv('No receipt matches this code and RFC.'),
} as const satisfies Record<string, ErrorSpec>;
