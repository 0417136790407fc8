// What an operator's change is about to touch, read before it runs: the audit row's `before` (safe
// columns only), by the /admin route's path and parameters (api/routes/operator-console.ts).
import type { Sql } from '../kernel/db.js';

const uuid = (x: string | undefined) => !!x && /^[0-9a-f-]{36}$/i.test(x);

export async function auditSnapshot(sql: Sql, path: string, p: Readonly<Record<string, string>>): Promise<Record<string, unknown> | null> {
  const one = async (q: Promise<readonly Record<string, unknown>[]>) => ((await q)[0] as Record<string, unknown> | undefined) ?? null;
  if (path.includes('/onboarding/applications/') && uuid(p.id)) return one(sql`select id, status, status_reason, resolved_by from onboarding_applications where id = ${p.id} and tenant_id = ${p.tenantId}`);
  if (path.includes('/risk_reviews/') && uuid(p.reviewId)) return one(sql`select id, status, payment_intent_id from risk_reviews where id = ${p.reviewId} and tenant_id = ${p.tenantId}`);
  if (path.includes('/refund_approvals/') && uuid(p.approvalId)) return one(sql`select id, status, amount_minor, currency, requested_by, approver from refund_approvals where id = ${p.approvalId} and tenant_id = ${p.tenantId}`);
  if (path.includes('/payout_approvals/') && uuid(p.approvalId)) return one(sql`select id, status, amount_minor, currency, clabe_masked, requested_by, approver from payout_approvals where id = ${p.approvalId} and tenant_id = ${p.tenantId}`);
  if (path.includes('/connect/accounts/') && uuid(p.id)) return one(sql`select id, status, sub_merchant_name from connect_accounts where id = ${p.id} and tenant_id = ${p.tenantId}`);
  if (path.includes('/api_keys/') && uuid(p.keyId)) return one(sql`select id, livemode, scopes, revoked_at is not null as revoked from api_keys where id = ${p.keyId} and tenant_id = ${p.tenantId}`);
  if (path.includes('/risk_rules/') && uuid(p.ruleId)) return one(sql`select id, field, operator, value, action, active from risk_rules where id = ${p.ruleId} and tenant_id = ${p.tenantId}`);
  // The settings themselves (not wrapped), so `before` and `after` (the settings answered) compare key by key.
  if (/\/(settings|payout_settings)$/.test(path) && uuid(p.tenantId)) return ((await one(sql`select settings from tenants where id = ${p.tenantId}`))?.settings as Record<string, unknown> | undefined) ?? null;
  return null;
}

/** A payout approval's mode (the four-eyes decision is recorded in it). */
export async function payoutApprovalLivemode(sql: Sql, id: string): Promise<boolean> {
  const [m] = await sql`select livemode from payout_approvals where id = ${id}`;
  return m!.livemode as boolean;
}
