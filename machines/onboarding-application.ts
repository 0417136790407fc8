// A sub-merchant onboarding application as a pure XState v5 machine.
// spec: States > onboarding_application: `draft` on creation; edits only in `draft` and
// `needs_info`; submit verifies synchronously and resolves in the same call to `approved`,
// `needs_info` or `rejected`; manual approve / reject / request-information is an operator action.
// Ours (the spec says "not shown"): a later submit from `needs_info` verifies again; the operator
// acts on `draft` and `needs_info` applications; `approved` and `rejected` are final.
// The verdict of a submit is computed outside (actors/onboarding-verification.ts, pure) and
// arrives in the event; the machine decides only where it leads.
import { setup, type SnapshotFrom } from 'xstate';

export const ONBOARDING_STATES = ['draft', 'needs_info', 'approved', 'rejected'] as const;
export type OnboardingStatus = (typeof ONBOARDING_STATES)[number];
export const EDITABLE: readonly OnboardingStatus[] = ['draft', 'needs_info'];

export type Verdict = { result: 'approved' } | { result: 'needs_info'; reason: string } | { result: 'rejected'; reason: string };

export type OnboardingEvent =
  | { type: 'edit' }
  | { type: 'submit'; verdict: Verdict }
  | { type: 'operator.approve'; reason?: string }
  | { type: 'operator.reject'; reason?: string }
  | { type: 'operator.request_info'; reason?: string };

export type OnboardingEventType = OnboardingEvent['type'];

/** Webhook events of the application (documented in OpenAPI). */
export type OnboardingWebhook = 'onboarding_application.approved' | 'onboarding_application.needs_info' | 'onboarding_application.rejected';

const emitFor = (event: OnboardingWebhook) => ({ type: 'emit' as const, params: { event } });

export const onboardingMachine = setup({
  types: { events: {} as OnboardingEvent },
  actions: {
    /** Write the patched fields (the actor holds them). */
    applyEdit: () => {},
    /** Stamp `submitted_at`, `resolved_at`, `status_reason` and `resolved_by` = the automatic verifier. */
    resolveAutomatically: () => {},
    /** Stamp `resolved_at`, `status_reason` and `resolved_by` = the operator. */
    resolveByOperator: () => {},
    emit: (_: unknown, _p: { event: OnboardingWebhook }) => {},
  },
  guards: {
    verdictApproved: ({ event }) => event.type === 'submit' && event.verdict.result === 'approved',
    verdictNeedsInfo: ({ event }) => event.type === 'submit' && event.verdict.result === 'needs_info',
    verdictRejected: ({ event }) => event.type === 'submit' && event.verdict.result === 'rejected',
  },
}).createMachine({
  id: 'onboarding_application',
  initial: 'draft',
  states: {
    draft: {
      on: {
        edit: { actions: 'applyEdit' },
        submit: [
          { guard: 'verdictApproved', target: 'approved', actions: ['resolveAutomatically', emitFor('onboarding_application.approved')] },
          { guard: 'verdictNeedsInfo', target: 'needs_info', actions: ['resolveAutomatically', emitFor('onboarding_application.needs_info')] },
          { guard: 'verdictRejected', target: 'rejected', actions: ['resolveAutomatically', emitFor('onboarding_application.rejected')] },
        ],
        'operator.approve': { target: 'approved', actions: ['resolveByOperator', emitFor('onboarding_application.approved')] },
        'operator.reject': { target: 'rejected', actions: ['resolveByOperator', emitFor('onboarding_application.rejected')] },
        'operator.request_info': { target: 'needs_info', actions: ['resolveByOperator', emitFor('onboarding_application.needs_info')] },
      },
    },
    needs_info: {
      on: {
        edit: { actions: 'applyEdit' },
        submit: [
          { guard: 'verdictApproved', target: 'approved', actions: ['resolveAutomatically', emitFor('onboarding_application.approved')] },
          { guard: 'verdictNeedsInfo', target: 'needs_info', reenter: true, actions: ['resolveAutomatically', emitFor('onboarding_application.needs_info')] },
          { guard: 'verdictRejected', target: 'rejected', actions: ['resolveAutomatically', emitFor('onboarding_application.rejected')] },
        ],
        'operator.approve': { target: 'approved', actions: ['resolveByOperator', emitFor('onboarding_application.approved')] },
        'operator.reject': { target: 'rejected', actions: ['resolveByOperator', emitFor('onboarding_application.rejected')] },
        'operator.request_info': { target: 'needs_info', reenter: true, actions: ['resolveByOperator', emitFor('onboarding_application.needs_info')] },
      },
    },
    approved: { type: 'final' },
    rejected: { type: 'final' },
  },
});

export type OnboardingSnapshot = SnapshotFrom<typeof onboardingMachine>;
