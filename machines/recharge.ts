// A mobile recharge as a pure XState machine. spec: States > recharge: created `pending` once the
// key and amounts are persisted; `delivered` on the aggregator's confirmation (ledger entry
// booked); `failed` when rejected. A timeout leaves it `pending`, never `failed`.
import { setup } from 'xstate';

export const RECHARGE_STATES = ['pending', 'delivered', 'failed'] as const;
export type RechargeStatus = (typeof RECHARGE_STATES)[number];

export type RechargeEvent =
  /** About to call the aggregator: recorded first, so that after a crash it is asked before anything is sent. */
  | { type: 'send_started' }
  | { type: 'aggregator.delivered' }
  | { type: 'aggregator.failed' };

export const rechargeMachine = setup({
  types: { events: {} as RechargeEvent },
  actions: {
    markSending: () => {},
    recordProvider: () => {},
    recordFailure: () => {},
    /** Ledger (spec): debit recharge_clearing, credit recharge_payable:<carrier> and merchant_recharge_income. */
    postDelivered: () => {},
  },
}).createMachine({
  id: 'recharge',
  initial: 'pending',
  states: {
    pending: {
      on: {
        send_started: { actions: 'markSending' },
        'aggregator.delivered': { target: 'delivered', actions: ['recordProvider', 'postDelivered'] },
        'aggregator.failed': { target: 'failed', actions: ['recordProvider', 'recordFailure'] },
      },
    },
    delivered: { type: 'final' },
    failed: { type: 'final' },
  },
});
