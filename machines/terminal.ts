// A point-of-sale terminal (card-present reader or counter CoDi device) as a pure XState v5 machine.
// spec: Endpoints > Payment intents ("card-present or counter CoDi charges carry
// `metadata.terminal_id` of an already active terminal; terminal administration is a portal
// action"); decisions.md §7 (a charge naming no active terminal of the tenant is refused).
// Ours (the spec shows no states): `registered` on creation (serial and branch known, not yet in
// service), `active` (takes charges), `inactive` (taken out of service; can be activated again).
// Activating an active terminal or deactivating an inactive one is a no-op; reassigning (another
// branch or register) is allowed in every state and keeps the state.
import { setup } from 'xstate';

export const TERMINAL_STATES = ['registered', 'active', 'inactive'] as const;
export type TerminalStatus = (typeof TERMINAL_STATES)[number];

export type TerminalEvent = { type: 'activate' } | { type: 'deactivate' } | { type: 'reassign' };

/** Webhook events of a terminal (the event catalog lists them). */
export type TerminalWebhook = 'terminal.activated' | 'terminal.deactivated' | 'terminal.reassigned';

const emit = (event: TerminalWebhook) => ({ type: 'emit' as const, params: { event } });

export const terminalMachine = setup({
  types: { events: {} as TerminalEvent },
  actions: {
    emit: (_: unknown, _p: { event: TerminalWebhook }) => {},
    reassign: () => {},
  },
}).createMachine({
  id: 'terminal',
  initial: 'registered',
  on: {
    reassign: { actions: ['reassign', emit('terminal.reassigned')] },
  },
  states: {
    registered: {
      on: {
        activate: { target: 'active', actions: emit('terminal.activated') },
        deactivate: { target: 'inactive', actions: emit('terminal.deactivated') },
      },
    },
    active: {
      on: {
        activate: {},
        deactivate: { target: 'inactive', actions: emit('terminal.deactivated') },
      },
    },
    inactive: {
      on: {
        activate: { target: 'active', actions: emit('terminal.activated') },
        deactivate: {},
      },
    },
  },
});

/** Only an active terminal takes charges. */
export const takesCharges = (status: string) => status === 'active';
