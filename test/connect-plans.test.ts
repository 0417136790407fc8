// The pure plans of payouts and onboarding applications (actors/payouts.ts planPayoutStep,
// actors/onboarding.ts planApplicationStep): what one step writes, as data, with no database.
import t from 'tap';
import type { StepEnv } from '../kernel/entity.js';
import { planPayoutStep, nextPollAt, type PayoutRow } from '../actors/payouts.js';
import { planApplicationStep, maskAny, type ApplicationRow } from '../actors/onboarding.js';

const at = new Date('2026-03-01T10:00:00Z');
const env: StepEnv = { at, now: at, newId: () => '00000000-0000-4000-8000-000000000000' };
const created = new Date('2026-03-01T09:30:00Z');

const payout = (over: Partial<PayoutRow> = {}): { row: PayoutRow; clockOffsetMs: number } => ({
  clockOffsetMs: 0,
  row: {
    id: '11111111-1111-4111-8111-111111111111', tenant_id: '22222222-2222-4222-8222-222222222222', livemode: false, status: 'processing', version: 3,
    clabe_sealed: 'v1.xxx', clabe_masked: '646***********0007', beneficiary_name: 'X', beneficiary_rfc: null, amount_minor: 5_000, currency: 'MXN', concepto: 'c', reference: '123',
    connector_key: 'stp', rail_key: 'sim', order_key: 'orq_po_1', tracking_key: 'ORQ1', send_started_at: null, operation_date: null, sent_at: null, provider_ref: null,
    failure_code: null, failure_reason: null, requested_by: 'k', approval_id: null, connect_account_id: null, paid_at: null, returned_at: null, created_at: created, updated_at: created,
    ...over,
  },
});

t.test('payout: send_started is recorded before the call', async (t) => {
  const p = planPayoutStep(payout(), { kind: 'send_started', operationDate: '20260301' }, env);
  t.same(p.set, { updated_at: at, send_started_at: at, operation_date: '20260301' });
  t.same(p.events, []);
  t.same(p.ledger, []);
  t.equal(p.history?.event, 'send_started');
  t.equal(p.result.version, 4);
});

t.test('payout: accepted in flight -> provider_ref and a poll timer; a repeat only moves the timer', async (t) => {
  const p = planPayoutStep(payout({ send_started_at: at }), { kind: 'rail', state: { state: 'in_flight', providerRef: '77' } }, env);
  t.match(p.set, { provider_ref: '77', sent_at: at });
  t.notOk(p.set?.status);
  t.same(p.timers, [{ kind: 'payout.poll', entityId: payout().row.id, dueAt: nextPollAt(at, created) }]);
  t.same(nextPollAt(at, created), new Date(at.getTime() + 60_000), 'every minute in the first hour');
  t.same(nextPollAt(new Date(created.getTime() + 2 * 3_600_000), created).getTime() - created.getTime() - 2 * 3_600_000, 15 * 60_000, 'then every 15 minutes');
  const again = planPayoutStep(payout({ send_started_at: at, provider_ref: '77', sent_at: at }), { kind: 'rail', state: { state: 'in_flight', providerRef: '77' } }, env);
  t.notOk(again.set, 'no row change');
  t.notOk(again.history, 'no history row per poll');
  t.equal(again.timers?.length, 1);
});

t.test('payout: paid -> status, ledger payout.sent, event payout.paid, timer cancelled', async (t) => {
  const p = planPayoutStep(payout({ send_started_at: at, provider_ref: '77', sent_at: at, connect_account_id: 'acc' }), { kind: 'rail', state: { state: 'paid', providerRef: '77' } }, env);
  t.match(p.set, { status: 'paid', paid_at: at });
  t.same(p.ledger!.map((e) => [e.kind, e.lines.map((l) => [l.account, l.amountMinor])]), [['payout.sent', [['connect_payable:acc', 5_000], ['payout_source:stp', -5_000]]]]);
  t.same(p.events!.map((e) => e.type), ['payout.paid']);
  t.match(p.events![0].data, { status: 'paid', clabe_masked: '646***********0007', provider_ref: '77' });
  t.notOk('clabe' in (p.events![0].data as object), 'no clabe field in the event: only the masked one');
  t.same(p.timers, [{ kind: 'payout.poll', entityId: payout().row.id, cancel: true }]);
});

t.test('payout: failed -> reason, event, no ledger', async (t) => {
  const p = planPayoutStep(payout({ send_started_at: at }), { kind: 'rail', state: { state: 'failed', code: 'beneficiary_rejected', reason: 'no' } }, env);
  t.match(p.set, { status: 'failed', failure_code: 'beneficiary_rejected', failure_reason: 'no', sent_at: at });
  t.same(p.ledger, []);
  t.same(p.events!.map((e) => e.type), ['payout.failed']);
});

t.test('payout: returned, from processing (both entries) and from paid (the reversal)', async (t) => {
  const fromProcessing = planPayoutStep(payout({ send_started_at: at }), { kind: 'rail', state: { state: 'returned', providerRef: '77', code: 'r', reason: 'back' } }, env);
  t.same(fromProcessing.ledger!.map((e) => e.kind), ['payout.sent', 'payout.returned']);
  t.match(fromProcessing.set, { status: 'returned', returned_at: at, failure_reason: 'back' });
  const fromPaid = planPayoutStep(payout({ status: 'paid', provider_ref: '77', sent_at: at }), { kind: 'rail', state: { state: 'returned', providerRef: '77', code: 'r', reason: 'back' }, inboxId: 'ib' }, env);
  t.same(fromPaid.ledger!.map((e) => e.kind), ['payout.returned']);
  t.same(fromPaid.events!.map((e) => e.type), ['payout.returned']);
  t.same(fromPaid.writes, [{ op: 'update', table: 'inbox', id: 'ib', set: { processed_at: at } }], 'the notice is processed in the step');
});

t.test('payout: evidence a final payout is past changes nothing but the notice', async (t) => {
  const p = planPayoutStep(payout({ status: 'failed' }), { kind: 'rail', state: { state: 'paid', providerRef: '1' }, inboxId: 'ib' }, env);
  t.notOk(p.set);
  t.notOk(p.events?.length);
  t.same(p.writes, [{ op: 'update', table: 'inbox', id: 'ib', set: { processed_at: at } }]);
  t.same(planPayoutStep(payout({ status: 'paid' }), { kind: 'rail', state: { state: 'paid', providerRef: '1' } }, env).set, undefined, 'a repeated paid');
  t.same(planPayoutStep(payout(), { kind: 'notice_done', inboxId: 'ib' }, env).writes, [{ op: 'update', table: 'inbox', id: 'ib', set: { processed_at: at } }]);
});

const app = (over: Partial<ApplicationRow> = {}): { row: ApplicationRow; clockOffsetMs: number } => ({
  clockOffsetMs: 0,
  row: {
    id: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa', tenant_id: '22222222-2222-4222-8222-222222222222', livemode: false, status: 'draft', version: 0,
    legal_name: 'L', person_type: 'moral', contact_email: 'a@b.mx', rfc: null, clabe_sealed: null, clabe_masked: null, documents: {},
    status_reason: null, resolved_by: null, submitted_at: null, resolved_at: null, created_at: created, updated_at: created, ...over,
  },
});
const seal = (c: string) => `sealed(${c.length})`;

t.test('application: edit writes the fields, seals the CLABE, replaces documents by type', async (t) => {
  const first = planApplicationStep(app(), { kind: 'edit', fields: { rfc: ' eku9003173c9 ', clabe: '646180110400000007', documents: [{ document_type: 'ine', reference: 'r1', reference_hash: 'h1' }] } }, env, undefined, seal);
  t.match(first.set, { rfc: 'EKU9003173C9', clabe_sealed: 'sealed(18)', clabe_masked: '646***********0007' });
  t.notMatch(JSON.stringify(first), /646180110400000007/, 'the plan carries no full CLABE');
  t.same(first.history, { event: 'edit', data: { fields: ['rfc', 'clabe', 'documents'] } });
  const second = planApplicationStep(app({ documents: first.result.documents }), { kind: 'edit', fields: { documents: [{ document_type: 'ine', reference: 'r2', reference_hash: 'h2' }, { document_type: 'constancia_fiscal', reference: 'r3', reference_hash: 'h3' }] } }, env, undefined, seal);
  t.same(Object.keys(second.result.documents).sort(), ['constancia_fiscal', 'ine']);
  t.equal(second.result.documents.ine.reference, 'r2');
  t.same(second.events, []);
  t.equal(maskAny('12345'), '*****');
  t.equal(maskAny('64618011040000000X1'), '646************00X1', 'a malformed CLABE is masked too');
});

t.test('application: submit resolves as the verdict says; operator actions; refused when resolved', async (t) => {
  const ok = planApplicationStep(app(), { kind: 'submit' }, env, { verdict: { result: 'approved' } }, seal);
  t.match(ok.set, { status: 'approved', resolved_by: 'automatic_verifier', submitted_at: at, resolved_at: at, status_reason: null });
  t.same(ok.events!.map((e) => e.type), ['onboarding_application.approved']);
  const ni = planApplicationStep(app(), { kind: 'submit' }, env, { verdict: { result: 'needs_info', reason: 'RFC' } }, seal);
  t.match(ni.set, { status: 'needs_info', status_reason: 'RFC' });
  const again = planApplicationStep(app({ status: 'needs_info' }), { kind: 'submit' }, env, { verdict: { result: 'needs_info', reason: 'still' } }, seal);
  t.match(again.set, { status_reason: 'still' });
  t.notOk('status' in (again.set ?? {}), 'stays needs_info');
  t.same(again.events!.map((e) => e.type), ['onboarding_application.needs_info']);
  const op = planApplicationStep(app({ status: 'needs_info' }), { kind: 'operator', action: 'reject', reason: 'docs' }, env, undefined, seal);
  t.match(op.set, { status: 'rejected', resolved_by: 'operator', status_reason: 'docs' });
  for (const status of ['approved', 'rejected']) {
    t.throws(() => planApplicationStep(app({ status }), { kind: 'edit', fields: { legal_name: 'x' } }, env, undefined, seal), { code: 'onboarding_application.transition_conflict' });
    t.throws(() => planApplicationStep(app({ status }), { kind: 'operator', action: 'approve' }, env, undefined, seal), { code: 'onboarding_application.transition_conflict' });
  }
});
