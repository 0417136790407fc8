// A CFDI that relates an invoice: a payment complement (REP, invoice_payments) or a credit note
// (egreso, credit_notes), as a pure XState v5 machine. Each is its own CFDI with its own life at SAT
// while it moves under its invoice's lock (actors/invoice-plan.ts); its cancellation follows the
// same path as the invoice's (docs/invoices.md "Cancellation"):
//
//   pending ──pac.stamped──▶ stamped ──pac.cancelled──▶ cancelled
//      │                       │  ▲
//      ├─pac.rejected─▶ error  │  └─pac.cancel_rejected── cancel_pending
//      └─pac.not_stamped─▶ error └──pac.cancel_pending──▶ cancel_pending ──pac.cancelled──▶ cancelled
//
// `cancel_pending`: SAT holds the cancellation for the receptor's acceptance ("En proceso"); the
// document is still live (Vigente at SAT): a REP keeps its place in the chain, a credit note its
// share of the invoice. `cancelled` gives them back; a refusal makes it `stamped` again.
import { setup } from 'xstate';

export type CfdiDocumentStatus = 'pending' | 'stamped' | 'error' | 'cancel_pending' | 'cancelled';
export type CfdiDocumentEvent =
  | { type: 'pac.stamped' }
  | { type: 'pac.rejected' }
  | { type: 'pac.not_stamped' }
  | { type: 'pac.cancelled' }
  | { type: 'pac.cancel_pending' }
  | { type: 'pac.cancel_rejected' };
/** `stamped`, `cancelled`: the actor names them by kind (`invoice_payment.*`, `credit_note.*`). */
export type CfdiDocumentEffect = 'stamped' | 'cancelled';

/**
 * The life of a CFDI at SAT, one chart for every kind (the invoice's, machines/invoice.ts, and a REP's or
 * credit note's): `effects` names what each kind emits on stamping, on a refused stamp (an invoice
 * says `invoice.failed`; a related document nothing) and on cancellation.
 */
export function cfdiLifecycle<E extends string>(id: string, effects: { stamped: E; failed?: E; cancelled: E }) {
  const emit = (event: E | undefined) => (event ? [{ type: 'emit' as const, params: { event } }] : []);
  return setup({
    types: { events: {} as CfdiDocumentEvent },
    actions: {
      emit: (_: unknown, _p: { event: E }) => {},
    },
  }).createMachine({
    id,
    initial: 'pending',
    states: {
      pending: {
        on: {
          'pac.stamped': { target: 'stamped', actions: emit(effects.stamped) },
          'pac.rejected': { target: 'error', actions: emit(effects.failed) },
          'pac.not_stamped': { target: 'error', actions: emit(effects.failed) },
        },
      },
      stamped: {
        on: {
          'pac.cancelled': { target: 'cancelled', actions: emit(effects.cancelled) },
          'pac.cancel_pending': { target: 'cancel_pending' },
        },
      },
      cancel_pending: {
        on: {
          'pac.cancelled': { target: 'cancelled', actions: emit(effects.cancelled) },
          'pac.cancel_rejected': { target: 'stamped' },
        },
      },
      error: { type: 'final' },
      cancelled: { type: 'final' },
    },
  });
}

export const cfdiDocumentMachine = cfdiLifecycle<CfdiDocumentEffect>('cfdi_document', { stamped: 'stamped', cancelled: 'cancelled' });
