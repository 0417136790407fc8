// The payment intent's step as a pure plan: from the hydrated intent (with its attempts and
// pending review), a command, the step's environment and what `prepare` read or asked outside the
// transaction, the rows, events, ledger entries, timers and jobs of the transition. No I/O: the
// entity actor (kernel/entity.ts) commits the plan in one fenced transaction. Tested without a
// database in test/plans.test.ts.
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
/** The intent a job is about: its id and its tenant and mode (the worker reads it scoped: one shard under Citus, docs/scaling.md). */
export type IntentRef = Pick<IntentRow, 'id' | 'tenant_id' | 'livemode'>;

export interface IntentJobs {
  execute(intent: IntentRef, attemptId: string): JobRequest;
  capture(intent: IntentRef, attemptId: string): JobRequest;
  void(intent: IntentRef, attemptId: string): JobRequest;
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

/** The notice an evidence command consumed is marked processed in the same transaction, whatever the step does. */
const inboxWrites = (cmd: IntentCommand, at: Date): Write[] =>
  cmd.kind === 'evidence' && cmd.inboxId ? [{ op: 'update', table: 'inbox', id: cmd.inboxId, set: { processed_at: at } }] : [];

/**
 * How a command starts its step: the machine event it sends, with the tip the intent takes and the
 * provider's evidence it brings, or a finished plan (a no-op, or a step that needs no machine event).
 */
type Start = { event: PaymentIntentEvent; tip: number; evidence?: ProviderOutcome } | { plan: Plan<IntentResult> };
type Starter<K extends IntentCommand['kind']> = (h: HydratedIntent, cmd: Extract<IntentCommand, { kind: K }>, env: StepEnv, prep: IntentPrep) => Start;

/** confirm, and an operator's decision on a risk review: the charge `prepare` made ready. */
const startCharge = (h: HydratedIntent, cmd: Extract<IntentCommand, { kind: 'confirm' | 'review' }>, _env: StepEnv, prep: IntentPrep): Start => {
  const intent = h.row;
  if (cmd.kind === 'review' && (!h.review || h.review.id !== cmd.reviewId)) throw new ApiError('risk_review.resolution_conflict', 'This review is no longer pending.');
  const c = prep.charge;
  if (!c) throw new Error('confirm without its prepared charge');
  // A saved method charges its own customer: the intent takes it, or must already be that customer's.
  if (c.customerId && intent.customer_id && c.customerId !== intent.customer_id) {
    throw new ApiError('payment_intent.customer_mismatch', `The saved payment method belongs to customer ${c.customerId}, not to this intent's customer ${intent.customer_id}.`);
  }
  const event: PaymentIntentEvent = cmd.kind === 'confirm' ? { type: 'confirm', routed: !!c.route, risk: c.risk } : { type: cmd.decision === 'approve' ? 'review.approve' : 'review.reject' };
  return { event, tip: c.tip };
};

const START: { [K in IntentCommand['kind']]: Starter<K> } = {
  confirm: startCharge,
  review: startCharge,
  capture: (h) => ({ event: { type: 'capture' }, tip: h.row.tip_minor }),
  cancel: (h) => ({ event: { type: 'cancel' }, tip: h.row.tip_minor }),
  evidence: (h, cmd, env, prep) =>
    // Evidence about an attempt that is no longer open changes nothing (a duplicate notice).
    !h.open || h.open.id !== cmd.attemptId
      ? { plan: noop(h, cmd, inboxWrites(cmd, env.at)) }
      : { event: evidenceEvent(cmd.outcome, cmd.source, h.row.status, !!prep.retry, !!prep.dunningDueAt), tip: h.row.tip_minor, evidence: cmd.outcome },
  expire: (h) => ({ event: { type: 'time.expire' }, tip: h.row.tip_minor }),
  // A timer no longer current (a duplicate firing, an intent no longer waiting) changes nothing:
  // it must not cancel a newer timer either (the timer runner marks the fired one by its due time).
  dunning: (h, cmd, _env, prep) => (h.row.status !== 'processing' || h.open || !prep.retry ? { plan: noop(h, cmd) } : { event: { type: 'time.dunning' }, tip: h.row.tip_minor }),
  refund_settled: (h, cmd, env, prep) => ({ plan: planRefundSettled(h, cmd.attemptId, env, prep.refundedMinor ?? 0) }),
};

/** The payment intent's step: the command's start (START), then the machine's effects (planTransition). */
export function planIntentStep(h: HydratedIntent, cmd: IntentCommand, env: StepEnv, prep: IntentPrep, jobs: IntentJobs): Plan<IntentResult> {
  const start = (START[cmd.kind] as Starter<IntentCommand['kind']>)(h, cmd, env, prep);
  return 'plan' in start ? start.plan : planTransition(h, cmd, env, prep, jobs, start);
}

/** The transition being planned: what the machine's effects add up to. */
/** Signal (reactions only, never a webhook) of the step that makes an intent succeed: which attempt did, and its method. */
export const SUCCEEDED_BY = 'payment_intent.succeeded_by';
export interface SucceededBy {
  attempt_id: string;
  method: string;
}

interface Draft {
  readonly h: HydratedIntent;
  readonly cmd: IntentCommand;
  readonly env: StepEnv;
  readonly prep: IntentPrep;
  readonly jobs: IntentJobs;
  readonly evidence?: ProviderOutcome;
  /** The intent as it will be. */
  readonly updated: IntentRow;
  readonly writes: Write[];
  readonly timers: TimerWrite[];
  readonly events: PlannedEvent[];
  readonly ledger: EntryInput[];
  readonly after: JobRequest[];
  attempts: AttemptRow[];
  /** The open attempt as it will be. */
  open: AttemptRow | undefined;
  review?: Record<string, unknown>;
  /** The step captures: the attempt's fee is written with it, and the capture's ledger entry follows. */
  readonly capturing: boolean;
}

function planTransition(h: HydratedIntent, cmd: IntentCommand, env: StepEnv, prep: IntentPrep, jobs: IntentJobs, start: { event: PaymentIntentEvent; tip: number; evidence?: ProviderOutcome }): Plan<IntentResult> {
  const intent = h.row;
  const at = env.at;
  const { event, tip, evidence } = start;
  const step = machineStep<PaymentIntentEffect>(paymentIntentMachine, intent.status, { openAttempt: (h.open?.status as 'pending' | 'authorized' | 'requires_action' | undefined) ?? null, reviewPending: !!h.review }, event);
  const effects = step.effects;
  const rejected = effects.find((a) => a.type === 'reject') as Extract<PaymentIntentEffect, { type: 'reject' }> | undefined;
  if (rejected) throw new ApiError(rejected.params.code as ErrorCode, rejected.params.code === 'payment_intent.not_confirmable' ? `${rejected.params.message} This one is ${intent.status}.` : rejected.params.message);
  if (step.value === intent.status && effects.length === 0 && tip === intent.tip_minor) return noop(h, cmd, inboxWrites(cmd, at));

  const d: Draft = {
    h, cmd, env, prep, jobs, evidence,
    updated: { ...intent, status: step.value, tip_minor: tip, updated_at: at, version: intent.version + 1, customer_id: intent.customer_id ?? prep.charge?.customerId ?? null },
    writes: inboxWrites(cmd, at),
    timers: [],
    events: [],
    ledger: [],
    after: [],
    attempts: [...h.attempts],
    open: h.open,
    capturing: effects.some((a) => a.type === 'postCapture'),
  };
  for (const a of effects) (EFFECTS[a.type] as ((d: Draft, a: PaymentIntentEffect) => void) | undefined)?.(d, a);
  // The timer that fired is done with, in the same transaction.
  if (cmd.kind === 'expire') d.timers.push({ kind: EXPIRE_TIMER, entityId: intent.id, cancel: true });
  if (cmd.kind === 'dunning') d.timers.push({ kind: DUNNING_TIMER, entityId: intent.id, cancel: true });
  if (d.capturing && d.open) captureEntries(d, d.open);

  const { updated, open } = d;
  const data = intentEventData(updated);
  for (const e of d.events) e.data = data;
  // Internal, beside the public event: the attempt that made the intent succeed, with its method,
  // so that a reaction concerned with one method (the bank statements' late evidence: SPEI) needs
  // no read inside the transaction to learn it (issue 26: one statement and one round trip less in
  // every card payment's evidence step).
  const signals = d.open && d.events.some((e) => e.type === 'payment_intent.succeeded')
    ? [{ type: SUCCEEDED_BY, data: { attempt_id: d.open.id, method: d.open.method } satisfies SucceededBy }]
    : undefined;
  const result: IntentResult = { intent: updated, attempts: d.attempts, review: d.review };
  return {
    set: { status: updated.status, tip_minor: updated.tip_minor, next_action: updated.next_action, last_error: updated.last_error, customer_id: updated.customer_id, updated_at: at },
    writes: d.writes,
    history: {
      event: event.type,
      data: { attempt_id: open?.id ?? null, outcome: evidence ?? null, rule_id: prep.charge?.ruleId ?? null, source: cmd.kind === 'evidence' ? cmd.source : null },
    },
    events: d.events,
    ...(signals ? { signals } : {}),
    ledger: d.ledger,
    timers: d.timers,
    jobs: d.after,
    response: { status: 200, body: responseFor(cmd, result) },
    result,
  };
}

/** What each of the machine's effects adds to the plan ('postCapture': captureEntries, after the attempt's fee is known; 'reject': thrown above). */
const EFFECTS: { [T in PaymentIntentEffect['type']]?: (d: Draft, a: Extract<PaymentIntentEffect, { type: T }>) => void } = {
  openAttempt(d) {
    const charge = d.prep.charge;
    if (!charge?.route) throw new ApiError('payment_intent.no_route');
    newAttempt(d, charge.route.connector, charge.method, charge.token ?? null, charge.route);
  },
  openRetryAttempt(d) {
    // The declined attempt was written just above (the one-open-attempt index needs that order).
    const declined = d.attempts.find((x) => x.id === d.h.open?.id) ?? d.attempts[d.attempts.length - 1];
    if (!d.prep.retry || !declined) throw new Error('retry without a next connector');
    newAttempt(d, d.prep.retry.connector, declined.method, d.prep.retryToken ?? d.h.open?.payment_token ?? null, d.prep.retry);
  },
  openReview(d) {
    const { h, cmd, env, updated } = d;
    const intent = h.row;
    const charge = d.prep.charge!;
    const reviewId = env.newId();
    d.writes.push({
      op: 'insert',
      table: 'risk_reviews',
      row: {
        id: reviewId, tenant_id: intent.tenant_id, livemode: intent.livemode, payment_intent_id: intent.id, rule_id: charge.ruleId!, status: 'pending',
        request: { payment_method: charge.method, payment_token: charge.token ?? null, tip_minor: cmd.kind === 'confirm' ? cmd.body.tip_minor ?? null : null, return_url: cmd.kind === 'confirm' ? cmd.body.return_url ?? null : null, payer_ip: cmd.kind === 'confirm' ? cmd.body.payer_ip ?? null : null },
        created_at: env.at,
      },
    });
    d.review = { id: reviewId, object: 'risk_review', status: 'pending', payment_intent_id: intent.id, rule_id: charge.ruleId, livemode: intent.livemode, created_at: env.at.toISOString() };
    updated.tip_minor = intent.tip_minor; // the tip applies when the review is approved
  },
  resolveReview(d, a) {
    d.writes.push({ op: 'update', table: 'risk_reviews', id: d.h.review!.id, set: { status: a.params.decision, resolved_at: d.env.at, request: null } });
  },
  attempt(d, a) {
    if (d.open) advanceAttempt(d, d.open, a.params.event);
  },
  emit(d, a) {
    d.events.push({ type: a.params.event, data: undefined });
  },
  scheduleExpiry(d) {
    if (d.evidence?.kind === 'action_required' && d.evidence.expiresAt) d.timers.push({ kind: EXPIRE_TIMER, entityId: d.h.row.id, dueAt: new Date(d.evidence.expiresAt) });
  },
  cancelExpiry(d) {
    d.timers.push({ kind: EXPIRE_TIMER, entityId: d.h.row.id, cancel: true });
  },
  scheduleDunning(d) {
    if (d.prep.dunningDueAt) d.timers.push({ kind: DUNNING_TIMER, entityId: d.h.row.id, dueAt: d.prep.dunningDueAt });
  },
  cancelDunning(d) {
    d.timers.push({ kind: DUNNING_TIMER, entityId: d.h.row.id, cancel: true });
  },
  setNextAction(d) {
    if (d.evidence?.kind === 'action_required') d.updated.next_action = d.evidence.nextAction;
  },
  clearNextAction(d) {
    d.updated.next_action = null;
  },
  recordError(d) {
    const e = d.evidence;
    if (e && (e.kind === 'hard_decline' || e.kind === 'soft_decline')) d.updated.last_error = { code: e.code, message: e.message, decline: e.kind };
  },
};

/** A new attempt on `connector` (with its routing decision), the intent's open attempt from now on; its execution is a job after commit. */
function newAttempt(d: Draft, connector: string, method: string, token: string | null, route?: RouteChoice) {
  const { h, cmd, env, updated } = d;
  const intent = h.row;
  const at = env.at;
  const id = env.newId();
  // Where a 3-D Secure page sends the shopper back: this confirm's, else the one the attempt retried or the review held.
  const returnUrl = cmd.kind === 'confirm' ? cmd.body.return_url ?? null : cmd.kind === 'review' ? ((h.review?.request?.return_url as string | undefined) ?? null) : (h.open?.return_url ?? null);
  const payerIp = cmd.kind === 'confirm' ? cmd.body.payer_ip ?? null : cmd.kind === 'review' ? ((h.review?.request?.payer_ip as string | undefined) ?? null) : (h.open?.payer_ip ?? null);
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
    payer_ip: payerIp,
    created_at: at,
    updated_at: at,
  };
  d.writes.push({
    op: 'insert',
    table: 'attempts',
    row: {
      id, tenant_id: a.tenant_id, livemode: a.livemode, payment_intent_id: a.payment_intent_id, status: 'pending', connector_key: connector, method,
      amount_minor: a.amount_minor, currency: a.currency, payment_token: token, provider_key: a.provider_key, return_url: returnUrl, payer_ip: payerIp, created_at: at, updated_at: at,
    },
  });
  if (route?.decision) {
    d.writes.push({ op: 'insert', table: 'routing_decisions', row: { id, tenant_id: a.tenant_id, livemode: a.livemode, payment_intent_id: intent.id, ...route.decision, candidates: route.decision.candidates as never, created_at: at } });
  }
  d.attempts.push(a);
  d.open = a;
  updated.last_error = null;
  updated.next_action = null;
  d.after.push(d.jobs.execute(intent, id));
}

/** The open attempt's own step (attempt machine), with what the evidence says of it; capture and void are jobs after commit. */
function advanceAttempt(d: Draft, open: AttemptRow, event: Extract<PaymentIntentEffect, { type: 'attempt' }>['params']['event']) {
  const { evidence, env } = d;
  const at = env.at;
  const intentId = d.h.row.id;
  const as = machineStep<AttemptEffect>(attemptMachine, open.status, undefined, { type: event });
  const merged: AttemptRow = { ...open, status: as.value, updated_at: at };
  if (evidence && 'providerRef' in evidence && evidence.providerRef) merged.provider_ref = evidence.providerRef;
  // A SPEI instruction's referencia numérica (drawn by the actor) stays with its attempt: the bank line that carries it matches it.
  const refNum = evidence?.kind === 'action_required' && evidence.nextAction.type === 'bank_transfer' ? evidence.nextAction.referencia_numerica : undefined;
  if (refNum !== undefined && !merged.referencia_numerica) merged.referencia_numerica = refNum;
  if (evidence && (evidence.kind === 'hard_decline' || evidence.kind === 'soft_decline')) {
    merged.failure_code = evidence.code;
    merged.failure_message = evidence.message;
    merged.decline = evidence.kind === 'hard_decline' ? 'hard' : 'soft';
  }
  if (event === 'capture_requested') merged.capture_requested_at = at;
  // The connector's fee is written with the capture, in the same update.
  if (d.capturing) merged.fee_minor = d.prep.feeMinor ?? 0;
  // The token is kept only while the attempt may still need it.
  if (merged.status !== 'pending' && merged.status !== 'authorized') merged.payment_token = null;
  d.writes.push({
    op: 'update',
    table: 'attempts',
    id: open.id,
    set: {
      status: merged.status, provider_ref: merged.provider_ref, failure_code: merged.failure_code, failure_message: merged.failure_message,
      decline: merged.decline, capture_requested_at: merged.capture_requested_at, fee_minor: merged.fee_minor, payment_token: merged.payment_token, updated_at: at,
      ...(merged.referencia_numerica !== open.referencia_numerica && merged.referencia_numerica ? { referencia_numerica: merged.referencia_numerica } : {}),
    },
  });
  // The routing decision learns the first answer of its attempt (scores: authorization rate, latency).
  if (evidence && open.status === 'pending') {
    d.writes.push({ op: 'update', table: 'routing_decisions', id: open.id, set: { outcome: evidence.kind, latency_ms: Math.max(0, at.getTime() - new Date(open.created_at).getTime()), answered_at: at } });
  }
  d.attempts = d.attempts.map((x) => (x.id === open.id ? merged : x));
  d.open = merged;
  for (const act of as.effects) {
    if (act.type === 'requestCapture') d.after.push(d.jobs.capture(d.h.row, open.id));
    if (act.type === 'requestVoid') d.after.push(d.jobs.void(d.h.row, open.id));
  }
}

/** The capture's ledger entry and, when the provider reports a dispute with the charge, the dispute opened in the same transaction. */
function captureEntries(d: Draft, open: AttemptRow) {
  const intent = d.h.row;
  d.ledger.push({
    tenantId: intent.tenant_id,
    livemode: intent.livemode,
    kind: 'charge.captured',
    refType: 'attempt',
    refId: open.id,
    memo: `capture of payment intent ${intent.id}`,
    lines: captureLines(open.connector_key, intent.currency, intent.amount_minor, d.updated.tip_minor, open.fee_minor ?? 0),
  });
  const evidence = d.evidence;
  if (evidence?.kind !== 'captured' || !evidence.dispute) return;
  const disputeId = d.env.newId();
  d.writes.push({
    op: 'insert',
    table: 'disputes',
    row: {
      id: disputeId, tenant_id: intent.tenant_id, livemode: intent.livemode, payment_intent_id: intent.id, attempt_id: open.id,
      amount_minor: open.amount_minor, currency: open.currency, reason: evidence.dispute.reason, status: 'needs_response',
      evidence_due_by: new Date(d.env.now.getTime() + EVIDENCE_WINDOW_MS),
    },
  });
  d.ledger.push({
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
