// The payment intent's step as a pure plan: from the hydrated intent (with its attempts and
// pending review), a command, the step's environment and what `prepare` read or asked outside the
// transaction, the rows, events, ledger entries, timers and jobs of the transition. No I/O: the
// entity actor (kernel/entity.ts) commits the plan in one fenced transaction. Tested without a
// database in test/machines/payment-intent-plan.test.ts.
import { accounts } from '../kernel/accounts.js';
import { ApiError } from '../kernel/errors.js';
import type { ErrorCode } from '../kernel/error-catalog.js';
import type { Plan, PlannedEvent, StepEnv, TimerWrite, Write } from '../kernel/entity.js';
import type { EntryInput } from '../kernel/ledger.js';
import { captureLines } from '../kernel/ledger.js';
import type { JobRequest } from '../kernel/jobs.js';
import { machineStep } from '../kernel/machine-step.js';
import { providerKeyFor, type ProviderOutcome } from '../connectors/acquirer.js';
import { attemptMachine } from '../machines/attempt.js';
import { paymentIntentMachine, type PaymentIntentEffect, type PaymentIntentEvent, type RiskVerdict } from '../machines/payment-intent.js';
import type { ConfirmBody } from '../schemas/payment-intents.js';
import { intentEventData, intentView, type AttemptRow, type HydratedIntent, type IntentRow } from './payment-intent-store.js';

export const EXPIRE_TIMER = 'payment_intent.expire';
/** Dunning: the next retry of an off-session charge (docs/routing.md). */
export const DUNNING_TIMER = 'payment_intent.dunning';
/** Days a merchant has to answer a dispute the provider reported with a capture. */
const EVIDENCE_WINDOW_MS = 7 * 86400_000;

export type IntentCommand =
  | { kind: 'confirm'; body: ConfirmBody }
  | { kind: 'capture' }
  | { kind: 'cancel' }
  /** Provider evidence about an attempt (its answer, a notice from the inbox). */
  | { kind: 'evidence'; attemptId: string; outcome: ProviderOutcome; source: 'connector' | 'inbound'; inboxId?: string }
  /** The pending action's timer fired and the provider holds no capture for it. */
  | { kind: 'expire' }
  /** The dunning timer fired (by the tenant's clock): retry the off-session charge. */
  | { kind: 'dunning'; dueAt: string }
  | { kind: 'review'; reviewId: string; decision: 'approve' | 'reject' }
  /** A refund of an attempt succeeded: the attempt (owned by this actor) becomes partially_refunded or refunded. */
  | { kind: 'refund_settled'; attemptId: string };

/** A connector chosen for a new attempt, with the routing decision written beside the attempt (routing_decisions, id = attempt id). */
export interface RouteChoice {
  connector: string;
  decision?: {
    method: string;
    brand: string | null;
    amount_minor: number;
    currency: string;
    candidates: unknown[];
    chosen: string;
    reason: 'cheapest' | 'retry' | 'dunning';
    default_connector: string | null;
    default_fee_minor: number | null;
    chosen_fee_minor: number;
    /** A merchant-initiated charge of a saved card (dunning applies to its soft declines). */
    off_session?: boolean;
    payment_method_id?: string | null;
  };
}

/** What `prepare` read or decided outside the transaction (all optional: each command uses its part). */
export interface IntentPrep {
  /** confirm / review approval: the method and token the attempt charges, the route, the risk verdict. */
  charge?: { method: string; token?: string; tip: number; route?: RouteChoice; risk: RiskVerdict; ruleId?: string; customerId?: string };
  /** soft decline evidence: the next eligible connector, when there is one (cross-connector retry); dunning: the retry's route. */
  retry?: RouteChoice;
  /** dunning: the token of the new attempt (the saved method's reference, read again). */
  retryToken?: string;
  /** soft decline of an off-session charge with dunning retries left: when the next one is due (tenant clock). */
  dunningDueAt?: Date;
  /** capture evidence: the fee the attempt's connector charges on its amount. */
  feeMinor?: number;
  /** refund_settled: what succeeded refunds of the attempt add up to. */
  refundedMinor?: number;
}

/** The jobs the plan asks for; the actor module binds them to their declarations (payment-intents.ts). */
export interface IntentJobs {
  execute(intentId: string, attemptId: string): JobRequest;
  capture(intentId: string, attemptId: string): JobRequest;
  void(intentId: string, attemptId: string): JobRequest;
}

export interface IntentResult {
  intent: IntentRow;
  attempts: AttemptRow[];
  review?: Record<string, unknown>;
}

type AttemptEffect = { type: 'requestCapture' } | { type: 'requestVoid' };

/** The answer a caller's command receives (and the idempotency record stores). */
function responseFor(cmd: IntentCommand, r: IntentResult): unknown {
  if (r.review) return r.review;
  if (cmd.kind === 'cancel') return intentView(r.intent);
  return intentView(r.intent, r.attempts);
}

const isCallerCommand = (cmd: IntentCommand) => cmd.kind === 'confirm' || cmd.kind === 'capture' || cmd.kind === 'cancel';

/** Provider evidence → machine event. */
export function evidenceEvent(o: ProviderOutcome, source: 'connector' | 'inbound', status: string, retry: boolean, dunning = false): PaymentIntentEvent {
  switch (o.kind) {
    case 'captured':
      return source === 'inbound' && status === 'requires_action' ? { type: 'evidence.incoming_payment' } : { type: 'evidence.captured' };
    case 'authorized':
      return { type: 'evidence.authorized' };
    case 'action_required':
      return { type: 'evidence.action_required', expires: !!o.expiresAt };
    case 'hard_decline':
      return { type: 'evidence.hard_decline' };
    case 'soft_decline':
      return { type: 'evidence.soft_decline', retry, ...(dunning ? { dunning } : {}) };
    case 'voided':
      return { type: 'evidence.hard_decline' };
  }
}

/** A plan that changes nothing but what a no-op must still record (the notice it consumed, the caller's answer). */
function noop(h: HydratedIntent, cmd: IntentCommand, writes: Write[] = []): Plan<IntentResult> {
  const result: IntentResult = { intent: h.row, attempts: h.attempts };
  return { writes, result, ...(isCallerCommand(cmd) ? { response: { status: 200, body: responseFor(cmd, result) } } : {}) };
}

export function planIntentStep(h: HydratedIntent, cmd: IntentCommand, env: StepEnv, prep: IntentPrep, jobs: IntentJobs): Plan<IntentResult> {
  const intent = h.row;
  const at = env.at;
  const inboxWrites: Write[] = cmd.kind === 'evidence' && cmd.inboxId ? [{ op: 'update', table: 'inbox', id: cmd.inboxId, set: { processed_at: at } }] : [];
  let event: PaymentIntentEvent;
  let tip = intent.tip_minor;
  const charge = prep.charge;
  let evidence: ProviderOutcome | undefined;

  switch (cmd.kind) {
    case 'confirm':
    case 'review': {
      if (cmd.kind === 'review' && (!h.review || h.review.id !== cmd.reviewId)) throw new ApiError('risk_review.resolution_conflict', 'This review is no longer pending.');
      const c = prep.charge;
      if (!c) throw new Error('confirm without its prepared charge');
      // A saved method charges its own customer: the intent takes it, or must already be that customer's.
      if (c.customerId && intent.customer_id && c.customerId !== intent.customer_id) {
        throw new ApiError('payment_intent.customer_mismatch', `The saved payment method belongs to customer ${c.customerId}, not to this intent's customer ${intent.customer_id}.`);
      }
      tip = c.tip;
      event = cmd.kind === 'confirm' ? { type: 'confirm', routed: !!c.route, risk: c.risk } : { type: cmd.decision === 'approve' ? 'review.approve' : 'review.reject' };
      break;
    }
    case 'capture':
      event = { type: 'capture' };
      break;
    case 'cancel':
      event = { type: 'cancel' };
      break;
    case 'evidence':
      // Evidence about an attempt that is no longer open changes nothing (a duplicate notice).
      if (!h.open || h.open.id !== cmd.attemptId) return noop(h, cmd, inboxWrites);
      evidence = cmd.outcome;
      event = evidenceEvent(cmd.outcome, cmd.source, intent.status, !!prep.retry, !!prep.dunningDueAt);
      break;
    case 'expire':
      event = { type: 'time.expire' };
      break;
    case 'dunning':
      // A timer no longer current (a duplicate firing, an intent no longer waiting) changes nothing:
      // it must not cancel a newer timer either (the timer runner marks the fired one by its due time).
      if (intent.status !== 'processing' || h.open || !prep.retry) return noop(h, cmd);
      event = { type: 'time.dunning' };
      break;
    case 'refund_settled':
      return planRefundSettled(h, cmd.attemptId, env, prep.refundedMinor ?? 0);
  }

  const step = machineStep<PaymentIntentEffect>(paymentIntentMachine, intent.status, { openAttempt: (h.open?.status as 'pending' | 'authorized' | 'requires_action' | undefined) ?? null, reviewPending: !!h.review }, event);
  const effects = step.effects;
  const rejected = effects.find((a) => a.type === 'reject') as Extract<PaymentIntentEffect, { type: 'reject' }> | undefined;
  if (rejected) throw new ApiError(rejected.params.code as ErrorCode, rejected.params.code === 'payment_intent.not_confirmable' ? `${rejected.params.message} This one is ${intent.status}.` : rejected.params.message);
  if (step.value === intent.status && effects.length === 0 && tip === intent.tip_minor) return noop(h, cmd, inboxWrites);

  const updated: IntentRow = { ...intent, status: step.value, tip_minor: tip, updated_at: at, version: intent.version + 1, customer_id: intent.customer_id ?? charge?.customerId ?? null };
  const writes: Write[] = [...inboxWrites];
  const timers: TimerWrite[] = [];
  const events: PlannedEvent[] = [];
  const ledger: EntryInput[] = [];
  const after: JobRequest[] = [];
  let attempts = [...h.attempts];
  let open = h.open;
  let review: Record<string, unknown> | undefined;
  const capturing = effects.some((a) => a.type === 'postCapture');

  const newAttempt = (connector: string, method: string, token: string | null, route?: RouteChoice) => {
    const id = env.newId();
    // Where a 3-D Secure page sends the shopper back: this confirm's, else the one the attempt retried or the review held.
    const returnUrl = cmd.kind === 'confirm' ? cmd.body.return_url ?? null : cmd.kind === 'review' ? ((h.review?.request?.return_url as string | undefined) ?? null) : (h.open?.return_url ?? null);
    const a: AttemptRow = {
      id,
      tenant_id: intent.tenant_id,
      livemode: intent.livemode,
      payment_intent_id: intent.id,
      status: 'pending',
      connector_key: connector,
      method,
      amount_minor: intent.amount_minor + updated.tip_minor,
      currency: intent.currency,
      payment_token: token,
      provider_ref: null,
      provider_key: providerKeyFor(id),
      failure_code: null,
      failure_message: null,
      decline: null,
      capture_requested_at: null,
      fee_minor: null,
      return_url: returnUrl,
      created_at: at,
      updated_at: at,
    };
    writes.push({
      op: 'insert',
      table: 'attempts',
      row: {
        id, tenant_id: a.tenant_id, livemode: a.livemode, payment_intent_id: a.payment_intent_id, status: 'pending', connector_key: connector, method,
        amount_minor: a.amount_minor, currency: a.currency, payment_token: token, provider_key: a.provider_key, return_url: returnUrl, created_at: at, updated_at: at,
      },
    });
    if (route?.decision) {
      writes.push({ op: 'insert', table: 'routing_decisions', row: { id, tenant_id: a.tenant_id, livemode: a.livemode, payment_intent_id: intent.id, ...route.decision, candidates: route.decision.candidates as never, created_at: at } });
    }
    attempts.push(a);
    open = a;
    updated.last_error = null;
    updated.next_action = null;
    after.push(jobs.execute(intent.id, id));
  };

  for (const a of effects) {
    switch (a.type) {
      case 'openAttempt':
        if (!charge?.route) throw new ApiError('payment_intent.no_route');
        newAttempt(charge.route.connector, charge.method, charge.token ?? null, charge.route);
        break;
      case 'openRetryAttempt': {
        // The declined attempt was written just above (the one-open-attempt index needs that order).
        const declined = attempts.find((x) => x.id === h.open?.id) ?? attempts[attempts.length - 1];
        if (!prep.retry || !declined) throw new Error('retry without a next connector');
        newAttempt(prep.retry.connector, declined.method, prep.retryToken ?? h.open?.payment_token ?? null, prep.retry);
        break;
      }
      case 'openReview': {
        const reviewId = env.newId();
        writes.push({
          op: 'insert',
          table: 'risk_reviews',
          row: {
            id: reviewId, tenant_id: intent.tenant_id, livemode: intent.livemode, payment_intent_id: intent.id, rule_id: charge!.ruleId!, status: 'pending',
            request: { payment_method: charge!.method, payment_token: charge!.token ?? null, tip_minor: cmd.kind === 'confirm' ? cmd.body.tip_minor ?? null : null, return_url: cmd.kind === 'confirm' ? cmd.body.return_url ?? null : null },
            created_at: at,
          },
        });
        review = { id: reviewId, object: 'risk_review', status: 'pending', payment_intent_id: intent.id, rule_id: charge!.ruleId, livemode: intent.livemode, created_at: at.toISOString() };
        updated.tip_minor = intent.tip_minor; // the tip applies when the review is approved
        break;
      }
      case 'resolveReview':
        writes.push({ op: 'update', table: 'risk_reviews', id: h.review!.id, set: { status: a.params.decision, resolved_at: at, request: null } });
        break;
      case 'attempt': {
        if (!open) break;
        const as = machineStep<AttemptEffect>(attemptMachine, open.status, undefined, { type: a.params.event });
        const merged: AttemptRow = { ...open, status: as.value, updated_at: at };
        if (evidence && 'providerRef' in evidence && evidence.providerRef) merged.provider_ref = evidence.providerRef;
        if (evidence && (evidence.kind === 'hard_decline' || evidence.kind === 'soft_decline')) {
          merged.failure_code = evidence.code;
          merged.failure_message = evidence.message;
          merged.decline = evidence.kind === 'hard_decline' ? 'hard' : 'soft';
        }
        if (a.params.event === 'capture_requested') merged.capture_requested_at = at;
        // The connector's fee is written with the capture, in the same update.
        if (capturing) merged.fee_minor = prep.feeMinor ?? 0;
        // The token is kept only while the attempt may still need it.
        if (merged.status !== 'pending' && merged.status !== 'authorized') merged.payment_token = null;
        writes.push({
          op: 'update',
          table: 'attempts',
          id: open.id,
          set: {
            status: merged.status, provider_ref: merged.provider_ref, failure_code: merged.failure_code, failure_message: merged.failure_message,
            decline: merged.decline, capture_requested_at: merged.capture_requested_at, fee_minor: merged.fee_minor, payment_token: merged.payment_token, updated_at: at,
          },
        });
        const openId = open.id;
        // The routing decision learns the first answer of its attempt (scores: authorization rate, latency).
        if (evidence && open.status === 'pending') {
          writes.push({ op: 'update', table: 'routing_decisions', id: openId, set: { outcome: evidence.kind, latency_ms: Math.max(0, at.getTime() - new Date(open.created_at).getTime()), answered_at: at } });
        }
        attempts = attempts.map((x) => (x.id === openId ? merged : x));
        open = merged;
        for (const act of as.effects) {
          if (act.type === 'requestCapture') after.push(jobs.capture(intent.id, openId));
          if (act.type === 'requestVoid') after.push(jobs.void(intent.id, openId));
        }
        break;
      }
      case 'emit':
        events.push({ type: a.params.event, data: undefined });
        break;
      case 'postCapture':
        break; // below: the ledger entry needs the attempt's fee, written by 'attempt'
      case 'scheduleExpiry':
        if (evidence?.kind === 'action_required' && evidence.expiresAt) timers.push({ kind: EXPIRE_TIMER, entityId: intent.id, dueAt: new Date(evidence.expiresAt) });
        break;
      case 'cancelExpiry':
        timers.push({ kind: EXPIRE_TIMER, entityId: intent.id, cancel: true });
        break;
      case 'scheduleDunning':
        if (prep.dunningDueAt) timers.push({ kind: DUNNING_TIMER, entityId: intent.id, dueAt: prep.dunningDueAt });
        break;
      case 'cancelDunning':
        timers.push({ kind: DUNNING_TIMER, entityId: intent.id, cancel: true });
        break;
      case 'setNextAction':
        if (evidence?.kind === 'action_required') updated.next_action = evidence.nextAction;
        break;
      case 'clearNextAction':
        updated.next_action = null;
        break;
      case 'recordError':
        if (evidence && (evidence.kind === 'hard_decline' || evidence.kind === 'soft_decline')) {
          updated.last_error = { code: evidence.code, message: evidence.message, decline: evidence.kind };
        }
        break;
      case 'reject':
        break;
    }
  }
  // The timer that fired is done with, in the same transaction.
  if (cmd.kind === 'expire') timers.push({ kind: EXPIRE_TIMER, entityId: intent.id, cancel: true });
  if (cmd.kind === 'dunning') timers.push({ kind: DUNNING_TIMER, entityId: intent.id, cancel: true });

  if (capturing && open) {
    ledger.push({
      tenantId: intent.tenant_id,
      livemode: intent.livemode,
      kind: 'charge.captured',
      refType: 'attempt',
      refId: open.id,
      memo: `capture of payment intent ${intent.id}`,
      lines: captureLines(open.connector_key, intent.currency, intent.amount_minor, updated.tip_minor, open.fee_minor ?? 0),
    });
    // A dispute the provider reports with the charge is opened in the same transaction.
    if (evidence?.kind === 'captured' && evidence.dispute) {
      const disputeId = env.newId();
      writes.push({
        op: 'insert',
        table: 'disputes',
        row: {
          id: disputeId, tenant_id: intent.tenant_id, livemode: intent.livemode, payment_intent_id: intent.id, attempt_id: open.id,
          amount_minor: open.amount_minor, currency: open.currency, reason: evidence.dispute.reason, status: 'needs_response',
          evidence_due_by: new Date(env.now.getTime() + EVIDENCE_WINDOW_MS),
        },
      });
      ledger.push({
        tenantId: intent.tenant_id,
        livemode: intent.livemode,
        kind: 'dispute.opened',
        refType: 'dispute',
        refId: disputeId,
        memo: `dispute of attempt ${open.id}`,
        lines: [
          { account: accounts.disputedFunds, currency: open.currency, amountMinor: open.amount_minor },
          { account: accounts.connectorReceivable(open.connector_key), currency: open.currency, amountMinor: -open.amount_minor },
        ],
      });
    }
  }
  const data = intentEventData(updated);
  for (const e of events) e.data = data;

  const result: IntentResult = { intent: updated, attempts, review };
  return {
    set: { status: updated.status, tip_minor: updated.tip_minor, next_action: updated.next_action, last_error: updated.last_error, customer_id: updated.customer_id, updated_at: at },
    writes,
    history: {
      event: event.type,
      data: { attempt_id: open?.id ?? null, outcome: evidence ?? null, rule_id: charge?.ruleId ?? null, source: cmd.kind === 'evidence' ? cmd.source : null },
    },
    events,
    ledger,
    timers,
    jobs: after,
    response: { status: 200, body: responseFor(cmd, result) },
    result,
  };
}

/** An attempt's refunds succeeded: its status follows what they add up to (attempt machine: refunded). */
function planRefundSettled(h: HydratedIntent, attemptId: string, env: StepEnv, refundedMinor: number): Plan<IntentResult> {
  const attempt = h.attempts.find((a) => a.id === attemptId);
  const result: IntentResult = { intent: h.row, attempts: h.attempts };
  if (!attempt || refundedMinor <= 0) return { result };
  const next = machineStep(attemptMachine, attempt.status, undefined, { type: 'refunded', full: refundedMinor >= attempt.amount_minor }).value;
  if (next === attempt.status) return { result };
  const merged = { ...attempt, status: next, updated_at: env.at };
  return {
    set: { updated_at: env.at },
    writes: [{ op: 'update', table: 'attempts', id: attempt.id, set: { status: next, updated_at: env.at } }],
    history: { event: 'attempt.refunded', data: { attempt_id: attempt.id, refunded_minor: refundedMinor, attempt_status: next } },
    result: { intent: { ...h.row, updated_at: env.at, version: h.row.version + 1 }, attempts: h.attempts.map((a) => (a.id === attempt.id ? merged : a)) },
  };
}
