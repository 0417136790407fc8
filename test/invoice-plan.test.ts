// The invoice's pure plans (actors/invoice-plan.ts) without a database: each step's status, rows,
// history, events and idempotency answer, and the refusals that keep the REP chain and the credit
// total whole.
import t from 'tap';
import { planInvoiceStep, type HydratedInvoice, type InvoiceRow } from '../actors/invoice-plan.js';
import { ApiError } from '../kernel/errors.js';
import type { StepEnv } from '../kernel/entity.js';

const at = new Date('2026-03-02T18:00:00Z');
const env: StepEnv = { at, now: at, newId: () => '00000000-0000-4000-8000-000000000009' };
const base: InvoiceRow = {
  id: '00000000-0000-4000-8000-000000000001', tenant_id: '00000000-0000-4000-8000-000000000002', livemode: false, status: 'pending', version: 3,
  metodo_pago: 'PPD', payment_intent_id: null, source: 'api', receptor: { rfc: 'EKU9003173C9', nombre: 'X', uso_cfdi: 'G03', regimen_fiscal: '601', cp: '26015' },
  conceptos: {}, forma_pago: '99', serie: 'F', folio: '7', total_minor: 10000, base_minor: 8621, iva_minor: 1379, currency: 'MXN', pac: 'sim', uuid_fiscal: null,
  sealed_xml: '<x/>', xml: null, error_code: null, error_detail: null, saldo_insoluto_minor: 10000, parcialidades: 0, credited_minor: 0, created_at: at, updated_at: at,
};
const h = (row: Partial<InvoiceRow> = {}, extra: Partial<HydratedInvoice> = {}): HydratedInvoice => ({ row: { ...base, ...row }, clockOffsetMs: 0, pendingPayments: [], pendingNotes: [], ...extra });
const refused = (fn: () => unknown, code: string) => {
  try {
    fn();
    return false;
  } catch (e) {
    return e instanceof ApiError && e.code === code;
  }
};

t.test('stamp: pending → stamped with uuid, xml, invoice.stamped and the stored answer', async (t) => {
  const p = planInvoiceStep(h(), { kind: 'stamp', answer: { kind: 'stamped', uuid: 'U-1', xml: '<cfdi/>' }, respond: 201 }, env);
  t.match(p.set, { status: 'stamped', uuid_fiscal: 'U-1', xml: '<cfdi/>', error_code: null });
  t.equal(p.history?.event, 'pac.stamped');
  t.same(p.events?.map((e) => e.type), ['invoice.stamped']);
  t.equal(p.response?.status, 201);
  t.match(p.response?.body, { id: base.id, status: 'stamped', uuid_fiscal: 'U-1' });
});

t.test('stamp: rejected and not_stamped → error (not live), invoice.failed, no stored answer', async (t) => {
  const r = planInvoiceStep(h(), { kind: 'stamp', answer: { kind: 'rejected', code: 'SIM-301', message: 'no' }, respond: 201 }, env);
  t.match(r.set, { status: 'error', error_code: 'invoice.pac_error', error_detail: 'invoice.pac_error: SIM-301 no' });
  t.same(r.events?.map((e) => e.type), ['invoice.failed']);
  t.equal(r.response, undefined);
  const n = planInvoiceStep(h(), { kind: 'stamp', answer: { kind: 'not_stamped' } }, env);
  t.equal(n.set?.status, 'error');
  t.equal(n.history?.event, 'pac.not_stamped');
  const again = planInvoiceStep(h({ status: 'stamped' }), { kind: 'stamp', answer: { kind: 'stamped', uuid: 'U-2', xml: '' } }, env);
  t.equal(again.set, undefined, 'an answer already recorded writes nothing');
});

t.test('reserve_payment: the chain position, the balance, refusals', async (t) => {
  const stamped = h({ status: 'stamped', saldo_insoluto_minor: 6000, parcialidades: 1, uuid_fiscal: 'U' });
  const pay = { id: 'p2', paymentIntentId: 'pi', montoMinor: 2500, parcialidad: 2, serie: 'RP', folio: '2', sealedXml: '<rep/>' };
  const p = planInvoiceStep(stamped, { kind: 'reserve_payment', payment: pay }, env);
  t.same(p.set, { saldo_insoluto_minor: 3500, parcialidades: 2, updated_at: at });
  t.match(p.writes?.[0], { op: 'insert', table: 'invoice_payments', row: { status: 'pending', parcialidad: 2, saldo_anterior_minor: 6000, monto_minor: 2500, saldo_insoluto_minor: 3500 } });
  t.ok(refused(() => planInvoiceStep(stamped, { kind: 'reserve_payment', payment: { ...pay, montoMinor: 6001 } }, env), 'invoice.payment_exceeds_balance'));
  t.ok(refused(() => planInvoiceStep(stamped, { kind: 'reserve_payment', payment: { ...pay, parcialidad: 3 } }, env), 'invoice.concurrent_modification'), 'a parcialidad that is not next');
  t.ok(refused(() => planInvoiceStep(h({ status: 'cancelled' }), { kind: 'reserve_payment', payment: pay }, env), 'invoice.not_stamped'));
  t.ok(refused(() => planInvoiceStep(h({ status: 'stamped', metodo_pago: 'PUE' }), { kind: 'reserve_payment', payment: pay }, env), 'invoice.not_ppd'));
  t.ok(refused(() => planInvoiceStep({ ...stamped, pendingPayments: [{ id: 'p1' }] }, { kind: 'reserve_payment', payment: pay }, env), 'invoice.concurrent_modification'), 'one pending complement at a time');
});

t.test('payment answer: stamped emits invoice_payment.stamped; rejected gives the chain position back', async (t) => {
  const pend = { id: 'p2', invoice_id: base.id, payment_intent_id: 'pi', parcialidad: 2, monto_minor: 2500, saldo_anterior_minor: 6000, saldo_insoluto_minor: 3500, currency: 'MXN', status: 'pending', livemode: false, created_at: at, updated_at: at, sealed_xml: '<rep/>' };
  const st = h({ status: 'stamped', saldo_insoluto_minor: 3500, parcialidades: 2 }, { pendingPayments: [pend] });
  const ok = planInvoiceStep(st, { kind: 'payment', paymentId: 'p2', answer: { kind: 'stamped', uuid: 'R-2', xml: '<x/>' }, respond: 201 }, env);
  t.match(ok.writes?.[0], { op: 'update', table: 'invoice_payments', id: 'p2', where: { status: 'pending' }, expect: 1, set: { status: 'stamped', rep_uuid: 'R-2' } });
  t.same(ok.events?.map((e) => e.type), ['invoice_payment.stamped']);
  t.match(ok.response?.body, { object: 'invoice_payment', parcialidad: 2, rep_uuid: 'R-2', saldo_insoluto_minor: 3500 });
  const no = planInvoiceStep(st, { kind: 'payment', paymentId: 'p2', answer: { kind: 'rejected', code: '302', message: 'x' } }, env);
  t.same(no.set, { saldo_insoluto_minor: 6000, parcialidades: 1, updated_at: at });
  t.match(no.writes?.[0], { set: { status: 'error' } });
  t.equal(no.events, undefined);
});

t.test('credit notes: the share of the total, the refusal past it, the answer', async (t) => {
  const st = h({ status: 'stamped', metodo_pago: 'PUE', credited_minor: 7000 });
  const note = { id: 'n1', totalMinor: 3000, baseMinor: 2586, ivaMinor: 414, motivo: null, serie: 'NC', folio: '1', sealedXml: '<e/>' };
  const p = planInvoiceStep(st, { kind: 'reserve_credit', note }, env);
  t.same(p.set, { credited_minor: 10000, updated_at: at });
  t.ok(refused(() => planInvoiceStep(st, { kind: 'reserve_credit', note: { ...note, totalMinor: 3001 } }, env), 'invoice.credit_note_exceeds_total'));
  const pend = { id: 'n1', invoice_id: base.id, total_minor: 3000, base_minor: 2586, iva_minor: 414, status: 'pending', livemode: false, created_at: at, updated_at: at };
  const back = planInvoiceStep(h({ status: 'stamped', metodo_pago: 'PUE', credited_minor: 10000 }, { pendingNotes: [pend] }), { kind: 'credit', noteId: 'n1', answer: { kind: 'not_stamped' } }, env);
  t.same(back.set, { credited_minor: 7000, updated_at: at }, 'a note that never stamped gives its share back');
  // On a PPD invoice the note also took its amount off the saldo (issue 27, defect 6): given back too.
  const ppd = planInvoiceStep(h({ status: 'stamped', credited_minor: 3000, saldo_insoluto_minor: 7000 }, { pendingNotes: [pend] }), { kind: 'credit', noteId: 'n1', answer: { kind: 'not_stamped' } }, env);
  t.same(ppd.set, { credited_minor: 0, saldo_insoluto_minor: 10000, updated_at: at }, 'a PPD note that never stamped gives its share of the saldo back');
});

t.test('cancel: stamped → cancelled (invoice.cancelled) or cancel_pending; only a stamped invoice', async (t) => {
  const st = h({ status: 'stamped' });
  const c = planInvoiceStep(st, { kind: 'cancel', cancellationId: 'c1', outcome: 'cancelled', motivo: '02', acuse: '<a/>' }, env);
  t.equal(c.set?.status, 'cancelled');
  t.same(c.events?.map((e) => e.type), ['invoice.cancelled']);
  t.match(c.response?.body, { object: 'invoice_cancellation', status: 'cancelled', motivo: '02', acuse: '<a/>' });
  const pnd = planInvoiceStep(st, { kind: 'cancel', cancellationId: 'c2', outcome: 'pending', motivo: '03' }, env);
  t.equal(pnd.set?.status, 'cancel_pending');
  t.same(pnd.events, [], 'no event until SAT cancels it');
  t.ok(refused(() => planInvoiceStep(h({ status: 'error' }), { kind: 'cancel', cancellationId: 'c3', outcome: 'cancelled', motivo: '02' }, env), 'invoice.not_stamped'));
});

t.test('a REP or credit note whose cancellation waits for the receptor: cancel_pending, then SAT\'s final answer', async (t) => {
  const inv = h({ status: 'stamped', uuid_fiscal: 'U', saldo_insoluto_minor: 6000, parcialidades: 1 });
  const rep = { id: 'p1', invoice_id: base.id, status: 'stamped', parcialidad: 1, monto_minor: 4000, saldo_anterior_minor: 10000, saldo_insoluto_minor: 6000, rep_uuid: 'R-1', iva_minor: 552, currency: 'MXN', created_at: at, updated_at: at };
  const pnd = planInvoiceStep({ ...inv, document: rep }, { kind: 'cancel_document', document: 'payment', documentId: 'p1', cancellationId: 'c1', outcome: 'pending', motivo: '02' }, env);
  t.match(pnd.writes?.[0], { op: 'update', table: 'invoice_payments', id: 'p1', set: { status: 'cancel_pending' }, where: { status: 'stamped' } });
  t.match(pnd.writes?.[1], { op: 'insert', table: 'invoice_cancellations', row: { status: 'pending', document_kind: 'payment', document_id: 'p1' } });
  t.same(pnd.set, { updated_at: at }, 'the saldo and the chain do not move while SAT waits');
  t.equal(pnd.ledger, undefined, 'no books entry yet');
  t.same(pnd.events ?? [], [], 'no event yet');
  t.match(pnd.response?.body, { status: 'pending', document_kind: 'payment' });
  const held = { ...inv, cancelPendingPayments: [{ ...rep, status: 'cancel_pending' }] };
  const pay = { id: 'p2', paymentIntentId: 'pi', montoMinor: 2500, parcialidad: 2, serie: 'RP', folio: '2', sealedXml: '<rep/>' };
  t.ok(refused(() => planInvoiceStep(held, { kind: 'reserve_payment', payment: pay }, env), 'invoice.cancellation_pending'), 'no later REP while one waits');
  const ok = planInvoiceStep({ ...held, document: { ...rep, status: 'cancel_pending' } }, { kind: 'cancel_document_outcome', document: 'payment', documentId: 'p1', cancellationId: 'c1', outcome: 'cancelled' }, env);
  t.same(ok.set, { saldo_insoluto_minor: 10000, parcialidades: 0, updated_at: at }, 'accepted: amount and place back');
  t.match(ok.writes, [{ table: 'invoice_payments', set: { status: 'cancelled' }, where: { status: 'cancel_pending' } }, { table: 'invoice_cancellations', id: 'c1', set: { status: 'cancelled' } }]);
  t.same(ok.events?.map((e) => e.type), ['invoice_payment.cancelled']);
  t.ok(ok.ledger?.length, 'the REP\'s entry reversed');
  const no = planInvoiceStep({ ...held, document: { ...rep, status: 'cancel_pending' } }, { kind: 'cancel_document_outcome', document: 'payment', documentId: 'p1', cancellationId: 'c1', outcome: 'rejected' }, env);
  t.match(no.writes, [{ table: 'invoice_payments', set: { status: 'stamped' } }, { table: 'invoice_cancellations', set: { status: 'rejected' } }]);
  t.same(no.set, { updated_at: at });
  t.same(no.events ?? [], []);
  const settled = planInvoiceStep({ ...inv, document: { ...rep, status: 'cancelled' } }, { kind: 'cancel_document_outcome', document: 'payment', documentId: 'p1', outcome: 'cancelled' }, env);
  t.equal(settled.set, undefined, 'an answer already recorded writes nothing');

  const note = { id: 'n1', invoice_id: base.id, status: 'cancel_pending', total_minor: 1160, base_minor: 1000, iva_minor: 160, uuid_fiscal: 'N-1', created_at: at, updated_at: at };
  const credited = h({ status: 'stamped', uuid_fiscal: 'U', credited_minor: 1160, saldo_insoluto_minor: 8840 }, { document: note });
  const nOk = planInvoiceStep(credited, { kind: 'cancel_document_outcome', document: 'credit_note', documentId: 'n1', outcome: 'cancelled' }, env);
  t.same(nOk.set, { credited_minor: 0, saldo_insoluto_minor: 10000, updated_at: at }, 'a credit note\'s share back on acceptance');
  t.same(nOk.events?.map((e) => e.type), ['credit_note.cancelled']);
});
