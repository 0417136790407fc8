// Four-eyes decisions of the operator console (docs/operator.md), on the entity actor: an operator
// asks for a sensitive operation (approving an application the verifier flagged, an above-threshold
// payout, releasing a suspended tenant); a second operator approves or rejects it. The one who asked
// cannot decide (operator_decision.self_approval_conflict), two deciders cannot both win (the row's
// version fences the step), and asking twice for the same operation on the same object gives the
// open request back. Every step writes an audit row in its transaction.
import { randomUUID } from 'node:crypto';
import type { Sql } from '../kernel/db.js';
import { hydrateRow, type EntityActor, type EntityDef, type Hydrated, type Plan, type StepEnv } from '../kernel/entity.js';
import { ApiError } from '../kernel/errors.js';
import { machineStep } from '../kernel/machine-step.js';
import { operatorDecisionMachine } from '../machines/operator-decision.js';
import { auditWrite, type AuditActor } from './audit.js';

export interface DecisionCommandSpec {
  /** The operator route to run once approved, e.g. `POST /admin/tenants/{tenantId}/release`. */
  route: string;
  params: Record<string, string>;
  body?: unknown;
}

export interface DecisionRow {
  id: string;
  tenant_id: string;
  livemode: boolean;
  status: string;
  version: number;
  action: string;
  target_kind: string;
  target_id: string;
  reason: string | null;
  command: DecisionCommandSpec;
  snapshot: Record<string, unknown> | null;
  outcome: Record<string, unknown> | null;
  requested_by: string;
  decided_by: string | null;
  decision_note: string | null;
  created_at: Date;
  decided_at: Date | null;
  updated_at: Date;
}

export function decisionView(r: DecisionRow & { requested_by_email?: string; decided_by_email?: string; tenant_name?: string }) {
  return {
    id: r.id,
    object: 'operator_decision' as const,
    status: r.status,
    action: r.action,
    tenant_id: r.tenant_id,
    ...(r.tenant_name ? { tenant_name: r.tenant_name } : {}),
    livemode: r.livemode,
    target: { kind: r.target_kind, id: r.target_id },
    ...(r.reason ? { reason: r.reason } : {}),
    requested_by: { id: r.requested_by, ...(r.requested_by_email ? { email: r.requested_by_email } : {}) },
    ...(r.decided_by ? { decided_by: { id: r.decided_by, ...(r.decided_by_email ? { email: r.decided_by_email } : {}) } } : {}),
    ...(r.decision_note ? { decision_note: r.decision_note } : {}),
    ...(r.snapshot ? { snapshot: r.snapshot } : {}),
    ...(r.outcome ? { outcome: r.outcome } : {}),
    created_at: r.created_at.toISOString(),
    ...(r.decided_at ? { decided_at: r.decided_at.toISOString() } : {}),
  };
}
export type DecisionView = ReturnType<typeof decisionView>;

type DecisionCommand =
  | { kind: 'approve' | 'reject'; by: AuditActor; note?: string; requestId?: string }
  | { kind: 'execution_failed'; by: AuditActor; outcome: Record<string, unknown>; requestId?: string }
  | { kind: 'executed'; by: AuditActor; outcome: Record<string, unknown>; requestId?: string };

export function planDecisionStep(h: Hydrated<DecisionRow>, cmd: DecisionCommand, env: StepEnv): Plan<DecisionRow> {
  const r = h.row;
  if (cmd.kind === 'executed') {
    // The operation ran: its answer is kept with the decision (no state change).
    const updated = { ...r, outcome: cmd.outcome, updated_at: env.at, version: r.version + 1 };
    return { set: { outcome: cmd.outcome, updated_at: env.at }, result: updated };
  }
  if ((cmd.kind === 'approve' || cmd.kind === 'reject') && r.status !== 'pending') {
    throw new ApiError('operator_decision.resolution_conflict', `This decision is already ${r.status}.`);
  }
  if ((cmd.kind === 'approve' || cmd.kind === 'reject') && cmd.by.id === r.requested_by) {
    throw new ApiError('operator_decision.self_approval_conflict');
  }
  const step = machineStep(operatorDecisionMachine, r.status, undefined, { type: cmd.kind });
  if (step.value === r.status) return { result: r };
  const set: Record<string, unknown> = { status: step.value, updated_at: env.at };
  if (cmd.kind !== 'execution_failed') Object.assign(set, { decided_by: cmd.by.id, decided_at: env.at, decision_note: cmd.note ?? null });
  else set.outcome = cmd.outcome;
  const updated = { ...r, ...set, version: r.version + 1 } as DecisionRow;
  return {
    set,
    history: { event: cmd.kind, data: { by: `${cmd.by.kind}:${cmd.by.id}` } },
    writes: [
      auditWrite(env, {
        actor: cmd.by, action: `operator_decision.${cmd.kind}`, tenantId: r.tenant_id, livemode: r.livemode, targetKind: 'operator_decision', targetId: r.id,
        reason: cmd.kind === 'execution_failed' ? undefined : cmd.note, before: { status: r.status, action: r.action, target_id: r.target_id }, after: { status: updated.status, action: r.action, target_id: r.target_id },
        requestId: cmd.requestId,
      }),
    ],
    result: updated,
  };
}

const toRow = (r: Record<string, unknown>) => r as unknown as DecisionRow;

export class OperatorDecisions {
  readonly def: EntityDef<Hydrated<DecisionRow>, DecisionCommand>;

  constructor(private d: { sql: Sql; actor: EntityActor }) {
    this.def = {
      kind: 'operator_decision',
      table: 'operator_decisions',
      notFound: 'operator_decision.not_found',
      busy: 'operator_decision.concurrent_modification',
      hydrate: hydrateRow('operator_decisions', toRow),
      plan: (h, cmd, env) => planDecisionStep(h, cmd, env),
    };
  }

  /** Asks for a second operator's decision; the open request for the same operation and target is answered as is. */
  async request(by: AuditActor & { id: string }, q: { tenantId: string; livemode: boolean; action: string; targetKind: string; targetId: string; reason?: string; command: DecisionCommandSpec; snapshot?: Record<string, unknown> | null }, requestId?: string): Promise<DecisionView> {
    const open = await this.d.sql`select id from operator_decisions where action = ${q.action} and target_id = ${q.targetId} and status = 'pending'`;
    if (open.length) return this.get(open[0].id as string);
    const at = new Date();
    const row: DecisionRow = {
      id: randomUUID(), tenant_id: q.tenantId, livemode: q.livemode, status: 'pending', version: 0, action: q.action, target_kind: q.targetKind, target_id: q.targetId,
      reason: q.reason ?? null, command: q.command, snapshot: q.snapshot ?? null, outcome: null, requested_by: by.id, decided_by: null, decision_note: null,
      created_at: at, decided_at: null, updated_at: at,
    };
    const env: StepEnv = { at, now: at, newId: randomUUID };
    try {
      await this.d.actor.create(this.def, { tenantId: q.tenantId, livemode: q.livemode }, {
        create: { ...row },
        history: { event: 'request', data: { by: `${by.kind}:${by.id}` } },
        writes: [auditWrite(env, { actor: by, action: `${q.action}.requested`, tenantId: q.tenantId, livemode: q.livemode, targetKind: q.targetKind, targetId: q.targetId, reason: q.reason, before: q.snapshot ?? undefined, after: { decision_id: row.id, status: 'pending' }, requestId })],
        result: row,
      }, { at });
    } catch (e) {
      // Two operators asked at once: the unique open request is the other one's.
      if ((e as { code?: string }).code === '23505') {
        const [again] = await this.d.sql`select id from operator_decisions where action = ${q.action} and target_id = ${q.targetId} and status = 'pending'`;
        if (again) return this.get(again.id as string);
      }
      throw e;
    }
    return this.get(row.id);
  }

  async get(id: string): Promise<DecisionView> {
    const [r] = /^[0-9a-f-]{36}$/i.test(id)
      ? await this.d.sql`
          select d.*, rq.email as requested_by_email, dc.email as decided_by_email, t.name as tenant_name
            from operator_decisions d join portal_members rq on rq.id = d.requested_by left join portal_members dc on dc.id = d.decided_by join tenants t on t.id = d.tenant_id
           where d.id = ${id}`
      : [];
    if (!r) throw new ApiError('operator_decision.not_found');
    return decisionView(r as never);
  }

  async list(q: { status?: string; limit?: number }) {
    const limit = Math.min(Math.max(q.limit ?? 100, 1), 500);
    const rows = await this.d.sql`
      select d.*, rq.email as requested_by_email, dc.email as decided_by_email, t.name as tenant_name
        from operator_decisions d join portal_members rq on rq.id = d.requested_by left join portal_members dc on dc.id = d.decided_by join tenants t on t.id = d.tenant_id
       where true ${q.status ? this.d.sql`and d.status = ${q.status}` : this.d.sql``}
       order by d.created_at desc, d.id desc limit ${limit}`;
    return { object: 'list' as const, data: rows.map((r) => decisionView(r as never)) };
  }

  /** The second operator's decision: approve (the caller then runs the command) or reject. */
  async decide(by: AuditActor & { id: string }, id: string, kind: 'approve' | 'reject', note?: string, requestId?: string): Promise<DecisionRow> {
    const [t] = /^[0-9a-f-]{36}$/i.test(id) ? await this.d.sql`select tenant_id, livemode from operator_decisions where id = ${id}` : [];
    if (!t) throw new ApiError('operator_decision.not_found');
    return this.d.actor.run<Hydrated<DecisionRow>, DecisionCommand, void, DecisionRow>(this.def, { tenantId: t.tenant_id as string, livemode: t.livemode as boolean }, id, { kind, by, note, requestId }, { waitMs: 3000, worker: false });
  }

  /** What running the approved command gave: its answer, or its refusal (failed). */
  async recordOutcome(by: AuditActor, row: DecisionRow, outcome: Record<string, unknown>, ok: boolean, requestId?: string): Promise<DecisionView> {
    await this.d.actor.run(this.def, { tenantId: row.tenant_id, livemode: row.livemode }, row.id, ok ? { kind: 'executed', by, outcome, requestId } : { kind: 'execution_failed', by, outcome, requestId }, { waitMs: 3000, worker: false });
    return this.get(row.id);
  }
}
