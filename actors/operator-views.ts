// What the operator console reads across tenants (docs/operator.md): queues of applications, risk
// reviews, refund and payout approvals, Connect accounts, signups and tenants; an application with
// its documents, what the automatic verifier said and a fresh 69-B screening of its RFC; and the
// suspension of a tenant (its API keys answer 401 until an operator releases it). Operator listings:
// default 100, maximum 500 (spec: Limits).
import type { Sql } from '../kernel/db.js';
import { ApiError } from '../kernel/errors.js';
import { SimTaxpayerScreen, TableTaxpayerScreen } from '../connectors/taxpayer-lists.js';
import { checkRfcFor, type PersonType } from '../formats/rfc.js';
import { AUTOMATIC_VERIFIER } from './onboarding-verification.js';
import { appendAudit, type AuditActor } from './audit.js';

const lim = (n?: number) => Math.min(Math.max(n ?? 100, 1), 500);
const iso = (d: unknown) => (d ? (d as Date).toISOString() : undefined);
const compact = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined));

export async function listTenants(sql: Sql, q: { suspended?: boolean; limit?: number }) {
  const rows = await sql`
    select t.id, t.name, t.created_at, t.suspended_at, t.suspended_reason,
           (select count(*) from api_keys k where k.tenant_id = t.id and k.revoked_at is null)::int as active_keys
      from tenants t
     where not exists (select 1 from operator_platform p where p.tenant_id = t.id)
       ${q.suspended === undefined ? sql`` : q.suspended ? sql`and t.suspended_at is not null` : sql`and t.suspended_at is null`}
     order by t.created_at desc, t.id desc limit ${lim(q.limit)}`;
  return { object: 'list' as const, data: rows.map((r) => compact({ id: r.id, object: 'tenant', name: r.name, active_keys: r.active_keys, suspended: !!r.suspended_at, suspended_at: iso(r.suspended_at), suspended_reason: r.suspended_reason, created_at: iso(r.created_at) })) };
}

export async function tenantDetail(sql: Sql, tenantId: string) {
  const [t] = await sql`select id, name, settings, created_at, suspended_at, suspended_reason from tenants where id = ${tenantId}`;
  if (!t) throw new ApiError('tenant.not_found', `No tenant ${tenantId}.`);
  const keys = await sql`select id, livemode, scopes, revoked_at, created_at from api_keys where tenant_id = ${tenantId} order by created_at desc`;
  const [counts] = await sql`
    select (select count(*) from payment_intents where tenant_id = ${tenantId})::int as payment_intents,
           (select count(*) from terminals where tenant_id = ${tenantId})::int as terminals,
           (select count(*) from connect_accounts where tenant_id = ${tenantId})::int as connect_accounts`;
  return compact({
    id: t.id, object: 'tenant', name: t.name, settings: t.settings, suspended: !!t.suspended_at, suspended_at: iso(t.suspended_at), suspended_reason: t.suspended_reason,
    created_at: iso(t.created_at), counts,
    api_keys: keys.map((k) => compact({ id: k.id, object: 'api_key', livemode: k.livemode, scopes: k.scopes, revoked: !!k.revoked_at, created_at: iso(k.created_at) })),
  });
}

export async function listApplications(sql: Sql, q: { status?: string; tenant_id?: string; limit?: number }) {
  const rows = await sql`
    select a.id, a.tenant_id, t.name as tenant_name, a.livemode, a.status, a.legal_name, a.person_type, a.rfc, a.clabe_masked, a.status_reason, a.resolved_by, a.submitted_at, a.created_at
      from onboarding_applications a join tenants t on t.id = a.tenant_id
     where true ${q.status ? sql`and a.status = ${q.status}` : sql``} ${q.tenant_id ? sql`and a.tenant_id = ${q.tenant_id}` : sql``}
     order by a.created_at desc, a.id desc limit ${lim(q.limit)}`;
  return { object: 'list' as const, data: rows.map((r) => compact({ ...r, object: 'onboarding_application', flagged: r.resolved_by === AUTOMATIC_VERIFIER && r.status === 'needs_info', submitted_at: iso(r.submitted_at), created_at: iso(r.created_at) })) };
}

/**
 * An application as the reviewer needs it: documents, what the automatic verifier said, a fresh
 * screening of its RFC against the blocked-taxpayer lists (69-B), and whether approving it needs a
 * second operator (the verifier flagged it, or its RFC is listed).
 */
export async function applicationReview(sql: Sql, tenantId: string, id: string) {
  const [a] = /^[0-9a-f-]{36}$/i.test(id) ? await sql`select * from onboarding_applications where id = ${id} and tenant_id = ${tenantId}` : [];
  if (!a) throw new ApiError('onboarding_application.not_found', `No application ${id} for tenant ${tenantId}.`);
  const rfcCheck = a.rfc && a.person_type ? checkRfcFor(a.rfc as string, a.person_type as PersonType) : undefined;
  const screen = a.livemode ? new TableTaxpayerScreen(sql) : new SimTaxpayerScreen();
  const hit = rfcCheck?.ok ? await screen.match(rfcCheck.rfc) : null;
  const flaggedByVerifier = a.resolved_by === AUTOMATIC_VERIFIER && a.status === 'needs_info';
  const docs = Object.values((a.documents ?? {}) as Record<string, { document_type: string; reference: string; reference_hash: string; created_at: string }>);
  return compact({
    id: a.id, object: 'onboarding_application', tenant_id: a.tenant_id, livemode: a.livemode, status: a.status, legal_name: a.legal_name, person_type: a.person_type,
    contact_email: a.contact_email, rfc: a.rfc, clabe_masked: a.clabe_masked, status_reason: a.status_reason, resolved_by: a.resolved_by,
    submitted_at: iso(a.submitted_at), resolved_at: iso(a.resolved_at), created_at: iso(a.created_at),
    documents: docs,
    verification: compact({
      rfc_format: rfcCheck ? (rfcCheck.ok ? 'valid' : rfcCheck.message) : 'missing',
      clabe: a.clabe_masked ? 'present (sealed)' : 'missing',
      documents: `${docs.length} of 4`,
      verifier: a.resolved_by === AUTOMATIC_VERIFIER ? `${a.status}${a.status_reason ? `: ${a.status_reason}` : ''}` : undefined,
    }),
    list_hits: hit ? [hit] : [],
    flagged: flaggedByVerifier || !!hit,
    approval_needs_second_operator: flaggedByVerifier || !!hit,
  });
}

export async function listRiskReviews(sql: Sql, q: { status?: string; limit?: number }) {
  const rows = await sql`
    select r.id, r.tenant_id, t.name as tenant_name, r.livemode, r.payment_intent_id, r.status, r.created_at, r.resolved_at,
           pi.amount_minor, pi.currency, rr.field, rr.operator, rr.value, rr.action
      from risk_reviews r join tenants t on t.id = r.tenant_id join payment_intents pi on pi.id = r.payment_intent_id and pi.tenant_id = r.tenant_id join risk_rules rr on rr.id = r.rule_id and rr.tenant_id = r.tenant_id
     where true ${q.status ? sql`and r.status = ${q.status}` : sql``}
     order by r.created_at desc, r.id desc limit ${lim(q.limit)}`;
  return { object: 'list' as const, data: rows.map((r) => compact({ id: r.id, object: 'risk_review', tenant_id: r.tenant_id, tenant_name: r.tenant_name, livemode: r.livemode, payment_intent_id: r.payment_intent_id, status: r.status, amount_minor: Number(r.amount_minor), currency: r.currency, rule: `${r.field} ${r.operator} ${JSON.stringify(r.value)} → ${r.action}`, created_at: iso(r.created_at), resolved_at: iso(r.resolved_at) })) };
}

export async function listRiskRules(sql: Sql, tenantId: string) {
  const rows = await sql`select id, field, operator, value, action, active, created_at from risk_rules where tenant_id = ${tenantId} order by created_at`;
  return { object: 'list' as const, data: rows.map((r) => ({ id: r.id, object: 'risk_rule', field: r.field, operator: r.operator, value: r.value, action: r.action, active: r.active, created_at: iso(r.created_at) })) };
}

/** Turns a risk rule off (the editor's delete: rows stay for the reviews that name them). */
export async function deactivateRiskRule(sql: Sql, tenantId: string, ruleId: string) {
  const [r] = /^[0-9a-f-]{36}$/i.test(ruleId) ? await sql`update risk_rules set active = false where id = ${ruleId} and tenant_id = ${tenantId} returning id, field, operator, value, action, active, created_at` : [];
  if (!r) throw new ApiError('risk_rule.not_found');
  return { id: r.id, object: 'risk_rule', field: r.field, operator: r.operator, value: r.value, action: r.action, active: r.active, created_at: iso(r.created_at) };
}

export async function listApprovals(sql: Sql, kind: 'refund' | 'payout', q: { status?: string; limit?: number }) {
  const rows = kind === 'refund'
    ? await sql`
        select a.id, a.tenant_id, t.name as tenant_name, a.livemode, a.status, a.amount_minor, a.currency, a.reason, a.requested_by, a.approver, a.refund_id as result_id, a.created_at, a.resolved_at, a.attempt_id as subject
          from refund_approvals a join tenants t on t.id = a.tenant_id
         where true ${q.status ? sql`and a.status = ${q.status}` : sql``} order by a.created_at desc, a.id desc limit ${lim(q.limit)}`
    : await sql`
        select a.id, a.tenant_id, t.name as tenant_name, a.livemode, a.status, a.amount_minor, a.currency, a.requested_by, a.approver, a.payout_id as result_id, a.created_at, a.resolved_at, a.clabe_masked as subject
          from payout_approvals a join tenants t on t.id = a.tenant_id
         where true ${q.status ? sql`and a.status = ${q.status}` : sql``} order by a.created_at desc, a.id desc limit ${lim(q.limit)}`;
  return { object: 'list' as const, data: rows.map((r) => compact({ ...r, object: `${kind}_approval`, amount_minor: Number(r.amount_minor), created_at: iso(r.created_at), resolved_at: iso(r.resolved_at) })) };
}

export async function listConnectAccounts(sql: Sql, q: { status?: string; limit?: number }) {
  const rows = await sql`
    select c.id, c.tenant_id, t.name as tenant_name, c.livemode, c.status, c.sub_merchant_name, c.settlement_clabe_masked, c.connector_key, c.created_at
      from connect_accounts c join tenants t on t.id = c.tenant_id
     where true ${q.status ? sql`and c.status = ${q.status}` : sql``} order by c.created_at desc, c.id desc limit ${lim(q.limit)}`;
  return { object: 'list' as const, data: rows.map((r) => compact({ ...r, object: 'connect_account', created_at: iso(r.created_at) })) };
}

export async function listSignups(sql: Sql, q: { limit?: number }) {
  const rows = await sql`select id, email, legal_name, status, tenant_id, created_at, verified_at from signups order by created_at desc, id desc limit ${lim(q.limit)}`;
  return { object: 'list' as const, data: rows.map((r) => compact({ ...r, object: 'signup', created_at: iso(r.created_at), verified_at: iso(r.verified_at) })) };
}

/**
 * Suspends a tenant: its API keys answer 401 from the next request on every process (api/auth.ts
 * reads the suspension with the key; cached records are dropped through the revocation channel),
 * and so do its members' portal sessions and sign-ins (actors/portal-accounts.ts reads it with the
 * session on every request).
 */
export async function suspendTenant(d: { sql: Sql; announce(keyIds: string[], suspended: boolean): Promise<void> }, by: AuditActor, tenantId: string, reason: string | undefined, requestId?: string) {
  const keys = await d.sql.begin(async (tx) => {
    const [t] = await tx`
      select id, name, suspended_at, suspended_reason, exists (select 1 from operator_platform p where p.tenant_id = tenants.id) as platform
        from tenants where id = ${tenantId} for update`;
    if (!t) throw new ApiError('tenant.not_found', `No tenant ${tenantId}.`);
    // Its members are the operators: suspending it would refuse every operator's portal session.
    if (t.platform) throw new ApiError('tenant.status_conflict', "The platform's own tenant (the operators') cannot be suspended.");
    if (t.suspended_at) throw new ApiError('tenant.status_conflict', 'The tenant is already suspended.');
    // To the millisecond: a JS Date holds the value exactly, so a four-eyes release can be guarded on
    // the suspension it was asked for (actors/operator-decisions.ts).
    await tx`update tenants set suspended_at = date_trunc('milliseconds', now()), suspended_reason = ${reason ?? null} where id = ${tenantId}`;
    await appendAudit(tx, { actor: by, action: 'tenant.suspend', tenantId, targetKind: 'tenant', targetId: tenantId, reason, before: { suspended: false }, after: { suspended: true, reason: reason ?? null }, requestId });
    return tx`select id from api_keys where tenant_id = ${tenantId} and revoked_at is null`;
  });
  await d.announce(keys.map((k) => k.id as string), true);
  return tenantDetail(d.sql, tenantId);
}

export async function releaseTenant(d: { sql: Sql; announce(keyIds: string[], suspended: boolean): Promise<void> }, by: AuditActor, tenantId: string, reason: string | undefined, requestId?: string) {
  const keys = await d.sql.begin(async (tx) => {
    const [t] = await tx`select id, suspended_at, suspended_reason from tenants where id = ${tenantId} for update`;
    if (!t) throw new ApiError('tenant.not_found', `No tenant ${tenantId}.`);
    if (!t.suspended_at) throw new ApiError('tenant.status_conflict', 'The tenant is not suspended.');
    await tx`update tenants set suspended_at = null, suspended_reason = null where id = ${tenantId}`;
    await appendAudit(tx, { actor: by, action: 'tenant.release', tenantId, targetKind: 'tenant', targetId: tenantId, reason, before: { suspended: true, reason: t.suspended_reason ?? null }, after: { suspended: false }, requestId });
    return tx`select id from api_keys where tenant_id = ${tenantId} and revoked_at is null`;
  });
  await d.announce(keys.map((k) => k.id as string), false);
  return tenantDetail(d.sql, tenantId);
}
