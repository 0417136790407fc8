// The books that mirror the CFDI (issue 27, defect 3; docs/reports.md "IVA in the books"). Pure:
// data in, journal entries out, posted by the invoice's steps in the same transaction as the stamp.
//
// - A capture books the sale at the tenant's default treatment (IVA 16 % inside: kernel/ledger.ts
//   captureLines): `sales` net of IVA, `iva_trasladado_cobrado` (208.01).
// - A PUE invoice of that charge (stamped) posts the difference between its own taxes and that
//   default: the sale per IVA group (`sales` 16 %/8 %, `sales_iva_0`, `sales_exento`), its IVA in 208.01,
//   retentions the receptor withholds as `isr_retenido_por_clientes` / `iva_retenido_por_clientes`. A 16 %
//   invoice of the whole amount posts nothing (the lines net to zero).
// - A PPD invoice books the sale when stamped (LISR art. 17: income accrues when the CFDI is issued):
//   `clientes` (105.01) the Total, the sale per group, IVA trasladado no cobrado (209.01; LIVA art. 1-B:
//   IVA is due when collected), retentions.
// - A payment complement (REP) takes back the default booking of the charge that paid (its capture
//   credited sales and 208.01 as if it were a sale of its own), credits `clientes`, and moves the REP's
//   IVA (ImpuestosDR) from 209.01 to 208.01.
// - A credit note (egreso) reverses base and IVA: `discounts` (402.02) net, the IVA out of 208.01 (PUE)
//   or 209.01 (PPD), against `clientes` (PPD: the customer owes less) or `customer_credits` (PUE: owed
//   back to the customer).
// - A cancelled CFDI's entry is reversed.
// - A refund that a PUE credit note documents is one reversal, not two (refundCoverLines, posted by
//   the invoices' job invoice.refund_credits): the covered part settles `customer_credits`.
// So for a month whose sales all have CFDIs, 208.01 + 209.01 = Σ IVA of the month's ingresos − Σ IVA
// of its egresos (test/books-iva.test.ts).
import type { EntryInput, Line } from '../kernel/ledger.js';
import { accounts, type Account } from '../kernel/accounts.js';
import { ivaInside } from '../kernel/ledger.js';
import type { ResumenImpuestos, TrasladoCalc } from '../formats/cfdi/impuestos.js';

type Who = { tenantId: string; livemode: boolean; currency: string };

/** The income account of an IVA group. */
export function salesAccountOf(t: Pick<TrasladoCalc, 'tipoFactor' | 'tasa'>): Account {
  if (t.tipoFactor === 'Exento') return accounts.salesExento;
  return t.tasa === '0.000000' ? accounts.salesIva0 : accounts.sales;
}

/** Sums lines per account and drops zeros: an adjustment that changes nothing posts nothing. */
export function net(lines: Line[]): Line[] {
  const m = new Map<string, Line>();
  for (const l of lines) {
    const k = `${l.account}\u0000${l.currency}`;
    const g = m.get(k);
    if (g) g.amountMinor += l.amountMinor;
    else m.set(k, { ...l });
  }
  return [...m.values()].filter((l) => l.amountMinor !== 0);
}

/** The sale of an invoice's taxes (credits negative): income per group, IVA, retentions (debits), untaxed lines. */
function saleLines(w: Who, imp: ResumenImpuestos, ivaAccount: Account): Line[] {
  const c = w.currency;
  const lines: Line[] = [];
  let explained = 0;
  for (const t of imp.traslados) {
    lines.push({ account: salesAccountOf(t), currency: c, amountMinor: -t.baseMinor });
    if (t.importeMinor) lines.push({ account: ivaAccount, currency: c, amountMinor: -t.importeMinor });
    explained += t.baseMinor + (t.importeMinor ?? 0);
  }
  for (const r of imp.retencionesDetalle) {
    lines.push({ account: r.impuesto === '001' ? accounts.isrRetenidoPorClientes : accounts.ivaRetenidoPorClientes, currency: c, amountMinor: r.importeMinor });
    explained -= r.importeMinor;
  }
  // Concepts that are not objeto de impuesto (ObjetoImp 01/03) are in the Total but in no IVA group.
  const rest = imp.totalMinor - explained;
  if (rest) lines.push({ account: accounts.salesExento, currency: c, amountMinor: -rest });
  return lines;
}

const entry = (w: Who, kind: string, refType: string, refId: string, memo: string, lines: Line[]): EntryInput[] => {
  const l = net(lines);
  return l.length ? [{ tenantId: w.tenantId, livemode: w.livemode, kind, refType, refId, memo, lines: l }] : [];
};

const negate = (lines: Line[]): Line[] => lines.map((l) => ({ ...l, amountMinor: -l.amountMinor }));

/** Lines of an invoice at stamp time (see the header). */
export function invoiceStampLines(w: Who, o: { metodoPago: 'PUE' | 'PPD'; chargeAmountMinor?: number; impuestos: ResumenImpuestos }): Line[] {
  const c = w.currency;
  if (o.metodoPago === 'PPD') return [{ account: accounts.clientes, currency: c, amountMinor: o.impuestos.totalMinor }, ...saleLines(w, o.impuestos, accounts.ivaTrasladadoNoCobrado)];
  const def = ivaInside(o.chargeAmountMinor ?? o.impuestos.totalMinor);
  return [{ account: accounts.sales, currency: c, amountMinor: def.baseMinor }, { account: accounts.ivaTrasladadoCobrado, currency: c, amountMinor: def.ivaMinor }, ...saleLines(w, o.impuestos, accounts.ivaTrasladadoCobrado)];
}

export function invoiceStampEntry(w: Who, invoiceId: string, uuid: string, o: Parameters<typeof invoiceStampLines>[1]): EntryInput[] {
  return entry(w, 'cfdi.ingreso', 'invoice', invoiceId, `CFDI ${uuid} (${o.metodoPago})`, invoiceStampLines(w, o));
}

export function invoiceCancelEntry(w: Who, invoiceId: string, uuid: string, o: Parameters<typeof invoiceStampLines>[1]): EntryInput[] {
  return entry(w, 'cfdi.cancelado', 'invoice', invoiceId, `CFDI ${uuid} cancelado`, negate(invoiceStampLines(w, o)));
}

/** A REP: the paying charge's default booking taken back against `clientes`, the REP's IVA from 209.01 to 208.01. */
export function paymentEntry(w: Who, paymentId: string, uuid: string, o: { montoMinor: number; ivaMinor: number }): EntryInput[] {
  const c = w.currency;
  const def = ivaInside(o.montoMinor);
  return entry(w, 'cfdi.pago', 'invoice_payment', paymentId, `REP ${uuid}`, [
    { account: accounts.sales, currency: c, amountMinor: def.baseMinor },
    { account: accounts.ivaTrasladadoCobrado, currency: c, amountMinor: def.ivaMinor },
    { account: accounts.clientes, currency: c, amountMinor: -o.montoMinor },
    { account: accounts.ivaTrasladadoNoCobrado, currency: c, amountMinor: o.ivaMinor },
    { account: accounts.ivaTrasladadoCobrado, currency: c, amountMinor: -o.ivaMinor },
  ]);
}

/** A credit note: base to `discounts`, its IVA out of 208.01 (PUE) or 209.01 (PPD). */
export function creditNoteEntry(w: Who, noteId: string, uuid: string, o: { metodoPago: 'PUE' | 'PPD'; totalMinor: number; baseMinor: number; ivaMinor: number }): EntryInput[] {
  const c = w.currency;
  return entry(w, 'cfdi.egreso', 'credit_note', noteId, `Nota de credito ${uuid}`, [
    { account: accounts.discounts, currency: c, amountMinor: o.baseMinor },
    { account: o.metodoPago === 'PPD' ? accounts.ivaTrasladadoNoCobrado : accounts.ivaTrasladadoCobrado, currency: c, amountMinor: o.ivaMinor },
    { account: o.metodoPago === 'PPD' ? accounts.clientes : accounts.customerCredits, currency: c, amountMinor: -(o.baseMinor + o.ivaMinor) },
  ]);
}

/**
 * A refund that a PUE credit note documents (issue 27; docs/reports.md "IVA in the books"): both the
 * refund (`refunds` + 208.01 at the default split, kernel/ledger.ts refundLines) and the credit note
 * (`discounts` + 208.01 at the invoice's taxes, `customer_credits`) reverse the sale. The part `c` of
 * the refunds that the charge's live credit notes cover is the credit paid back: `customer_credits`
 * settled, the refund's own reversal of that part taken back (the credit note's stays, with the
 * CFDI's taxes). `c` < 0 undoes it (a credit note cancelled later).
 */
export function refundCoverLines(currency: string, c: number): Line[] {
  const r = ivaInside(Math.abs(c));
  const sign = Math.sign(c);
  return [
    { account: accounts.customerCredits, currency, amountMinor: c },
    { account: accounts.refunds, currency, amountMinor: -sign * r.baseMinor },
    { account: accounts.ivaTrasladadoCobrado, currency, amountMinor: -sign * r.ivaMinor },
  ];
}
