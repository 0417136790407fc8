// A refund as a pure XState v5 machine. spec: States > refund: `requested` on creation, then
// `succeeded` (event refund.succeeded) or `failed` (event refund.failed).
import { setup } from 'xstate';

export type RefundStatus = 'requested' | 'succeeded' | 'failed';
export type RefundEvent = { type: 'provider.succeeded' } | { type: 'provider.failed' };
export type RefundEffect = { type: 'postLedger' } | { type: 'settleAttempt' } | { type: 'emit'; params: { event: 'refund.succeeded' | 'refund.failed' } };

export const refundMachine = setup({
  types: { events: {} as RefundEvent },
  actions: {
    emit: (_: unknown, _p: { event: 'refund.succeeded' | 'refund.failed' }) => {},
    postLedger: () => {},
    /** The attempt's status follows its refunds: the payment intent actor changes it (a job after the commit). */
    settleAttempt: () => {},
  },
}).createMachine({
  id: 'refund',
  initial: 'requested',
  states: {
    requested: {
      on: {
        'provider.succeeded': { target: 'succeeded', actions: ['postLedger', 'settleAttempt', { type: 'emit', params: { event: 'refund.succeeded' } }] },
        'provider.failed': { target: 'failed', actions: [{ type: 'emit', params: { event: 'refund.failed' } }] },
      },
    },
    succeeded: { type: 'final' },
    failed: { type: 'final' },
  },
});
