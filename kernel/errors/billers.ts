// Error codes of billers, service payments and recharges.
import { inv, type ErrorSpec } from './spec.js';

export const BILLER_ERRORS = {
  // --- Billers and service payments ---
  'biller.missing_reference': inv('`reference` is required.'),
  'biller.not_found': inv('No biller with this code.'),
  'biller.invalid_reference': inv('The reference does not have the biller\'s format.'),
  'biller.reference_not_found': inv('The biller knows no account with this reference.'),
  'service_payment.missing_fields': inv('`biller_code` and `reference` are required.'),
  'service_payment.idempotency_conflict': inv('The Idempotency-Key was used for a different service payment.'),
  'service_payment.amount_mismatch': inv('`amount_minor` differs from the current amount due.'),
  'service_payment.not_found': inv('No service payment with this id exists for this key.'),
  // Ours (docs/billers.md): no live biller aggregator is configured; nothing is asked or paid.
  'biller.livemode_unsupported': inv('Bill inquiries and payments are not available with live keys; nothing was asked or paid.'),
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
