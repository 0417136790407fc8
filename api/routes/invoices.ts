// Invoices (CFDI 4.0), payment complements, cancellation, credit notes and the self-invoicing pages
// (service-spec Endpoints > Invoices; decisions.md §3, §4, §6). Handlers map HTTP to the invoice
// capability's commands and back; the rules live in actors/.
import { cancellationView, creditNoteView, invoiceView, paymentView, publicInvoiceView } from '../../actors/invoices.js';
import {
  autofacturaBody,
  autofacturaQuery,
  autofacturaResource,
  cancelBody,
  cancellationResource,
  createInvoiceBody,
  createPpdBody,
  creditNoteBody,
  creditNoteResource,
  cfdiDocumentPage,
  cfdiListQuery,
  type CfdiListQueryBody,
  invoicePaymentList,
  invoicePaymentResource,
  invoiceResource,
  registerPaymentBody,
  type AutofacturaBody,
  type CancelBody,
  type CreateInvoiceBody,
  type CreatePpdBody,
  type CreditNoteBody,
  type RegisterPaymentBody,
} from '../../schemas/invoices.js';
import { PAGE_CSP } from '../pages.js';
import { facturaNoDisponible, facturaPage } from '../factura-page.js';
import { assetRoute } from './common.js';
import { defineRoute, type RouteDef } from '../route.js';

const PAC_ERRORS = ['invoice.pac_error', 'invoice.pac_unreachable', 'invoice.pac_bad_response', 'invoice.pac_no_uuid', 'invoice.pac_credentials_missing', 'invoice.pac_credentials_incomplete', 'invoice.livemode_mismatch', 'invoice.fiscal_profile_missing', 'invoice.csd_missing', 'invoice.concurrent_modification'] as const;
const xmlReply = (xml: string, name: string) => ({ status: 200, contentType: 'application/xml; charset=utf-8', text: xml, headers: { 'Content-Disposition': `attachment; filename="${name}.xml"` } });
const pdfReply = (pdf: Buffer, name: string) => ({ status: 200, contentType: 'application/pdf', text: pdf as unknown as string, headers: { 'Content-Disposition': `attachment; filename="${name}.pdf"` } });
const html = (status: number, text: string) => ({ status, contentType: 'text/html', text, headers: { 'Content-Security-Policy': PAGE_CSP, 'Cache-Control': 'no-store' } });
export const invoiceRoutes: RouteDef[] = [
  defineRoute<CreateInvoiceBody>({
    method: 'POST',
    path: '/v1/invoices',
    auth: 'api_key',
    scope: 'invoices:write',
    idempotency: 'required',
    body: createInvoiceBody,
    summary: 'Invoice a succeeded charge (CFDI 4.0 ingreso, PUE)',
    description:
      'Stamps a CFDI 4.0 ingreso with MetodoPago PUE for a succeeded payment intent (the charge total = amount + tip), FormaPago from the method that paid it (card 04, SPEI/CoDi 03, OXXO 01). ' +
      'IVA 16% is inside every amount: base = round(total / 1.16) per concept line, IVA = total − base (docs/invoices.md explains the rounding). `conceptos` are optional; their `importe_minor` must add up to the total. ' +
      'One live invoice per charge (`invoice.already_exists`); a rejected stamp (`invoice.pac_error`) leaves the invoice in `error`, not live, so a corrected request may stamp. ' +
      'When the PAC\'s answer is lost (`invoice.pac_unreachable`, `pac_bad_response`, `pac_no_uuid`) the invoice stays `pending` with the same sealed CFDI; the next request for the charge asks the PAC what became of it first. ' +
      'Generic RFCs (XAXX010101000, XEXX010101000) need nombre "PUBLICO EN GENERAL", regimen 616 and uso S01 (`invoice.receptor_incoherente`); the CFDI carries the issuer\'s lugar de expedición as their CP. ' +
      'Test mode stamps with the `sim` PAC: a receptor named `PAC ERROR`, `PAC UNREACHABLE`, `PAC BAD RESPONSE` or `PAC NO UUID` triggers that failure. Emits `invoice.stamped` (or `invoice.failed`).',
    tags: ['Invoices'],
    responses: { 201: { description: 'The stamped invoice', schema: invoiceResource } },
    errors: ['invoice.invalid_body', 'invoice.invalid_receptor', 'invoice.receptor_incoherente', 'invoice.intent_not_found', 'invoice.intent_not_succeeded', 'invoice.intent_fully_refunded', 'invoice.already_exists', 'invoice.conceptos_sum_mismatch', 'invoice.invalid_currency', 'invoice.payment_already_applied', 'invoice.invalid_replacement', ...PAC_ERRORS],
    handler: async (ctx) => ({ status: 201, body: invoiceView(await ctx.deps.invoices.createPue(ctx.principal, ctx.body, ctx.idem)) }),
  }),
  defineRoute<CreatePpdBody>({
    method: 'POST',
    path: '/v1/invoices/ppd',
    auth: 'api_key',
    scope: 'invoices:write',
    idempotency: 'required',
    body: createPpdBody,
    summary: 'Issue a deferred-payment invoice (CFDI 4.0 ingreso, PPD)',
    description: 'MetodoPago PPD, FormaPago 99 (Por definir), one concept (`descripcion`). Answers `saldo_insoluto_minor` = `total_minor` and `parcialidades` 0; payments are registered with POST /v1/invoices/{id}/payments.',
    tags: ['Invoices'],
    responses: { 201: { description: 'The stamped PPD invoice', schema: invoiceResource } },
    errors: ['invoice.invalid_body', 'invoice.invalid_receptor', 'invoice.receptor_incoherente', 'invoice.invalid_currency', 'invoice.conceptos_sum_mismatch', 'invoice.invalid_replacement', ...PAC_ERRORS],
    handler: async (ctx) => ({ status: 201, body: invoiceView(await ctx.deps.invoices.createPpd(ctx.principal, ctx.body, ctx.idem)) }),
  }),
  defineRoute<unknown, CfdiListQueryBody>({
    method: 'GET',
    path: '/v1/invoices',
    auth: 'api_key',
    scope: 'invoices:write',
    query: cfdiListQuery,
    summary: 'List every stamped CFDI: invoices, global invoices, payment complements (REP) and credit notes',
    description:
      'Newest first. Each item is a `cfdi_document` with its own `id` (the invoice\'s, the REP\'s or the credit note\'s): GET /v1/invoices/{id}/xml and /pdf download any of them, so every CFDI can be delivered to its receptor as SAT requires. ' +
      'A cancelled CFDI stays listed with `cancelled: true` (status `cancelled`; `cancel_pending` while the receptor has to accept). Not listed: `pending` and `error` (no stamp). ' +
      'Filters: `kind`, `status`, `customer` (a customer id, through the charge), `receptor_rfc`, `period` (YYYY-MM of the CFDI\'s Fecha). Request `?cursor=<next_cursor>` while `has_more` is true; `limit` defaults to 20, clamped to 100; a changed or foreign cursor is `reports.invalid_cursor`.',
    tags: ['Invoices'],
    responses: { 200: { description: 'A page of CFDIs', schema: cfdiDocumentPage } },
    errors: ['invoice.invalid_body', 'reports.invalid_cursor'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.invoices.listDocuments(ctx.principal, ctx.query) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/invoices/{id}',
    auth: 'api_key',
    scope: 'invoices:write',
    notFound: 'invoice.not_found',
    summary: 'Read an invoice (with `error_detail` when stamping failed)',
    tags: ['Invoices'],
    responses: { 200: { description: 'The invoice', schema: invoiceResource } },
    errors: ['invoice.not_found'],
    handler: async (ctx) => ({ status: 200, body: invoiceView(await ctx.deps.invoices.get(ctx.principal, ctx.params.id)) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/invoices/{id}/xml',
    auth: 'api_key',
    scope: 'invoices:write',
    notFound: 'invoice.not_found',
    summary: 'Download a stamped CFDI (XML with its TimbreFiscalDigital): an invoice, a payment complement or a credit note',
    description: '`{id}` is any `cfdi_document` id of GET /v1/invoices: an invoice\'s, a payment complement\'s (`invoice_payment`) or a credit note\'s. A cancelled CFDI stays downloadable (header `Orquesta-Cfdi-Status: cancelled`).',
    tags: ['Invoices'],
    responses: { 200: { description: 'The CFDI', contentType: 'application/xml' } },
    errors: ['invoice.not_found', 'invoice.not_stamped'],
    handler: async (ctx) => {
      const d = await ctx.deps.invoices.documentXml(ctx.principal, ctx.params.id);
      const r = xmlReply(d.xml, d.name);
      return { ...r, headers: { ...r.headers, 'Orquesta-Cfdi-Status': d.status } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/invoices/{id}/pdf',
    auth: 'api_key',
    scope: 'invoices:write',
    notFound: 'invoice.not_found',
    summary: 'Download the printed representation (PDF) of the stamped CFDI',
    description: 'Issuer and receptor, concepts, taxes, importe con letra, sellos, the TFD cadena original and SAT\'s verification QR; test-mode documents say "SIN VALIDEZ FISCAL". `{id}` is any `cfdi_document` id (invoice, payment complement, credit note); a cancelled CFDI says "CFDI CANCELADO" (header `Orquesta-Cfdi-Status`).',
    tags: ['Invoices'],
    responses: { 200: { description: 'The PDF', contentType: 'application/pdf' } },
    errors: ['invoice.not_found', 'invoice.not_stamped'],
    handler: async (ctx) => {
      const d = await ctx.deps.invoices.documentPdf(ctx.principal, ctx.params.id);
      const r = pdfReply(d.pdf, d.name);
      return { ...r, headers: { ...r.headers, 'Orquesta-Cfdi-Status': d.status } };
    },
  }),
  defineRoute<RegisterPaymentBody>({
    method: 'POST',
    path: '/v1/invoices/{id}/payments',
    auth: 'api_key',
    scope: 'invoices:write',
    idempotency: 'required',
    body: registerPaymentBody,
    notFound: 'invoice.not_found',
    summary: 'Register a payment of a PPD invoice: stamps its payment complement (REP, Pagos 2.0)',
    description:
      'The charge (amount + tip) is the payment: ImpSaldoAnt = the current `saldo_insoluto_minor`, ImpPagado = the charge, ImpSaldoInsoluto = the rest, NumParcialidad = the next number. ' +
      'A charge larger than the remaining balance is refused with `invoice.payment_exceeds_balance` (the message carries the balance). Requests for one invoice run one at a time (lock + version fence + a unique (invoice, parcialidad) index), so concurrent payments never break the chain. ' +
      'Idempotent per (invoice, charge): the same charge again answers its complement (200). A charge is applied once (`invoice.payment_already_applied`). Emits `invoice_payment.stamped`.',
    tags: ['Invoices'],
    responses: { 201: { description: 'The stamped payment complement', schema: invoicePaymentResource }, 200: { description: 'The complement this charge already has', schema: invoicePaymentResource } },
    errors: ['invoice.not_found', 'invoice.invalid_body', 'invoice.not_ppd', 'invoice.not_stamped', 'invoice.intent_not_found', 'invoice.intent_not_succeeded', 'invoice.payment_exceeds_balance', 'invoice.payment_already_applied', 'invoice.payment_currency_mismatch', ...PAC_ERRORS, 'invoice.intent_fully_refunded', 'invoice.cancellation_pending'],
    handler: async (ctx) => {
      const r = await ctx.deps.invoices.registerPayment(ctx.principal, ctx.params.id, ctx.body.payment_intent_id, ctx.idem);
      return { status: r.created ? 201 : 200, body: paymentView(r.row) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/invoices/{id}/payments',
    auth: 'api_key',
    scope: 'invoices:write',
    notFound: 'invoice.not_found',
    summary: 'List the payment complements (REP) of a PPD invoice, by parcialidad',
    tags: ['Invoices'],
    responses: { 200: { description: 'The live complements: `stamped`, and `cancel_pending` (SAT holds the cancellation for the receptor; still live until SAT answers)', schema: invoicePaymentList } },
    errors: ['invoice.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.invoices.listPayments(ctx.principal, ctx.params.id) }),
  }),
  defineRoute<CancelBody>({
    method: 'POST',
    path: '/v1/invoices/{invoiceId}/cancel',
    auth: 'api_key',
    scope: 'invoices:write',
    idempotency: 'required',
    body: cancelBody,
    notFound: 'invoice.not_found',
    summary: 'Cancel a CFDI with SAT (motivo 01-04): an invoice, one of its payment complements or one of its credit notes',
    description:
      'Body `{motivo: "01"|"02"|"03"|"04", folio_sustitucion?}` (decisions.md §4): `01` needs `folio_sustitucion` (`invoice.folio_sustitucion_required`), the others refuse it. `{invoiceId}` is any `cfdi_document` id of GET /v1/invoices. ' +
      'As SAT orders it (docs/invoices.md "Cancellation"): an invoice with live payment complements or credit notes is refused, naming them (`invoice.related_documents_live`): cancel those first (a REP chain from its last parcialidad; a cancelled REP gives its amount and NumParcialidad back, a cancelled credit note its amount). ' +
      'Motivo `01`: issue the replacement first (POST /v1/invoices or /ppd with `replaces` = this invoice: its CFDI carries CfdiRelacionados TipoRelacion 04), then cancel with `folio_sustitucion` = the replacement\'s UUID, checked: live, this account\'s, relating this invoice, same receptor RFC (`invoice.invalid_folio_sustitucion`). ' +
      'Motivo `04` only for a global invoice (`invoice.motivo_not_applicable`); REPs and credit notes take `02` or `03`. ' +
      'Answers `{object: "invoice_cancellation", document_kind, document_id, uuid_fiscal, status: "cancelled"|"pending", acuse}`: `pending` when SAT waits for the receptor\'s acceptance (the invoice, payment complement or credit note is then `cancel_pending`, still live for SAT, and the job `invoice.cancel_follow` asks SAT until its final answer: `cancelled`, or back to `stamped` when the receptor refuses; while a REP waits no later REP is registered, `invoice.cancellation_pending`). ' +
      'A cancelled invoice is no longer `stamped`: payment complements and credit notes against it answer `invoice.not_stamped`. Asking again answers the same cancellation. Emits `invoice.cancelled`, `invoice_payment.cancelled`, `credit_note.cancelled`.',
    tags: ['Invoices'],
    responses: { 200: { description: 'The cancellation', schema: cancellationResource } },
    errors: ['invoice.not_found', 'invoice.invalid_body', 'invoice.folio_sustitucion_required', 'invoice.not_stamped', 'invoice.cancel_rejected', 'invoice.related_documents_live', 'invoice.invalid_folio_sustitucion', 'invoice.motivo_not_applicable', ...PAC_ERRORS],
    handler: async (ctx) => {
      return { status: 200, body: cancellationView(await ctx.deps.invoices.cancel(ctx.principal, ctx.params.invoiceId, ctx.body, ctx.idem)) };
    },
  }),
  defineRoute<CreditNoteBody>({
    method: 'POST',
    path: '/v1/invoices/{invoiceId}/credit-notes',
    auth: 'api_key',
    scope: 'invoices:write',
    idempotency: 'required',
    body: creditNoteBody,
    notFound: 'invoice.not_found',
    summary: 'Issue a credit note (CFDI egreso related with TipoRelacion 01)',
    description:
      'Body `{total_minor, motivo?}` (decisions.md §4), IVA inside like every amount. The sum of live credit notes never exceeds the invoice total, also under concurrent requests ' +
      '(lock, version fence and a check constraint on the invoice): beyond it `invoice.credit_note_exceeds_total` with what is left. Emits `credit_note.stamped`.',
    tags: ['Invoices'],
    responses: { 200: { description: 'The stamped credit note', schema: creditNoteResource } },
    errors: ['invoice.not_found', 'invoice.invalid_body', 'invoice.not_stamped', 'invoice.credit_note_exceeds_total', ...PAC_ERRORS],
    handler: async (ctx) => {
      return { status: 200, body: creditNoteView(await ctx.deps.invoices.creditNote(ctx.principal, ctx.params.invoiceId, ctx.body, ctx.idem)) };
    },
  }),
  // ---- Self-invoicing (no Authorization) ----
  ...['factura.js', 'factura.css'].map((file) => assetRoute(file, 'Self-invoice page asset', 'Invoices')),
  defineRoute<unknown, { receipt_code?: string }>({
    method: 'GET',
    path: '/factura/{slug}',
    auth: 'none',
    query: { type: 'object', properties: { receipt_code: { type: 'string', maxLength: 20, description: 'Fills in the receipt code (the checkout links here with it).' } } },
    summary: 'The self-invoice page (HTML form in Spanish)',
    description: 'A shopper with a receipt fills in the receipt code, RFC and fiscal fields; the page posts to /public/factura/{slug}. An unknown or disabled portal answers the same 404 page.',
    tags: ['Invoices'],
    responses: { 200: { description: 'HTML page', contentType: 'text/html' }, 404: { description: 'Portal not available', contentType: 'text/html' } },
    handler: async (ctx) => {
      const issuer = await ctx.deps.fiscalProfile.issuerBySlug(ctx.params.slug);
      if (!issuer) return html(404, facturaNoDisponible());
      return html(200, facturaPage({ slug: ctx.params.slug, comercio: issuer.nombre, testMode: !issuer.livemode, receiptCode: ctx.query.receipt_code }));
    },
  }),
  defineRoute<AutofacturaBody>({
    method: 'POST',
    path: '/public/factura/{slug}',
    auth: 'public',
    body: autofacturaBody,
    summary: 'Self-invoice a receipt (receipt_code + rfc)',
    description:
      'Stamps the PUE invoice of the receipt\'s charge for the receptor given, or answers the one it already has for this RFC (the same receipt twice gives the same invoice). ' +
      'Unknown slug and disabled portal give the same `autofactura.not_available`; an unknown code, another tenant\'s code, an unpaid receipt and a receipt invoiced to another RFC give the same `autofactura.receipt_not_found`. ' +
      'Receptor and PAC errors pass through unchanged. Two submissions of one receipt at the same moment: the second may answer `invoice.concurrent_modification` (409); submitting again returns the invoice. ' +
      'Rate-limited like every /public route (per client IP). `email` is captured with no effect on stamping.',
    tags: ['Invoices'],
    responses: { 200: { description: 'The invoice (public fields)', schema: autofacturaResource } },
    errors: ['autofactura.invalid_body', 'autofactura.invalid_rfc', 'autofactura.not_available', 'autofactura.receipt_not_found', 'invoice.invalid_receptor', 'invoice.receptor_incoherente', ...PAC_ERRORS],
    handler: async (ctx) => ({ status: 200, body: publicInvoiceView(await ctx.deps.invoices.selfInvoice(ctx.params.slug, ctx.body)) }),
  }),
  defineRoute<unknown, { receipt_code: string; rfc: string; format: 'xml' | 'pdf' }>({
    method: 'GET',
    path: '/public/factura/{slug}/cfdi',
    auth: 'public',
    query: autofacturaQuery,
    summary: 'Download a self-invoiced CFDI (XML or PDF) by receipt_code and rfc',
    description: 'Both must match the CFDI; any mismatch answers the same `autofactura.receipt_not_found`. `format` defaults to pdf.',
    tags: ['Invoices'],
    responses: { 200: { description: 'The CFDI', contentType: 'application/xml' } },
    errors: ['autofactura.invalid_body', 'autofactura.not_available', 'autofactura.receipt_not_found'],
    handler: async (ctx) => {
      const d = await ctx.deps.invoices.selfInvoiceDocument(ctx.params.slug, ctx.query.receipt_code, ctx.query.rfc, ctx.query.format ?? 'pdf');
      return d.xml ? xmlReply(d.xml, d.name) : pdfReply(d.pdf!, d.name);
    },
  }),
];
