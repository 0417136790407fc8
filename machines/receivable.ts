// A receivable (what a customer owes) as a pure XState v5 machine. spec: Resources > "the service"
// (object = receivable): status `open`, `paid`, `overdue`, `canceled`. docs/receivables.md:
// - `open` → `overdue` when its due date passes by the tenant's clock (durable timer; reads derive
//   `overdue` from the clock too, so a read never waits for the timer);
// - `open`/`overdue` → `paid` when the intent of its payment link succeeds (a reaction in the
//   intent's transaction);
// - `open`/`overdue` → `canceled` by the cancel operation; paid and canceled are final.
import { setup } from 'xstate';

export const RECEIVABLE_STATES = ['open', 'overdue', 'paid', 'canceled'] as const;
export type ReceivableStatus = (typeof RECEIVABLE_STATES)[number];

export type ReceivableEvent = { type: 'clock.due' } | { type: 'payment.succeeded' } | { type: 'cancel' };

export type ReceivableWebhook = 'receivable.overdue' | 'receivable.paid' | 'receivable.canceled';

export type ReceivableEffect =
  | { type: 'emit'; params: { event: ReceivableWebhook } }
  | { type: 'reject'; params: { code: string; message: string } }
  | { type: 'recordPayment' }
  | { type: 'deactivateLink' }
  | { type: 'cancelOverdueTimer' }
  | { type: 'requestInvoice' };

const emit = (event: ReceivableWebhook) => ({ type: 'emit' as const, params: { event } });
const reject = (code: string, message: string) => ({ type: 'reject' as const, params: { code, message } });

const PAY = { target: 'paid', actions: ['recordPayment', 'cancelOverdueTimer', 'requestInvoice', emit('receivable.paid')] } as const;
const CANCEL = { target: 'canceled', actions: ['deactivateLink', 'cancelOverdueTimer', emit('receivable.canceled')] } as const;

export const receivableMachine = setup({
  types: { events: {} as ReceivableEvent },
  actions: {
    emit: (_: unknown, _p: { event: ReceivableWebhook }) => {},
    reject: (_: unknown, _p: { code: string; message: string }) => {},
    /** Record the paying intent and paid_at. */
    recordPayment: () => {},
    /** The payment link stops taking payments. */
    deactivateLink: () => {},
    cancelOverdueTimer: () => {},
    /** With fiscal fields (or a PPD invoice): the job that stamps its CFDI (PUE, or the REP). */
    requestInvoice: () => {},
  },
}).createMachine({
  id: 'receivable',
  initial: 'open',
  states: {
    open: { on: { 'clock.due': { target: 'overdue', actions: emit('receivable.overdue') }, 'payment.succeeded': PAY, cancel: CANCEL } },
    overdue: { on: { 'payment.succeeded': PAY, cancel: CANCEL } },
    paid: { on: { cancel: { actions: reject('receivable.cancel_conflict', 'This receivable is paid; a paid receivable cannot be canceled (refund the payment instead).') } } },
    canceled: {},
  },
});
