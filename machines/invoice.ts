// An invoice (CFDI) as a pure XState v5 machine. spec: invoice states `stamped` and `error`, "a
// pending state is referred to but not listed"; decisions.md §6: a rejected stamp is not live, a
// cancelled invoice is not `stamped`. Orquesta's full set (docs/invoices.md):
//
//   pending ──pac.stamped──▶ stamped ──pac.cancelled──▶ cancelled
//      │                       │  ▲
//      ├─pac.rejected─▶ error  │  └─pac.cancel_rejected── cancel_pending
//      └─pac.not_stamped─▶ error └──pac.cancel_pending──▶ cancel_pending ──pac.cancelled──▶ cancelled
//
// `pending` is live (it blocks another invoice for the charge) while the PAC's answer is unknown;
// `error` is final and not live. Payment complements and credit notes do not move the invoice's
// state: they are their own CFDIs, recorded with the invoice's version as fence.
import { cfdiLifecycle, type CfdiDocumentEvent } from './cfdi-document.js';

export type InvoiceStatus = 'pending' | 'stamped' | 'error' | 'cancel_pending' | 'cancelled';
export const LIVE_INVOICE_STATUSES: readonly InvoiceStatus[] = ['pending', 'stamped', 'cancel_pending'];

/** The PAC's answers: the same for every CFDI (machines/cfdi-document.ts has the one chart). */
export type InvoiceEvent = CfdiDocumentEvent;

export type InvoiceEffect = 'invoice.stamped' | 'invoice.failed' | 'invoice.cancelled';

export const invoiceMachine = cfdiLifecycle<InvoiceEffect>('invoice', { stamped: 'invoice.stamped', failed: 'invoice.failed', cancelled: 'invoice.cancelled' });
