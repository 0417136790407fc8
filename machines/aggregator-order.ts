// An order to an aggregator that is paid or delivered at once (a bill payment, a mobile recharge),
// as a pure XState machine: one definition for both kinds (machines/service-payment.ts,
// machines/recharge.ts name their instance). Created `pending` once the request's key and amounts
// are persisted; `send_started` records (before the aggregator is called) that the order may have
// left, so that after a crash or a timeout the aggregator is asked before anything is sent again;
// `pending` leaves only on the aggregator's word: `<done>` (ledger entry booked) or `failed`. A
// timeout leaves it `pending`, never `failed`.
import { setup } from 'xstate';

/** The events of an order whose aggregator is named `source` and whose success state is `done`. */
export type AggregatorOrderEvent<Source extends string, Done extends string> = { type: 'send_started' } | { type: `${Source}.${Done}` } | { type: `${Source}.failed` };

export function aggregatorOrderMachine<Source extends string, Done extends string>(o: { id: string; source: Source; done: Done }) {
  return setup({
    types: { events: {} as AggregatorOrderEvent<Source, Done> },
    actions: {
      /** About to call the aggregator: `send_started_at` (the outbound protocol's mark, kernel/outbound.ts). */
      markSending: () => {},
      /** Record the aggregator's reference. */
      recordProvider: () => {},
      /** Record `failure_reason`. */
      recordFailure: () => {},
      /** The ledger entry of the kind (what was paid or delivered). */
      postDone: () => {},
    },
  }).createMachine({
    id: o.id,
    initial: 'pending',
    states: {
      pending: {
        on: {
          send_started: { actions: 'markSending' },
          [`${o.source}.${o.done}`]: { target: o.done, actions: ['recordProvider', 'postDone'] },
          [`${o.source}.failed`]: { target: 'failed', actions: ['recordProvider', 'recordFailure'] },
        } as never,
      },
      [o.done]: { type: 'final' },
      failed: { type: 'final' },
    },
  });
}
