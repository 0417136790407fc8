// Every error code of service-spec.md "Errors" with its `type` family and what it means, plus the
// few codes of the HTTP edge itself (malformed JSON, body too large, unknown route, internal).
// The HTTP status is never written here: it comes from statusForCode() (the spec's rule), and a
// test checks that the rule gives the status each spec table shows.
// /docs/errors is generated from this table.

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'authorization_error'
  | 'idempotency_error'
  | 'rate_limit_error'
  | 'api_error';

export interface ErrorSpec {
  readonly type: ErrorType;
  /** What it means and what to do about it, for /docs/errors. */
  readonly doc: string;
  /** Default message when the thrower gives none. */
  readonly message?: string;
}

const inv = (doc: string, message?: string): ErrorSpec => ({ type: 'invalid_request_error', doc, message });
const authz = (doc: string, message?: string): ErrorSpec => ({ type: 'authorization_error', doc, message });

export const ERROR_CATALOG = {
  // --- Edge (this service's own, not in a spec table) ---
  'request.malformed_json': inv('The body is not valid JSON. Send `Content-Type: application/json` with a JSON object.'),
  'request.too_large': inv('The body is larger than the route accepts (1 MiB unless the route says otherwise). Answered with 413.'),
  'request.invalid_body': inv('The body does not match the schema of the route; the message names the field.'),
  'request.invalid_query': inv('A query parameter does not match what the route accepts; the message names it.'),
  'route.not_found': inv('No route has this method and path. Check the path against GET /openapi/v1.json.'),
  'tenant.not_found': inv('Operator API: no tenant has this id.'),
  'api_key.not_found': inv('Operator API: no API key with this id belongs to the tenant.'),
  'admin_key.missing_or_invalid': { type: 'authentication_error', doc: 'Operator API: header `X-Admin-Key` is missing or wrong.', message: 'Missing or invalid X-Admin-Key.' },
  internal_error: { type: 'api_error', doc: 'Something failed on our side. The request may be retried with the same Idempotency-Key; quote the request_id when you contact us.', message: 'An internal error occurred. Retry with the same Idempotency-Key, or contact support quoting the request id.' },
  service_unavailable: { type: 'api_error', doc: 'A dependency (database or queue) is unreachable. Retry after a short wait.', message: 'The service is temporarily unavailable; retry shortly.' },

  // --- Authentication and rate limit ---
  'api_key.missing_or_invalid': {
    type: 'authentication_error',
    doc: 'The `Authorization: Bearer <key>` header is missing, malformed, unknown or revoked. One message for every cause, so the answer reveals nothing about which.',
    message: 'Missing or invalid API key. Send it as "Authorization: Bearer sk_test_..." or "sk_live_...".',
  },
  insufficient_scope: authz('The key is valid but lacks the scope the endpoint needs; the message names it. Issue a key with that scope (or `*`).'),
  rate_limit_exceeded: {
    type: 'rate_limit_error',
    doc: 'Too many requests in the current one-minute window (per API key on /v1, per client IP on /public). Wait the seconds in `Retry-After`.',
    message: 'Too many requests; retry after the number of seconds in Retry-After.',
  },

  // --- Idempotency ---
  idempotency_key_required: { type: 'idempotency_error', doc: 'This POST moves money or creates a resource that must not be duplicated: send an `Idempotency-Key` header holding a UUID (v4 recommended).', message: 'This request needs an Idempotency-Key header holding a UUID.' },
  idempotency_key_in_progress: { type: 'idempotency_error', doc: 'Another request with the same key is still being processed. Retry after `Retry-After` (2 s) to get its stored answer.', message: 'A request with this Idempotency-Key is still in progress; retry in 2 seconds.' },
  idempotency_key_reused: { type: 'idempotency_error', doc: 'The key was already used with a different body or route. Use a new key for a different request.', message: 'This Idempotency-Key was already used with a different request body or route.' },

  // --- Payment intents and attempts ---
  'payment_intent.invalid_amount': inv('`amount_minor` must be a positive integer in minor units (cents), and `currency` is required.'),
  'payment_intent.invalid_currency': inv('`currency` must be an ISO 4217 code such as `MXN`.'),
  'payment_intent.invalid_tip': inv('`tip_minor` must be an integer >= 0.'),
  'payment_intent.unauthorized': authz('The key or client secret does not authorize this payment intent.'),
  'payment_intent.not_found': inv('No payment intent with this id exists for this key (tenant and mode).'),
  'payment_intent.not_confirmable': inv('Confirm is only possible in `requires_payment_method` or `requires_confirmation`.'),
  'payment_intent.no_route': inv('No connector is configured for the payment method.'),
  'payment_intent.concurrent_modification': inv('Another request changed the intent at the same time. Read it again and retry.'),
  'payment_intent.blocked_by_risk': inv('A risk rule with action `block` fired; no attempt was created.'),
  'payment_intent.cancel_conflict': inv('Cancel is possible in `requires_payment_method`, `requires_confirmation`, `requires_action`, or `processing` with an authorized attempt; not once the intent succeeded, failed or expired, nor while its attempt has no outcome yet. (The spec does not name this code; answered with 409.)'),
  'attempt.not_capturable': inv('Capture needs an attempt in `authorized`.'),
  'risk_review.not_found': inv('No risk review with this id exists for this tenant.'),
  'risk_review.resolution_conflict': inv('The review was already approved or rejected.'),
  'risk_rule.invalid': inv('A risk rule needs a known `field`, an `operator` that fits its value, and `action` `block` or `review`.'),
  'test_clock.unauthorized': authz('The test clock exists only in test mode: use an sk_test_ key.'),
  'test_clock.invalid_advance': inv('Send `{seconds: integer > 0}` or `{to: timestamp later than now}`.'),
  'attempt.not_found': inv('No attempt with this id exists for this key.'),

  // --- Refunds ---
  'refund.invalid_amount': inv('`amount_minor` must be strictly positive.'),
  'refund.attempt_not_refundable': inv('Only a `captured`, `settled` or `partially_refunded` attempt can be refunded.'),
  'refund.currency_mismatch': inv('The refund currency differs from the charge.'),
  'refund.nothing_refundable': inv('The attempt has no refundable balance left.'),
  'refund.exceeds_refundable': inv('The amount exceeds what is still refundable (charged minus live refunds); the message carries the remaining cents.'),
  'refund.not_found': inv('No refund with this id exists for this key.'),
  'refund_approval.not_found': inv('No refund approval with this id exists for this tenant.'),
  'refund_approval.resolution_conflict': inv('The approval was already approved or rejected.'),
  'refund_approval.approver_conflict': inv('Four-eyes rule: the approver must differ from the API key that requested the refund.'),
  'tenant_settings.invalid': inv('Operator API: send `refund_approval_threshold_minor` (integer >= 0) or `refund_approval_disabled: true`.'),

  // --- Webhook endpoints (codes of ours; the spec names only 400/403/404) ---
  'webhook_endpoint.invalid_url': inv('The URL must be https:// and resolve to a public address (plain http:// and private addresses only for hosts in WEBHOOK_ALLOW_HTTP_HOSTS).'),
  'webhook_endpoint.invalid_events': inv('`events` lists only event types of the catalog.'),
  'webhook_endpoint.not_found': inv('No webhook endpoint with this id exists for this key.'),

  'payment_link.not_found': inv('No payment link with this id or slug.'),

  // --- Customers and payment methods ---
  'customer.not_found': inv('No customer with this id exists for this key (tenant and mode).'),
  'payment_method.invalid_token': inv('`payment_token` is missing.'),
  'payment_method.not_found': inv('No saved payment method with this id exists for this customer.'),
  'payment_method.not_chargeable': inv('Only an `active` saved method can be charged.'),
  'payment_method.no_route': inv('No connector can save this payment method.'),
  'payment_method.concurrent_modification': inv('Another request changed the method at the same time. Read it again and retry.'),

  // --- Reports ---
  'reports.invalid_period': inv('`from`/`to` must be ISO 8601 and `from` before `to`.'),
  'reports.invalid_currency': inv('`currency` must be an ISO 4217 code.'),
  'reports.invalid_format': inv('`format` is required: `contpaqi` or `aspel_coi`.'),
  'reports.invalid_cursor': inv('The `cursor` is corrupt; use the `next_cursor` of the previous page as is.'),

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

  // --- Receivables ---
  'receivable.missing_fields': inv('`customer_name`, `customer_email` and `concepto` are required.'),
  'receivable.invalid_amount': inv('`amount_minor` must be a positive integer.'),
  'receivable.invalid_currency': inv('`currency` must be an ISO 4217 code.'),
  'receivable.invalid_date': inv('`due_date` must be an ISO 8601 date-time.'),
  'receivable.incomplete_fiscal_receptor': inv('Fiscal fields go all four together (`customer_rfc`, `customer_uso_cfdi`, `customer_regimen_fiscal`, `customer_cp`) or none.'),
  'receivable.not_found': inv('No receivable with this id exists for this key.'),
  'receivable.no_phone': inv('The messaging link needs `customer_phone` on the receivable.'),

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

  // --- Self-invoice ---
  'autofactura.invalid_body': inv('A required self-invoice field is missing.'),
  'autofactura.invalid_rfc': inv('The RFC is not in the tax authority\'s format.'),
  'autofactura.not_available': inv('Self-invoicing is not available at this address (unknown slug or disabled).'),
  'autofactura.receipt_not_found': inv('No receipt matches this code and RFC.'),

  // --- Onboarding ---
  'onboarding_application.invalid_legal_name': inv('`legal_name` is required.'),
  'onboarding_application.invalid_person_type': inv('`person_type` must be `fisica` or `moral`.'),
  'onboarding_application.invalid_contact_email': inv('`contact_email` must be an email address.'),
  'onboarding_application.invalid_document': inv('A document has a bad `document_type` or lacks `reference`/`reference_hash`.'),
  'onboarding_application.missing_fields': inv('Submit needs every field; the message lists the missing ones.'),
  'onboarding_application.missing_documents': inv('Submit needs the four documents.'),
  'onboarding_application.not_found': inv('No application with this id exists for this key.'),
  'onboarding_application.transition_conflict': inv('The application is no longer editable, or another request changed it.'),

  // --- Connect ---
  'connect.invalid_application_id': inv('`onboarding_application_id` must be a UUID.'),
  'connect.application_not_approved': inv('The application is not `approved`.'),
  'connect.account_suspended': inv('The connect account is suspended.'),
  'connect.invalid_payment_intent': inv('`payment_intent_id` is missing or not usable.'),
  'connect.invalid_charge': inv('`charge_amount_minor` must be positive.'),
  'connect.invalid_currency': inv('`currency` must be an ISO 4217 code.'),
  'connect.missing_allocations': inv('`splits` needs at least one allocation.'),
  'connect.invalid_allocation': inv('A split has a bad account id or amount.'),
  'connect.split_mismatch': inv('`application_fee_minor` plus the splits must equal `charge_amount_minor` exactly.'),
  'connect.application_not_found': inv('No onboarding application with this id.'),
  'connect.account_not_found': inv('No connect account with this id.'),
  'connect.transfer_not_found': inv('No connect transfer with this id.'),
  'connect.account_conflict': inv('The application is already linked to an account.'),

  // --- Payouts ---
  'payout.missing_fields': inv('`clabe`, `beneficiary_name` and `concepto` are required.'),
  'payout.invalid_amount': inv('`amount_minor` must be a positive integer.'),
  'payout.invalid_currency': inv('`currency` must be an ISO 4217 code.'),
  'payout.unsupported_currency': inv('Payouts are in MXN only.'),
  'payout.invalid_clabe': inv('The CLABE must be 18 digits with a valid check digit (3-7-1 weighting).'),
  'payout.not_found': inv('No payout with this id exists for this key.'),

  // --- Billers and service payments ---
  'biller.missing_reference': inv('`reference` is required.'),
  'biller.not_found': inv('No biller with this code.'),
  'biller.invalid_reference': inv('The reference does not have the biller\'s format.'),
  'biller.reference_not_found': inv('The biller knows no account with this reference.'),
  'service_payment.missing_fields': inv('`biller_code` and `reference` are required.'),
  'service_payment.idempotency_conflict': inv('The Idempotency-Key was used for a different service payment.'),
  'service_payment.amount_mismatch': inv('`amount_minor` differs from the current amount due.'),
  'service_payment.not_found': inv('No service payment with this id exists for this key.'),

  // --- Recharges ---
  'recharge.invalid_carrier': inv('The carrier code is missing.'),
  'recharge.carrier_not_found': inv('The carrier is unknown or inactive.'),
  'recharge.livemode_unsupported': inv('Recharges are not available with live keys; nothing was stored or booked.'),
  'recharge.missing_fields': inv('`product_code` and `phone_number` are required.'),
  'recharge.product_not_found': inv('The product is unknown or inactive.'),
  'recharge.invalid_phone': inv('`phone_number` must be 10 digits.'),
  'recharge.carrier_not_enabled': inv('The carrier is not enabled for the tenant.'),
  'recharge.payment_intent_not_found': inv('The payment intent is unknown for this key.'),
  'recharge.payment_intent_not_succeeded': inv('The payment intent is not `succeeded`.'),
  'recharge.payment_intent_amount_mismatch': inv('The payment intent amount differs from the product face amount.'),
  'recharge.idempotency_conflict': inv('The Idempotency-Key was used with different recharge data.'),
  'recharge.retry_conflict': inv('An execution of the same recharge is in progress.'),
  'recharge.not_found': inv('No recharge with this id exists for this key.'),
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export const ERROR_CODES = Object.keys(ERROR_CATALOG) as ErrorCode[];

/**
 * HTTP status of each code, as the spec's tables show it, where the spec shows one. A test checks
 * statusForCode() against every entry, so a change of the rule or the catalog cannot go unnoticed.
 */
export const SPEC_STATUS: Partial<Record<ErrorCode, number>> = {
  idempotency_key_required: 400, idempotency_key_in_progress: 409, idempotency_key_reused: 422,
  'payment_intent.invalid_amount': 400, 'payment_intent.invalid_currency': 400, 'payment_intent.invalid_tip': 400,
  'payment_intent.unauthorized': 403, 'payment_intent.not_found': 404, 'payment_intent.not_confirmable': 409,
  'payment_intent.no_route': 400, 'payment_intent.concurrent_modification': 409, 'payment_intent.blocked_by_risk': 409,
  'attempt.not_capturable': 400, 'attempt.not_found': 404,
  'refund.invalid_amount': 400, 'refund.attempt_not_refundable': 409, 'refund.currency_mismatch': 400,
  'refund.nothing_refundable': 400, 'refund.exceeds_refundable': 400, 'refund.not_found': 404,
  'customer.not_found': 404, 'payment_method.invalid_token': 400, 'payment_method.not_found': 404,
  'payment_method.not_chargeable': 409, 'payment_method.no_route': 400, 'payment_method.concurrent_modification': 409,
  'reports.invalid_period': 400, 'reports.invalid_currency': 400, 'reports.invalid_format': 400, 'reports.invalid_cursor': 400,
  'invoice.not_found': 404, 'invoice.intent_not_found': 404, 'invoice.pac_error': 400,
  'receivable.not_found': 404, 'receivable.no_phone': 400,
  'bank_statement.too_large': 400,
  'autofactura.invalid_body': 400, 'autofactura.invalid_rfc': 400, 'autofactura.not_available': 404, 'autofactura.receipt_not_found': 404,
  'onboarding_application.not_found': 404, 'onboarding_application.transition_conflict': 409,
  'connect.application_not_found': 404, 'connect.account_not_found': 404, 'connect.transfer_not_found': 404,
  'connect.account_conflict': 409, 'connect.split_mismatch': 400,
  'payout.not_found': 404, 'payout.invalid_clabe': 400,
  'biller.not_found': 404, 'biller.reference_not_found': 404, 'biller.invalid_reference': 400,
  'service_payment.idempotency_conflict': 409, 'service_payment.not_found': 404,
  'recharge.carrier_not_found': 404, 'recharge.product_not_found': 404, 'recharge.payment_intent_not_found': 404,
  'recharge.idempotency_conflict': 409, 'recharge.retry_conflict': 409, 'recharge.not_found': 404,
  'recharge.livemode_unsupported': 400,
  'api_key.missing_or_invalid': 401, insufficient_scope: 403, rate_limit_exceeded: 429,
};
