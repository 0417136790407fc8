// Unit tests of the pure approval machine (machines/approval.ts): four eyes (decisions.md §2: the
// approver differs from the requester), one decision per approval, and the threshold rule.
import t from 'tap';
import { machineStep, machineStates, initialState } from '../../kernel/machine-step.js';
import { APPROVAL_STATES, approvalMachine, needsApproval, samePerson, type ApprovalEffect } from '../../machines/approval.js';

const step = (from: string, type: 'approve' | 'reject', approver: string, requestedBy = 'key_requester') =>
  machineStep<ApprovalEffect>(approvalMachine, from, { requestedBy }, { type, approver });

t.test('states and the initial state', async (t) => {
  t.same(machineStates(approvalMachine), [...APPROVAL_STATES]);
  t.equal(initialState(approvalMachine), 'pending');
});

t.test('another person approves: approved, the subject is created, a signal', async (t) => {
  const s = step('pending', 'approve', 'tesorera@mercado.mx');
  t.equal(s.value, 'approved');
  t.same(s.effects.map((e) => e.type), ['createSubject', 'signal']);
});

t.test('the requester cannot approve its own request: refused, still pending', async (t) => {
  for (const self of ['key_requester', '  KEY_REQUESTER ', 'Key_Requester']) {
    const s = step('pending', 'approve', self);
    t.equal(s.value, 'pending', `"${self}" is the requester`);
    t.same(s.effects, [{ type: 'refuse', params: { reason: 'approver_conflict' } }]);
  }
});

t.test('reject: rejected, nothing created', async (t) => {
  const s = step('pending', 'reject', 'tesorera@mercado.mx');
  t.equal(s.value, 'rejected');
  t.notOk(s.effects.some((e) => e.type === 'createSubject'));
});

t.test('a decision is taken once', async (t) => {
  for (const from of ['approved', 'rejected']) {
    for (const type of ['approve', 'reject'] as const) {
      const s = step(from, type, 'otra@mercado.mx');
      t.equal(s.value, from, `${type} after ${from}`);
      t.same(s.effects, [{ type: 'refuse', params: { reason: 'resolution_conflict' } }]);
    }
  }
});

t.test('the threshold: only above it, and only when the tenant set one', async (t) => {
  t.equal(needsApproval(5001, 5000), true);
  t.equal(needsApproval(5000, 5000), false, 'at the threshold: no approval');
  t.equal(needsApproval(10 ** 9, null), false);
  t.equal(needsApproval(10 ** 9, undefined), false);
  t.equal(needsApproval(1, 0), true);
  t.equal(samePerson(' A@b.mx', 'a@B.MX '), true);
  t.equal(samePerson('a@b.mx', 'c@b.mx'), false);
});
