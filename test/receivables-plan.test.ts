// The receivable's rules without a database (docs/architecture.md recipe step 7): input parsing,
// the creation plan, the steps of the machine (overdue, cancel, invoice outcomes), the derived
// status and the WhatsApp message.
import t from 'tap';
import { ApiError } from '../kernel/errors.js';
import type { StepEnv } from '../kernel/entity.js';
import { buildReceivable, derivedStatus, maskPhone, normalizePhone, parseDueDate, planCreate, planStep, whatsappUrl, type HydratedReceivable } from '../actors/receivables.js';

let n = 0;
const env = (now = '2026-11-26T12:00:00Z'): StepEnv => ({ at: new Date('2026-11-26T12:00:00Z'), now: new Date(now), newId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}` });
const scope = { tenantId: '11111111-1111-4111-8111-111111111111', livemode: false };
const body = (extra: object = {}) => ({ customer_name: 'Don Pepe', customer_email: 'A@B.MX', concepto: 'Tornillos', amount_minor: 10_000, currency: 'MXN', due_date: '2026-12-01T00:00:00Z', ...extra });
const code = (fn: () => unknown) => {
  try {
    fn();
    return 'ok';
  } catch (e) {
    return e instanceof ApiError ? e.code : String(e);
  }
};
const hydrated = (over: object = {}, linkIntent: HydratedReceivable['linkIntent'] = null): HydratedReceivable => {
  const { row } = buildReceivable(scope, body(), env());
  return { row: { ...row, ...over }, clockOffsetMs: 0, linkIntent };
};

t.test('due_date', async (t) => {
  t.equal(parseDueDate('2026-12-31').toISOString(), '2027-01-01T05:59:59.999Z', 'a date: end of the day in Mexico City');
  t.equal(parseDueDate('2026-12-31T10:00:00-06:00').toISOString(), '2026-12-31T16:00:00.000Z');
  for (const bad of ['2026-02-30', '2026-13-01', '2026-12-31T10:00:00', 'tomorrow', '', '31/12/2026']) t.equal(code(() => parseDueDate(bad)), 'receivable.invalid_date', bad);
});

t.test('phone', async (t) => {
  t.equal(normalizePhone('55 1234-5678'), '+525512345678');
  t.equal(normalizePhone('+52 1 55 1234 5678'), '+525512345678', 'the old mobile 1 is dropped');
  t.equal(normalizePhone('0014155550100'), '+14155550100');
  for (const bad of ['12345', '+12', 'abc', '+1234567890123456']) t.equal(code(() => normalizePhone(bad)), 'receivable.invalid_phone', bad);
  t.equal(maskPhone('+525512345678'), '55****5678');
});

t.test('create: rows, link, timer, answer', async (t) => {
  const e = env();
  const input = buildReceivable(scope, body({ customer_phone: '5512345678' }), e);
  t.match(input.row, { status: 'open', customer_email: 'a@b.mx', customer_phone: '+525512345678', invoice_status: 'none' });
  t.match(input.link, { reusable: false, active: true, amount_minor: 10_000, metadata: { receivable_id: input.row.id } });
  const plan = planCreate(input, e);
  t.same(plan.timers, [{ kind: 'receivable.overdue', entityId: input.row.id, dueAt: input.row.due_date }]);
  t.equal(plan.writes?.[0]?.op, 'insert');
  t.match(plan.response, { status: 201, body: { status: 'open', customer_phone: '55****5678', payment_link_url: `/pay/${input.row.payment_link_slug}` } });
  t.equal(code(() => buildReceivable(scope, body({ customer_rfc: 'EKU9003173C9' }), e)), 'receivable.incomplete_fiscal_receptor');
  t.equal(code(() => buildReceivable(scope, body({ concepto: ' ' }), e)), 'receivable.missing_fields');
  t.equal(code(() => buildReceivable(scope, body({ customer_rfc: 'EKU9003173C9', customer_uso_cfdi: 'G03', customer_regimen_fiscal: '601', customer_cp: '2601' }), e)), 'receivable.invalid_fiscal_receptor');
});

t.test('derived status by the clock', async (t) => {
  const due = new Date('2026-12-01T00:00:00Z');
  t.equal(derivedStatus('open', due, new Date('2026-11-30T23:59:59Z')), 'open');
  t.equal(derivedStatus('open', due, due), 'overdue', 'due now is overdue');
  t.equal(derivedStatus('paid', due, new Date('2027-01-01Z')), 'paid');
  t.equal(derivedStatus('canceled', due, new Date('2027-01-01Z')), 'canceled');
});

t.test('steps', async (t) => {
  const early = planStep(hydrated(), { kind: 'due' }, env('2026-11-30T00:00:00Z'));
  t.equal(early.set, undefined, 'a timer fired before the due date changes nothing');
  const due = planStep(hydrated(), { kind: 'due' }, env('2026-12-02T00:00:00Z'));
  t.same(due.set?.status, 'overdue');
  t.same(due.events?.map((e) => e.type), ['receivable.overdue']);
  t.equal(planStep(hydrated({ status: 'paid' }), { kind: 'due' }, env('2026-12-02T00:00:00Z')).set, undefined, 'paid stays paid');
  const c = planStep(hydrated({ status: 'overdue' }), { kind: 'cancel' }, env());
  t.match(c.set, { status: 'canceled' });
  t.same(c.events?.map((e) => e.type), ['receivable.canceled']);
  t.match(c.writes, [{ op: 'update', table: 'payment_links', set: { active: false } }], 'the link is deactivated in the same step');
  t.match(c.timers, [{ kind: 'receivable.overdue', cancel: true }]);
  t.equal(planStep(hydrated({ status: 'canceled' }), { kind: 'cancel' }, env()).set, undefined, 'cancel is idempotent');
  t.equal(code(() => planStep(hydrated({ status: 'paid' }), { kind: 'cancel' }, env())), 'receivable.cancel_conflict');
  t.equal(code(() => planStep(hydrated({}, { id: 'x', status: 'processing' }), { kind: 'cancel' }, env())), 'receivable.cancel_conflict', 'a payment in flight');
  const stamped = planStep(hydrated({ status: 'paid', invoice_status: 'pending', invoice_error: 'x' }), { kind: 'invoice_result', outcome: 'stamped', invoiceId: 'inv' }, env());
  t.match(stamped.set, { invoice_status: 'stamped', invoice_id: 'inv', invoice_error: null });
  const retry = planStep(hydrated({ status: 'paid', invoice_status: 'pending', invoice_error: 'e1' }), { kind: 'invoice_result', outcome: 'retry', error: 'e1' }, env());
  t.equal(retry.history, undefined, 'the same failure again: counted, no new history row');
  t.ok(planStep(hydrated({ status: 'paid', invoice_status: 'pending', invoice_error: 'e1' }), { kind: 'invoice_result', outcome: 'retry', error: 'e2' }, env()).history, 'a new failure is recorded');
});

t.test('WhatsApp message', async (t) => {
  const { row } = buildReceivable(scope, body({ customer_phone: '5512345678', amount_minor: 123_456_789, due_date: '2026-12-31' }), env());
  const u = new URL(whatsappUrl(row, 'https://pagos.example.mx/'));
  t.equal(u.host, 'wa.me');
  t.equal(u.pathname, '/525512345678');
  const text = u.searchParams.get('text')!;
  t.match(text, /\$1,234,567\.89 MXN/);
  t.match(text, /31\/12\/2026/);
  t.ok(text.includes(`https://pagos.example.mx/pay/${row.payment_link_slug}`));
});

t.test('invoice results: a stamped CFDI is final, a late failure of a second run changes nothing', async (t) => {
  const stamped = hydrated({ status: 'paid', invoice_status: 'stamped', invoice_id: 'inv-1', invoice_attempts: 1 });
  for (const outcome of ['error', 'retry'] as const) {
    const late = planStep(stamped, { kind: 'invoice_result', outcome, error: 'invoice.already_exists: Payment intent pi already has a live invoice.', invoiceId: 'inv-1' }, env());
    t.equal(late.set, undefined, `${outcome} after stamped: no change`);
    t.equal(late.history, undefined, `${outcome} after stamped: no history`);
    t.match(late.result, { invoice_status: 'stamped', invoice_id: 'inv-1' });
  }
  const pending = hydrated({ status: 'paid', invoice_status: 'pending', invoice_attempts: 1 });
  t.match(planStep(pending, { kind: 'invoice_result', outcome: 'error', error: 'invoice.pac_error: 301 rechazo' }, env()).set, { invoice_status: 'error' }, 'an error before any stamp is recorded');
  t.match(planStep(hydrated({ status: 'paid', invoice_status: 'error', invoice_attempts: 2 }), { kind: 'invoice_result', outcome: 'stamped', invoiceId: 'inv-2' }, env()).set, { invoice_status: 'stamped', invoice_id: 'inv-2' }, 'a later stamp after an error is recorded');
});
