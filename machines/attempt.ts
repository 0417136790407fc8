// An attempt (one try at the provider) as a pure XState v5 machine. spec: States > attempt:
// confirm creates it `pending`; a token that authorizes without capture leaves it `authorized`;
// refundable attempts are `captured`, `settled` or `partially_refunded`. The other moves
// (declined, voided, expired, refunded) are ours, named in docs/decisions.md.
import { setup, type SnapshotFrom } from 'xstate';

export const ATTEMPT_STATES = ['pending', 'authorized', 'requires_action', 'captured', 'settled', 'partially_refunded', 'refunded', 'failed', 'canceled', 'expired'] as const;
export type AttemptStatus = (typeof ATTEMPT_STATES)[number];
export const OPEN_ATTEMPT_STATES: readonly AttemptStatus[] = ['pending', 'authorized', 'requires_action'];

export type AttemptEvent =
  | { type: 'captured' }
  | { type: 'authorized' }
  | { type: 'action_required' }
  | { type: 'declined' }
  | { type: 'voided' }
  | { type: 'expired' }
  | { type: 'capture_requested' }
  | { type: 'settled' }
  | { type: 'refunded'; full: boolean };

export const attemptMachine = setup({
  types: { events: {} as AttemptEvent },
  actions: { requestCapture: () => {}, requestVoid: () => {} },
  guards: { full: ({ event }) => event.type === 'refunded' && event.full },
}).createMachine({
  id: 'attempt',
  initial: 'pending',
  states: {
    pending: {
      on: { captured: 'captured', authorized: 'authorized', action_required: 'requires_action', declined: 'failed' },
    },
    authorized: {
      on: {
        capture_requested: { actions: 'requestCapture' },
        captured: 'captured',
        voided: { target: 'canceled', actions: 'requestVoid' },
        declined: 'failed',
      },
    },
    requires_action: {
      on: { captured: 'captured', declined: 'failed', expired: 'expired', voided: 'canceled' },
    },
    captured: { on: { settled: 'settled', refunded: [{ guard: 'full', target: 'refunded' }, { target: 'partially_refunded' }] } },
    settled: { on: { refunded: [{ guard: 'full', target: 'refunded' }, { target: 'partially_refunded' }] } },
    partially_refunded: { on: { refunded: [{ guard: 'full', target: 'refunded' }, { target: 'partially_refunded' }] } },
    refunded: { type: 'final' },
    failed: { type: 'final' },
    canceled: { type: 'final' },
    expired: { type: 'final' },
  },
});

export type AttemptSnapshot = SnapshotFrom<typeof attemptMachine>;
