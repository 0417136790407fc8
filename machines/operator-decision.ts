// A four-eyes decision of the operator console as a pure XState v5 machine (docs/operator.md): one
// operator asks (pending); another approves (the operation runs: approved, or failed when it was
// refused) or rejects it. The one who asked can never decide (the actor refuses it before this).
import { setup } from 'xstate';

export const OPERATOR_DECISION_STATES = ['pending', 'approved', 'rejected', 'failed'] as const;
export type OperatorDecisionStatus = (typeof OPERATOR_DECISION_STATES)[number];
export type OperatorDecisionEvent = { type: 'approve' } | { type: 'reject' } | { type: 'execution_failed' };

export const operatorDecisionMachine = setup({
  types: { events: {} as OperatorDecisionEvent },
}).createMachine({
  id: 'operator_decision',
  initial: 'pending',
  states: {
    pending: { on: { approve: 'approved', reject: 'rejected' } },
    approved: { on: { execution_failed: 'failed' } },
    rejected: {},
    failed: {},
  },
});
