// Error codes of the merchant portal (issue 29; docs/portal.md). The spec names the portal but not
// its codes; these answer only under /portal/api.
import { authz, inv, type ErrorSpec } from './spec.js';

const authn = (doc: string, message?: string): ErrorSpec => ({ type: 'authentication_error', doc, message });

export const PORTAL_ERRORS = {
  'portal.sign_in_invalid': authn('The email or the password is wrong (one answer for both). Failed sign-ins are counted per client address like failed API keys: past AUTH_FAILURES_PER_MIN a minute they answer 429.', 'The email or the password is wrong.'),
  'portal.session_invalid': authn('No portal session, or it ended (signed out, idle longer than PORTAL_SESSION_IDLE_MINUTES, older than PORTAL_SESSION_MAX_HOURS, a second factor still owed, or the account suspended by an operator). Sign in again.', 'Sign in to the portal.'),
  'portal.tenant_suspended_unauthorized': authz('The password is right but Orquesta suspended this account: its API keys, portal sign-ins and sessions are refused until an operator releases it. Contact support.', 'This account is suspended; contact Orquesta support.'),
  'portal.totp_invalid': authn('The six-digit code of the authenticator app is wrong, expired or already used.', 'The two-factor code is wrong or already used.'),
  'portal.csrf_unauthorized': authz('A change from the portal must carry the session\'s X-CSRF-Token header and come from the portal\'s own origin.', 'The request did not come from the portal (CSRF check).'),
  'portal.totp_setup_required_unauthorized': authz('The team requires two-factor sign-in: set up an authenticator app (POST /portal/api/me/totp) before anything else.'),
  'portal.invalid_body': inv('The portal request body is not valid: see the message.'),
  'portal.member_not_found': inv('No member with this id in your team.'),
  'portal.member_conflict': inv('This email already belongs to a portal account.'),
  'portal.last_owner_conflict': inv('The team must keep at least one active owner.'),
  'portal.invitation_not_found': inv('No pending invitation with this token (wrong, used, revoked or expired after 7 days).'),
  'portal.reset_not_found': inv('No password reset with this token (wrong, used or expired after 30 minutes).'),
  'portal.api_key_not_found': inv('No API key with this id belongs to your account.'),
  'webhook_delivery.not_found': inv('No webhook delivery with this id for this key (the numeric id of the endpoint\'s delivery log).'),
  'webhook_delivery.resend_conflict': inv('The delivery is being sent right now, or its endpoint is disabled: wait for the attempt, or reactivate the endpoint.'),
  'bank_statement.line_not_found': inv('No line with this id in this bank statement (the numeric `id` of /lines).'),
  'bank_statement.line_match_conflict': inv('The line is already matched (undo it first), or the charge is already matched to another line, or there is no match to undo.'),
  'bank_statement.charge_not_found': inv('No succeeded charge of this key has that payment intent id or receipt code.'),
  'bank_statement.invalid_manual_match': inv('Send one of `payment_intent_id` (a UUID) or `receipt_code`.'),
  'portal.totp_conflict': inv('Two-factor sign-in is already on for this member; turn it off first to set up another app.'),
} as const satisfies Record<string, ErrorSpec>;
