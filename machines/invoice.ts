// An invoice (CFDI) as a pure XState v5 machine. spec: invoice states `stamped` and `error`, "a
// pending state is referred to but not listed"; decisions.md §6: a rejected stamp is not live, a
// cancelled invoice is not `stamped`. Orquesta's full set (docs/invoices.md):
//
//   pending ──pac.stamped──▶ stamped ──pac.cancelled──▶ cancelled
//      │                       │  ▲
//      ├─pac.rejected─▶ error  │  └─pac.cancel_rejected── cancel_pending
//      └─pac.not_stamped─▶ error └──pac.cancel_pending──▶ cancel_pending ──pac.cancelled──▶ cancelled
//
// `pending` is live (it blocks another invoice for the charge) while the PAC's answer is unknown;
// `error` is final and not live. Payment complements and credit notes do not move the invoice's
// state: they are their own CFDIs, recorded with the invoice's version as fence.
import { setup } from 'xstate';

export type InvoiceStatus = 'pending' | 'stamped' | 'error' | 'cancel_pending' | 'cancelled';
export const LIVE_INVOICE_STATUSES: readonly InvoiceStatus[] = ['pending', 'stamped', 'cancel_pending'];

export type InvoiceEvent =
  | { type: 'pac.stamped' }
  | { type: 'pac.rejected' }
  | { type: 'pac.not_stamped' }
  | { type: 'pac.cancelled' }
  | { type: 'pac.cancel_pending' }
  | { type: 'pac.cancel_rejected' };

export type InvoiceEffect = 'invoice.stamped' | 'invoice.failed' | 'invoice.cancelled';

export const invoiceMachine = setup({
  types: { events: {} as InvoiceEvent },
  actions: {
    emit: (_: unknown, _p: { event: InvoiceEffect }) => {},
  },
}).createMachine({
  id: 'invoice',
  initial: 'pending',
  states: {
    pending: {
      on: {
        'pac.stamped': { target: 'stamped', actions: [{ type: 'emit', params: { event: 'invoice.stamped' } }] },
        'pac.rejected': { target: 'error', actions: [{ type: 'emit', params: { event: 'invoice.failed' } }] },
        'pac.not_stamped': { target: 'error', actions: [{ type: 'emit', params: { event: 'invoice.failed' } }] },
      },
    },
    stamped: {
      on: {
        'pac.cancelled': { target: 'cancelled', actions: [{ type: 'emit', params: { event: 'invoice.cancelled' } }] },
        'pac.cancel_pending': { target: 'cancel_pending' },
      },
    },
    cancel_pending: {
      on: {
        'pac.cancelled': { target: 'cancelled', actions: [{ type: 'emit', params: { event: 'invoice.cancelled' } }] },
        'pac.cancel_rejected': { target: 'stamped' },
      },
    },
    error: { type: 'final' },
    cancelled: { type: 'final' },
  },
});
