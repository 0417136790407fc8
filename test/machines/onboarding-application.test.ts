// Unit tests of the pure onboarding machine (machines/onboarding-application.ts): the whole
// transition table, state by state and event by event. No database: xstate's transition() only.
import t from 'tap';
import { transition } from 'xstate';
import { EDITABLE, ONBOARDING_STATES, onboardingMachine, type OnboardingEvent, type OnboardingStatus } from '../../machines/onboarding-application.js';

function run(from: OnboardingStatus, event: OnboardingEvent) {
  const snapshot = onboardingMachine.resolveState({ value: from, context: undefined as never });
  const can = snapshot.can(event);
  const [next, actions] = transition(onboardingMachine, snapshot, event);
  return {
    can,
    state: next.value as string,
    types: actions.map((a) => (a.type === 'emit' ? `emit:${(a.params as { event: string }).event}` : a.type)),
  };
}

const EVENTS: Array<[string, OnboardingEvent]> = [
  ['edit', { type: 'edit' }],
  ['submit(approved)', { type: 'submit', verdict: { result: 'approved' } }],
  ['submit(needs_info)', { type: 'submit', verdict: { result: 'needs_info', reason: 'RFC malformed' } }],
  ['submit(rejected)', { type: 'submit', verdict: { result: 'rejected', reason: 'on 69-B' } }],
  ['operator.approve', { type: 'operator.approve', reason: 'ok' }],
  ['operator.reject', { type: 'operator.reject', reason: 'no' }],
  ['operator.request_info', { type: 'operator.request_info', reason: 'need INE' }],
];

const auto = (s: string) => ['resolveAutomatically', `emit:onboarding_application.${s}`];
const op = (s: string) => ['resolveByOperator', `emit:onboarding_application.${s}`];
const OPEN: Record<string, [OnboardingStatus, string[]]> = {
  edit: ['draft', ['applyEdit']],
  'submit(approved)': ['approved', auto('approved')],
  'submit(needs_info)': ['needs_info', auto('needs_info')],
  'submit(rejected)': ['rejected', auto('rejected')],
  'operator.approve': ['approved', op('approved')],
  'operator.reject': ['rejected', op('rejected')],
  'operator.request_info': ['needs_info', op('needs_info')],
};

t.same(EDITABLE, ['draft', 'needs_info']);

for (const from of ONBOARDING_STATES) {
  t.test(`from ${from}`, async (t) => {
    for (const [label, ev] of EVENTS) {
      const r = run(from, ev);
      if (from === 'draft' || from === 'needs_info') {
        const [to, effects] = OPEN[label];
        const expectTo = label === 'edit' ? from : to;
        t.ok(r.can, `${label} is accepted`);
        t.equal(r.state, expectTo, `${label} -> ${expectTo}`);
        t.same(r.types, effects, `${label} effects`);
      } else {
        // approved and rejected are final: nothing moves them (the actor answers transition_conflict).
        t.notOk(r.can, `${label} is refused`);
        t.equal(r.state, from);
        t.same(r.types, []);
      }
    }
  });
}

t.test('the initial state is draft', async (t) => {
  t.equal(onboardingMachine.config.initial, 'draft');
});
