// A service payment (a utility bill paid through the biller aggregator) as a pure XState machine.
// spec: "Confirm answers with paid or failed (with failure_reason)". Ours (docs/billers.md): the
// row is written `pending` before the aggregator is asked, so a crash between the payment and its
// record is resolved by asking (never by paying twice); `pending` leaves only on the
// aggregator's word.
import { setup } from 'xstate';

export const SERVICE_PAYMENT_STATES = ['pending', 'paid', 'failed'] as const;
export type ServicePaymentStatus = (typeof SERVICE_PAYMENT_STATES)[number];

export type ServicePaymentEvent = { type: 'biller.paid' } | { type: 'biller.failed' };

export const servicePaymentMachine = setup({
  types: { events: {} as ServicePaymentEvent },
  actions: {
    /** Record the aggregator's reference. */
    recordProvider: () => {},
    /** Record `failure_reason`. */
    recordFailure: () => {},
    /** Ledger: the bill was paid (billPaidLines). */
    postPaid: () => {},
  },
}).createMachine({
  id: 'service_payment',
  initial: 'pending',
  states: {
    pending: {
      on: {
        'biller.paid': { target: 'paid', actions: ['recordProvider', 'postPaid'] },
        'biller.failed': { target: 'failed', actions: ['recordProvider', 'recordFailure'] },
      },
    },
    paid: { type: 'final' },
    failed: { type: 'final' },
  },
});
