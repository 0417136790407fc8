// Error codes of the operator console (docs/operator.md): operators, four-eyes decisions, tenant
// suspension, the risk rules editor. Not /v1 errors.
import { authz, inv, type ErrorSpec } from './spec.js';

export const OPERATOR_ERRORS = {
  'operator.unauthorized': authz('This portal session is not an active operator of the platform.'),
  'operator.totp_required_unauthorized': authz('Operators must sign in with a second factor: set up TOTP in the portal first.'),
  'operator.role_unauthorized': authz("The operator's role does not allow this action."),
  'operator.invalid_email': inv('`email` must be an email address.'),
  'operator.invalid_role': inv('`role` must be one of admin, reviewer, support, viewer.'),
  'operator.invalid_password': inv('`password`, when sent, must be at least 12 characters; omit it to send a link to choose one.'),
  'operator.email_conflict': inv('A portal account with this email exists already (an email belongs to one account).'),
  'operator.not_found': inv('No operator with this id.'),
  'operator.self_change_conflict': inv('An operator cannot disable themselves or give up their own admin role; another admin must.'),
  'operator_decision.not_found': inv('No four-eyes decision with this id.'),
  'operator_decision.resolution_conflict': inv('The decision was already approved or rejected.'),
  'operator_decision.self_approval_conflict': inv('Four-eyes rule: the operator who asked for this decision cannot approve it; another operator must (the one who asked may withdraw it by rejecting it).'),
  'tenant.status_conflict': inv("The tenant is already suspended (suspend), or is not suspended (release); the platform's own tenant (its members are the operators) is never suspended."),
  'risk_rule.not_found': inv('No risk rule with this id for this tenant.'),
} as const satisfies Record<string, ErrorSpec>;
