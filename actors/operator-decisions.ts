// Four-eyes decisions of the operator console (docs/operator.md) as approvals (actors/approvals.ts,
// machines/approval.ts; subject kind `operator_decision`, migration 0153): an operator asks for a
// sensitive operation (approving an application the verifier flagged, an above-threshold payout,
// releasing a suspended tenant); a second operator approves or rejects it.
//
// - The machine refuses the approval of the operator who asked (operator_decision.self_approval_conflict);
//   two deciders cannot both win (the approval's version fences the step; the loser reads
//   resolution_conflict).
// - Approving carries the operation out in the approval's own transaction: the application's or the
//   payout approval's step (plan.also, fenced on that entity's version: a payout approval also
//   creates its payout there) or, for a tenant, the release guarded on the suspension read. If the
//   operation is refused (the application is no longer pending, the tenant was released meanwhile)
//   nothing is written and the decision stays pending: the second operator sees why and rejects it.
// - Each request and decision writes its audit rows (the decision's and the operation's, with
//   before/after) in its transaction; history in entity_history (kind `approval`), signals
//   approval.approved / approval.rejected as for every approval.
// - Asking twice for the same operation on the same object gives the open request back (unique
//   index of 0153).
import { randomUUID } from 'node:crypto';
import type { Sql } from '../kernel/db.js';
import { stepEnv, type EntityActor, type EntityDef, type EntityPlan, type Hydrated, type StepEnv, type Write } from '../kernel/entity.js';
import { ApiError } from '../kernel/errors.js';
import { Approvals, type ApprovalRow, type Decision, type SubjectCreation } from './approvals.js';
import { auditWrite } from './audit.js';
import type { ApplicationRow, OnboardingCommand } from './onboarding.js';
import type { OperatorActor } from './operators.js';

/** The operations a console operator only asks for. */
export const DECISION_ACTIONS = ['payout_approval.approve', 'tenant.release', 'onboarding_application.approve'] as const;
export type DecisionAction = (typeof DECISION_ACTIONS)[number];

/** What an operator decision's `request` holds (jsonb). */
export interface DecisionRequest {
  action: DecisionAction;
  target_kind: string;
  target_id: string;
  reason?: string;
  /** What the target looked like when asked (shown to the second operator; the audit row's `before`). */
  snapshot?: Record<string, unknown> | null;
  /** The route's parameters and body as asked. */
  params?: Record<string, string>;
  body?: Record<string, unknown>;
  /** A decision of before 0153: what running it answered. */
  outcome?: Record<string, unknown>;
}

/** What approving answered: a summary of the operation's result (no secret: a CLABE only masked). */
export type DecisionOutcome = Record<string, unknown>;

/** The entities whose steps a decision carries out (their capabilities own them). */
export interface DecisionTargets {
  /** actors/onboarding.ts Onboarding.def */
  application: EntityDef<Hydrated<ApplicationRow>, OnboardingCommand, unknown>;
  /** actors/payouts.ts Payouts.approvals.def */
  payoutApproval: EntityDef<Hydrated<ApprovalRow>, Decision, unknown>;
}

export interface OperatorDecisionsDeps {
  sql: Sql;
  actor: EntityActor;
  targets: DecisionTargets;
  /** After a release committed (the approval's afterCommit): the tenant's keys are served again on every process (api/auth.ts KeyStore). */
  announceRelease(keyIds: string[]): Promise<void>;
}

/** What the command carries to the subject's hooks. */
interface DecisionContext {
  by: OperatorActor;
  requestId?: string;
  /** The requester's e-mail, for the operation's audit row. */
  askedBy?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const iso = (d: Date | null) => (d ? d.toISOString() : undefined);

type ViewRow = ApprovalRow & { requested_by_email?: string | null; approver_email?: string | null; tenant_name?: string | null };

/** The console's projection of an operator decision (object `operator_decision`). */
export function decisionView(r: ViewRow, outcome?: DecisionOutcome) {
  const q = r.request as unknown as DecisionRequest;
  const out = outcome ?? q.outcome;
  return {
    id: r.id,
    object: 'operator_decision' as const,
    status: r.status,
    action: q.action,
    tenant_id: r.tenant_id,
    ...(r.tenant_name ? { tenant_name: r.tenant_name } : {}),
    livemode: r.livemode,
    target: { kind: q.target_kind, id: q.target_id },
    ...(q.reason ? { reason: q.reason } : {}),
    requested_by: { id: r.requested_by, ...(r.requested_by_email ? { email: r.requested_by_email } : {}) },
    ...(r.approver ? { decided_by: { id: r.approver, ...(r.approver_email ? { email: r.approver_email } : {}) } } : {}),
    ...(r.resolution_note ? { decision_note: r.resolution_note } : {}),
    ...(q.snapshot ? { snapshot: q.snapshot } : {}),
    ...(out ? { outcome: out } : {}),
    created_at: r.created_at.toISOString(),
    ...(r.resolved_at ? { decided_at: iso(r.resolved_at) } : {}),
  };
}
export type DecisionView = ReturnType<typeof decisionView>;

/** Another entity's step, planned (not committed) for the approval's transaction: hydrate, prepare, plan. */
async function carried<H extends Hydrated, C, P>(sql: Sql, def: EntityDef<H, C, P>, scope: { tenantId: string; livemode: boolean }, id: string, cmd: C): Promise<{ step: EntityPlan; h: H; env: StepEnv; result: unknown }> {
  const h = await def.hydrate(sql, id, scope, cmd);
  if (!h) throw new ApiError(def.notFound);
  const prepared = def.prepare ? await def.prepare(h, cmd) : (undefined as P);
  const env = stepEnv(h);
  const plan = def.plan(h, cmd, env, prepared);
  return { step: { def, row: h.row, plan }, h, env, result: plan.result };
}

export class OperatorDecisions {
  readonly approvals: Approvals<DecisionOutcome>;

  constructor(private d: OperatorDecisionsDeps) {
    this.approvals = new Approvals<DecisionOutcome>(d, {
      kind: 'operator_decision',
      codes: { notFound: 'operator_decision.not_found', resolutionConflict: 'operator_decision.resolution_conflict', approverConflict: 'operator_decision.self_approval_conflict' },
      approverConflictMessage: 'Four-eyes rule: the operator who asked for this decision cannot approve it; another operator must.',
      view: (r) => decisionView(r),
      prepareCreation: (ap, _approver, at, decision) => this.execution(ap, decision.context as DecisionContext, at),
      decisionWrites: (ap, to, decision, env) => {
        const c = decision.context as DecisionContext;
        const q = ap.request as unknown as DecisionRequest;
        return [auditWrite(env, {
          actor: c.by, action: `operator_decision.${to === 'approved' ? 'approve' : 'reject'}`, tenantId: ap.tenant_id, livemode: ap.livemode, targetKind: 'operator_decision', targetId: ap.id,
          reason: decision.note, before: { status: ap.status, action: q.action, target_id: q.target_id }, after: { status: to, action: q.action, target_id: q.target_id }, requestId: c.requestId,
        })];
      },
    });
  }

  /**
   * The asked operation as steps of the approval's transaction, with its audit row (actor: the
   * second operator; reason: the asker's, and who asked and who approved). Reads and refusals
   * happen here, outside the transaction; what they read is fenced.
   */
  private async execution(ap: ApprovalRow, c: DecisionContext, at: Date): Promise<SubjectCreation<DecisionOutcome>> {
    const q = ap.request as unknown as DecisionRequest;
    const scope = { tenantId: ap.tenant_id, livemode: ap.livemode };
    const reason = [q.reason, `four-eyes: asked by ${c.askedBy ?? ap.requested_by}, approved by ${c.by.email}`].filter(Boolean).join(' · ');
    const audit = (env: StepEnv, after: Record<string, unknown>, before = q.snapshot ?? null): Write =>
      auditWrite(env, { actor: c.by, action: q.action, tenantId: ap.tenant_id, livemode: ap.livemode, targetKind: q.target_kind, targetId: q.target_id, reason, before, after, requestId: c.requestId });

    if (q.action === 'payout_approval.approve') {
      // The payout approval's own approve step (which creates the payout), as the second operator.
      const cmd: Decision = { kind: 'approve', approver: `operator:${c.by.email}`, tenantId: ap.tenant_id };
      const x = await carried(this.d.sql, this.d.targets.payoutApproval, scope, q.target_id, cmd);
      const { row } = x.result as { row: { id: string; status: string; amount_minor: number; currency: string; clabe_masked: string } };
      const inner = x.h.row;
      const outcome = { object: 'payout', id: row.id, status: row.status, amount_minor: Number(row.amount_minor), currency: row.currency, clabe_masked: row.clabe_masked };
      return {
        id: q.target_id, step: x.step, result: outcome,
        writes: [audit(x.env, { status: 'approved', payout_id: row.id, payout_status: row.status }, { status: inner.status, amount_minor: inner.amount_minor, currency: inner.currency, requested_by: inner.requested_by })],
      };
    }
    if (q.action === 'onboarding_application.approve') {
      const cmd: OnboardingCommand = { kind: 'operator', action: 'approve', reason: typeof q.body?.reason === 'string' ? q.body.reason : undefined };
      const x = await carried(this.d.sql, this.d.targets.application, scope, q.target_id, cmd);
      const app = x.result as ApplicationRow;
      return {
        id: q.target_id, step: x.step, result: { object: 'onboarding_application', id: app.id, status: app.status, status_reason: app.status_reason },
        writes: [audit(x.env, { status: app.status, status_reason: app.status_reason }, { status: x.h.row.status, status_reason: x.h.row.status_reason, resolved_by: x.h.row.resolved_by })],
      };
    }
    if (q.action === 'tenant.release') {
      // A tenant is no entity: the release is an update guarded on the suspension as read here
      // (suspended_at is kept to the millisecond, so the Date read compares exactly): a release or a
      // new suspension in between fails it inside Postgres; the step is retried from fresh state and
      // then refused. Once committed, the keys are announced (a lost notice: the revoked-keys heal).
      const [t] = await this.d.sql`select id, suspended_at, suspended_reason from tenants where id = ${q.target_id}`;
      if (!t) throw new ApiError('tenant.not_found', `No tenant ${q.target_id}.`);
      if (!t.suspended_at) throw new ApiError('tenant.status_conflict', 'The tenant is not suspended (someone released it already): reject this decision.');
      const env: StepEnv = { at, now: at, newId: randomUUID };
      return {
        id: q.target_id, result: { object: 'tenant', id: q.target_id, suspended: false },
        afterCommit: async () => {
          const keys = await this.d.sql`select id from api_keys where tenant_id = ${q.target_id} and revoked_at is null`;
          await this.d.announceRelease(keys.map((k) => k.id as string));
        },
        writes: [
          { op: 'update', table: 'tenants', id: q.target_id, set: { suspended_at: null, suspended_reason: null }, where: { suspended_at: t.suspended_at }, expect: 1 },
          audit(env, { suspended: false }, { suspended: true, reason: t.suspended_reason ?? null }),
        ],
      };
    }
    throw new Error(`operator decision ${ap.id}: unknown action ${String(q.action)}`);
  }

  /** Asks for a second operator's decision; the open request for the same operation and target is answered as is. */
  async request(by: OperatorActor, q: { tenantId: string; livemode: boolean; action: DecisionAction; targetKind: string; targetId: string; reason?: string; snapshot?: Record<string, unknown> | null; params?: Record<string, string>; body?: Record<string, unknown>; amountMinor?: number; currency?: string }, requestId?: string): Promise<DecisionView> {
    const open = await this.openId(q.tenantId, q.action, q.targetId);
    if (open) return this.get(open);
    const request: DecisionRequest = { action: q.action, target_kind: q.targetKind, target_id: q.targetId, ...(q.reason ? { reason: q.reason } : {}), snapshot: q.snapshot ?? null, params: q.params, body: q.body };
    try {
      const created = await this.approvals.request({ tenantId: q.tenantId, livemode: q.livemode, keyId: by.id }, {
        amountMinor: q.amountMinor ?? null, currency: q.amountMinor === undefined ? null : q.currency ?? 'MXN', request: request as unknown as Record<string, unknown>,
        writes: (row, env) => [auditWrite(env, { actor: by, action: `${q.action}.requested`, tenantId: q.tenantId, livemode: q.livemode, targetKind: q.targetKind, targetId: q.targetId, reason: q.reason, before: q.snapshot ?? undefined, after: { decision_id: row.id, status: 'pending' }, requestId })],
      });
      return this.get(created.id as string);
    } catch (e) {
      // Two operators asked at once: the unique open request (0153) is the other one's.
      if ((e as { code?: string }).code === '23505') {
        const again = await this.openId(q.tenantId, q.action, q.targetId);
        if (again) return this.get(again);
      }
      throw e;
    }
  }

  private async openId(tenantId: string, action: string, targetId: string): Promise<string | undefined> {
    const [r] = await this.d.sql`
      select id from approvals where tenant_id = ${tenantId} and subject_kind = 'operator_decision' and status = 'pending' and request->>'action' = ${action} and request->>'target_id' = ${targetId}`;
    return r?.id as string | undefined;
  }

  private rows(where: ReturnType<Sql>, limit: number) {
    return this.d.sql`
      select a.*, rq.email as requested_by_email, ap.email as approver_email, t.name as tenant_name
        from approvals a join tenants t on t.id = a.tenant_id
        left join portal_members rq on rq.id::text = a.requested_by left join portal_members ap on ap.id::text = a.approver
       where a.subject_kind = 'operator_decision' ${where}
       order by a.created_at desc, a.id desc limit ${limit}`;
  }

  async get(id: string, outcome?: DecisionOutcome): Promise<DecisionView> {
    const [r] = UUID.test(id) ? await this.rows(this.d.sql`and a.id = ${id}`, 1) : [];
    if (!r) throw new ApiError('operator_decision.not_found');
    return decisionView(r as unknown as ViewRow, outcome);
  }

  async list(q: { status?: string; limit?: number }) {
    const limit = Math.min(Math.max(q.limit ?? 100, 1), 500);
    const rows = await this.rows(q.status ? this.d.sql`and a.status = ${q.status}` : this.d.sql``, limit);
    return { object: 'list' as const, data: rows.map((r) => decisionView(r as unknown as ViewRow)) };
  }

  /** The second operator approves: the operation is carried out in the approval's transaction; answers the decision with the operation's outcome. */
  async approve(by: OperatorActor, id: string, note?: string, requestId?: string): Promise<DecisionView> {
    const ap = await this.find(id);
    const [asker] = await this.d.sql`select email from portal_members where id::text = ${ap.requested_by}`;
    const context: DecisionContext = { by, requestId, askedBy: asker?.email as string | undefined };
    const outcome = await this.approvals.approve(ap.tenant_id, id, by.id, { note, context });
    return this.get(id, outcome);
  }

  /** The second operator (or the one who asked, withdrawing it) rejects: nothing runs. */
  async reject(by: OperatorActor, id: string, note?: string, requestId?: string): Promise<DecisionView> {
    const ap = await this.find(id);
    await this.approvals.reject(ap.tenant_id, id, by.id, { note, context: { by, requestId } satisfies DecisionContext });
    return this.get(id);
  }

  private async find(id: string): Promise<ApprovalRow> {
    const [r] = UUID.test(id) ? await this.d.sql`select * from approvals where id = ${id} and subject_kind = 'operator_decision'` : [];
    if (!r) throw new ApiError('operator_decision.not_found');
    return r as unknown as ApprovalRow;
  }
}

