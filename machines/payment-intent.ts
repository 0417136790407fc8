// The payment intent as a pure XState v5 machine: the rows of service-spec.md
// "States and transitions > payment_intent", one transition each. No I/O: every effect is a named
// action (a stub here) that the actor layer reads from transition()'s result and performs inside
// its one Postgres transaction (rows, history, outbox, ledger) or after commit (jobs, timers).
import { and, setup, type SnapshotFrom } from 'xstate';

export const PAYMENT_INTENT_STATES = [
  'requires_payment_method',
  'requires_confirmation',
  'processing',
  'requires_action',
  'succeeded',
  'failed',
  'expired',
  'canceled',
] as const;
export type PaymentIntentStatus = (typeof PAYMENT_INTENT_STATES)[number];

export interface PaymentIntentContext {
  /** Status of the open attempt (pending | authorized | requires_action), or null when none is open. */
  openAttempt: 'pending' | 'authorized' | 'requires_action' | null;
  /** A risk review waits for the operator. */
  reviewPending: boolean;
}

export type RiskVerdict = 'allow' | 'block' | 'review';

export type PaymentIntentEvent =
  /** spec row: confirm. `routed`: a connector serves the method; `risk`: what the rules said. */
  | { type: 'confirm'; routed: boolean; risk: RiskVerdict }
  /** Operator decisions on a review opened by confirm. */
  | { type: 'review.approve' }
  | { type: 'review.reject' }
  /** Provider evidence about the open attempt. */
  | { type: 'evidence.captured' }
  | { type: 'evidence.authorized' }
  | { type: 'evidence.action_required'; expires: boolean }
  | { type: 'evidence.hard_decline' }
  /** `retry`: another eligible connector can take a new attempt (cross-connector retry); without one the decline is final. */
  | { type: 'evidence.soft_decline'; retry: boolean; dunning?: boolean }
  /** Dunning: the wait after an off-session soft decline is over (by the tenant's clock): a new attempt. */
  | { type: 'time.dunning' }
  /** A simulated or real incoming payment for a push method (SPEI, CoDi, OXXO). */
  | { type: 'evidence.incoming_payment' }
  /** The pending action's durable timer fired (by the tenant's clock). */
  | { type: 'time.expire' }
  | { type: 'capture' }
  | { type: 'cancel' };

export type PaymentIntentEffect =
  | { type: 'reject'; params: { code: string; message: string } }
  | { type: 'openAttempt' }
  /** A new attempt on the next eligible connector, after a soft decline (same intent). */
  | { type: 'openRetryAttempt' }
  | { type: 'openReview' }
  | { type: 'resolveReview'; params: { decision: 'approved' | 'rejected' } }
  | { type: 'attempt'; params: { event: 'captured' | 'authorized' | 'action_required' | 'declined' | 'expired' | 'voided' | 'capture_requested' } }
  | { type: 'emit'; params: { event: 'payment_intent.succeeded' | 'payment_intent.requires_action' | 'payment_intent.failed' | 'payment_intent.expired' | 'payment_intent.canceled' } }
  | { type: 'postCapture' }
  | { type: 'scheduleExpiry' }
  /** Dunning: the next retry of an off-session charge, days later (timer). */
  | { type: 'scheduleDunning' }
  | { type: 'cancelDunning' }
  | { type: 'cancelExpiry' }
  | { type: 'setNextAction' }
  | { type: 'clearNextAction' }
  | { type: 'recordError' };

const reject = (code: string, message: string) => ({ type: 'reject' as const, params: { code, message } });
const emit = (event: Extract<PaymentIntentEffect, { type: 'emit' }>['params']['event']) => ({ type: 'emit' as const, params: { event } });
const attempt = (event: Extract<PaymentIntentEffect, { type: 'attempt' }>['params']['event']) => ({ type: 'attempt' as const, params: { event } });

const NOT_CONFIRMABLE = reject('payment_intent.not_confirmable', 'Only an intent in requires_payment_method or requires_confirmation can be confirmed.');
const NOT_CAPTURABLE = reject('attempt.not_capturable', 'Capture needs an attempt in authorized; this intent has none.');
const CANCEL_CONFLICT = reject('payment_intent.cancel_conflict', 'This intent can no longer be canceled.');

// spec rows "requires_payment_method or requires_confirmation | confirm": a route exists, no
// blocking risk rule (else no attempt), a review rule parks the intent for the operator.
const CONFIRM = [
  { guard: 'reviewPending', actions: reject('payment_intent.not_confirmable', 'A risk review of this intent is waiting for the operator.') },
  { guard: 'notRouted', actions: reject('payment_intent.no_route', 'No connector is configured for this payment method.') },
  { guard: 'blocked', actions: reject('payment_intent.blocked_by_risk', 'A risk rule blocked this payment; no attempt was made.') },
  { guard: 'review', target: '#payment_intent.requires_confirmation', actions: 'openReview' },
  { target: '#payment_intent.processing', actions: 'openAttempt' },
] as const;

// Every named action is a stub: the actor performs it. Params are typed here so the table below is checked.
const stub = () => {};

export const paymentIntentMachine = setup({
  types: {
    context: {} as PaymentIntentContext,
    events: {} as PaymentIntentEvent,
    input: {} as Partial<PaymentIntentContext> | undefined,
  },
  actions: {
    reject: (_: unknown, _p: { code: string; message: string }) => stub(),
    openAttempt: stub,
    openRetryAttempt: stub,
    openReview: stub,
    resolveReview: (_: unknown, _p: { decision: 'approved' | 'rejected' }) => stub(),
    attempt: (_: unknown, _p: { event: string }) => stub(),
    emit: (_: unknown, _p: { event: string }) => stub(),
    postCapture: stub,
    scheduleExpiry: stub,
    cancelExpiry: stub,
    scheduleDunning: stub,
    cancelDunning: stub,
    setNextAction: stub,
    clearNextAction: stub,
    recordError: stub,
  },
  guards: {
    notRouted: ({ event }) => event.type === 'confirm' && !event.routed,
    blocked: ({ event }) => event.type === 'confirm' && event.risk === 'block',
    review: ({ event }) => event.type === 'confirm' && event.risk === 'review',
    reviewPending: ({ context }) => context.reviewPending,
    attemptOpen: ({ context }) => context.openAttempt !== null,
    attemptAuthorized: ({ context }) => context.openAttempt === 'authorized',
    attemptPending: ({ context }) => context.openAttempt === 'pending',
    retryLeft: ({ event }) => event.type === 'evidence.soft_decline' && event.retry,
    dunningLeft: ({ event }) => event.type === 'evidence.soft_decline' && event.dunning === true,
    noAttemptOpen: ({ context }) => context.openAttempt === null,
    expires: ({ event }) => event.type === 'evidence.action_required' && event.expires,
  },
}).createMachine({
  id: 'payment_intent',
  initial: 'requires_payment_method',
  context: ({ input }) => ({ openAttempt: null, reviewPending: false, ...(input ?? {}) }),
  // Any event a state does not list: confirm is not_confirmable, capture not_capturable.
  on: {
    confirm: { actions: NOT_CONFIRMABLE },
    capture: { actions: NOT_CAPTURABLE },
    cancel: { actions: CANCEL_CONFLICT },
  },
  states: {
    requires_payment_method: {
      on: {
        confirm: CONFIRM,
        cancel: { target: 'canceled', actions: emit('payment_intent.canceled') },
      },
    },
    requires_confirmation: {
      on: {
        confirm: CONFIRM,
        'review.approve': { guard: 'reviewPending', target: 'processing', actions: [{ type: 'resolveReview', params: { decision: 'approved' } }, 'openAttempt'] },
        'review.reject': { guard: 'reviewPending', target: 'failed', actions: [{ type: 'resolveReview', params: { decision: 'rejected' } }, emit('payment_intent.failed')] },
        // Canceling while a review waits closes the review too.
        cancel: [
          { guard: 'reviewPending', target: 'canceled', actions: [{ type: 'resolveReview', params: { decision: 'rejected' } }, emit('payment_intent.canceled')] },
          { target: 'canceled', actions: emit('payment_intent.canceled') },
        ],
      },
    },
    processing: {
      on: {
        'evidence.captured': { guard: 'attemptOpen', target: 'succeeded', actions: [attempt('captured'), 'postCapture', emit('payment_intent.succeeded')] },
        // The intent stays processing until a capture is confirmed (spec: capture row).
        'evidence.authorized': { guard: 'attemptOpen', actions: attempt('authorized') },
        // Only a pending attempt can ask for payer action (an authorization already passed that point).
        'evidence.action_required': [
          { guard: and(['attemptPending', 'expires']), target: 'requires_action', actions: [attempt('action_required'), 'setNextAction', 'scheduleExpiry', emit('payment_intent.requires_action')] },
          { guard: 'attemptPending', target: 'requires_action', actions: [attempt('action_required'), 'setNextAction', emit('payment_intent.requires_action')] },
        ],
        'evidence.hard_decline': { guard: 'attemptOpen', target: 'failed', actions: [attempt('declined'), 'recordError', emit('payment_intent.failed')] },
        'evidence.soft_decline': [
          // spec: "soft decline with no retry left" fails the intent. A retry is a new attempt on the
          // next eligible connector (cross-connector retry), within the same intent: it stays processing.
          { guard: and(['attemptOpen', 'retryLeft']), actions: [attempt('declined'), 'recordError', 'openRetryAttempt'] },
          // Dunning (ours): an off-session charge of a saved card waits for its next retry day, still processing.
          { guard: and(['attemptOpen', 'dunningLeft']), actions: [attempt('declined'), 'recordError', 'scheduleDunning'] },
          { guard: 'attemptOpen', target: 'failed', actions: [attempt('declined'), 'recordError', emit('payment_intent.failed')] },
        ],
        'time.dunning': { guard: 'noAttemptOpen', actions: 'openRetryAttempt' },
        capture: [{ guard: 'attemptAuthorized', actions: attempt('capture_requested') }, { actions: NOT_CAPTURABLE }],
        cancel: [
          // Voiding an authorization releases the hold; a pending attempt's outcome is unknown yet.
          { guard: 'attemptAuthorized', target: 'canceled', actions: [attempt('voided'), emit('payment_intent.canceled')] },
          // Waiting for a dunning retry (no attempt open): nothing is at the provider.
          { guard: 'noAttemptOpen', target: 'canceled', actions: ['cancelDunning', emit('payment_intent.canceled')] },
          { actions: reject('payment_intent.cancel_conflict', 'The intent is processing and its attempt is not authorized: it cannot be canceled until the provider answers.') },
        ],
      },
    },
    requires_action: {
      on: {
        'evidence.captured': { guard: 'attemptOpen', target: 'succeeded', actions: [attempt('captured'), 'clearNextAction', 'cancelExpiry', 'postCapture', emit('payment_intent.succeeded')] },
        'evidence.incoming_payment': { guard: 'attemptOpen', target: 'succeeded', actions: [attempt('captured'), 'clearNextAction', 'cancelExpiry', 'postCapture', emit('payment_intent.succeeded')] },
        'evidence.hard_decline': { guard: 'attemptOpen', target: 'failed', actions: [attempt('declined'), 'clearNextAction', 'cancelExpiry', 'recordError', emit('payment_intent.failed')] },
        'evidence.soft_decline': { guard: 'attemptOpen', target: 'failed', actions: [attempt('declined'), 'clearNextAction', 'cancelExpiry', 'recordError', emit('payment_intent.failed')] },
        'time.expire': { target: 'expired', actions: [attempt('expired'), 'clearNextAction', emit('payment_intent.expired')] },
        cancel: { target: 'canceled', actions: [attempt('voided'), 'clearNextAction', 'cancelExpiry', emit('payment_intent.canceled')] },
      },
    },
    succeeded: { on: { cancel: { actions: CANCEL_CONFLICT } } },
    failed: { on: { cancel: { actions: CANCEL_CONFLICT } } },
    expired: { on: { cancel: { actions: CANCEL_CONFLICT } } },
    // spec: canceled + cancel = canceled, no-op, 200 (no event).
    canceled: { on: { cancel: {} } },
  },
});


export type PaymentIntentSnapshot = SnapshotFrom<typeof paymentIntentMachine>;
