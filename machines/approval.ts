// A four-eyes approval as a pure XState v5 machine: one entity kind for every decision that needs a
// second person (refunds and payouts above the tenant's threshold today; operator decisions later).
// decisions.md §2: the approver must differ from the requester. The rule and the threshold check
// are written here once; actors/approvals.ts runs the machine on the entity actor.
import { setup } from 'xstate';

export const APPROVAL_STATES = ['pending', 'approved', 'rejected'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATES)[number];

/** The context of a step: who asked (the machine's guard compares the approver with it). */
export interface ApprovalContext {
  requestedBy: string;
}

export type ApprovalEvent = { type: 'approve'; approver: string } | { type: 'reject'; approver: string };

export type ApprovalEffect =
  /** Create (and carry out) what was asked for, in the approval's transaction. */
  | { type: 'createSubject' }
  /** Refuse the command: nothing is written. */
  | { type: 'refuse'; params: { reason: 'approver_conflict' | 'resolution_conflict' } }
  | { type: 'signal'; params: { event: 'approval.approved' | 'approval.rejected' } };

/** Two names of one person: compared trimmed and case-insensitively (an API key id or an e-mail). */
export const samePerson = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

/** Whether an amount needs a second person: only above a threshold the tenant set (null or absent: never). */
export const needsApproval = (amountMinor: number, thresholdMinor: number | null | undefined) => typeof thresholdMinor === 'number' && amountMinor > thresholdMinor;

export const approvalMachine = setup({
  types: { context: {} as ApprovalContext, events: {} as ApprovalEvent },
  guards: {
    /** Four eyes: the approver is not the requester. */
    anotherPerson: ({ context, event }) => !samePerson(event.approver, context.requestedBy),
  },
  actions: {
    createSubject: () => {},
    refuse: (_: unknown, _p: { reason: 'approver_conflict' | 'resolution_conflict' }) => {},
    signal: (_: unknown, _p: { event: 'approval.approved' | 'approval.rejected' }) => {},
  },
}).createMachine({
  id: 'approval',
  initial: 'pending',
  context: { requestedBy: '' },
  states: {
    pending: {
      on: {
        approve: [
          { guard: 'anotherPerson', target: 'approved', actions: ['createSubject', { type: 'signal', params: { event: 'approval.approved' } }] },
          { actions: [{ type: 'refuse', params: { reason: 'approver_conflict' } }] },
        ],
        reject: { target: 'rejected', actions: [{ type: 'signal', params: { event: 'approval.rejected' } }] },
      },
    },
    // A decision is taken once: a second one is refused (not xstate finals: they would take no event).
    approved: { on: { approve: { actions: [{ type: 'refuse', params: { reason: 'resolution_conflict' } }] }, reject: { actions: [{ type: 'refuse', params: { reason: 'resolution_conflict' } }] } } },
    rejected: { on: { approve: { actions: [{ type: 'refuse', params: { reason: 'resolution_conflict' } }] }, reject: { actions: [{ type: 'refuse', params: { reason: 'resolution_conflict' } }] } } },
  },
});
