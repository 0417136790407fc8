// Refunds of captured attempts, with four-eyes approval above a tenant threshold.
// Creation locks the attempt row (SELECT … FOR UPDATE), so concurrent refunds of one attempt are
// serialized by Postgres and can never sum past what was captured.
import { randomUUID } from 'node:crypto';
import { transition } from 'xstate';
import { ApiError } from '../api/errors.js';
import { saveIdempotent, type IdempotencyHandle } from '../api/idempotency.js';
import type { Principal } from '../api/route.js';
import { refundKeyFor } from '../connectors/acquirer.js';
import type { Router } from '../connectors/routing.js';
import { attemptMachine } from '../machines/attempt.js';
import { refundMachine } from '../machines/refund.js';
import type { Db, Sql } from '../ops/db.js';
import type { Logger } from '../ops/log.js';
import { postEntry } from './ledger.js';
import { PI_QUEUE } from './payment-intents.js';
import { appendEvent } from './outbox.js';
import type { Queues } from './queues.js';

export interface RefundsDeps {
  sql: Sql;
  queues: Queues;
  router: Router;
  log: Logger;
}

export interface CreateRefund {
  attempt_id: string;
  amount_minor?: number;
  currency?: string;
  reason?: string;
}

const REFUNDABLE = new Set(['captured', 'settled', 'partially_refunded', 'refunded']);

export function refundView(r: Record<string, unknown>) {
  return {
    id: r.id as string,
    object: 'refund' as const,
    attempt_id: r.attempt_id as string,
    payment_intent_id: r.payment_intent_id as string,
    amount_minor: Number(r.amount_minor),
    currency: r.currency as string,
    status: r.status as string,
    reason: (r.reason as string | null) ?? null,
    provider_ref: (r.provider_ref as string | null) ?? null,
    failure_code: (r.failure_code as string | null) ?? null,
    failure_message: (r.failure_message as string | null) ?? null,
    livemode: r.livemode as boolean,
    created_at: (r.created_at as Date).toISOString(),
  };
}

export function approvalView(r: Record<string, unknown>) {
  return {
    id: r.id as string,
    object: 'refund_approval' as const,
    status: r.status as string,
    attempt_id: r.attempt_id as string,
    amount_minor: Number(r.amount_minor),
    currency: r.currency as string,
    reason: (r.reason as string | null) ?? null,
    approver: (r.approver as string | null) ?? null,
    refund_id: (r.refund_id as string | null) ?? null,
    livemode: r.livemode as boolean,
    created_at: (r.created_at as Date).toISOString(),
    resolved_at: r.resolved_at ? (r.resolved_at as Date).toISOString() : null,
  };
}

/** Locks the attempt and answers what is still refundable, or the spec's error. */
async function refundableOf(tx: Db, attempt: Record<string, unknown>) {
  if (!REFUNDABLE.has(attempt.status as string)) {
    throw new ApiError('refund.attempt_not_refundable', `Attempt ${String(attempt.id)} is ${String(attempt.status)}; only a captured, settled or partially_refunded attempt can be refunded.`);
  }
  const [live] = await tx`
    -- live refunds: requested or succeeded (a failed refund gives its amount back)
    select coalesce(sum(amount_minor), 0)::bigint as total from refunds where attempt_id = ${attempt.id as string} and status in ('requested', 'succeeded')`;
  return Number(attempt.amount_minor) - Number(live.total);
}

function checkAmount(amount: number, refundable: number, attemptId: string) {
  if (refundable <= 0) throw new ApiError('refund.nothing_refundable', `Attempt ${attemptId} has nothing left to refund.`);
  // spec: exceeds_refundable's message carries the remaining cents.
  if (amount > refundable) throw new ApiError('refund.exceeds_refundable', `amount ${amount} exceeds the ${refundable} still refundable on attempt ${attemptId}.`);
}

export class Refunds {
  constructor(private d: RefundsDeps) {}

  async create(p: Principal, body: CreateRefund, idem?: IdempotencyHandle): Promise<{ status: 201 | 202; body: Record<string, unknown> }> {
    const result = await this.d.sql.begin(async (tx) => {
      const [att] = await tx`
        select a.*, t.settings from attempts a join tenants t on t.id = a.tenant_id
         where a.id = ${body.attempt_id} and a.tenant_id = ${p.tenantId} and a.livemode = ${p.livemode}
           for update of a`;
      if (!att) throw new ApiError('attempt.not_found', `No attempt ${body.attempt_id} exists for this key. Refunds take an attempt id (attempts[].id), not a payment intent id.`);
      if (body.currency && body.currency !== att.currency) throw new ApiError('refund.currency_mismatch', `The charge is in ${String(att.currency)}; the refund must be too (got ${body.currency}).`);
      const refundable = await refundableOf(tx, att);
      const amount = body.amount_minor ?? refundable; // spec: omitted = remaining refundable
      checkAmount(amount, refundable, body.attempt_id);
      const threshold = (att.settings as { refund_approval_threshold_minor?: number } | null)?.refund_approval_threshold_minor;
      if (typeof threshold === 'number' && amount > threshold) {
        const [row] = await tx`
          insert into refund_approvals (id, tenant_id, livemode, attempt_id, amount_minor, currency, reason, requested_by, status)
          values (${randomUUID()}, ${p.tenantId}, ${p.livemode}, ${att.id}, ${amount}, ${att.currency}, ${body.reason ?? null}, ${p.keyId}, 'pending')
          returning *`;
        const view = approvalView(row);
        await saveIdempotent(tx, idem, 202, view);
        return { status: 202 as const, body: view };
      }
      const [row] = await tx`
        insert into refunds (id, tenant_id, livemode, attempt_id, payment_intent_id, amount_minor, currency, status, reason, requested_by)
        values (${randomUUID()}, ${p.tenantId}, ${p.livemode}, ${att.id}, ${att.payment_intent_id}, ${amount}, ${att.currency}, 'requested', ${body.reason ?? null}, ${p.keyId})
        returning *`;
      const view = refundView(row);
      await saveIdempotent(tx, idem, 201, view);
      return { status: 201 as const, body: view };
    });
    if (result.status === 201) await this.enqueue(result.body.id as string, result.body.payment_intent_id as string);
    return result;
  }

  private async enqueue(refundId: string, intentId: string) {
    await this.d.queues
      .add(PI_QUEUE, intentId, 'refund.execute', { intentId, refundId }, { jobId: `refund-${refundId}` })
      .catch((e) => this.d.log.warn('enqueue of a refund failed; the reconciler will retry', { refundId, err: e }));
  }

  async get(p: Principal, id: string) {
    const rows = await this.d.sql`select * from refunds where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (!rows.length) throw new ApiError('refund.not_found');
    return refundView(rows[0]);
  }

  /** The provider call and its outcome (worker; also inline after an approval). Idempotent. */
  async execute(refundId: string): Promise<Record<string, unknown> | undefined> {
    const [r] = await this.d.sql`
      select r.*, a.provider_key, a.connector_key from refunds r join attempts a on a.id = r.attempt_id where r.id = ${refundId}`;
    if (!r) return undefined;
    if (r.status !== 'requested') return refundView(r);
    const outcome = await this.d.router.connector(r.connector_key as string).refund({
      idempotencyKey: refundKeyFor(refundId),
      chargeKey: r.provider_key as string,
      amountMinor: Number(r.amount_minor),
      currency: r.currency as string,
      tenantId: r.tenant_id as string,
      livemode: r.livemode as boolean,
    });
    return this.d.sql.begin(async (tx) => {
      const [cur] = await tx`select * from refunds where id = ${refundId} for update`;
      if (cur.status !== 'requested') return refundView(cur);
      const snap = refundMachine.resolveState({ value: 'requested', context: undefined as never });
      const [next, actions] = transition(refundMachine, snap, { type: outcome.kind === 'succeeded' ? 'provider.succeeded' : 'provider.failed' });
      const [row] = await tx`
        update refunds set status = ${next.value as string}, provider_ref = ${outcome.kind === 'succeeded' ? outcome.providerRef : null},
               failure_code = ${outcome.kind === 'failed' ? outcome.code : null}, failure_message = ${outcome.kind === 'failed' ? outcome.message : null}, updated_at = now()
         where id = ${refundId} returning *`;
      const view = refundView(row);
      for (const a of actions as unknown as Array<{ type: string; params?: { event: string } }>) {
        if (a.type === 'postLedger') {
          await postEntry(tx, {
            tenantId: row.tenant_id as string,
            livemode: row.livemode as boolean,
            kind: 'refund.succeeded',
            refType: 'refund',
            refId: refundId,
            memo: `refund of attempt ${String(row.attempt_id)}`,
            lines: [
              { account: 'refunds', currency: view.currency, amountMinor: view.amount_minor },
              { account: `connector_receivable:${String(r.connector_key)}`, currency: view.currency, amountMinor: -view.amount_minor },
            ],
          });
        } else if (a.type === 'markAttempt') {
          const [att] = await tx`select id, status, amount_minor from attempts where id = ${row.attempt_id as string} for update`;
          const [done] = await tx`select coalesce(sum(amount_minor), 0)::bigint as total from refunds where attempt_id = ${att.id as string} and status = 'succeeded'`;
          const full = Number(done.total) >= Number(att.amount_minor);
          const [an] = transition(attemptMachine, attemptMachine.resolveState({ value: att.status as string, context: undefined as never }), { type: 'refunded', full });
          await tx`update attempts set status = ${an.value as string}, updated_at = now() where id = ${att.id as string}`;
        } else if (a.type === 'emit' && a.params) {
          await appendEvent(tx, {
            tenantId: row.tenant_id as string,
            livemode: row.livemode as boolean,
            type: a.params.event,
            entityId: refundId,
            data: { id: view.id, object: 'refund', attempt_id: view.attempt_id, payment_intent_id: view.payment_intent_id, amount_minor: view.amount_minor, currency: view.currency, status: view.status, reason: view.reason, failure_code: view.failure_code },
          });
        }
      }
      return view;
    });
  }

  // ---- four-eyes ---------------------------------------------------------------------------------

  async getApproval(p: Principal, id: string) {
    const rows = await this.d.sql`select * from refund_approvals where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (!rows.length) throw new ApiError('refund_approval.not_found');
    return approvalView(rows[0]);
  }

  /** The operator approves (a different actor than the requester): the refund is created and executed. */
  async approve(tenantId: string, approvalId: string, approver: string) {
    const refund = await this.d.sql.begin(async (tx) => {
      const [ap] = await tx`select * from refund_approvals where id = ${approvalId} and tenant_id = ${tenantId} for update`;
      if (!ap) throw new ApiError('refund_approval.not_found');
      if (ap.status !== 'pending') throw new ApiError('refund_approval.resolution_conflict', `This approval was already ${String(ap.status)}.`);
      if (approver.trim().toLowerCase() === String(ap.requested_by).toLowerCase()) {
        throw new ApiError('refund_approval.approver_conflict', 'Four-eyes rule: the approver must be someone other than the API key that requested the refund.');
      }
      const [att] = await tx`select * from attempts where id = ${ap.attempt_id as string} for update`;
      checkAmount(Number(ap.amount_minor), await refundableOf(tx, att), att.id as string);
      const id = randomUUID();
      const [row] = await tx`
        insert into refunds (id, tenant_id, livemode, attempt_id, payment_intent_id, amount_minor, currency, status, reason, requested_by, approval_id)
        values (${id}, ${tenantId}, ${ap.livemode}, ${att.id}, ${att.payment_intent_id}, ${ap.amount_minor}, ${ap.currency}, 'requested', ${ap.reason}, ${ap.requested_by}, ${approvalId})
        returning *`;
      await tx`update refund_approvals set status = 'approved', approver = ${approver}, refund_id = ${id}, resolved_at = now() where id = ${approvalId}`;
      return row;
    });
    return (await this.execute(refund.id as string)) ?? refundView(refund);
  }

  async reject(tenantId: string, approvalId: string, approver: string) {
    const rows = await this.d.sql`
      update refund_approvals set status = 'rejected', approver = ${approver}, resolved_at = now()
       where id = ${approvalId} and tenant_id = ${tenantId} and status = 'pending' returning *`;
    if (rows.length) return approvalView(rows[0]);
    const [ap] = await this.d.sql`select status from refund_approvals where id = ${approvalId} and tenant_id = ${tenantId}`;
    if (!ap) throw new ApiError('refund_approval.not_found');
    throw new ApiError('refund_approval.resolution_conflict', `This approval was already ${String(ap.status)}.`);
  }
}
