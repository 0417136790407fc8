// A payout (an outgoing SPEI transfer from the merchant's own account) as a pure XState v5 machine.
// spec: Resources > payout (`processing` seen; provider_ref, tracking_key, failure_reason after
// the worker executed the order). Ours (the spec says "Transitions: not shown"), documented in
// docs/connect.md: `processing` until the rail's evidence says `paid` or `failed`; a paid payout
// the beneficiary's bank sends back (devolución) is `returned`. A state leaves `processing` only
// on the rail's word (an answer, a status query, a callback confirmed by a status query), never on
// a local timeout.
import { setup, type SnapshotFrom } from 'xstate';

export const PAYOUT_STATES = ['processing', 'paid', 'failed', 'returned'] as const;
export type PayoutStatus = (typeof PAYOUT_STATES)[number];

export type PayoutEvent =
  /** The worker is about to call the rail: recorded first, so a crash after it asks before resending. */
  | { type: 'send_started' }
  /** The rail accepted the order and has not settled it yet. */
  | { type: 'rail.in_flight' }
  | { type: 'rail.paid' }
  | { type: 'rail.failed' }
  | { type: 'rail.returned' };

export type PayoutWebhook = 'payout.paid' | 'payout.failed' | 'payout.returned';
const emit = (event: PayoutWebhook) => ({ type: 'emit' as const, params: { event } });

export const payoutMachine = setup({
  types: { events: {} as PayoutEvent },
  actions: {
    /** Stamp `send_started_at` (and the operation date) before the call. */
    markSending: () => {},
    /** Record the rail's reference and tracking key. */
    recordRail: () => {},
    /** Record `failure_reason` (and its code). */
    recordFailure: () => {},
    /** Ledger: the money left the merchant's account at the rail (connect-ledger payoutSentLines). */
    postSent: () => {},
    /** Ledger: the money came back (payoutReturnedLines). */
    postReturned: () => {},
    emit: (_: unknown, _p: { event: PayoutWebhook }) => {},
  },
}).createMachine({
  id: 'payout',
  initial: 'processing',
  states: {
    processing: {
      on: {
        send_started: { actions: 'markSending' },
        'rail.in_flight': { actions: 'recordRail' },
        'rail.paid': { target: 'paid', actions: ['recordRail', 'postSent', emit('payout.paid')] },
        'rail.failed': { target: 'failed', actions: ['recordRail', 'recordFailure', emit('payout.failed')] },
        // Settled and sent back before we saw it settled: both entries, one event.
        'rail.returned': { target: 'returned', actions: ['recordRail', 'recordFailure', 'postSent', 'postReturned', emit('payout.returned')] },
      },
    },
    paid: {
      on: {
        'rail.returned': { target: 'returned', actions: ['recordFailure', 'postReturned', emit('payout.returned')] },
      },
    },
    failed: { type: 'final' },
    returned: { type: 'final' },
  },
});

export type PayoutSnapshot = SnapshotFrom<typeof payoutMachine>;
