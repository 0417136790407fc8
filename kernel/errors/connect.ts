// Error codes of onboarding, Connect and payouts.
import { inv, type ErrorSpec } from './spec.js';

export const CONNECT_ERRORS = {
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
  // --- Ours (not in the spec's tables): documented in docs/connect.md ---
  'payout.invalid_beneficiary_rfc': inv('`beneficiary_rfc`, when sent, must be a valid RFC (12 or 13 characters with its check digit).'),
  'payout.invalid_reference': inv('`reference`, when sent, must be 1 to 7 digits (the SPEI referencia numérica); omit it to have one generated.'),
  'payout.invalid_connector': inv('`connector_key` must be `stp` (simulated in test mode) or `sim` (test mode only).'),
  'payout.no_route': inv('No payout rail can send this payout: in live mode the tenant has not stored its STP credentials (PUT /v1/connectors/stp/credentials), or `sim` was asked for with a live key. Nothing was sent.'),
  'payout.not_returnable': inv('Operator simulation: only a paid test-mode payout can be returned (devolución).'),
  'payout.concurrent_modification': inv('Another writer changed the payout at the same moment; read it again.'),
  'connect.concurrent_modification': inv('Another request changed the connect account at the same moment; read it again and retry.'),
  'payout_approval.not_found': inv('No payout approval with this id for this tenant.'),
  'payout_approval.resolution_conflict': inv('The payout approval was already approved or rejected.'),
  'payout_approval.approver_conflict': inv('Four-eyes rule: the approver must be someone other than the API key that requested the payout.'),
  'payout_credentials.invalid': inv('The STP credentials are incomplete, or the private key does not open with the passphrase; the message says which.'),
  'payout_credentials.not_found': inv('The tenant has not stored STP credentials for this mode.'),
  'stp_callback.invalid': inv('The body is not a status callback STP sends (`{id, empresa, folioOrigen, estado, ...}`), or names another company.'),
} as const satisfies Record<string, ErrorSpec>;
