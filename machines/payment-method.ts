// A saved payment method as a pure XState v5 machine. spec: States > payment_method:
// save → pending; worker activation → active (brand, last4); active or pending + detach → detached
// (terminal; detaching again does not fail). Only an active method can be charged.
import { setup } from 'xstate';

export type PaymentMethodStatus = 'pending' | 'active' | 'detached';
export type PaymentMethodEvent = { type: 'activated' } | { type: 'detach' } | { type: 'charge' };

export const paymentMethodMachine = setup({
  types: { events: {} as PaymentMethodEvent },
  actions: {
    setCard: () => {},
    reject: (_: unknown, _p: { code: string; message: string }) => {},
    allowCharge: () => {},
  },
}).createMachine({
  id: 'payment_method',
  initial: 'pending',
  on: {
    charge: { actions: { type: 'reject', params: { code: 'payment_method.not_chargeable', message: 'Only an active saved payment method can be charged.' } } },
  },
  states: {
    pending: { on: { activated: { target: 'active', actions: 'setCard' }, detach: 'detached' } },
    active: { on: { detach: 'detached', charge: { actions: 'allowCharge' } } },
    // Terminal; a repeated detach is a no-op; a late activation changes nothing.
    detached: { on: { detach: {}, activated: {} } },
  },
});
