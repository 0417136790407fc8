// Refunds of captured attempts, on the entity actor (kernel/entity.ts), with four-eyes approval
// above a tenant threshold.
//
// - What may be refunded is checked twice: by the actor before anything is written (for the spec's
//   errors and their messages), and by the database (trigger refunds_within_captured, migration
//   0009), which locks the attempt so that concurrent refunds of one attempt are checked one after
//   the other and can never sum past what was captured.
// - The provider call runs in a job under the refund's lock; its outcome is a step of the refund
//   machine (row, history, ledger entry, event, in one transaction).
// - The attempt's status (partially_refunded, refunded) belongs to the payment intent actor: a
//   succeeded refund asks it, with a job after the commit, to change it.
import { Approvals, type ApprovalRow } from './approvals.js';
import { eventDataOf } from '../kernel/json.js';
import { refundLines } from '../kernel/ledger.js';
import { reconciler, staleRows, type Capability } from '../kernel/capability.js';
import type { Sql } from '../kernel/db.js';
import { tenantOffsetMsSql } from '../kernel/clock.js';
import { LockBusy, type EntityActor, type EntityRow, type EntityDef, type Hydrated, type Plan, type StepEnv, clockOf } from '../kernel/entity.js';
import { ApiError } from '../kernel/errors.js';
import type { IdempotencyHandle } from '../kernel/idempotency.js';
import { defineJob, jobRequest, type JobRequest } from '../kernel/jobs.js';
import type { Logger } from '../kernel/log.js';
import { initialState, machineStep } from '../kernel/machine-step.js';
import type { Principal } from '../kernel/principal.js';
import { refundKeyFor, type RefundOutcome } from '../connectors/acquirer.js';
import type { Router } from '../connectors/routing.js';
import { refundMachine, type RefundEffect } from '../machines/refund.js';
import { randomUUID } from 'node:crypto';
import { OutcomeUnknown, settle, type OutboundCall } from '../kernel/outbound.js';

export const REFUND_QUEUE = 'refund';

export interface RefundsDeps {
  sql: Sql;
  actor: EntityActor;
  router: Router;
  log: Logger;
  /** The payment intent actor's job that moves the attempt's status after a refund succeeded. */
  refundSettled(intentId: string, attemptId: string, scope?: { tenantId: string; livemode: boolean }): JobRequest;
  /** The invoices' job that books the refund once when a credit note documents it too (docs/reports.md). */
  refundCovered?(intentId: string, scope: { tenantId: string; livemode: boolean }, refundId: string): JobRequest;
}

export interface CreateRefund {
  attempt_id: string;
  amount_minor?: number;
  currency?: string;
  reason?: string;
}

export interface RefundRow extends EntityRow {
  attempt_id: string;
  payment_intent_id: string;
  amount_minor: number;
  currency: string;
  reason: string | null;
  provider_ref: string | null;
  failure_code: string | null;
  failure_message: string | null;
  requested_by: string;
  approval_id: string | null;
  /** Set by the step before the provider call (the outbound protocol's mark): from then on, ask first. */
  send_started_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

interface HydratedRefund extends Hydrated<RefundRow> {
  connectorKey: string;
  providerKey: string;
}

type RefundCommand = { kind: 'send_started' } | { kind: 'provider_outcome'; outcome: RefundOutcome };

const REFUNDABLE = new Set(['captured', 'settled', 'partially_refunded', 'refunded']);

const iso = (d: Date) => d.toISOString();

export function refundView(r: RefundRow) {
  return {
    id: r.id,
    object: 'refund' as const,
    attempt_id: r.attempt_id,
    payment_intent_id: r.payment_intent_id,
    amount_minor: Number(r.amount_minor),
    currency: r.currency,
    status: r.status,
    reason: r.reason,
    provider_ref: r.provider_ref,
    failure_code: r.failure_code,
    failure_message: r.failure_message,
    livemode: r.livemode,
    created_at: iso(r.created_at),
  };
}

/**
 * The data of refund.* events (documented in OpenAPI as refund_event_data): the refund's projection
 * without absent fields, as every authenticated projection (spec: null fields are omitted).
 */
export function refundEventData(r: RefundRow) {
  return eventDataOf(refundView(r), ['livemode']);
}

/** The spec's refund_approval: an approval (actors/approvals.ts) of a refund. */
export function approvalView(r: ApprovalRow) {
  const req = r.request as { attempt_id: string; reason?: string | null };
  return {
    id: r.id,
    object: 'refund_approval' as const,
    status: r.status,
    attempt_id: req.attempt_id,
    amount_minor: r.amount_minor,
    currency: r.currency,
    reason: req.reason ?? null,
    approver: r.approver,
    refund_id: r.subject_id,
    livemode: r.livemode,
    created_at: r.created_at.toISOString(),
    resolved_at: r.resolved_at ? r.resolved_at.toISOString() : null,
  };
}

const toRefund = (r: Record<string, unknown>): RefundRow => ({ ...(r as unknown as RefundRow), amount_minor: Number(r.amount_minor) });

/** What is still refundable on an attempt (charged minus live refunds), or the spec's error. */
function refundable(attempt: Record<string, unknown>, live: number): number {
  if (!REFUNDABLE.has(attempt.status as string)) {
    throw new ApiError('refund.attempt_not_refundable', `Attempt ${String(attempt.id)} is ${String(attempt.status)}; only a captured, settled or partially_refunded attempt can be refunded.`);
  }
  return Number(attempt.amount_minor) - live;
}

function checkAmount(amount: number, left: number, attemptId: string) {
  if (left <= 0) throw new ApiError('refund.nothing_refundable', `Attempt ${attemptId} has nothing left to refund.`);
  // spec: exceeds_refundable's message carries the remaining cents.
  if (amount > left) throw new ApiError('refund.exceeds_refundable', `amount ${amount} exceeds the ${left} still refundable on attempt ${attemptId}.`);
}

/** The refund's step on the provider's outcome: pure (refund machine → row, ledger entry, event, the attempt's job). */
export function planRefundOutcome(h: HydratedRefund, cmd: RefundCommand, env: StepEnv, settled: (intentId: string, attemptId: string, scope?: { tenantId: string; livemode: boolean }) => JobRequest, covered?: RefundsDeps['refundCovered']): Plan<RefundRow> {
  const r = h.row;
  if (r.status !== 'requested') return { result: r };
  if (cmd.kind === 'send_started') {
    // The mark of the outbound protocol: no state change, only the time the call may leave from.
    const updated: RefundRow = { ...r, send_started_at: env.at, updated_at: env.at, version: r.version + 1 };
    return { set: { send_started_at: env.at, updated_at: env.at }, history: { event: 'send_started' }, result: updated };
  }
  const o = cmd.outcome;
  const step = machineStep<RefundEffect>(refundMachine, r.status, undefined, { type: o.kind === 'succeeded' ? 'provider.succeeded' : 'provider.failed' });
  const updated: RefundRow = {
    ...r,
    status: step.value,
    provider_ref: o.kind === 'succeeded' ? o.providerRef : null,
    failure_code: o.kind === 'failed' ? o.code : null,
    failure_message: o.kind === 'failed' ? o.message : null,
    updated_at: env.at,
    version: r.version + 1,
  };
  const plan: Plan<RefundRow> = {
    set: { status: updated.status, provider_ref: updated.provider_ref, failure_code: updated.failure_code, failure_message: updated.failure_message, updated_at: env.at },
    history: { event: `provider.${o.kind}`, data: o.kind === 'failed' ? { code: o.code } : { provider_ref: o.providerRef } },
    events: [],
    ledger: [],
    jobs: [],
    result: updated,
  };
  for (const e of step.effects) {
    if (e.type === 'postLedger') {
      plan.ledger!.push({
        tenantId: r.tenant_id,
        livemode: r.livemode,
        kind: 'refund.succeeded',
        refType: 'refund',
        refId: r.id,
        memo: `refund of attempt ${r.attempt_id}`,
        lines: refundLines(h.connectorKey, r.currency, r.amount_minor),
      });
      if (covered) plan.jobs!.push(covered(r.payment_intent_id, { tenantId: r.tenant_id, livemode: r.livemode }, r.id));
    } else if (e.type === 'settleAttempt') {
      plan.jobs!.push(settled(r.payment_intent_id, r.attempt_id, { tenantId: r.tenant_id, livemode: r.livemode }));
    } else if (e.type === 'emit') {
      plan.events!.push({ type: (e.params as { event: string }).event, data: refundEventData(updated) });
    }
  }
  return plan;
}

export class Refunds {
  readonly def: EntityDef<HydratedRefund, RefundCommand>;
  /** Four-eyes approvals of refunds above the tenant's threshold (actors/approvals.ts). */
  readonly approvals: Approvals<RefundRow>;

  readonly executeJob = defineJob<{ refundId: string }>({
    queue: REFUND_QUEUE,
    name: 'refund.execute',
    shape: { refundId: 'uuid' },
    id: (d) => `refund-${d.refundId}`,
    shardKey: (d) => d.refundId,
    transient: (e) => e instanceof OutcomeUnknown || e instanceof LockBusy,
    run: (d) => this.execute(d.refundId),
  });

  constructor(private d: RefundsDeps) {
    this.approvals = new Approvals<RefundRow>(d, {
      kind: 'refund',
      codes: { notFound: 'refund_approval.not_found', resolutionConflict: 'refund_approval.resolution_conflict', approverConflict: 'refund_approval.approver_conflict' },
      view: approvalView,
      prepareCreation: async (ap, _approver, at) => {
        const req = ap.request as { attempt_id: string; reason?: string | null };
        const att = await this.checkRefundable(ap.tenant_id, req.attempt_id, ap.amount_minor!);
        const { row, plan } = this.creation({ tenantId: ap.tenant_id, livemode: ap.livemode }, att, ap.amount_minor!, req.reason ?? null, ap.requested_by, ap.id, at);
        return { id: row.id, step: { def: this.def, row, plan }, result: row };
      },
    });
    this.def = {
      kind: 'refund',
      table: 'refunds',
      notFound: 'refund.not_found',
      busy: 'refund.concurrent_modification',
      hydrate: async (sql, id, scope) => {
        const [r] = await sql`
          select r.*, a.connector_key, a.provider_key, ${tenantOffsetMsSql(sql, 'r.tenant_id', 'r.livemode')} as clock_offset_ms
            from refunds r join attempts a on a.id = r.attempt_id and a.tenant_id = r.tenant_id
           where r.id = ${id} ${scope ? sql`and r.tenant_id = ${scope.tenantId} and r.livemode = ${scope.livemode}` : sql``}`;
        if (!r) return undefined;
        const { connector_key, provider_key, clock_offset_ms, ...row } = r;
        return { row: toRefund(row), clockOffsetMs: clockOf({ livemode: r.livemode as boolean, clock_offset_ms }), connectorKey: connector_key as string, providerKey: provider_key as string };
      },
      plan: (h, cmd, env) => planRefundOutcome(h, cmd, env, d.refundSettled, d.refundCovered),
    };
  }

  async create(p: Principal, body: CreateRefund, idem?: IdempotencyHandle): Promise<{ status: 201 | 202; body: Record<string, unknown> }> {
    const [att] = await this.d.sql`
      select a.*, t.settings,
             (select coalesce(sum(r.amount_minor), 0) from refunds r where r.attempt_id = a.id and r.status in ('requested', 'succeeded'))::bigint as live
        from attempts a join tenants t on t.id = a.tenant_id
       where a.id = ${body.attempt_id} and a.tenant_id = ${p.tenantId} and a.livemode = ${p.livemode}`;
    if (!att) throw new ApiError('attempt.not_found', `No attempt ${body.attempt_id} exists for this key. Refunds take an attempt id (attempts[].id), not a payment intent id.`);
    if (body.currency && body.currency !== att.currency) throw new ApiError('refund.currency_mismatch', `The charge is in ${String(att.currency)}; the refund must be too (got ${body.currency}).`);
    const left = refundable(att, Number(att.live));
    const amount = body.amount_minor ?? left; // spec: omitted = remaining refundable
    checkAmount(amount, left, body.attempt_id);
    const threshold = (att.settings as { refund_approval_threshold_minor?: number } | null)?.refund_approval_threshold_minor;
    if (this.approvals.needed(amount, threshold)) {
      const view = await this.approvals.request(p, { amountMinor: amount, currency: att.currency as string, request: { attempt_id: att.id as string, reason: body.reason ?? null } }, idem);
      return { status: 202, body: view };
    }
    const row = await this.insert(p, att, amount, body.reason ?? null, p.keyId, idem);
    return { status: 201, body: refundView(row) };
  }

  /** Creates the refund row (requested) and queues its execution; the database has the last word on the amount. */
  private async insert(p: { tenantId: string; livemode: boolean }, att: Record<string, unknown>, amount: number, reason: string | null, requestedBy: string, idem?: IdempotencyHandle): Promise<RefundRow> {
    const at = new Date();
    const { row, plan } = this.creation(p, att, amount, reason, requestedBy, null, at);
    try {
      return await this.d.actor.create(this.def, p, { ...plan, response: { status: 201, body: refundView(row) }, result: row }, { idem, at });
    } catch (e) {
      await this.explainOverRefund(e, p.tenantId, att.id as string, amount);
      throw e;
    }
  }

  /** A refund's creation step (row, history, execution job): a caller's request, or an approval's step carries it. */
  private creation(p: { tenantId: string; livemode: boolean }, att: Record<string, unknown>, amount: number, reason: string | null, requestedBy: string, approvalId: string | null, at: Date) {
    const row: RefundRow = {
      id: randomUUID(), tenant_id: p.tenantId, livemode: p.livemode, status: initialState(refundMachine),
      version: 0, attempt_id: att.id as string, payment_intent_id: att.payment_intent_id as string, amount_minor: amount, currency: att.currency as string,
      reason, provider_ref: null, failure_code: null, failure_message: null, requested_by: requestedBy, approval_id: approvalId, send_started_at: null, created_at: at, updated_at: at,
    };
    const plan = {
      create: { ...row },
      history: { event: 'create', data: { amount_minor: amount, approval_id: approvalId } },
      jobs: [jobRequest(this.executeJob, { refundId: row.id })],
    };
    return { row, plan };
  }

  /** The database refused a refund past the captured amount (OQ422: another refund committed first): say what is left now. */
  private async explainOverRefund(e: unknown, tenantId: string, attemptId: string, amount: number): Promise<void> {
    if ((e as { code?: string }).code !== 'OQ422') return;
    await this.checkRefundable(tenantId, attemptId, amount);
  }

  /** Reads the attempt with what its refunds hold now and refuses `amount` past what is left (the approval's step, the OQ422 explanation). */
  private async checkRefundable(tenantId: string, attemptId: string, amount: number): Promise<Record<string, unknown>> {
    const [att] = await this.d.sql`
      select a.*, (select coalesce(sum(r.amount_minor), 0) from refunds r where r.attempt_id = a.id and r.tenant_id = a.tenant_id and r.status in ('requested', 'succeeded'))::bigint as live
        from attempts a where a.id = ${attemptId} and a.tenant_id = ${tenantId}`;
    checkAmount(amount, refundable(att, Number(att.live)), attemptId);
    return att;
  }

  /** The tenant's refunds, newest first, a page at a time (Stripe's list), optionally of one intent or attempt. */
  async list(p: Principal, q: { limit?: number; starting_after?: string; payment_intent?: string; attempt?: string }) {
    const sql = this.d.sql;
    const limit = Math.min(q.limit ?? 10, 100);
    let after = sql``;
    if (q.starting_after) {
      const [c] = await sql`select created_at, id from refunds where id = ${q.starting_after} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
      if (!c) throw new ApiError('refund.not_found', `starting_after ${q.starting_after} is not a refund of this key: use the last id of the previous page.`);
      after = sql`and (created_at, id) < (${c.created_at as Date}, ${c.id as string})`;
    }
    const rows = await sql`
      select * from refunds where tenant_id = ${p.tenantId} and livemode = ${p.livemode}
             ${q.payment_intent ? sql`and payment_intent_id = ${q.payment_intent}` : sql``}
             ${q.attempt ? sql`and attempt_id = ${q.attempt}` : sql``} ${after}
       order by created_at desc, id desc limit ${limit + 1}`;
    return { object: 'list' as const, data: rows.slice(0, limit).map((r) => refundView(toRefund(r))), has_more: rows.length > limit };
  }

  async get(p: Principal, id: string) {
    const rows = await this.d.sql`select * from refunds where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (!rows.length) throw new ApiError('refund.not_found');
    return refundView(toRefund(rows[0]));
  }

  /**
   * The refund's provider call as an outbound call (kernel/outbound.ts): `send_started_at` is
   * committed before the first call; a refund that has it may have reached the provider (a timeout,
   * a 5xx, a killed worker), so the provider is asked first (lookupRefund) and the refund is sent
   * only when the provider never saw it. No refund is ever sent twice.
   */
  private refundCall(h0: HydratedRefund): OutboundCall<HydratedRefund, RefundOutcome, RefundRow> {
    const connector = this.d.router.connector(h0.connectorKey);
    const req = (h: HydratedRefund) => ({
      idempotencyKey: refundKeyFor(h.row.id),
      chargeKey: h.providerKey,
      amountMinor: h.row.amount_minor,
      currency: h.row.currency,
      tenantId: h.row.tenant_id,
      livemode: h.row.livemode,
    });
    const step = (h: HydratedRefund, cmd: RefundCommand) =>
      this.d.actor.runLocked<HydratedRefund, RefundCommand, void, RefundRow>(this.def, undefined, h.row.id, cmd, { waitMs: 0, known: h });
    return {
      connector: h0.connectorKey,
      op: 'refund',
      attrs: { 'orquesta.refund_id': h0.row.id },
      due: (h) => h.row.status === 'requested',
      started: (h) => h.row.send_started_at !== null,
      mark: async (h) => ({ ...h, row: await step(h, { kind: 'send_started' }) }),
      send: (h) => connector.refund(req(h)),
      lookup: async (h) => {
        const others = await this.d.sql`
          select provider_ref from refunds where tenant_id = ${h.row.tenant_id} and attempt_id = ${h.row.attempt_id} and id <> ${h.row.id} and status = 'succeeded' and provider_ref is not null`;
        return connector.lookupRefund({ ...req(h), sentAfter: h.row.send_started_at ?? h.row.created_at, claimed: others.map((o) => o.provider_ref as string) });
      },
      record: (h, outcome) => step(h, { kind: 'provider_outcome', outcome }),
      idle: (h) => h.row,
    };
  }

  /** The provider call and its outcome, under the refund's lock (worker; also inline after an approval). Idempotent. */
  async execute(refundId: string): Promise<RefundRow | undefined> {
    const s = await settle(this.d.actor, this.def, refundId, (h) => this.refundCall(h));
    return s?.result;
  }

  // ---- four-eyes ---------------------------------------------------------------------------------

  getApproval(p: Principal, id: string) {
    return this.approvals.get(p, id);
  }

  /** The operator approves (a different person than the requester): the refund is created in the approval's step, then executed. */
  async approve(tenantId: string, approvalId: string, approver: string) {
    let row: RefundRow;
    try {
      row = await this.approvals.approve(tenantId, approvalId, approver);
    } catch (e) {
      const [ap] = await this.d.sql`select request, amount_minor from approvals where id = ${approvalId} and tenant_id = ${tenantId}`;
      if (ap) await this.explainOverRefund(e, tenantId, (ap.request as { attempt_id: string }).attempt_id, Number(ap.amount_minor));
      throw e;
    }
    return refundView((await this.execute(row.id)) ?? row);
  }

  reject(tenantId: string, approvalId: string, approver: string) {
    return this.approvals.reject(tenantId, approvalId, approver);
  }

  capability(): Capability {
    const sql = this.d.sql;
    return {
      name: 'refunds',
      queues: { [REFUND_QUEUE]: 2 },
      jobs: [this.executeJob],
      reconcilers: [
        reconciler(
          'refunds waiting on the provider',
          () => staleRows(sql, { table: 'refunds', status: 'requested' }),
          (r) => jobRequest(this.executeJob, { refundId: r.id as string }),
        ),
      ],
    };
  }
}
