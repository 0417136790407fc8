// A Connect account as a pure XState v5 machine. spec: Resources > connect_account (`active`; a
// non-active account is `suspended`, which refuses transfers: connect.account_suspended). Ours:
// the operator suspends and reactivates (operator API); both are idempotent.
import { setup } from 'xstate';

export const CONNECT_ACCOUNT_STATES = ['active', 'suspended'] as const;
export type ConnectAccountStatus = (typeof CONNECT_ACCOUNT_STATES)[number];
export type ConnectAccountEvent = { type: 'operator.suspend' } | { type: 'operator.reactivate' };

export const connectAccountMachine = setup({
  types: { events: {} as ConnectAccountEvent },
}).createMachine({
  id: 'connect_account',
  initial: 'active',
  states: {
    active: { on: { 'operator.suspend': 'suspended' } },
    suspended: { on: { 'operator.reactivate': 'active' } },
  },
});
