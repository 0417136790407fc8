// Error codes of payment intents, attempts, refunds, webhook endpoints, payment links, customers and saved methods.
import { authz, inv, type ErrorSpec } from './spec.js';

export const PAYMENT_ERRORS = {
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
  'payment_intent.customer_mismatch': inv('A saved payment method charges its own customer: this intent belongs to another customer. Use a method of the intent\'s customer, or an intent without one.'),
  'payment_intent.cancel_conflict': inv('Cancel is possible in `requires_payment_method`, `requires_confirmation`, `requires_action`, or `processing` with an authorized attempt; not once the intent succeeded, failed or expired, nor while its attempt has no outcome yet. (The spec does not name this code; answered with 409.)'),
  'payment_intent.invalid_return_url': inv('`return_url` must be an absolute http(s) URL; when the merchant lists `allowed_origins` in its checkout settings, on one of them.'),
  'checkout.origin_unauthorized': authz("The page's origin is not among the merchant's `allowed_origins` (PUT /v1/checkout_settings): the browser kit and /public answer only pages the merchant listed."),
  'checkout.invalid_settings': inv('`allowed_origins` holds origins (scheme, host and port, no path), e.g. https://tienda.example.mx.'),
  'test_helpers.unauthorized': authz('Test helpers exist only in test mode: use an sk_test_ key (live payments are paid by the payer, never simulated).'),
  'test_helpers.state_conflict': inv('The payment intent is not waiting for what this helper simulates: a push payment (SPEI, OXXO, CoDi) in `requires_action` for `pay`, a 3-D Secure redirect in `requires_action` for `three_d_secure`. Read it again (the worker may not have moved it yet).'),
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
  'refund.concurrent_modification': inv('Another request or worker changed the refund at the same time. Read it again and retry.'),
  'refund_approval.not_found': inv('No refund approval with this id exists for this tenant.'),
  'refund_approval.resolution_conflict': inv('The approval was already approved or rejected.'),
  'refund_approval.approver_conflict': inv('Four-eyes rule: the approver must differ from the API key that requested the refund.'),
  'tenant_settings.invalid': inv('Operator API: send `refund_approval_threshold_minor` (integer >= 0) or `refund_approval_disabled: true`.'),
  // --- Webhook endpoints (codes of ours; the spec names only 400/403/404) ---
  'webhook_endpoint.invalid_url': inv('The URL must be https:// to a public host name or a public IP address (no private, loopback, link-local or other special-purpose range; checked again at every delivery). Plain http:// only for hosts in WEBHOOK_ALLOW_HTTP_HOSTS, and private or loopback ones only outside production.'),
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
} as const satisfies Record<string, ErrorSpec>;
