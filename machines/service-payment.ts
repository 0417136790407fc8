// A service payment (a utility bill paid through the biller aggregator): an aggregator order
// (machines/aggregator-order.ts). spec: "Confirm answers with paid or failed (with
// failure_reason)". Ours (docs/billers.md): the row is written `pending` before the aggregator is
// asked, so a crash between the payment and its record is resolved by asking (never by paying
// twice); `pending` leaves only on the aggregator's word.
import { aggregatorOrderMachine } from './aggregator-order.js';

export const SERVICE_PAYMENT_STATES = ['pending', 'paid', 'failed'] as const;
export type ServicePaymentStatus = (typeof SERVICE_PAYMENT_STATES)[number];

export const servicePaymentMachine = aggregatorOrderMachine({ id: 'service_payment', source: 'biller', done: 'paid' });
