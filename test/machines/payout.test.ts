// Unit tests of the pure payout machine (machines/payout.ts): the whole transition table.
import t from 'tap';
import { transition } from 'xstate';
import { PAYOUT_STATES, payoutMachine, type PayoutEvent, type PayoutStatus } from '../../machines/payout.js';

function run(from: PayoutStatus, event: PayoutEvent) {
  const snapshot = payoutMachine.resolveState({ value: from, context: undefined as never });
  const [next, actions] = transition(payoutMachine, snapshot, event);
  return { can: snapshot.can(event), state: next.value as string, types: actions.map((a) => (a.type === 'emit' ? `emit:${(a.params as { event: string }).event}` : a.type)) };
}

const EVENTS: PayoutEvent['type'][] = ['send_started', 'rail.in_flight', 'rail.paid', 'rail.failed', 'rail.returned'];
const TABLE: Record<PayoutStatus, Partial<Record<PayoutEvent['type'], [PayoutStatus, string[]]>>> = {
  processing: {
    send_started: ['processing', ['markSending']],
    'rail.in_flight': ['processing', ['recordRail']],
    'rail.paid': ['paid', ['recordRail', 'postSent', 'emit:payout.paid']],
    'rail.failed': ['failed', ['recordRail', 'recordFailure', 'emit:payout.failed']],
    'rail.returned': ['returned', ['recordRail', 'recordFailure', 'postSent', 'postReturned', 'emit:payout.returned']],
  },
  paid: { 'rail.returned': ['returned', ['recordFailure', 'postReturned', 'emit:payout.returned']] },
  failed: {},
  returned: {},
};

for (const from of PAYOUT_STATES) {
  t.test(`from ${from}`, async (t) => {
    for (const type of EVENTS) {
      const r = run(from, { type } as PayoutEvent);
      const want = TABLE[from][type];
      if (want) {
        t.ok(r.can, `${type} accepted`);
        t.equal(r.state, want[0], `${type} -> ${want[0]}`);
        t.same(r.types, want[1], `${type} effects`);
      } else {
        t.notOk(r.can, `${type} ignored`);
        t.equal(r.state, from);
        t.same(r.types, []);
      }
    }
  });
}
t.equal(payoutMachine.config.initial, 'processing', 'a payout is created processing');
