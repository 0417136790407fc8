// Every error code of service-spec.md "Errors" with its `type` family and what it means, plus the
// few codes of the HTTP edge itself (malformed JSON, body too large, unknown route, internal).
// The HTTP status is never written here: it comes from statusForCode() (the spec's rule), and a
// test checks that the rule gives the status each spec table shows.
// /docs/errors is generated from this table.

// Each capability keeps its codes in kernel/errors/<capability>.ts; this file joins them.
import type { ErrorSpec } from './errors/spec.js';
import { EDGE_ERRORS } from './errors/edge.js';
import { PAYMENT_ERRORS } from './errors/payments.js';
import { REPORT_ERRORS } from './errors/reports.js';
import { INVOICE_ERRORS } from './errors/invoices.js';
import { RECEIVABLE_ERRORS } from './errors/receivables.js';
import { BANK_STATEMENT_ERRORS } from './errors/bank-statements.js';
import { CONNECT_ERRORS } from './errors/connect.js';
import { BILLER_ERRORS } from './errors/billers.js';
import { ROUTING_ERRORS } from './errors/routing.js';
import { PORTAL_ERRORS } from './errors/portal.js';
import { TERMINAL_ERRORS } from './errors/terminals.js';
import { OPERATOR_ERRORS } from './errors/operators.js';
export type { ErrorSpec, ErrorType } from './errors/spec.js';

export const ERROR_CATALOG = {
  ...EDGE_ERRORS,
  ...PAYMENT_ERRORS,
  ...REPORT_ERRORS,
  ...INVOICE_ERRORS,
  ...RECEIVABLE_ERRORS,
  ...BANK_STATEMENT_ERRORS,
  ...CONNECT_ERRORS,
  ...BILLER_ERRORS,
  ...ROUTING_ERRORS,
  ...PORTAL_ERRORS,
  ...TERMINAL_ERRORS,
  ...OPERATOR_ERRORS,
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
