// Unit tests of the pure payment intent machine (machines/payment-intent.ts) against
// service-spec.md "States and transitions > payment_intent". No database, no network: every case
// resolves a persisted (state, context) pair and asks xstate's pure transition() for the next state
// and the named effects the actor layer would perform.
import t from 'tap';
import { createActor, initialTransition, transition } from 'xstate';
import {
  PAYMENT_INTENT_STATES,
  paymentIntentMachine,
  type PaymentIntentContext,
  type PaymentIntentEvent,
  type PaymentIntentStatus,
} from '../../machines/payment-intent.js';
import { attemptMachine } from '../../machines/attempt.js';

type Ctx = PaymentIntentContext;
type Effect = { type: string; params?: Record<string, unknown> };

const ctx = (over: Partial<Ctx> = {}): Ctx => ({ openAttempt: null, reviewPending: false, ...over });

function run(from: PaymentIntentStatus, over: Partial<Ctx>, event: PaymentIntentEvent) {
  const snapshot = paymentIntentMachine.resolveState({ value: from, context: ctx(over) });
  const [next, actions] = transition(paymentIntentMachine, snapshot, event);
  const effects: Effect[] = actions.map((a) => ({ type: a.type, params: a.params as Record<string, unknown> | undefined }));
  const paramOf = (type: string, key: string) => effects.filter((e) => e.type === type).map((e) => e.params?.[key]);
  return {
    state: next.value as string,
    context: next.context,
    status: next.status,
    effects,
    types: effects.map((e) => e.type),
    emits: paramOf('emit', 'event') as string[],
    rejects: paramOf('reject', 'code') as string[],
    messages: paramOf('reject', 'message') as string[],
    attempt: paramOf('attempt', 'event') as string[],
    decisions: paramOf('resolveReview', 'decision') as string[],
  };
}

// ---- the event and context universe --------------------------------------------------------------

const CONFIRMS: PaymentIntentEvent[] = [];
for (const routed of [true, false]) for (const risk of ['allow', 'block', 'review'] as const) CONFIRMS.push({ type: 'confirm', routed, risk });

const ALL_EVENTS: PaymentIntentEvent[] = [
  ...CONFIRMS,
  { type: 'review.approve' },
  { type: 'review.reject' },
  { type: 'evidence.captured' },
  { type: 'evidence.authorized' },
  { type: 'evidence.action_required', expires: true },
  { type: 'evidence.action_required', expires: false },
  { type: 'evidence.hard_decline' },
  { type: 'evidence.soft_decline', retry: false },
  { type: 'evidence.soft_decline', retry: true },
  { type: 'evidence.soft_decline', retry: false, dunning: true },
  { type: 'evidence.incoming_payment' },
  { type: 'time.dunning' },
  { type: 'time.expire' },
  { type: 'capture' },
  { type: 'cancel' },
];

const OPEN_ATTEMPTS: Ctx['openAttempt'][] = [null, 'pending', 'authorized', 'requires_action'];
const ALL_CONTEXTS: Ctx[] = [];
for (const openAttempt of OPEN_ATTEMPTS)
  for (const reviewPending of [false, true]) ALL_CONTEXTS.push({ openAttempt, reviewPending });

const TERMINAL: PaymentIntentStatus[] = ['succeeded', 'failed', 'expired', 'canceled'];
const CONFIRMABLE: PaymentIntentStatus[] = ['requires_payment_method', 'requires_confirmation'];
const CATALOG = ['payment_intent.succeeded', 'payment_intent.requires_action', 'payment_intent.failed', 'payment_intent.expired', 'payment_intent.canceled'];
const EFFECT_TYPES = new Set(['reject', 'openAttempt', 'openRetryAttempt', 'openReview', 'resolveReview', 'attempt', 'emit', 'postCapture', 'scheduleExpiry', 'cancelExpiry', 'setNextAction', 'clearNextAction', 'recordError', 'scheduleDunning', 'cancelDunning']);
const REJECT_CODES = new Set(['payment_intent.not_confirmable', 'payment_intent.no_route', 'payment_intent.blocked_by_risk', 'attempt.not_capturable', 'payment_intent.cancel_conflict']);

const label = (e: PaymentIntentEvent) =>
  e.type === 'confirm' ? `confirm(routed=${e.routed},risk=${e.risk})` : e.type === 'evidence.action_required' ? `${e.type}(expires=${e.expires})` : e.type === 'evidence.soft_decline' ? `${e.type}(retry=${e.retry}${e.dunning ? ',dunning' : ''})` : e.type;
const ctxLabel = (c: Ctx) => `{open=${c.openAttempt},review=${c.reviewPending}}`;

// Typical persisted contexts per state.
const FRESH = ctx();
const REVIEWING = ctx({ reviewPending: true });
const PENDING = ctx({ openAttempt: 'pending' });
const AUTHORIZED = ctx({ openAttempt: 'authorized' });
const ACTION = ctx({ openAttempt: 'requires_action' });
const SETTLED = ctx();

// ---- the initial state -------------------------------------------------------------------------

t.test('spec row "(none) | create": the initial state is requires_payment_method, with no effect and no event', async (t) => {
  const [snapshot, actions] = initialTransition(paymentIntentMachine, {});
  t.equal(snapshot.value, 'requires_payment_method');
  t.equal(snapshot.status, 'active');
  t.same(snapshot.context, { openAttempt: null, reviewPending: false });
  t.same(actions, [], 'creation is not dispatched: no emit, no effect at all');

  // The same through an actor that is never started (nothing runs).
  t.equal(createActor(paymentIntentMachine, { input: {} }).getSnapshot().value, 'requires_payment_method');

  const [withInput, inputActions] = initialTransition(paymentIntentMachine, { reviewPending: true });
  t.equal(withInput.value, 'requires_payment_method');
  t.same(withInput.context, { openAttempt: null, reviewPending: true }, 'input overrides the context defaults');
  t.same(inputActions, []);
});

t.test('the machine declares exactly the spec states', async (t) => {
  t.same([...PAYMENT_INTENT_STATES].sort(), ['canceled', 'expired', 'failed', 'processing', 'requires_action', 'requires_confirmation', 'requires_payment_method', 'succeeded']);
  t.same(Object.keys(paymentIntentMachine.states).sort(), [...PAYMENT_INTENT_STATES].sort());
});

// ---- every row of the spec table, with the exact effects -------------------------------------------

interface Row {
  why: string;
  from: PaymentIntentStatus;
  ctx: Ctx;
  event: PaymentIntentEvent;
  to: PaymentIntentStatus;
  effects: string[];
  emit?: string;
  reject?: string;
  attempt?: string;
  decision?: 'approved' | 'rejected';
}

const confirm = (routed = true, risk: 'allow' | 'block' | 'review' = 'allow'): PaymentIntentEvent => ({ type: 'confirm', routed, risk });

const ROWS: Row[] = [
  // requires_payment_method | confirm
  { why: 'route + no risk rule -> processing, attempt opened, no event', from: 'requires_payment_method', ctx: FRESH, event: confirm(), to: 'processing', effects: ['openAttempt'] },
  { why: 'no route', from: 'requires_payment_method', ctx: FRESH, event: confirm(false), to: 'requires_payment_method', effects: ['reject'], reject: 'payment_intent.no_route' },
  { why: 'no route beats a blocking rule', from: 'requires_payment_method', ctx: FRESH, event: confirm(false, 'block'), to: 'requires_payment_method', effects: ['reject'], reject: 'payment_intent.no_route' },
  { why: 'no route beats a review rule', from: 'requires_payment_method', ctx: FRESH, event: confirm(false, 'review'), to: 'requires_payment_method', effects: ['reject'], reject: 'payment_intent.no_route' },
  { why: 'blocking risk rule: rejected, no attempt', from: 'requires_payment_method', ctx: FRESH, event: confirm(true, 'block'), to: 'requires_payment_method', effects: ['reject'], reject: 'payment_intent.blocked_by_risk' },
  { why: 'review risk rule: waits for the operator', from: 'requires_payment_method', ctx: FRESH, event: confirm(true, 'review'), to: 'requires_confirmation', effects: ['openReview'] },
  // requires_payment_method | cancel, capture
  { why: 'cancel', from: 'requires_payment_method', ctx: FRESH, event: { type: 'cancel' }, to: 'canceled', effects: ['emit'], emit: 'payment_intent.canceled' },
  { why: 'capture without an authorized attempt', from: 'requires_payment_method', ctx: FRESH, event: { type: 'capture' }, to: 'requires_payment_method', effects: ['reject'], reject: 'attempt.not_capturable' },
  { why: 'review decisions without a review are ignored', from: 'requires_payment_method', ctx: FRESH, event: { type: 'review.approve' }, to: 'requires_payment_method', effects: [] },
  { why: 'review decisions without a review are ignored', from: 'requires_payment_method', ctx: FRESH, event: { type: 'review.reject' }, to: 'requires_payment_method', effects: [] },

  // requires_confirmation | confirm
  { why: 'no pending review: route + allow -> processing', from: 'requires_confirmation', ctx: FRESH, event: confirm(), to: 'processing', effects: ['openAttempt'] },
  { why: 'no pending review: no route', from: 'requires_confirmation', ctx: FRESH, event: confirm(false), to: 'requires_confirmation', effects: ['reject'], reject: 'payment_intent.no_route' },
  { why: 'no pending review: blocking rule', from: 'requires_confirmation', ctx: FRESH, event: confirm(true, 'block'), to: 'requires_confirmation', effects: ['reject'], reject: 'payment_intent.blocked_by_risk' },
  { why: 'no pending review: review rule opens a review', from: 'requires_confirmation', ctx: FRESH, event: confirm(true, 'review'), to: 'requires_confirmation', effects: ['openReview'] },
  { why: 'a pending review makes confirm not_confirmable', from: 'requires_confirmation', ctx: REVIEWING, event: confirm(), to: 'requires_confirmation', effects: ['reject'], reject: 'payment_intent.not_confirmable' },
  { why: 'a pending review beats no_route', from: 'requires_confirmation', ctx: REVIEWING, event: confirm(false), to: 'requires_confirmation', effects: ['reject'], reject: 'payment_intent.not_confirmable' },
  { why: 'a pending review beats blocked_by_risk', from: 'requires_confirmation', ctx: REVIEWING, event: confirm(true, 'block'), to: 'requires_confirmation', effects: ['reject'], reject: 'payment_intent.not_confirmable' },
  { why: 'a pending review beats a new review', from: 'requires_confirmation', ctx: REVIEWING, event: confirm(true, 'review'), to: 'requires_confirmation', effects: ['reject'], reject: 'payment_intent.not_confirmable' },
  // requires_confirmation | review decisions
  { why: 'operator approves -> processing + attempt, no event', from: 'requires_confirmation', ctx: REVIEWING, event: { type: 'review.approve' }, to: 'processing', effects: ['resolveReview', 'openAttempt'], decision: 'approved' },
  { why: 'operator rejects -> failed', from: 'requires_confirmation', ctx: REVIEWING, event: { type: 'review.reject' }, to: 'failed', effects: ['resolveReview', 'emit'], emit: 'payment_intent.failed', decision: 'rejected' },
  { why: 'approve without a pending review is ignored', from: 'requires_confirmation', ctx: FRESH, event: { type: 'review.approve' }, to: 'requires_confirmation', effects: [] },
  { why: 'reject without a pending review is ignored', from: 'requires_confirmation', ctx: FRESH, event: { type: 'review.reject' }, to: 'requires_confirmation', effects: [] },
  // requires_confirmation | cancel, capture
  { why: 'cancel', from: 'requires_confirmation', ctx: FRESH, event: { type: 'cancel' }, to: 'canceled', effects: ['emit'], emit: 'payment_intent.canceled' },
  { why: 'cancel while a review is pending closes the review', from: 'requires_confirmation', ctx: REVIEWING, event: { type: 'cancel' }, to: 'canceled', effects: ['resolveReview', 'emit'], emit: 'payment_intent.canceled', decision: 'rejected' },
  { why: 'capture', from: 'requires_confirmation', ctx: REVIEWING, event: { type: 'capture' }, to: 'requires_confirmation', effects: ['reject'], reject: 'attempt.not_capturable' },

  // processing | confirm
  { why: 'confirm is not_confirmable', from: 'processing', ctx: PENDING, event: confirm(), to: 'processing', effects: ['reject'], reject: 'payment_intent.not_confirmable' },
  // processing | provider evidence: captured
  { why: 'charge captured (pending attempt)', from: 'processing', ctx: PENDING, event: { type: 'evidence.captured' }, to: 'succeeded', effects: ['attempt', 'postCapture', 'emit'], emit: 'payment_intent.succeeded', attempt: 'captured' },
  { why: 'charge captured (authorized attempt)', from: 'processing', ctx: AUTHORIZED, event: { type: 'evidence.captured' }, to: 'succeeded', effects: ['attempt', 'postCapture', 'emit'], emit: 'payment_intent.succeeded', attempt: 'captured' },
  // processing | authorized: stays processing
  { why: 'authorized without capture keeps processing', from: 'processing', ctx: PENDING, event: { type: 'evidence.authorized' }, to: 'processing', effects: ['attempt'], attempt: 'authorized' },
  // processing | payer action needed
  { why: 'payer action with an expiring action (QR/voucher/CLABE)', from: 'processing', ctx: PENDING, event: { type: 'evidence.action_required', expires: true }, to: 'requires_action', effects: ['attempt', 'setNextAction', 'scheduleExpiry', 'emit'], emit: 'payment_intent.requires_action', attempt: 'action_required' },
  { why: 'payer action without expiry (redirect)', from: 'processing', ctx: PENDING, event: { type: 'evidence.action_required', expires: false }, to: 'requires_action', effects: ['attempt', 'setNextAction', 'emit'], emit: 'payment_intent.requires_action', attempt: 'action_required' },
  // processing | declines
  { why: 'hard decline', from: 'processing', ctx: PENDING, event: { type: 'evidence.hard_decline' }, to: 'failed', effects: ['attempt', 'recordError', 'emit'], emit: 'payment_intent.failed', attempt: 'declined' },
  { why: 'hard decline of an authorized attempt', from: 'processing', ctx: AUTHORIZED, event: { type: 'evidence.hard_decline' }, to: 'failed', effects: ['attempt', 'recordError', 'emit'], emit: 'payment_intent.failed', attempt: 'declined' },
  { why: 'soft decline with another eligible connector: a new attempt there, still processing, no event', from: 'processing', ctx: PENDING, event: { type: 'evidence.soft_decline', retry: true }, to: 'processing', effects: ['attempt', 'recordError', 'openRetryAttempt'], attempt: 'declined' },
  { why: 'soft decline with no retry left -> failed (spec)', from: 'processing', ctx: PENDING, event: { type: 'evidence.soft_decline', retry: false }, to: 'failed', effects: ['attempt', 'recordError', 'emit'], emit: 'payment_intent.failed', attempt: 'declined' },
  // processing | capture
  { why: 'capture with an authorized attempt: stays processing until the provider confirms', from: 'processing', ctx: AUTHORIZED, event: { type: 'capture' }, to: 'processing', effects: ['attempt'], attempt: 'capture_requested' },
  { why: 'capture with a pending attempt', from: 'processing', ctx: PENDING, event: { type: 'capture' }, to: 'processing', effects: ['reject'], reject: 'attempt.not_capturable' },
  { why: 'capture with no open attempt', from: 'processing', ctx: SETTLED, event: { type: 'capture' }, to: 'processing', effects: ['reject'], reject: 'attempt.not_capturable' },
  // processing | cancel
  { why: 'cancel voids an authorized attempt', from: 'processing', ctx: AUTHORIZED, event: { type: 'cancel' }, to: 'canceled', effects: ['attempt', 'emit'], emit: 'payment_intent.canceled', attempt: 'voided' },
  { why: 'cancel with a pending attempt conflicts', from: 'processing', ctx: PENDING, event: { type: 'cancel' }, to: 'processing', effects: ['reject'], reject: 'payment_intent.cancel_conflict' },
  // processing | events the state does not take
  { why: 'incoming payment is for requires_action only', from: 'processing', ctx: PENDING, event: { type: 'evidence.incoming_payment' }, to: 'processing', effects: [] },
  { why: 'no timer runs in processing', from: 'processing', ctx: PENDING, event: { type: 'time.expire' }, to: 'processing', effects: [] },
  { why: 'review decisions are ignored', from: 'processing', ctx: PENDING, event: { type: 'review.approve' }, to: 'processing', effects: [] },
  { why: 'review decisions are ignored', from: 'processing', ctx: PENDING, event: { type: 'review.reject' }, to: 'processing', effects: [] },
  { why: 'evidence without an open attempt is ignored', from: 'processing', ctx: SETTLED, event: { type: 'evidence.captured' }, to: 'processing', effects: [] },
  { why: 'evidence without an open attempt is ignored', from: 'processing', ctx: SETTLED, event: { type: 'evidence.authorized' }, to: 'processing', effects: [] },
  { why: 'evidence without an open attempt is ignored', from: 'processing', ctx: SETTLED, event: { type: 'evidence.action_required', expires: false }, to: 'processing', effects: [] },
  { why: 'evidence without an open attempt is ignored', from: 'processing', ctx: SETTLED, event: { type: 'evidence.hard_decline' }, to: 'processing', effects: [] },

  // requires_action
  { why: 'confirm is not_confirmable', from: 'requires_action', ctx: ACTION, event: confirm(), to: 'requires_action', effects: ['reject'], reject: 'payment_intent.not_confirmable' },
  { why: 'charge captured', from: 'requires_action', ctx: ACTION, event: { type: 'evidence.captured' }, to: 'succeeded', effects: ['attempt', 'clearNextAction', 'cancelExpiry', 'postCapture', 'emit'], emit: 'payment_intent.succeeded', attempt: 'captured' },
  { why: 'simulated/real incoming payment', from: 'requires_action', ctx: ACTION, event: { type: 'evidence.incoming_payment' }, to: 'succeeded', effects: ['attempt', 'clearNextAction', 'cancelExpiry', 'postCapture', 'emit'], emit: 'payment_intent.succeeded', attempt: 'captured' },
  { why: 'hard decline', from: 'requires_action', ctx: ACTION, event: { type: 'evidence.hard_decline' }, to: 'failed', effects: ['attempt', 'clearNextAction', 'cancelExpiry', 'recordError', 'emit'], emit: 'payment_intent.failed', attempt: 'declined' },
  { why: 'soft decline with no retry left', from: 'requires_action', ctx: ACTION, event: { type: 'evidence.soft_decline', retry: false }, to: 'failed', effects: ['attempt', 'clearNextAction', 'cancelExpiry', 'recordError', 'emit'], emit: 'payment_intent.failed', attempt: 'declined' },
  // Machine decision (not a spec row): in requires_action a soft decline is final even with attempts left.
  { why: 'soft decline with a retry available is still final here: a push payment is not retried elsewhere (machine decision)', from: 'requires_action', ctx: ACTION, event: { type: 'evidence.soft_decline', retry: true }, to: 'failed', effects: ['attempt', 'clearNextAction', 'cancelExpiry', 'recordError', 'emit'], emit: 'payment_intent.failed', attempt: 'declined' },
  { why: 'pending action expired unpaid', from: 'requires_action', ctx: ACTION, event: { type: 'time.expire' }, to: 'expired', effects: ['attempt', 'clearNextAction', 'emit'], emit: 'payment_intent.expired', attempt: 'expired' },
  { why: 'cancel voids the attempt', from: 'requires_action', ctx: ACTION, event: { type: 'cancel' }, to: 'canceled', effects: ['attempt', 'clearNextAction', 'cancelExpiry', 'emit'], emit: 'payment_intent.canceled', attempt: 'voided' },
  { why: 'capture', from: 'requires_action', ctx: ACTION, event: { type: 'capture' }, to: 'requires_action', effects: ['reject'], reject: 'attempt.not_capturable' },
  { why: 'a second authorization notice is ignored', from: 'requires_action', ctx: ACTION, event: { type: 'evidence.authorized' }, to: 'requires_action', effects: [] },
  { why: 'a second action notice is ignored', from: 'requires_action', ctx: ACTION, event: { type: 'evidence.action_required', expires: true }, to: 'requires_action', effects: [] },
  { why: 'review decisions are ignored', from: 'requires_action', ctx: ACTION, event: { type: 'review.approve' }, to: 'requires_action', effects: [] },
  { why: 'evidence without an open attempt is ignored', from: 'requires_action', ctx: SETTLED, event: { type: 'evidence.incoming_payment' }, to: 'requires_action', effects: [] },
  { why: 'evidence without an open attempt is ignored', from: 'requires_action', ctx: SETTLED, event: { type: 'evidence.captured' }, to: 'requires_action', effects: [] },

  // terminal states | cancel
  { why: 'cancel of canceled is a no-op (200), no event', from: 'canceled', ctx: SETTLED, event: { type: 'cancel' }, to: 'canceled', effects: [] },
  { why: 'cancel of succeeded conflicts', from: 'succeeded', ctx: SETTLED, event: { type: 'cancel' }, to: 'succeeded', effects: ['reject'], reject: 'payment_intent.cancel_conflict' },
  { why: 'cancel of failed conflicts', from: 'failed', ctx: SETTLED, event: { type: 'cancel' }, to: 'failed', effects: ['reject'], reject: 'payment_intent.cancel_conflict' },
  { why: 'cancel of expired conflicts', from: 'expired', ctx: SETTLED, event: { type: 'cancel' }, to: 'expired', effects: ['reject'], reject: 'payment_intent.cancel_conflict' },
];
// terminal states | confirm, capture
for (const from of TERMINAL) {
  ROWS.push({ why: 'confirm is not_confirmable', from, ctx: SETTLED, event: confirm(), to: from, effects: ['reject'], reject: 'payment_intent.not_confirmable' });
  ROWS.push({ why: 'capture is not_capturable', from, ctx: SETTLED, event: { type: 'capture' }, to: from, effects: ['reject'], reject: 'attempt.not_capturable' });
}

t.test('every spec row, with its exact effects', async (t) => {
  for (const row of ROWS) {
    const name = `${row.from} ${ctxLabel(row.ctx)} + ${label(row.event)}: ${row.why}`;
    const r = run(row.from, row.ctx, row.event);
    t.equal(r.state, row.to, `${name} -> ${row.to}`);
    t.same(r.types, row.effects, `${name}: effects ${JSON.stringify(row.effects)}`);
    t.same(r.emits, row.emit ? [row.emit] : [], `${name}: emits ${row.emit ?? 'nothing'}`);
    t.same(r.rejects, row.reject ? [row.reject] : [], `${name}: rejects ${row.reject ?? 'nothing'}`);
    t.same(r.attempt, row.attempt ? [row.attempt] : [], `${name}: attempt event ${row.attempt ?? 'none'}`);
    t.same(r.decisions, row.decision ? [row.decision] : [], `${name}: review decision ${row.decision ?? 'none'}`);
    for (const m of r.messages) t.ok(typeof m === 'string' && m.length > 0, `${name}: reject carries a message`);
  }
});

// ---- focused checks of the decisions the brief lists -----------------------------------------------

t.test('risk block: rejected with blocked_by_risk and no openAttempt, in both confirmable states', async (t) => {
  for (const from of CONFIRMABLE) {
    const r = run(from, FRESH, confirm(true, 'block'));
    t.equal(r.state, from);
    t.same(r.rejects, ['payment_intent.blocked_by_risk']);
    t.notOk(r.types.includes('openAttempt'), `${from}: no attempt is opened`);
    t.notOk(r.types.includes('openReview'), `${from}: no review is opened`);
  }
});

t.test('risk review: requires_confirmation with openReview, then the review gates confirm', async (t) => {
  const r = run('requires_payment_method', FRESH, confirm(true, 'review'));
  t.equal(r.state, 'requires_confirmation');
  t.same(r.types, ['openReview']);
  t.notOk(r.types.includes('openAttempt'), 'no attempt while the operator decides');
  const again = run('requires_confirmation', REVIEWING, confirm());
  t.same(again.rejects, ['payment_intent.not_confirmable']);
  t.match(again.messages[0], /review/i, 'the rejection says a review waits');
});

t.test('soft decline: a retry left is the boundary between a new attempt and failure (spec: "soft decline with no retry left")', async (t) => {
  for (const open of ['pending', 'authorized'] as const) {
    const retry = run('processing', ctx({ openAttempt: open }), { type: 'evidence.soft_decline', retry: true });
    t.equal(retry.state, 'processing', `${open}: retry on the next connector, the intent stays processing`);
    t.same(retry.emits, [], 'no event (the catalog has none for a retry)');
    t.same(retry.types, ['attempt', 'recordError', 'openRetryAttempt'], 'the declined attempt is closed before the new one opens');
    const final = run('processing', ctx({ openAttempt: open }), { type: 'evidence.soft_decline', retry: false });
    t.equal(final.state, 'failed', `${open}: no retry left -> failed`);
    t.same(final.emits, ['payment_intent.failed'], 'the merchant is told');
    t.same(final.attempt, ['declined']);
  }
});

t.test('not_confirmable in every state other than requires_payment_method / requires_confirmation, for every context and confirm variant', async (t) => {
  for (const from of PAYMENT_INTENT_STATES) {
    if (CONFIRMABLE.includes(from)) continue;
    for (const c of ALL_CONTEXTS)
      for (const e of CONFIRMS) {
        const r = run(from, c, e);
        t.same([r.state, r.types, r.rejects], [from, ['reject'], ['payment_intent.not_confirmable']], `${from} ${ctxLabel(c)} + ${label(e)}: stays, not_confirmable`);
      }
  }
});

t.test('confirm in a confirmable state: the guard order is review pending, no route, block, review, allow', async (t) => {
  for (const from of CONFIRMABLE)
    for (const c of ALL_CONTEXTS)
      for (const e of CONFIRMS) {
        if (e.type !== 'confirm') continue;
        const r = run(from, c, e);
        const n = `${from} ${ctxLabel(c)} + ${label(e)}`;
        if (c.reviewPending) t.same([r.state, r.rejects], [from, ['payment_intent.not_confirmable']], `${n}: not_confirmable`);
        else if (!e.routed) t.same([r.state, r.rejects], [from, ['payment_intent.no_route']], `${n}: no_route`);
        else if (e.risk === 'block') t.same([r.state, r.rejects], [from, ['payment_intent.blocked_by_risk']], `${n}: blocked_by_risk`);
        else if (e.risk === 'review') t.same([r.state, r.types], ['requires_confirmation', ['openReview']], `${n}: review`);
        else t.same([r.state, r.types], ['processing', ['openAttempt']], `${n}: processing`);
      }
});

t.test('capture needs an authorized attempt, in processing only', async (t) => {
  for (const from of PAYMENT_INTENT_STATES)
    for (const c of ALL_CONTEXTS) {
      const r = run(from, c, { type: 'capture' });
      const n = `${from} ${ctxLabel(c)} + capture`;
      t.equal(r.state, from, `${n}: state unchanged`);
      if (from === 'processing' && c.openAttempt === 'authorized') t.same(r.effects, [{ type: 'attempt', params: { event: 'capture_requested' } }], `${n}: capture requested`);
      else t.same(r.rejects, ['attempt.not_capturable'], `${n}: not_capturable`);
    }
});

t.test('dunning (ours): an off-session soft decline waits, still processing; the timer opens the retry', async (t) => {
  const wait = run('processing', { openAttempt: 'pending' }, { type: 'evidence.soft_decline', retry: false, dunning: true });
  t.same([wait.state, wait.attempt, wait.types.includes('scheduleDunning'), wait.emits], ['processing', ['declined'], true, []]);
  const cross = run('processing', { openAttempt: 'pending' }, { type: 'evidence.soft_decline', retry: true, dunning: true });
  t.ok(cross.types.includes('openRetryAttempt') && !cross.types.includes('scheduleDunning'), 'another connector first');
  const fire = run('processing', { openAttempt: null }, { type: 'time.dunning' });
  t.same([fire.state, fire.types], ['processing', ['openRetryAttempt']]);
  const stale = run('processing', { openAttempt: 'pending' }, { type: 'time.dunning' });
  t.same([stale.state, stale.types], ['processing', []], 'an attempt already open: nothing');
  const hard = run('processing', { openAttempt: 'pending' }, { type: 'evidence.hard_decline' });
  t.equal(hard.state, 'failed', 'a hard decline is never dunned');
});

t.test('cancel: canceled where permitted, no-op in canceled, cancel_conflict elsewhere', async (t) => {
  for (const from of PAYMENT_INTENT_STATES)
    for (const c of ALL_CONTEXTS) {
      const r = run(from, c, { type: 'cancel' });
      const n = `${from} ${ctxLabel(c)} + cancel`;
      if (from === 'canceled') {
        t.same([r.state, r.effects], ['canceled', []], `${n}: no-op, no actions`);
      } else if (from === 'succeeded' || from === 'failed' || from === 'expired') {
        t.same([r.state, r.rejects], [from, ['payment_intent.cancel_conflict']], `${n}: cancel_conflict`);
      } else if (from === 'processing' && c.openAttempt === null) {
        // dunning (ours): waiting for the next retry day, nothing is at the provider
        t.same([r.state, r.emits, r.types.includes('cancelDunning')], ['canceled', ['payment_intent.canceled'], true], `${n}: canceled while dunning waits`);
      } else if (from === 'processing' && c.openAttempt !== 'authorized') {
        t.same([r.state, r.rejects], [from, ['payment_intent.cancel_conflict']], `${n}: attempt has no outcome yet`);
      } else {
        t.equal(r.state, 'canceled', `${n}: canceled`);
        t.same(r.emits, ['payment_intent.canceled'], `${n}: emits canceled`);
        t.same(r.rejects, [], `${n}: no reject`);
      }
    }
});

// ---- table-driven invariants over every state x every event x many contexts ------------------------

// One assertion per (state, event): the invariants must hold for every context; a failure lists
// each (context, broken rule).
t.test('every state x every event x every context: invariants', async (t) => {
  let cases = 0;
  for (const from of PAYMENT_INTENT_STATES)
    for (const e of ALL_EVENTS) {
      const broken: string[] = [];
      for (const c of ALL_CONTEXTS) {
        cases++;
        const r = run(from, c, e);
        const check = (ok: boolean, rule: string) => {
          if (!ok) broken.push(`${ctxLabel(c)} -> ${r.state} ${JSON.stringify(r.effects)}: ${rule}`);
        };
        check((PAYMENT_INTENT_STATES as readonly string[]).includes(r.state), 'lands in a known state');
        check(r.status === 'active', 'the snapshot stays active');
        check(r.types.every((ty) => EFFECT_TYPES.has(ty)), 'only named effects');
        // a rejection is the only effect and never moves the state
        if (r.rejects.length > 0) {
          check(r.types.length === 1, 'a rejection is the only effect');
          check(r.state === from, 'a rejected event never changes the state');
          check(REJECT_CODES.has(r.rejects[0]), 'known reject code');
        }
        // terminal states never move, emit nothing, do nothing but reject
        if (TERMINAL.includes(from)) {
          check(r.state === from, 'a terminal state never moves');
          check(r.types.every((ty) => ty === 'reject'), 'a terminal state performs no effect but a reject');
        }
        // events: catalog names only, at most one, exactly when the intent enters a state the catalog names
        check(r.emits.length <= 1, 'at most one event');
        check(r.emits.every((ev) => CATALOG.includes(ev)), 'events come from the catalog');
        const entersEventful = r.state !== from && ['succeeded', 'requires_action', 'failed', 'expired', 'canceled'].includes(r.state);
        check(JSON.stringify(r.emits) === JSON.stringify(entersEventful ? [`payment_intent.${r.state}`] : []), 'emits payment_intent.<new state> iff it enters a cataloged state');
        // no event for the internal move to processing (nor for a retry or a review)
        if (['processing', 'requires_payment_method', 'requires_confirmation'].includes(r.state)) check(r.emits.length === 0, `no webhook for ${r.state}`);
        // an attempt is opened exactly on the way into processing
        check(r.types.includes('openAttempt') === (r.state === 'processing' && from !== 'processing'), 'openAttempt iff it enters processing');
        // postCapture exactly when the intent succeeds
        check(r.types.includes('postCapture') === (r.state === 'succeeded' && from !== 'succeeded'), 'postCapture iff it succeeds');
        // next_action is set on entering requires_action and cleared whenever requires_action is left
        check(r.types.includes('setNextAction') === (r.state === 'requires_action' && from !== 'requires_action'), 'setNextAction iff it enters requires_action');
        if (from === 'requires_action' && r.state !== from) check(r.types.includes('clearNextAction'), 'leaving requires_action clears next_action');
      }
      t.same(broken, [], `${from} + ${label(e)}: invariants hold in all ${ALL_CONTEXTS.length} contexts`);
    }
  t.equal(cases, PAYMENT_INTENT_STATES.length * ALL_CONTEXTS.length * ALL_EVENTS.length, `${cases} combinations swept`);
});

t.test('initial and all reachable moves never emit a creation or processing event', async (t) => {
  const [initial, initActions] = initialTransition(paymentIntentMachine, {});
  t.same(initActions.filter((a) => a.type === 'emit'), []);
  // walk every path from the initial state with the typical contexts of each state
  const typical: Record<PaymentIntentStatus, Ctx[]> = {
    requires_payment_method: [FRESH],
    requires_confirmation: [FRESH, REVIEWING],
    processing: [PENDING, AUTHORIZED],
    requires_action: [ACTION],
    succeeded: [SETTLED],
    failed: [SETTLED],
    expired: [SETTLED],
    canceled: [SETTLED],
  };
  const reached = new Set<string>([initial.value as string]);
  const queue: PaymentIntentStatus[] = [initial.value as PaymentIntentStatus];
  const emitted = new Set<string>();
  while (queue.length > 0) {
    const from = queue.shift()!;
    for (const c of typical[from])
      for (const e of ALL_EVENTS) {
        const r = run(from, c, e);
        for (const ev of r.emits) emitted.add(ev);
        if (!reached.has(r.state)) {
          reached.add(r.state);
          queue.push(r.state as PaymentIntentStatus);
        }
      }
  }
  t.same([...reached].sort(), [...PAYMENT_INTENT_STATES].sort(), 'every state is reachable from creation');
  t.same([...emitted].sort(), [...CATALOG].sort(), 'every catalog event is emitted somewhere, and nothing else');
  t.notOk(emitted.has('payment_intent.created'), 'no creation event');
  t.notOk(emitted.has('payment_intent.processing'), 'no processing event');
});

// ---- the attempt effects agree with the attempt machine --------------------------------------------

t.test('each attempt effect moves the open attempt the way the intent moved', async (t) => {
  // The intent's next state implies the attempt's next state.
  const expected: Record<string, string> = {
    succeeded: 'captured',
    failed: 'failed',
    canceled: 'canceled',
    expired: 'expired',
    requires_action: 'requires_action',
    requires_payment_method: 'failed',
  };
  const cases: Array<[PaymentIntentStatus, Ctx]> = [
    ['processing', PENDING],
    ['processing', AUTHORIZED],
    ['requires_action', ACTION],
  ];
  for (const [from, c] of cases)
    for (const e of ALL_EVENTS) {
      // An authorized card attempt is never asked for payer action (3DS happens before authorization).
      if (c.openAttempt === 'authorized' && e.type === 'evidence.action_required') continue;
      const r = run(from, c, e);
      if (r.attempt.length === 0) continue;
      const n = `${from} ${ctxLabel(c)} + ${label(e)} -> attempt ${r.attempt[0]}`;
      const snap = attemptMachine.resolveState({ value: c.openAttempt!, context: undefined as never });
      const [next, actions] = transition(attemptMachine, snap, { type: r.attempt[0] } as never);
      if (r.state === from && (r.types.includes('openRetryAttempt') || r.types.includes('scheduleDunning'))) {
        // The intent stays processing: the declined attempt failed and a new one opens elsewhere (or on a dunning day).
        t.equal(next.value, 'failed', `${n}: the declined attempt is failed`);
      } else if (r.state === from) {
        // The intent stays: authorized evidence or a capture request.
        t.equal(next.value, 'authorized', `${n}: attempt is authorized`);
        if (r.attempt[0] === 'capture_requested') t.same(actions.map((a) => a.type), ['requestCapture'], `${n}: capture requested at the provider`);
      } else {
        t.equal(next.value, expected[r.state], `${n}: attempt ${expected[r.state]} while the intent is ${r.state}`);
        if (r.attempt[0] === 'voided' && c.openAttempt === 'authorized') t.same(actions.map((a) => a.type), ['requestVoid'], `${n}: the hold is released`);
      }
    }
});
