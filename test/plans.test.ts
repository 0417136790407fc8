// The plans of the ported entities, tested with no database: a plan is a pure function of the
// hydrated state, the command, the step's environment and what `prepare` found.
import t from 'tap';
import type { StepEnv } from '../kernel/entity.js';
import { jobRequest, defineJob } from '../kernel/jobs.js';
import { planIntentStep, type IntentJobs } from '../actors/payment-intent-plan.js';
import type { AttemptRow, HydratedIntent, IntentRow } from '../actors/payment-intent-store.js';
import { planRefundOutcome, type RefundRow } from '../actors/refunds.js';
import { planMethodStep, type PaymentMethodRow } from '../actors/payment-methods.js';

const T = '11111111-1111-4111-8111-111111111111';
const at = new Date('2026-11-23T12:00:00Z');
let n = 0;
const env = (): StepEnv => ({ at, now: new Date(at.getTime() + 3600_000), newId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}` });
const probe = defineJob<{ intentId: string; attemptId: string }>({ queue: 'q', name: 'probe', shape: {}, id: (d) => d.attemptId, shardKey: (d) => d.intentId, run: async () => undefined });
const jobs: IntentJobs = {
  execute: (i, a) => jobRequest({ ...probe, name: 'execute' }, { intentId: i.id, attemptId: a, tenantId: i.tenant_id, livemode: i.livemode } as never),
  capture: (i, a) => jobRequest({ ...probe, name: 'capture' }, { intentId: i.id, attemptId: a }),
  void: (i, a) => jobRequest({ ...probe, name: 'void' }, { intentId: i.id, attemptId: a }),
};

function intent(over: Partial<IntentRow> = {}): IntentRow {
  return {
    id: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa', tenant_id: T, livemode: false, amount_minor: 10000, tip_minor: 0, currency: 'MXN', status: 'requires_payment_method',
    client_secret: 'pi_secret_x', metadata: null, receipt_code: 'W-ABCDE', customer_id: null, next_action: null, last_error: null, version: 3, created_at: at, updated_at: at, ...over,
  };
}
function attempt(over: Partial<AttemptRow> = {}): AttemptRow {
  return {
    id: 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb', tenant_id: T, livemode: false, payment_intent_id: intent().id, status: 'pending', connector_key: 'sim', method: 'card',
    amount_minor: 10000, currency: 'MXN', payment_token: 'tok_x', provider_ref: null, provider_key: 'orq_att_b', failure_code: null, failure_message: null, decline: null,
    capture_requested_at: null, fee_minor: null, created_at: at, updated_at: at, ...over,
  };
}
const hydrated = (i: IntentRow, attempts: AttemptRow[] = []): HydratedIntent => ({ row: i, clockOffsetMs: 3600_000, attempts, open: attempts.find((a) => ['pending', 'authorized', 'requires_action'].includes(a.status)) });

t.test('payment intent: confirm opens an attempt, fenced on the version, and asks for its execution after commit', async (t) => {
  const p = planIntentStep(hydrated(intent()), { kind: 'confirm', body: { payment_method: 'card', payment_token: 'tok_sim_ok', tip_minor: 500 } }, env(), {
    charge: { method: 'card', token: 'tok_sim_ok', tip: 500, route: { connector: 'sim' }, risk: 'allow' },
  }, jobs);
  t.equal(p.set?.status, 'processing');
  t.equal(p.set?.tip_minor, 500, 'the tip sent replaces the old one');
  const ins = p.writes!.filter((w) => w.op === 'insert' && w.table === 'attempts');
  t.equal(ins.length, 1, 'one attempt row');
  const row = (ins[0] as { row: Record<string, unknown> }).row;
  t.equal(row.amount_minor, 10500, 'the attempt charges amount + tip');
  t.equal(row.provider_key, `orq_att_${String(row.id)}`, 'the provider key derives from the attempt id');
  t.same(p.jobs!.map((j) => [j.def.name, (j.data as { attemptId: string }).attemptId]), [['execute', row.id]]);
  // the job names the intent's tenant and mode: the worker reads the intent scoped (one shard under Citus)
  t.match(p.jobs![0].data, { intentId: intent().id, tenantId: intent().tenant_id, livemode: intent().livemode });
  t.same(p.events, [], 'the move to processing is not dispatched (spec)');
  t.equal(p.history?.event, 'confirm');
  t.equal((p.response?.body as { status: string }).status, 'processing');
});

t.test('payment intent: confirm refusals write nothing (no route, blocked, not confirmable with the status named)', async (t) => {
  const prep = (route: boolean, risk: 'allow' | 'block') => ({ charge: { method: 'bnpl', tip: 0, route: route ? { connector: 'sim' } : undefined, risk } });
  t.throws(() => planIntentStep(hydrated(intent()), { kind: 'confirm', body: { payment_method: 'card', payment_token: 'x' } }, env(), prep(false, 'allow'), jobs), { code: 'payment_intent.no_route' });
  t.throws(() => planIntentStep(hydrated(intent()), { kind: 'confirm', body: { payment_method: 'card', payment_token: 'x' } }, env(), prep(true, 'block'), jobs), { code: 'payment_intent.blocked_by_risk' });
  t.throws(() => planIntentStep(hydrated(intent({ status: 'succeeded' })), { kind: 'confirm', body: { payment_method: 'card', payment_token: 'x' } }, env(), prep(true, 'allow'), jobs), {
    code: 'payment_intent.not_confirmable',
    message: /This one is succeeded/,
  });
});

t.test('payment intent: capture evidence writes the fee, the ledger entry and the event in one plan', async (t) => {
  const a = attempt();
  const p = planIntentStep(hydrated(intent({ status: 'processing', tip_minor: 500 }), [a]), { kind: 'evidence', attemptId: a.id, outcome: { kind: 'captured', providerRef: 'ref_1' }, source: 'connector' }, env(), { feeMinor: 540 }, jobs);
  t.equal(p.set?.status, 'succeeded');
  const upd = p.writes!.find((w) => w.op === 'update' && w.table === 'attempts') as { set: Record<string, unknown> };
  t.same([upd.set.status, upd.set.fee_minor, upd.set.provider_ref, upd.set.payment_token], ['captured', 540, 'ref_1', null], 'captured, with its fee; the token dropped');
  t.equal(p.ledger!.length, 1);
  const sum = p.ledger![0].lines.reduce((s, l) => s + l.amountMinor, 0);
  t.equal(sum, 0, 'the entry balances');
  t.same(p.events!.map((e) => e.type), ['payment_intent.succeeded']);
  t.same((p.events![0].data as { total_minor: number; metadata: unknown }), { id: intent().id, object: 'payment_intent', status: 'succeeded', amount_minor: 10000, tip_minor: 500, total_minor: 10500, currency: 'MXN', metadata: null });
  t.notOk(p.response && p.response.status !== 200);
});

t.test('payment intent: soft decline closes the attempt, then retries on the next connector (or fails with no retry left)', async (t) => {
  const a = attempt();
  const decline = { kind: 'evidence' as const, attemptId: a.id, outcome: { kind: 'soft_decline' as const, code: 'issuer_unavailable', message: 'x' }, source: 'connector' as const };
  const retry = planIntentStep(hydrated(intent({ status: 'processing' }), [a]), decline, env(), { retry: { connector: 'sim_b' } }, jobs);
  t.equal(retry.set?.status, 'processing', 'still processing');
  const order = retry.writes!.map((w) => `${w.op} ${w.table}`);
  t.same(order, ['update attempts', 'update routing_decisions', 'insert attempts'], 'the declined attempt (and its decision\'s answer) is written before the new one (one open attempt per intent)');
  const newRow = (retry.writes![2] as { row: Record<string, unknown> }).row;
  t.same([newRow.connector_key, newRow.payment_token], ['sim_b', 'tok_x'], 'on the next connector, with the same token');
  t.same(retry.events, []);
  const final = planIntentStep(hydrated(intent({ status: 'processing' }), [a]), decline, env(), {}, jobs);
  t.equal(final.set?.status, 'failed');
  t.same(final.events!.map((e) => e.type), ['payment_intent.failed']);
});

t.test('payment intent: a notice about a closed attempt only marks the notice processed', async (t) => {
  const a = attempt({ status: 'captured' });
  const p = planIntentStep(hydrated(intent({ status: 'succeeded' }), [a]), { kind: 'evidence', attemptId: a.id, outcome: { kind: 'captured', providerRef: 'r' }, source: 'inbound', inboxId: 'cccccccc-cccc-4ccc-8ccc-cccccccccccc' }, env(), {}, jobs);
  t.notOk(p.set, 'the intent is not written');
  t.same(p.writes, [{ op: 'update', table: 'inbox', id: 'cccccccc-cccc-4ccc-8ccc-cccccccccccc', set: { processed_at: at } }]);
});

t.test('payment intent: action required sets the expiry timer on the tenant clock; expiry cancels it', async (t) => {
  const a = attempt({ method: 'spei' });
  const expiresAt = '2026-11-24T13:00:00.000Z';
  const p = planIntentStep(hydrated(intent({ status: 'processing' }), [a]), {
    kind: 'evidence', attemptId: a.id, outcome: { kind: 'action_required', providerRef: 'r', nextAction: { type: 'bank_transfer', clabe: '646180000000000000', beneficiary: 'b', expires_at: expiresAt }, expiresAt }, source: 'connector',
  }, env(), {}, jobs);
  t.equal(p.set?.status, 'requires_action');
  t.same(p.timers, [{ kind: 'payment_intent.expire', entityId: intent().id, dueAt: new Date(expiresAt) }]);
  const e = planIntentStep(hydrated(intent({ status: 'requires_action' }), [{ ...a, status: 'requires_action' }]), { kind: 'expire' }, env(), {}, jobs);
  t.equal(e.set?.status, 'expired');
  t.same(e.timers, [{ kind: 'payment_intent.expire', entityId: intent().id, cancel: true }], 'the timer is fired in the same transaction');
});

const refund = (over: Partial<RefundRow> = {}): RefundRow => ({
  id: 'dddddddd-dddd-4ddd-8ddd-dddddddddddd', tenant_id: T, livemode: false, status: 'requested', version: 0, attempt_id: attempt().id, payment_intent_id: intent().id,
  amount_minor: 3000, currency: 'MXN', reason: null, provider_ref: null, failure_code: null, failure_message: null, requested_by: 'k', approval_id: null, send_started_at: null, created_at: at, updated_at: at, ...over,
});

t.test('refund: the mark of the outbound protocol (send_started) records the time and changes no status', async (t) => {
  const settled = (i: string, a: string) => jobRequest({ ...probe, name: 'settle' }, { intentId: i, attemptId: a });
  const e = env();
  const p = planRefundOutcome({ row: refund(), clockOffsetMs: 0, connectorKey: 'sim', providerKey: 'k' }, { kind: 'send_started' }, e, settled);
  t.same(p.set, { send_started_at: e.at, updated_at: e.at });
  t.equal(p.history?.event, 'send_started');
  t.notOk(p.events?.length || p.ledger?.length || p.jobs?.length, 'no event, no entry, no job');
  const done = planRefundOutcome({ row: refund({ status: 'succeeded' }), clockOffsetMs: 0, connectorKey: 'sim', providerKey: 'k' }, { kind: 'send_started' }, e, settled);
  t.notOk(done.set, 'a settled refund is never marked again');
});

t.test('refund: success posts the ledger entry, emits refund.succeeded without null fields, and asks the intent actor to move the attempt', async (t) => {
  const settled = (i: string, a: string) => jobRequest({ ...probe, name: 'settle' }, { intentId: i, attemptId: a });
  const p = planRefundOutcome({ row: refund(), clockOffsetMs: 0, connectorKey: 'sim', providerKey: 'k' }, { kind: 'provider_outcome', outcome: { kind: 'succeeded', providerRef: 'sim_re_1' } }, env(), settled);
  t.equal(p.set?.status, 'succeeded');
  // Books that mirror the CFDI (issue 27): the refund reverses the base and its IVA (16 % included:
  // 3000 = 2586 + 414), not the gross into refunds.
  t.same(p.ledger![0].lines.map((l) => [l.account, l.amountMinor]), [['refunds', 2586], ['iva_trasladado_cobrado', 414], ['connector_receivable:sim', -3000]]);
  t.same(p.events!.map((e) => e.type), ['refund.succeeded']);
  t.notMatch(JSON.stringify(p.events![0].data), /null/, 'refund event data omits absent fields');
  t.same(p.jobs!.map((j) => j.def.name), ['settle'], 'the attempt is the intent actor\'s to change');
  const failed = planRefundOutcome({ row: refund(), clockOffsetMs: 0, connectorKey: 'sim', providerKey: 'k' }, { kind: 'provider_outcome', outcome: { kind: 'failed', code: 'refund_declined', message: 'no' } }, env(), settled);
  t.equal(failed.set?.status, 'failed');
  t.same(failed.ledger, [], 'nothing booked');
  t.same(failed.jobs, []);
  t.same((failed.events![0].data as { failure_code: string }).failure_code, 'refund_declined');
  const again = planRefundOutcome({ row: refund({ status: 'succeeded' }), clockOffsetMs: 0, connectorKey: 'sim', providerKey: 'k' }, { kind: 'provider_outcome', outcome: { kind: 'succeeded', providerRef: 'x' } }, env(), settled);
  t.notOk(again.set, 'a second outcome for a settled refund writes nothing');
});

const method = (over: Partial<PaymentMethodRow> = {}): PaymentMethodRow => ({
  id: 'eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee', tenant_id: T, livemode: false, status: 'pending', version: 0, customer_id: 'c', connector: 'sim', brand: null, last4: null,
  provider_ref: null, pending_token: 'tok_sim_ok', created_at: at, updated_at: at, ...over,
});

t.test('saved method: activation sets brand and last4 and drops the token; a refusal drops it too; detach is idempotent', async (t) => {
  const ok = planMethodStep({ row: method(), clockOffsetMs: 0 }, { kind: 'activated', outcome: { kind: 'saved', providerRef: 'sim_pm_1', brand: 'visa', last4: '4242' } }, env());
  t.same([ok.set?.status, ok.set?.brand, ok.set?.last4, ok.set?.pending_token], ['active', 'visa', '4242', null]);
  const no = planMethodStep({ row: method(), clockOffsetMs: 0 }, { kind: 'activated', outcome: { kind: 'failed', code: 'card_declined', message: 'x' } }, env());
  t.same(no.set, { pending_token: null, updated_at: at }, 'the single-use token is dropped, the method stays pending');
  t.equal(no.history?.event, 'activation_failed');
  const d = planMethodStep({ row: method({ status: 'active' }), clockOffsetMs: 0 }, { kind: 'detach' }, env());
  t.equal(d.set?.status, 'detached');
  const again = planMethodStep({ row: method({ status: 'detached' }), clockOffsetMs: 0 }, { kind: 'detach' }, env());
  t.notOk(again.set, 'detaching a detached method writes nothing and does not fail');
});

t.test('routing: the decision is written with the attempt it chose (same id) and learns the first answer in the evidence step; dunning waits on a timer', async (t) => {
  const decision = {
    method: 'card', brand: null, amount_minor: 10000, currency: 'MXN', candidates: [{ connector_key: 'sim_b', fee_minor: 550, eligible: true }], chosen: 'sim_b',
    reason: 'cheapest' as const, default_connector: 'sim', default_fee_minor: 540, chosen_fee_minor: 550,
  };
  const p = planIntentStep(hydrated(intent()), { kind: 'confirm', body: { payment_method: 'card', payment_token: 'tok_sim_ok' } }, env(), {
    charge: { method: 'card', token: 'tok_sim_ok', tip: 0, route: { connector: 'sim_b', decision }, risk: 'allow' },
  }, jobs);
  const att = p.writes!.find((w) => w.op === 'insert' && w.table === 'attempts') as { row: Record<string, unknown> };
  const dec = p.writes!.find((w) => w.op === 'insert' && w.table === 'routing_decisions') as { row: Record<string, unknown> };
  t.ok(dec, 'one decision row in the same plan');
  t.equal(dec.row.id, att.row.id, 'id = the attempt\'s');
  t.match(dec.row, { chosen: 'sim_b', reason: 'cheapest', payment_intent_id: intent().id });

  const a = attempt({ created_at: new Date(at.getTime() - 250) });
  const ev = planIntentStep(hydrated(intent({ status: 'processing' }), [a]), { kind: 'evidence', attemptId: a.id, outcome: { kind: 'captured', providerRef: 'sim_ch_1' }, source: 'connector' }, env(), { feeMinor: 540 }, jobs);
  const upd = ev.writes!.find((w) => w.op === 'update' && w.table === 'routing_decisions') as { id: string; set: Record<string, unknown> };
  t.equal(upd.id, a.id);
  t.match(upd.set, { outcome: 'captured', latency_ms: 250 });

  const due = new Date(at.getTime() + 86400_000);
  const wait = planIntentStep(hydrated(intent({ status: 'processing' }), [a]), { kind: 'evidence', attemptId: a.id, outcome: { kind: 'soft_decline', code: 'issuer_unavailable', message: 'x' }, source: 'connector' }, env(), { dunningDueAt: due }, jobs);
  t.equal(wait.set?.status, 'processing', 'still processing while dunning waits');
  t.same(wait.timers, [{ kind: 'payment_intent.dunning', entityId: intent().id, dueAt: due }]);
  t.same(wait.events, [], 'no failed event');
  t.equal(wait.writes!.filter((w) => w.op === 'insert' && w.table === 'attempts').length, 0, 'no attempt until the day comes');
});
