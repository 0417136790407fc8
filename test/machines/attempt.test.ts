// Unit tests of the pure attempt machine (machines/attempt.ts) against service-spec.md
// "States and transitions > attempt" (shown moves) and the machine's own moves for the rest
// (declined, voided, expired, refunded). No database, no network: xstate's pure transition() only.
import t from 'tap';
import { createActor, initialTransition, transition } from 'xstate';
import { ATTEMPT_STATES, OPEN_ATTEMPT_STATES, attemptMachine, type AttemptEvent, type AttemptStatus } from '../../machines/attempt.js';

function run(from: AttemptStatus, event: AttemptEvent) {
  const snapshot = attemptMachine.resolveState({ value: from, context: undefined as never });
  const [next, actions] = transition(attemptMachine, snapshot, event);
  return { state: next.value as string, status: next.status, types: actions.map((a) => a.type) };
}

const ALL_EVENTS: AttemptEvent[] = [
  { type: 'captured' },
  { type: 'authorized' },
  { type: 'action_required' },
  { type: 'declined' },
  { type: 'voided' },
  { type: 'expired' },
  { type: 'capture_requested' },
  { type: 'settled' },
  { type: 'refunded', full: true },
  { type: 'refunded', full: false },
];
const label = (e: AttemptEvent) => (e.type === 'refunded' ? `refunded(full=${e.full})` : e.type);

const FINAL: AttemptStatus[] = ['refunded', 'failed', 'canceled', 'expired'];
const REFUNDABLE: AttemptStatus[] = ['captured', 'settled', 'partially_refunded'];

// The full transition table: state -> event label -> [next state, effects]. Anything absent is ignored
// (same state, no effect).
const TABLE: Record<AttemptStatus, Record<string, [AttemptStatus, string[]]>> = {
  pending: {
    captured: ['captured', []],
    authorized: ['authorized', []],
    action_required: ['requires_action', []],
    declined: ['failed', []],
  },
  authorized: {
    capture_requested: ['authorized', ['requestCapture']],
    captured: ['captured', []],
    voided: ['canceled', ['requestVoid']],
    declined: ['failed', []],
  },
  requires_action: {
    captured: ['captured', []],
    declined: ['failed', []],
    expired: ['expired', []],
    voided: ['canceled', []],
  },
  captured: {
    settled: ['settled', []],
    'refunded(full=true)': ['refunded', []],
    'refunded(full=false)': ['partially_refunded', []],
  },
  settled: {
    'refunded(full=true)': ['refunded', []],
    'refunded(full=false)': ['partially_refunded', []],
  },
  partially_refunded: {
    'refunded(full=true)': ['refunded', []],
    'refunded(full=false)': ['partially_refunded', []],
  },
  refunded: {},
  failed: {},
  canceled: {},
  expired: {},
};

t.test('initial state: confirm creates the attempt as pending', async (t) => {
  const [snapshot, actions] = initialTransition(attemptMachine);
  t.equal(snapshot.value, 'pending');
  t.equal(snapshot.status, 'active');
  t.same(actions, [], 'no effect on creation');
  t.equal(createActor(attemptMachine).getSnapshot().value, 'pending', 'an unstarted actor agrees');
});

t.test('the declared states', async (t) => {
  t.same(Object.keys(attemptMachine.states).sort(), [...ATTEMPT_STATES].sort(), 'ATTEMPT_STATES lists the machine states');
  for (const seen of ['pending', 'authorized', 'captured', 'settled', 'partially_refunded']) t.ok((ATTEMPT_STATES as readonly string[]).includes(seen), `spec "seen" status ${seen} exists`);
  t.same([...OPEN_ATTEMPT_STATES].sort(), ['authorized', 'pending', 'requires_action']);
  for (const s of ATTEMPT_STATES) t.equal(attemptMachine.states[s].type === 'final', FINAL.includes(s), `${s} is ${FINAL.includes(s) ? '' : 'not '}final`);
  t.same(Object.keys(TABLE).sort(), [...ATTEMPT_STATES].sort(), 'the test table covers every state');
});

t.test('every state x every event: exact next state and effects', async (t) => {
  for (const from of ATTEMPT_STATES)
    for (const e of ALL_EVENTS) {
      const [to, effects] = TABLE[from][label(e)] ?? [from, []];
      const r = run(from, e);
      const n = `${from} + ${label(e)}`;
      t.equal(r.state, to, `${n} -> ${to}`);
      t.same(r.types, effects, `${n}: effects ${JSON.stringify(effects)}`);
      t.equal(r.status, FINAL.includes(to) ? 'done' : 'active', `${n}: snapshot ${FINAL.includes(to) ? 'done' : 'active'}`);
    }
});

t.test('final states never move and perform nothing', async (t) => {
  for (const from of FINAL) {
    const snapshot = attemptMachine.resolveState({ value: from, context: undefined as never });
    t.equal(snapshot.status, 'done', `${from} resolves as done`);
    for (const e of ALL_EVENTS) t.same([run(from, e).state, run(from, e).types], [from, []], `${from} + ${label(e)}: unchanged`);
  }
});

t.test('only captured, settled and partially_refunded are refundable', async (t) => {
  for (const from of ATTEMPT_STATES) {
    const full = run(from, { type: 'refunded', full: true });
    const partial = run(from, { type: 'refunded', full: false });
    if (REFUNDABLE.includes(from)) {
      t.equal(full.state, 'refunded', `${from}: full refund -> refunded`);
      t.equal(partial.state, 'partially_refunded', `${from}: partial refund -> partially_refunded`);
    } else {
      t.equal(full.state, from, `${from}: a refund is ignored`);
      t.equal(partial.state, from, `${from}: a refund is ignored`);
    }
  }
});

t.test('open attempts end on a decline; capture and void need the right state', async (t) => {
  for (const from of OPEN_ATTEMPT_STATES) {
    t.equal(run(from, { type: 'declined' }).state, 'failed', `${from} + declined -> failed`);
    t.equal(run(from, { type: 'captured' }).state, 'captured', `${from} + captured -> captured`);
  }
  for (const from of ATTEMPT_STATES) {
    const r = run(from, { type: 'capture_requested' });
    t.equal(r.state, from, `${from} + capture_requested keeps the state`);
    t.same(r.types, from === 'authorized' ? ['requestCapture'] : [], `${from}: capture requested only from authorized`);
    const v = run(from, { type: 'voided' });
    t.same(v.types, from === 'authorized' ? ['requestVoid'] : [], `${from}: the provider void (hold release) only from authorized`);
    t.equal(v.state, from === 'authorized' || from === 'requires_action' ? 'canceled' : from, `${from} + voided`);
    t.equal(run(from, { type: 'expired' }).state, from === 'requires_action' ? 'expired' : from, `${from} + expired`);
  }
});

t.test('shown and test-mode paths', async (t) => {
  const walk = (events: AttemptEvent[]) => {
    let [snapshot] = initialTransition(attemptMachine);
    const seen: string[] = [snapshot.value as string];
    const effects: string[] = [];
    for (const e of events) {
      const [next, actions] = transition(attemptMachine, snapshot, e);
      snapshot = next;
      seen.push(next.value as string);
      effects.push(...actions.map((a) => a.type));
    }
    return { seen, effects, status: snapshot.status };
  };
  // tok_sim_ok: immediate capture, then settlement and refunds
  const ok = walk([{ type: 'captured' }, { type: 'settled' }, { type: 'refunded', full: false }, { type: 'refunded', full: false }, { type: 'refunded', full: true }]);
  t.same(ok.seen, ['pending', 'captured', 'settled', 'partially_refunded', 'partially_refunded', 'refunded']);
  t.equal(ok.status, 'done');
  // tok_sim_auth: authorized without capture; POST capture; the provider confirms
  const auth = walk([{ type: 'authorized' }, { type: 'capture_requested' }, { type: 'captured' }]);
  t.same(auth.seen, ['pending', 'authorized', 'authorized', 'captured']);
  t.same(auth.effects, ['requestCapture']);
  // tok_sim_auth then cancel of the intent: void releases the hold
  const voided = walk([{ type: 'authorized' }, { type: 'voided' }]);
  t.same(voided.seen, ['pending', 'authorized', 'canceled']);
  t.same(voided.effects, ['requestVoid']);
  t.equal(voided.status, 'done');
  // tok_sim_3ds: requires_action, then captured
  t.same(walk([{ type: 'action_required' }, { type: 'captured' }]).seen, ['pending', 'requires_action', 'captured']);
  // push method left unpaid
  const unpaid = walk([{ type: 'action_required' }, { type: 'expired' }, { type: 'captured' }]);
  t.same(unpaid.seen, ['pending', 'requires_action', 'expired', 'expired'], 'a late capture cannot revive an expired attempt');
  // tok_sim_insufficient / tok_sim_issuer_down: declined
  const declined = walk([{ type: 'declined' }, { type: 'captured' }]);
  t.same(declined.seen, ['pending', 'failed', 'failed']);
  t.equal(declined.status, 'done');
});

t.test('every state is reachable from pending', async (t) => {
  const reached = new Set<AttemptStatus>(['pending']);
  const queue: AttemptStatus[] = ['pending'];
  while (queue.length > 0) {
    const from = queue.shift()!;
    for (const e of ALL_EVENTS) {
      const to = run(from, e).state as AttemptStatus;
      if (!reached.has(to)) {
        reached.add(to);
        queue.push(to);
      }
    }
  }
  t.same([...reached].sort(), [...ATTEMPT_STATES].sort());
});
