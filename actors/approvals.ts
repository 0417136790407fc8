// Four-eyes approvals as one entity kind (issue 24.2; decisions.md §2). A refund or a payout above
// the tenant's threshold is not made at once: an approval (table `approvals`, machine
// machines/approval.ts) waits for a second person. Approving runs the approval's step on the
// entity actor; the step carries the subject's creation (plan.also), so the approval turns
// `approved` and the refund or payout exists in one fenced transaction, or neither. Rejecting is
// a step too (history, fence), never a hand-written UPDATE.
//
// What differs per subject (its error codes, its projection, how it builds the refund or payout)
// is an ApprovalSubject given by the capability that owns the subject (actors/refunds.ts,
// actors/payouts.ts); the rule "approver ≠ requester", the threshold and the states are here and
// in the machine, once. The admin routes of both share one implementation (api/routes/approvals.ts).
// The operator console's four-eyes decisions are approvals too (subject kind `operator_decision`,
// actors/operator-decisions.ts): what they carry out is another entity's step (an application's
// approval, a payout approval's) or a guarded write (a tenant's release), in the same transaction.
import { randomUUID } from 'node:crypto';
import type { Sql } from '../kernel/db.js';
import { type EntityActor, type EntityDef, type EntityPlan, type EntityRow, type Hydrated, type Plan, type StepEnv, type Write } from '../kernel/entity.js';
import { ApiError } from '../kernel/errors.js';
import type { ErrorCode } from '../kernel/error-catalog.js';
import type { IdempotencyHandle } from '../kernel/idempotency.js';
import { machineStep } from '../kernel/machine-step.js';
import type { Principal } from '../kernel/principal.js';
import { approvalMachine, needsApproval, samePerson, type ApprovalEffect, type ApprovalStatus } from '../machines/approval.js';

export type ApprovalSubjectKind = 'refund' | 'payout' | 'operator_decision';

export interface ApprovalRow extends EntityRow<ApprovalStatus> {
  subject_kind: ApprovalSubjectKind;
  /** null only for an operator decision without an amount (a tenant's release, an application). */
  amount_minor: number | null;
  currency: string | null;
  request: Record<string, unknown>;
  secret_sealed: string | null;
  secret_masked: string | null;
  requested_by: string;
  approver: string | null;
  subject_id: string | null;
  /** The second person's note, when given. */
  resolution_note: string | null;
  created_at: Date;
  updated_at: Date;
  resolved_at: Date | null;
}

/** What the subject's capability prepared, outside the transaction, for the approval's `approve` step. */
export interface SubjectCreation<R = unknown> {
  /** The subject's id (the approval records it). */
  id: string;
  /** The subject's creation (or another entity's step), committed in the approval's transaction. */
  step?: EntityPlan;
  /** Rows written in the approval's transaction besides (audit rows; a guarded update of a row that is no entity). */
  writes?: Write[];
  /** The command's answer once committed. */
  result: R;
  /**
   * What is told outside Postgres once the approval committed (a release's notice to Redis). Run by
   * approve() after the commit; a crash in between is for that party's own heal to repair.
   */
  afterCommit?: () => Promise<void>;
}

/** An approval step's result that still has work after its commit (SubjectCreation.afterCommit). */
class WithAfterCommit<R> {
  constructor(readonly result: R, readonly after: () => Promise<void>) {}
}

/** Who decides and what they add: the approver's name, an optional note, and what the subject's hooks need (an operator, a request id). */
export interface Decision {
  kind: 'approve' | 'reject';
  approver: string;
  tenantId: string;
  note?: string;
  context?: unknown;
}

/** What differs per subject kind; given by the capability that owns the subject. */
export interface ApprovalSubject<R = unknown> {
  kind: ApprovalSubjectKind;
  codes: { notFound: ErrorCode; resolutionConflict: ErrorCode; approverConflict: ErrorCode };
  /** The refusal's message when the requester tries to approve (the API key's wording by default). */
  approverConflictMessage?: string;
  /** The spec's projection of the approval (`refund_approval`, `payout_approval`). */
  view(row: ApprovalRow): Record<string, unknown>;
  /** The answer the idempotency record keeps (secrets sealed); the view when absent. */
  recordView?(row: ApprovalRow): Record<string, unknown>;
  /** Reads (and checks) what the subject's creation needs; throws the subject's ApiError to refuse. */
  prepareCreation(row: ApprovalRow, approver: string, at: Date, decision: Decision): Promise<SubjectCreation<R>>;
  /** Rows the decision writes in its transaction besides the subject's (the operator's audit rows); none by default. */
  decisionWrites?(row: ApprovalRow, to: 'approved' | 'rejected', decision: Decision, env: StepEnv): Write[];
}

type Command = Decision;
type HydratedApproval = Hydrated<ApprovalRow>;

export const toApproval = (r: Record<string, unknown>): ApprovalRow => ({ ...(r as unknown as ApprovalRow), amount_minor: r.amount_minor === null || r.amount_minor === undefined ? null : Number(r.amount_minor) });

/** The pure step of an approval: the machine decides; `approve` carries the subject's creation. Exported for tests. */
export function planApproval(h: HydratedApproval, cmd: Command, env: StepEnv, creation: SubjectCreation | undefined, subject: Pick<ApprovalSubject, 'codes' | 'approverConflictMessage' | 'decisionWrites'>): Plan {
  const { codes } = subject;
  const r = h.row;
  const step = machineStep<ApprovalEffect>(approvalMachine, r.status, { requestedBy: r.requested_by }, { type: cmd.kind, approver: cmd.approver });
  const refused = step.effects.find((e) => e.type === 'refuse');
  if (refused?.type === 'refuse') {
    if (refused.params.reason === 'approver_conflict') {
      throw new ApiError(codes.approverConflict, subject.approverConflictMessage ?? `Four-eyes rule: the approver must be someone other than the API key that requested the ${r.subject_kind}.`);
    }
    throw new ApiError(codes.resolutionConflict, `This approval was already ${r.status}.`);
  }
  const set: Record<string, unknown> = { status: step.value, approver: cmd.approver, resolved_at: env.at, updated_at: env.at, ...(cmd.note ? { resolution_note: cmd.note } : {}) };
  const plan: Plan = { set, history: { event: step.value, data: { approver: cmd.approver } }, signals: [], writes: [], result: undefined };
  for (const e of step.effects) {
    if (e.type === 'createSubject') {
      if (!creation) throw new Error(`approval ${r.id}: approved without its ${r.subject_kind} prepared`);
      set.subject_id = creation.id;
      plan.history = { event: step.value, data: { approver: cmd.approver, [`${r.subject_kind}_id`]: creation.id } };
      if (creation.step) plan.also = [creation.step];
      plan.writes!.push(...(creation.writes ?? []));
      plan.result = creation.result;
    }
    if (e.type === 'signal') plan.signals!.push({ type: e.params.event, data: { id: r.id, subject_kind: r.subject_kind, subject_id: set.subject_id ?? null, approver: cmd.approver } });
  }
  plan.writes!.push(...(subject.decisionWrites?.(r, step.value as 'approved' | 'rejected', cmd, env) ?? []));
  if (plan.result === undefined) plan.result = { ...r, ...set } as ApprovalRow;
  return plan;
}

/** The approvals of one subject kind (one per capability; all in table `approvals`). */
export class Approvals<R = unknown> {
  readonly def: EntityDef<HydratedApproval, Command, SubjectCreation<R> | undefined>;

  constructor(
    private readonly d: { sql: Sql; actor: EntityActor },
    readonly subject: ApprovalSubject<R>,
  ) {
    const { codes } = subject;
    this.def = {
      kind: 'approval',
      table: 'approvals',
      notFound: codes.notFound,
      busy: codes.resolutionConflict,
      // The operator's routes name the tenant, not the mode: an approval of another tenant or kind is not found.
      hydrate: async (sql, id, scope, cmd) => {
        const tenantId = scope?.tenantId ?? cmd?.tenantId;
        const [r] = await sql`
          select * from approvals where id = ${id} and subject_kind = ${subject.kind}
             ${tenantId ? sql`and tenant_id = ${tenantId}` : sql``} ${scope ? sql`and livemode = ${scope.livemode}` : sql``}`;
        return r ? { row: toApproval(r), clockOffsetMs: 0 } : undefined;
      },
      // The subject is prepared (reads, checks) only when the machine will create it.
      prepare: async (h, cmd) => (cmd.kind === 'approve' && h.row.status === 'pending' && !samePerson(cmd.approver, h.row.requested_by) ? subject.prepareCreation(h.row, cmd.approver, new Date(), cmd) : undefined),
      plan: (h, cmd, env, creation) => {
        const plan = planApproval(h, cmd, env, creation, subject);
        return creation?.afterCommit && plan.result === creation.result ? { ...plan, result: new WithAfterCommit(plan.result, creation.afterCommit) } : plan;
      },
    };
  }

  /** Whether this amount needs an approval under the tenant's threshold (the rule, once: machines/approval.ts). */
  needed(amountMinor: number, thresholdMinor: number | null | undefined): boolean {
    return needsApproval(amountMinor, thresholdMinor);
  }

  /** Opens a pending approval (the request's 202 answer, stored with its Idempotency-Key in the same transaction). */
  async request(
    p: Pick<Principal, 'tenantId' | 'livemode' | 'keyId'>,
    a: {
      amountMinor: number | null; currency: string | null; request: Record<string, unknown>; secret?: (id: string) => { sealed: string; masked: string };
      /** Rows written with the request (an operator's audit row). */
      writes?: (row: ApprovalRow, env: StepEnv) => Write[];
    },
    idem?: IdempotencyHandle,
  ): Promise<Record<string, unknown>> {
    const at = new Date();
    const id = randomUUID();
    const secret = a.secret?.(id);
    const row: ApprovalRow = {
      id, tenant_id: p.tenantId, livemode: p.livemode, subject_kind: this.subject.kind, status: 'pending', version: 0,
      amount_minor: a.amountMinor, currency: a.currency, request: a.request, secret_sealed: secret?.sealed ?? null, secret_masked: secret?.masked ?? null,
      requested_by: p.keyId, approver: null, subject_id: null, resolution_note: null, created_at: at, updated_at: at, resolved_at: null,
    };
    const view = this.subject.view(row);
    const writes = a.writes?.(row, { at, now: at, newId: randomUUID });
    await this.d.actor.create(this.def, p, {
      create: { ...row },
      history: { event: 'requested', data: { subject_kind: row.subject_kind, amount_minor: row.amount_minor, requested_by: row.requested_by } },
      ...(writes?.length ? { writes } : {}),
      response: { status: 202, body: this.subject.recordView?.(row) ?? view },
      result: view,
    }, { idem, at });
    return view;
  }

  /** The merchant reads an approval (its key's tenant and mode). */
  async get(p: Principal, id: string): Promise<Record<string, unknown>> {
    const [r] = await this.d.sql`select * from approvals where id = ${id} and subject_kind = ${this.subject.kind} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (!r) throw new ApiError(this.subject.codes.notFound);
    return this.subject.view(toApproval(r));
  }

  /** The operator approves: the subject is created in the approval's transaction (then its afterCommit runs); resolves to what prepareCreation said. */
  async approve(tenantId: string, id: string, approver: string, more?: Pick<Decision, 'note' | 'context'>): Promise<R> {
    const out = await this.step(id, { kind: 'approve', approver, tenantId, ...more });
    if (!(out instanceof WithAfterCommit)) return out as R;
    await out.after();
    return out.result as R;
  }

  /** The operator rejects: nothing is created; resolves to the approval's projection. */
  async reject(tenantId: string, id: string, approver: string, more?: Pick<Decision, 'note' | 'context'>): Promise<Record<string, unknown>> {
    return this.subject.view((await this.step(id, { kind: 'reject', approver, tenantId, ...more })) as ApprovalRow);
  }

  // A second decider waiting on the lock gets the def's `busy` (resolution_conflict) from the actor
  // (worker: false); a fenced commit is retried from fresh state, where the machine refuses the
  // decision already taken (resolution_conflict): no error needs translating here.
  private step(id: string, cmd: Command): Promise<unknown> {
    return this.d.actor.run(this.def, undefined, id, cmd, { waitMs: 3000, worker: false });
  }
}
