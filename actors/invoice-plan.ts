// The invoice's steps as pure plans (kernel/entity.ts): the invoice machine's transition and the
// rows, history, events and idempotency answer each step writes. No I/O: tested without a
// database (test/invoice-plan.test.ts).
//
// A CFDI of an invoice (the invoice itself, a payment complement, a credit note) is first reserved
// (`pending`, with its sealed XML, its folio, its place in the REP chain or its share of the total)
// by one step, then sent to the PAC outside any transaction under the invoice's lock, and its answer
// recorded by a second step.
import { ApiError } from '../kernel/errors.js';
import type { EntityRow, Hydrated, Plan, StepEnv } from '../kernel/entity.js';
import type { JobRequest } from '../kernel/jobs.js';
import { machineStep } from '../kernel/machine-step.js';
import { invoiceMachine, type InvoiceEffect, type InvoiceEvent, type InvoiceStatus } from '../machines/invoice.js';
import { cfdiDocumentMachine, type CfdiDocumentEffect, type CfdiDocumentEvent, type CfdiDocumentStatus } from '../machines/cfdi-document.js';
import type { ReceptorInput } from '../formats/cfdi/receptor.js';
import { resumen16, type ResumenImpuestos } from '../formats/cfdi/impuestos.js';
import { ivaInside } from '../kernel/ledger.js';
import { creditNoteEntry, invoiceCancelEntry, invoiceStampEntry, paymentEntry } from './invoice-books.js';

/** The taxes an invoice was stamped with (kept with its concepts), or IVA 16 % inside for older rows. */
export function impuestosDe(r: Pick<InvoiceRow, 'conceptos' | 'total_minor' | 'base_minor' | 'iva_minor'>): ResumenImpuestos {
  const kept = (r.conceptos as { impuestos?: ResumenImpuestos } | null)?.impuestos;
  return kept ?? resumen16(Number(r.total_minor), Number(r.base_minor), Number(r.iva_minor));
}
const who = (r: InvoiceRow) => ({ tenantId: r.tenant_id, livemode: r.livemode, currency: r.currency });
const stampFacts = (r: InvoiceRow) => ({ metodoPago: r.metodo_pago, chargeAmountMinor: r.payment_intent_id ? Number(r.total_minor) : undefined, impuestos: impuestosDe(r) });

export interface InvoiceRow extends EntityRow<InvoiceStatus> {
  metodo_pago: 'PUE' | 'PPD';
  payment_intent_id: string | null;
  source: string;
  receptor: ReceptorInput;
  conceptos: unknown;
  forma_pago: string;
  serie: string | null;
  folio: string | null;
  total_minor: number;
  base_minor: number;
  iva_minor: number;
  currency: string;
  pac: string;
  uuid_fiscal: string | null;
  sealed_xml: string;
  xml: string | null;
  error_code: string | null;
  error_detail: string | null;
  saldo_insoluto_minor: number | null;
  parcialidades: number;
  credited_minor: number;
  /** The invoice this one replaces (motivo 01, CfdiRelacionados 04). */
  replaces_invoice_id?: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface HydratedInvoice extends Hydrated<InvoiceRow> {
  /** Payment complements (invoice_payments rows) waiting for the PAC's answer: at most one. */
  pendingPayments: Record<string, any>[];
  /** Credit notes (credit_notes rows) waiting for the PAC's answer: at most one. */
  pendingNotes: Record<string, any>[];
  /**
   * Payment complements whose cancellation SAT holds for the receptor (`cancel_pending`): while one
   * waits, no REP takes a later place in the chain (its acceptance gives its place back).
   */
  cancelPendingPayments?: Record<string, any>[];
  /** Credit notes whose cancellation SAT holds for the receptor (`cancel_pending`). */
  cancelPendingNotes?: Record<string, any>[];
  /** The REP or credit note a `cancel_document` / `cancel_document_outcome` step is about (loaded by the caller). */
  document?: Record<string, any>;
}

export type PacAnswer = { kind: 'stamped'; uuid: string; xml: string } | { kind: 'rejected'; code: string; message: string } | { kind: 'not_stamped' };

export type InvoiceCommand =
  /** The PAC's answer for the invoice's own CFDI. `respond`: the answer stored with the request's key. */
  | { kind: 'stamp'; answer: PacAnswer; respond?: number }
  /** Takes the next place of the REP chain for a payment (pending, sealed). */
  | { kind: 'reserve_payment'; payment: { id: string; paymentIntentId: string; montoMinor: number; parcialidad: number; serie: string; folio: string; sealedXml: string; baseMinor?: number; ivaMinor?: number } }
  | { kind: 'payment'; paymentId: string; answer: PacAnswer; respond?: number }
  /** Takes a share of the total for a credit note (pending, sealed). */
  | { kind: 'reserve_credit'; note: { id: string; totalMinor: number; baseMinor: number; ivaMinor: number; motivo: string | null; serie: string; folio: string; sealedXml: string } }
  /** `jobs`: after the commit of a stamped note (a PUE charge's refunds it may cover: invoice.refund_credits). */
  | { kind: 'credit'; noteId: string; answer: PacAnswer; respond?: number; jobs?: JobRequest[] }
  | { kind: 'cancel'; cancellationId: string; outcome: 'cancelled' | 'pending'; motivo: string; folioSustitucion?: string; acuse?: string }
  /** SAT's final answer to a cancellation that waited for the receptor (`cancel_pending`). */
  | { kind: 'cancel_outcome'; cancellationId?: string; outcome: 'cancelled' | 'rejected'; acuse?: string }
  /** SAT's answer to the cancellation of a payment complement (REP) or credit note of the invoice: cancelled, or held for the receptor (`pending`). */
  | { kind: 'cancel_document'; document: 'payment' | 'credit_note'; documentId: string; cancellationId: string; outcome: 'cancelled' | 'pending'; motivo: string; acuse?: string; jobs?: JobRequest[] }
  /** SAT's final answer to a REP's or credit note's cancellation that waited for the receptor. */
  | { kind: 'cancel_document_outcome'; document: 'payment' | 'credit_note'; documentId: string; cancellationId?: string; outcome: 'cancelled' | 'rejected'; jobs?: JobRequest[] };

const iso = (d: Date) => d.toISOString();

export function invoiceView(r: InvoiceRow) {
  return {
    id: r.id,
    object: 'invoice' as const,
    status: r.status,
    payment_intent_id: r.payment_intent_id ?? undefined,
    uuid_fiscal: r.uuid_fiscal ?? undefined,
    serie: r.serie ?? undefined,
    folio: r.folio ?? undefined,
    total_minor: Number(r.total_minor),
    base_minor: Number(r.base_minor),
    iva_minor: Number(r.iva_minor),
    currency: r.currency,
    receptor: r.receptor,
    pac: r.pac,
    metodo_pago: r.metodo_pago,
    saldo_insoluto_minor: r.metodo_pago === 'PPD' ? Number(r.saldo_insoluto_minor) : undefined,
    parcialidades: r.parcialidades,
    credited_minor: Number(r.credited_minor),
    replaces_invoice_id: r.replaces_invoice_id ?? undefined,
    error_detail: r.error_detail ?? undefined,
    livemode: r.livemode,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}
export type InvoiceView = ReturnType<typeof invoiceView>;

type Row = Record<string, any>;

export function paymentView(r: Row) {
  return {
    id: r.id as string,
    object: 'invoice_payment' as const,
    invoice_id: r.invoice_id as string,
    payment_intent_id: r.payment_intent_id as string,
    parcialidad: Number(r.parcialidad),
    monto_minor: Number(r.monto_minor),
    saldo_anterior_minor: Number(r.saldo_anterior_minor),
    saldo_insoluto_minor: Number(r.saldo_insoluto_minor),
    currency: r.currency as string,
    status: r.status as string,
    rep_uuid: (r.rep_uuid as string | null) ?? undefined,
    livemode: r.livemode as boolean,
    created_at: iso(r.created_at as Date),
    updated_at: iso(r.updated_at as Date),
  };
}
export type InvoicePaymentView = ReturnType<typeof paymentView>;

export const creditNoteView = (r: Row) => ({
  id: r.id as string,
  object: 'credit_note' as const,
  invoice_id: r.invoice_id as string,
  total_minor: Number(r.total_minor),
  base_minor: Number(r.base_minor),
  iva_minor: Number(r.iva_minor),
  uuid_fiscal: (r.uuid_fiscal as string | null) ?? undefined,
  status: r.status as string,
  livemode: r.livemode as boolean,
  created_at: iso(r.created_at as Date),
});

export const cancellationView = (r: Row) => ({
  id: r.id as string,
  object: 'invoice_cancellation' as const,
  invoice_id: r.invoice_id as string,
  document_kind: ((r.document_kind as string | null) ?? 'invoice') as 'invoice' | 'payment' | 'credit_note',
  document_id: (r.document_id as string | null) ?? (r.invoice_id as string),
  uuid_fiscal: (r.uuid_fiscal as string | null) ?? undefined,
  motivo: r.motivo as string,
  folio_sustitucion: (r.folio_sustitucion as string | null) ?? undefined,
  status: r.status as 'cancelled' | 'pending' | 'rejected',
  acuse: (r.acuse as string | null) ?? undefined,
  created_at: iso(r.created_at as Date),
});

const detailOf = (a: PacAnswer) => (a.kind === 'rejected' ? `invoice.pac_error: ${a.code} ${a.message}` : a.kind === 'not_stamped' ? 'invoice.pac_no_uuid: the PAC never stamped it (its answer had been lost)' : null);

/** The machine's step for an invoice event: next status and the events to emit (throws when the event does not apply). */
function transition(from: InvoiceStatus, event: InvoiceEvent['type']) {
  const s = machineStep<{ type: string; params?: { event: InvoiceEffect } }>(invoiceMachine, from, undefined, { type: event });
  if (s.value === from && !s.effects.length && event !== 'pac.cancel_rejected') {
    throw new ApiError('invoice.concurrent_modification', `The invoice is "${from}"; "${event}" no longer applies. Read it again.`);
  }
  return { to: s.value as InvoiceStatus, emits: s.effects.filter((e) => e.type === 'emit').map((e) => e.params!.event) };
}

/** The document machine's step (a REP's or credit note's status; throws when the event does not apply). */
function docTransition(from: CfdiDocumentStatus, event: CfdiDocumentEvent['type']) {
  const s = machineStep<{ type: string; params?: { event: CfdiDocumentEffect } }>(cfdiDocumentMachine, from, undefined, { type: event });
  if (s.value === from) throw new ApiError('invoice.concurrent_modification', `The CFDI is "${from}"; "${event}" no longer applies. Read it again.`);
  return { to: s.value as CfdiDocumentStatus, emits: s.effects.filter((e) => e.type === 'emit').map((e) => e.params!.event) };
}

/**
 * What SAT's cancellation of a REP or credit note does to its invoice (the answer at once, or the
 * receptor's acceptance later): a REP gives its amount and NumParcialidad back (it is the last of the
 * chain), a credit note its share (and its amount to the saldo, PPD); the books entry is reversed.
 */
function documentCancelled(r: InvoiceRow, d: Record<string, any>, kind: 'payment' | 'credit_note', from: CfdiDocumentStatus, env: StepEnv) {
  const { to, emits } = docTransition(from, 'pac.cancelled');
  const docWrite = { op: 'update' as const, table: kind === 'payment' ? 'invoice_payments' : 'credit_notes', id: d.id as string, set: { status: to, updated_at: env.at }, where: { status: from }, expect: 1 as const };
  if (kind === 'payment') {
    // Only the last REP of the chain: its place (NumParcialidad) and amount go back to the invoice.
    if (Number(d.parcialidad) !== r.parcialidades) throw new ApiError('invoice.related_documents_live', `Payment complement ${d.id} is parcialidad ${d.parcialidad} of ${r.parcialidades}: cancel the later ones first (SAT's chain ImpSaldoAnt → ImpSaldoInsoluto).`);
    const ivaRep = d.iva_minor === null || d.iva_minor === undefined ? ivaInside(Number(d.monto_minor)).ivaMinor : Number(d.iva_minor);
    return {
      set: { saldo_insoluto_minor: Number(r.saldo_insoluto_minor) + Number(d.monto_minor), parcialidades: r.parcialidades - 1, updated_at: env.at },
      docWrite,
      ledger: paymentEntry(who(r), d.id, d.rep_uuid, { montoMinor: Number(d.monto_minor), ivaMinor: ivaRep }).map((e) => ({ ...e, kind: 'cfdi.pago.cancelado', lines: e.lines.map((l) => ({ ...l, amountMinor: -l.amountMinor })) })),
      history: { event: 'payment.cancelled', data: { invoice_payment_id: d.id, rep_uuid: d.rep_uuid } },
      events: emits.map(() => ({ type: 'invoice_payment.cancelled', entityId: d.id as string, data: paymentView({ ...d, status: to, updated_at: env.at }) })),
    };
  }
  return {
    set: { credited_minor: Number(r.credited_minor) - Number(d.total_minor), ...(r.metodo_pago === 'PPD' ? { saldo_insoluto_minor: Number(r.saldo_insoluto_minor) + Number(d.total_minor) } : {}), updated_at: env.at },
    docWrite,
    ledger: creditNoteEntry(who(r), d.id, d.uuid_fiscal, { metodoPago: r.metodo_pago, totalMinor: Number(d.total_minor), baseMinor: Number(d.base_minor), ivaMinor: Number(d.iva_minor) }).map((e) => ({ ...e, kind: 'cfdi.egreso.cancelado', lines: e.lines.map((l) => ({ ...l, amountMinor: -l.amountMinor })) })),
    history: { event: 'credit_note.cancelled', data: { credit_note_id: d.id, uuid_fiscal: d.uuid_fiscal } },
    events: emits.map(() => ({ type: 'credit_note.cancelled', entityId: d.id as string, data: creditNoteView({ ...d, status: to }) })),
  };
}

export function planInvoiceStep(h: HydratedInvoice, cmd: InvoiceCommand, env: StepEnv): Plan {
  const r = h.row;
  switch (cmd.kind) {
    case 'stamp': {
      const event = cmd.answer.kind === 'stamped' ? 'pac.stamped' : cmd.answer.kind === 'rejected' ? 'pac.rejected' : 'pac.not_stamped';
      if (r.status !== 'pending') return { result: r }; // already recorded (a retry after a lost commit)
      const { to, emits } = transition(r.status, event);
      const a = cmd.answer;
      const set = {
        status: to,
        uuid_fiscal: a.kind === 'stamped' ? a.uuid : null,
        xml: a.kind === 'stamped' ? a.xml : null,
        error_code: a.kind === 'stamped' ? null : 'invoice.pac_error',
        error_detail: detailOf(a),
        updated_at: env.at,
      };
      const updated: InvoiceRow = { ...r, ...set, version: r.version + 1 };
      const view = invoiceView(updated);
      return {
        set,
        ledger: a.kind === 'stamped' ? invoiceStampEntry(who(r), r.id, a.uuid, stampFacts(r)) : [],
        history: { event, data: a.kind === 'stamped' ? { uuid_fiscal: a.uuid } : { detail: set.error_detail } },
        events: emits.map((type) => ({ type, data: view })),
        response: a.kind === 'stamped' && cmd.respond ? { status: cmd.respond, body: view } : undefined,
        result: updated,
      };
    }
    case 'reserve_payment': {
      const p = cmd.payment;
      if (r.metodo_pago !== 'PPD') throw new ApiError('invoice.not_ppd', `Invoice ${r.id} is PUE: payment complements go with PPD invoices.`);
      if (r.status !== 'stamped') throw new ApiError('invoice.not_stamped', `Invoice ${r.id} is "${r.status}": a payment complement needs a stamped PPD invoice.`);
      if (h.pendingPayments.length) throw new ApiError('invoice.concurrent_modification', `Invoice ${r.id} has a payment complement waiting for the PAC.`);
      const held = h.cancelPendingPayments?.[0];
      if (held) throw new ApiError('invoice.cancellation_pending', `Payment complement ${held.id} (parcialidad ${held.parcialidad}) of invoice ${r.id} waits for the receptor to accept its cancellation (SAT "En proceso"); the next REP takes its place once SAT answers (followed by invoice.cancel_follow). Retry then.`);
      const saldo = Number(r.saldo_insoluto_minor);
      if (p.montoMinor > saldo) throw new ApiError('invoice.payment_exceeds_balance', `The charge (${p.montoMinor} cents) is larger than the invoice's remaining balance, saldo_insoluto_minor = ${saldo}.`);
      if (p.parcialidad !== r.parcialidades + 1) throw new ApiError('invoice.concurrent_modification', `Parcialidad ${p.parcialidad} is not next (${r.parcialidades} registered).`);
      const set = { saldo_insoluto_minor: saldo - p.montoMinor, parcialidades: p.parcialidad, updated_at: env.at };
      const row = {
        id: p.id, tenant_id: r.tenant_id, livemode: r.livemode, invoice_id: r.id, payment_intent_id: p.paymentIntentId, status: 'pending', parcialidad: p.parcialidad,
        monto_minor: p.montoMinor, saldo_anterior_minor: saldo, saldo_insoluto_minor: saldo - p.montoMinor, currency: r.currency, serie: p.serie, folio: p.folio,
        sealed_xml: p.sealedXml, base_minor: p.baseMinor ?? null, iva_minor: p.ivaMinor ?? null, created_at: env.at, updated_at: env.at,
      };
      return { set, writes: [{ op: 'insert', table: 'invoice_payments', row }], history: { event: 'payment.reserved', data: { invoice_payment_id: p.id, parcialidad: p.parcialidad, monto_minor: p.montoMinor } }, result: row };
    }
    case 'payment': {
      const pend = h.pendingPayments.find((x) => x.id === cmd.paymentId);
      if (!pend) return { result: undefined }; // already recorded
      const a = cmd.answer;
      if (a.kind === 'stamped') {
        const set = { status: 'stamped', rep_uuid: a.uuid, xml: a.xml, updated_at: env.at };
        const view = paymentView({ ...pend, ...set });
        const ivaRep = pend.iva_minor === null || pend.iva_minor === undefined ? ivaInside(Number(pend.monto_minor)).ivaMinor : Number(pend.iva_minor);
        return {
          set: { updated_at: env.at },
          ledger: paymentEntry(who(r), pend.id, a.uuid, { montoMinor: Number(pend.monto_minor), ivaMinor: ivaRep }),
          writes: [{ op: 'update', table: 'invoice_payments', id: pend.id, set, where: { status: 'pending' }, expect: 1 }],
          history: { event: 'payment.stamped', data: { invoice_payment_id: pend.id, parcialidad: pend.parcialidad, rep_uuid: a.uuid } },
          events: [{ type: 'invoice_payment.stamped', entityId: pend.id, data: view }],
          response: cmd.respond ? { status: cmd.respond, body: view } : undefined,
          result: { ...pend, ...set },
        };
      }
      // Not live: its place in the chain is given back (it is the last one: the lock is held and only one may be pending).
      if (pend.parcialidad !== r.parcialidades) throw new ApiError('invoice.concurrent_modification', `Payment complement ${pend.id} is not the last of the chain.`);
      return {
        set: { saldo_insoluto_minor: Number(r.saldo_insoluto_minor) + Number(pend.monto_minor), parcialidades: r.parcialidades - 1, updated_at: env.at },
        writes: [{ op: 'update', table: 'invoice_payments', id: pend.id, set: { status: 'error', error_detail: detailOf(a), updated_at: env.at }, where: { status: 'pending' }, expect: 1 }],
        history: { event: a.kind === 'rejected' ? 'payment.rejected' : 'payment.not_stamped', data: { invoice_payment_id: pend.id, detail: detailOf(a) } },
        result: { ...pend, status: 'error' },
      };
    }
    case 'reserve_credit': {
      const n = cmd.note;
      if (r.status !== 'stamped') throw new ApiError('invoice.not_stamped', `Invoice ${r.id} is "${r.status}": credit notes relate a stamped invoice.`);
      if (h.pendingNotes.length) throw new ApiError('invoice.concurrent_modification', `Invoice ${r.id} has a credit note waiting for the PAC.`);
      const left = Number(r.total_minor) - Number(r.credited_minor);
      if (n.totalMinor > left) {
        throw new ApiError('invoice.credit_note_exceeds_total', `Credit notes of invoice ${r.id} may add up to ${left} more cents (total ${r.total_minor}, credited ${r.credited_minor}).`);
      }
      const row = {
        id: n.id, tenant_id: r.tenant_id, livemode: r.livemode, invoice_id: r.id, status: 'pending', total_minor: n.totalMinor, base_minor: n.baseMinor, iva_minor: n.ivaMinor,
        motivo: n.motivo, serie: n.serie, folio: n.folio, sealed_xml: n.sealedXml, created_at: env.at, updated_at: env.at,
      };
      // A credit note of a PPD invoice lowers what is still owed (issue 27, defect 6): the next REP's
      // ImpSaldoAnt is the balance after the note, so the customer is never over-collected.
      const ppd = r.metodo_pago === 'PPD';
      const saldo = Number(r.saldo_insoluto_minor);
      if (ppd && n.totalMinor > saldo) throw new ApiError('invoice.credit_note_exceeds_total', `A credit note of PPD invoice ${r.id} may take at most what is still owed, saldo_insoluto_minor = ${saldo}.`);
      return {
        set: { credited_minor: Number(r.credited_minor) + n.totalMinor, ...(ppd ? { saldo_insoluto_minor: saldo - n.totalMinor } : {}), updated_at: env.at },
        writes: [{ op: 'insert', table: 'credit_notes', row }],
        history: { event: 'credit_note.reserved', data: { credit_note_id: n.id, total_minor: n.totalMinor } },
        result: row,
      };
    }
    case 'credit': {
      const pend = h.pendingNotes.find((x) => x.id === cmd.noteId);
      if (!pend) return { result: undefined };
      const a = cmd.answer;
      if (a.kind === 'stamped') {
        const set = { status: 'stamped', uuid_fiscal: a.uuid, xml: a.xml, updated_at: env.at };
        const view = creditNoteView({ ...pend, ...set });
        return {
          set: { updated_at: env.at },
          ledger: creditNoteEntry(who(r), pend.id, a.uuid, { metodoPago: r.metodo_pago, totalMinor: Number(pend.total_minor), baseMinor: Number(pend.base_minor), ivaMinor: Number(pend.iva_minor) }),
          writes: [{ op: 'update', table: 'credit_notes', id: pend.id, set, where: { status: 'pending' }, expect: 1 }],
          history: { event: 'credit_note.stamped', data: { credit_note_id: pend.id, uuid_fiscal: a.uuid } },
          events: [{ type: 'credit_note.stamped', entityId: pend.id, data: view }],
          jobs: cmd.jobs,
          response: cmd.respond ? { status: cmd.respond, body: view } : undefined,
          result: { ...pend, ...set },
        };
      }
      return {
        set: { credited_minor: Number(r.credited_minor) - Number(pend.total_minor), ...(r.metodo_pago === 'PPD' ? { saldo_insoluto_minor: Number(r.saldo_insoluto_minor) + Number(pend.total_minor) } : {}), updated_at: env.at },
        writes: [{ op: 'update', table: 'credit_notes', id: pend.id, set: { status: 'error', error_detail: detailOf(a), updated_at: env.at }, where: { status: 'pending' }, expect: 1 }],
        history: { event: 'credit_note.rejected', data: { credit_note_id: pend.id, detail: detailOf(a) } },
        result: { ...pend, status: 'error' },
      };
    }
    case 'cancel_outcome': {
      if (r.status !== 'cancel_pending') return { result: r }; // already settled
      const event = cmd.outcome === 'cancelled' ? 'pac.cancelled' : 'pac.cancel_rejected';
      const { to, emits } = transition(r.status, event);
      const updated: InvoiceRow = { ...r, status: to, updated_at: env.at, version: r.version + 1 };
      return {
        set: { status: to, updated_at: env.at },
        ledger: cmd.outcome === 'cancelled' && r.uuid_fiscal ? invoiceCancelEntry(who(r), r.id, r.uuid_fiscal, stampFacts(r)) : [],
        writes: cmd.cancellationId ? [{ op: 'update', table: 'invoice_cancellations', id: cmd.cancellationId, set: { status: cmd.outcome, ...(cmd.acuse ? { acuse: cmd.acuse } : {}), updated_at: env.at } }] : [],
        history: { event, data: { outcome: cmd.outcome } },
        events: emits.map((type) => ({ type, data: invoiceView(updated) })),
        result: updated,
      };
    }
    case 'cancel_document': {
      const d = h.document;
      if (!d || d.invoice_id !== r.id) throw new ApiError('invoice.not_found');
      if (d.status === 'cancelled' || d.status === 'cancel_pending') return { result: d };
      if (d.status !== 'stamped') throw new ApiError('invoice.not_stamped', `CFDI ${d.id} is "${d.status}": only a stamped CFDI is cancelled.`);
      if (cmd.document === 'payment' && Number(d.parcialidad) !== r.parcialidades) {
        throw new ApiError('invoice.related_documents_live', `Payment complement ${d.id} is parcialidad ${d.parcialidad} of ${r.parcialidades}: cancel the later ones first (SAT's chain ImpSaldoAnt → ImpSaldoInsoluto).`);
      }
      const row = {
        id: cmd.cancellationId, tenant_id: r.tenant_id, livemode: r.livemode, invoice_id: r.id, motivo: cmd.motivo, folio_sustitucion: null,
        status: cmd.outcome, acuse: cmd.acuse ?? null, document_kind: cmd.document, document_id: d.id, uuid_fiscal: cmd.document === 'payment' ? d.rep_uuid : d.uuid_fiscal,
        created_at: env.at, updated_at: env.at,
      };
      const what = cmd.document === 'payment' ? 'payment' : 'credit_note';
      if (cmd.outcome === 'pending') {
        // SAT holds it for the receptor ("En proceso"): live until SAT's final answer; nothing moves yet.
        const { to } = docTransition('stamped', 'pac.cancel_pending');
        return {
          set: { updated_at: env.at },
          writes: [
            { op: 'update', table: cmd.document === 'payment' ? 'invoice_payments' : 'credit_notes', id: d.id, set: { status: to, updated_at: env.at }, where: { status: 'stamped' }, expect: 1 },
            { op: 'insert', table: 'invoice_cancellations', row },
          ],
          history: { event: `${what}.cancel_pending`, data: { document_id: d.id, uuid_fiscal: row.uuid_fiscal, motivo: cmd.motivo } },
          response: { status: 200, body: cancellationView(row) },
          result: row,
        };
      }
      const c = documentCancelled(r, d, cmd.document, 'stamped', env);
      return {
        set: c.set,
        writes: [c.docWrite, { op: 'insert', table: 'invoice_cancellations', row }],
        ledger: c.ledger,
        history: { event: c.history.event, data: { ...c.history.data, motivo: cmd.motivo } },
        events: c.events,
        jobs: cmd.document === 'credit_note' ? cmd.jobs : undefined,
        response: { status: 200, body: cancellationView(row) },
        result: row,
      };
    }
    case 'cancel_document_outcome': {
      const d = h.document;
      if (!d || d.invoice_id !== r.id) throw new ApiError('invoice.not_found');
      if (d.status !== 'cancel_pending') return { result: d }; // already settled
      const cancellation = cmd.cancellationId ? [{ op: 'update' as const, table: 'invoice_cancellations', id: cmd.cancellationId, set: { status: cmd.outcome, updated_at: env.at } }] : [];
      if (cmd.outcome === 'rejected') {
        // The receptor refused: the CFDI stays valid at SAT, live again.
        const { to } = docTransition('cancel_pending', 'pac.cancel_rejected');
        return {
          set: { updated_at: env.at },
          writes: [{ op: 'update', table: cmd.document === 'payment' ? 'invoice_payments' : 'credit_notes', id: d.id, set: { status: to, updated_at: env.at }, where: { status: 'cancel_pending' }, expect: 1 }, ...cancellation],
          history: { event: `${cmd.document}.cancel_rejected`, data: { document_id: d.id } },
          result: { ...d, status: to },
        };
      }
      const c = documentCancelled(r, d, cmd.document, 'cancel_pending', env);
      return { set: c.set, writes: [c.docWrite, ...cancellation], ledger: c.ledger, history: c.history, events: c.events, jobs: cmd.document === 'credit_note' ? cmd.jobs : undefined, result: { ...d, status: 'cancelled' } };
    }
    case 'cancel': {
      if (r.status !== 'stamped') throw new ApiError('invoice.not_stamped', `Invoice ${r.id} is "${r.status}": only a stamped invoice is cancelled.`);
      const event = cmd.outcome === 'cancelled' ? 'pac.cancelled' : 'pac.cancel_pending';
      const { to, emits } = transition(r.status, event);
      const updated: InvoiceRow = { ...r, status: to, updated_at: env.at, version: r.version + 1 };
      const row = {
        id: cmd.cancellationId, tenant_id: r.tenant_id, livemode: r.livemode, invoice_id: r.id, motivo: cmd.motivo, folio_sustitucion: cmd.folioSustitucion ?? null,
        status: cmd.outcome, acuse: cmd.acuse ?? null, document_kind: 'invoice', document_id: r.id, uuid_fiscal: r.uuid_fiscal, created_at: env.at, updated_at: env.at,
      };
      return {
        set: { status: to, updated_at: env.at },
        ledger: cmd.outcome === 'cancelled' && r.uuid_fiscal ? invoiceCancelEntry(who(r), r.id, r.uuid_fiscal, stampFacts(r)) : [],
        writes: [{ op: 'insert', table: 'invoice_cancellations', row }],
        history: { event, data: { motivo: cmd.motivo, folio_sustitucion: cmd.folioSustitucion ?? null } },
        events: emits.map((type) => ({ type, data: invoiceView(updated) })),
        response: { status: 200, body: cancellationView(row) },
        result: row,
      };
    }
  }
}
