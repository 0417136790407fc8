// Error codes of routing configuration, balance and signup (ours: the spec names these resources
// but not their codes; docs/routing.md and docs/signup.md).
import { inv } from './spec.js';

export const ROUTING_ERRORS = {
  'routing.invalid_connector': inv('`connector` must be one this deployment has (`sim`, `sim_b`, `conekta`, `openpay`); a simulator (`sim`, `sim_b`) is for test keys only.'),
  'routing.invalid_fees': inv('`fees` needs at least one method the connector supports, each with integer `bps` (0–10000) and `fixed_minor` (≥ 0); brands likewise.'),
  'routing.credentials_required': inv('A real connector (`conekta`, `openpay`) needs `credentials` the first time it is configured for a mode.'),
  'routing.invalid_credentials': inv('`credentials` lacks a field the connector needs (conekta: `private_key`, optional `webhook_public_key`; openpay: `merchant_id`, `private_key`, optional `webhook_user`/`webhook_password`).'),
  'routing.connector_not_found': inv('This connector is not configured for this key\'s mode.'),
  'routing.invalid_query': inv('A query parameter is malformed (`limit` 1–100, `payment_intent` a UUID).'),
  'webhook_in.invalid_signature': inv('The delivery is not signed by the provider with the key the tenant stored (Conekta: DIGEST over the raw body with `webhook_public_key`; Openpay: the webhook\'s user and password), or no key is stored.'),
  'webhook_in.invalid_body': inv('The delivery is not an event of this provider.'),
  'balance.invalid_currency': inv('`currency` must be an ISO 4217 code.'),
  'signup.invalid_body': inv('`email` (an address), `legal_name` (1–200 characters) and `password` (10–200 characters) are required.'),
  'signup.email_conflict': inv('This email already signed up (pending or verified).'),
  'signup.not_found': inv('No pending signup for this email.'),
  'signup.invalid_code': inv('The verification code is wrong or expired; a new signup with the same email is refused while one is pending, so ask the operator or wait for the code to expire (30 minutes).'),
  'signup.too_many_attempts': inv('Five wrong codes: this signup is locked against guessing until its code expires.'),
  'signup.already_verified_conflict': inv('This signup is already verified.'),
} as const;
