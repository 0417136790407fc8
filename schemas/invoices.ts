// Invoices (CFDI), payment complements, cancellations, credit notes, the fiscal profile and
// self-invoicing. spec: Resources > invoice / invoice_payment, Endpoints > Invoices, Public
// self-invoicing; decisions.md §3, §4, §6. Shape rules (required fields, types) live here; SAT
// rules (RFC form, catalogs, the generic-RFC triple) are checked by formats/cfdi/receptor.ts.
import type { FromSchema } from 'json-schema-to-ts';
import { listOf, timestamp, uuid } from './common.js';

const str = (maxLength: number, extra: object = {}) => ({ type: 'string', minLength: 1, maxLength, ...extra }) as const;

export const receptorBody = {
  type: 'object',
  additionalProperties: false,
  'x-error-code': 'invoice.invalid_receptor',
  required: ['rfc', 'nombre', 'uso_cfdi', 'regimen_fiscal', 'cp'],
  description: 'The receptor as registered with SAT (Constancia de Situación Fiscal). All five are required.',
  properties: {
    rfc: { ...str(13), 'x-error-code': 'invoice.invalid_receptor', description: 'RFC (12 characters for a persona moral, 13 for a física). Generic: XAXX010101000 (público en general), XEXX010101000 (extranjero).' },
    nombre: { ...str(254), 'x-error-code': 'invoice.invalid_receptor', description: 'Name or razón social, without the legal-entity suffix; upper-cased on the CFDI.' },
    uso_cfdi: { ...str(4), 'x-error-code': 'invoice.invalid_receptor', description: 'c_UsoCFDI key (e.g. G03, S01), admitted for the receptor régimen.' },
    regimen_fiscal: { ...str(3), 'x-error-code': 'invoice.invalid_receptor', description: 'c_RegimenFiscal key (e.g. 601, 612, 616, 626).' },
    cp: { ...str(5), 'x-error-code': 'invoice.invalid_receptor', description: 'Postal code of the receptor domicilio fiscal (5 digits). For a generic RFC the CFDI carries the issuer lugar de expedición instead, as SAT requires.' },
  },
} as const;

export const conceptoBody = {
  type: 'object',
  additionalProperties: false,
  required: ['descripcion'],
  properties: {
    descripcion: { ...str(1000), description: 'Descripción of the line.' },
    importe_minor: { type: 'integer', minimum: 1, maximum: 999_999_999_999, description: 'Amount of the line in cents with its IVA trasladado inside (16 % by default, decisions.md §6). Give this, or `valor_unitario_minor` (before taxes).' },
    cantidad: { type: 'string', pattern: '^[0-9]{1,12}(\\.[0-9]{1,6})?$', description: 'Cantidad (up to 6 decimals), with `valor_unitario_minor`; default "1".' },
    valor_unitario_minor: { type: 'integer', minimum: 1, maximum: 999_999_999_999, description: 'ValorUnitario before taxes, in cents: Importe = round(Cantidad × ValorUnitario), Base = Importe − Descuento, each tax = round(Base × tasa) (docs/invoices.md).' },
    descuento_minor: { type: 'integer', minimum: 0, maximum: 999_999_999_999, description: 'Descuento of the line before taxes, in cents (with `valor_unitario_minor`).' },
    objeto_imp: { type: 'string', enum: ['01', '02', '03'], description: 'ObjetoImp: 01 no objeto de impuesto, 02 sí objeto (default), 03 sí objeto, no obligado al desglose. 01 and 03 carry no taxes.' },
    iva: { type: 'string', enum: ['16', '8', '0', 'exento'], description: 'IVA trasladado: 16 % (default), 8 % (región fronteriza), 0 %, or exento.' },
    retenciones: {
      type: 'array',
      maxItems: 2,
      description: 'Taxes the receptor withholds, each `{impuesto: "isr"|"iva", tasa}` with the rate as a decimal string: ISR `"0.100000"` (honorarios, arrendamiento; LISR art. 106), IVA `"0.106667"` (two thirds of 16 %, RLIVA art. 3) or `"0.040000"` (autotransporte). An issuer in RESICO (régimen 626, persona física) invoicing a persona moral gets ISR `"0.012500"` by default (LISR art. 113-J).',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['impuesto', 'tasa'],
        properties: { impuesto: { type: 'string', enum: ['isr', 'iva'] }, tasa: { type: 'string', pattern: '^0\\.[0-9]{1,6}$' } },
      },
    },
    clave_prod_serv: { type: 'string', pattern: '^[0-9]{8}$', description: 'c_ClaveProdServ (8 digits); default 01010101.' },
    clave_unidad: { type: 'string', pattern: '^[A-Z0-9]{2,3}$', description: 'c_ClaveUnidad; default ACT.' },
  },
} as const;

export const createInvoiceBody = {
  type: 'object',
  additionalProperties: false,
  'x-error-code': 'invoice.invalid_body',
  required: ['payment_intent_id', 'receptor'],
  properties: {
    payment_intent_id: { ...uuid, 'x-error-code': 'invoice.invalid_body', description: 'A succeeded payment intent of this key\'s tenant and mode.' },
    receptor: { ...receptorBody, 'x-required-error-code': 'invoice.invalid_receptor' },
    replaces: { ...uuid, 'x-error-code': 'invoice.invalid_body', description: 'Motivo 01, step 1: the id of the stamped invoice of the same charge this one replaces. The new CFDI relates it (CfdiRelacionados TipoRelacion 04, sustitución) and may be live next to it; then cancel the old one with motivo 01 and `folio_sustitucion` = this one\'s `uuid_fiscal`. Same receptor RFC (`invoice.invalid_replacement`).' },
    conceptos: {
      type: 'array',
      minItems: 1,
      maxItems: 200,
      'x-error-code': 'invoice.invalid_body',
      items: conceptoBody,
      description: 'Optional concept lines with their tax treatment; the CFDI Total they make (SubTotal − Descuento + traslados − retenciones) must equal the charge amount (`invoice.conceptos_sum_mismatch`). The tip is not part of the sale: it is never invoiced (it is the staff\'s, `tips_payable` in the books). Omitted: one line for the whole amount with IVA 16 % inside.',
    },
  },
} as const;
export type CreateInvoiceBody = FromSchema<typeof createInvoiceBody>;

export const createPpdBody = {
  type: 'object',
  additionalProperties: false,
  'x-error-code': 'invoice.invalid_body',
  required: ['total_minor', 'receptor'],
  properties: {
    total_minor: { type: 'integer', minimum: 1, maximum: 999_999_999_999, 'x-error-code': 'invoice.invalid_body', description: 'Total with IVA 16% included, in cents.' },
    currency: { type: 'string', default: 'MXN', 'x-error-code': 'invoice.invalid_currency', enum: ['MXN'], description: 'Only MXN (default).' },
    receptor: { ...receptorBody, 'x-required-error-code': 'invoice.invalid_receptor' },
    descripcion: { ...str(1000), description: 'Concept description; default "Pago en parcialidades".' },
    replaces: { ...uuid, 'x-error-code': 'invoice.invalid_body', description: 'Motivo 01, step 1: the id of the stamped PPD invoice this one replaces (CfdiRelacionados TipoRelacion 04); same receptor RFC. Cancel the old one with motivo 01 next.' },
    conceptos: {
      type: 'array',
      minItems: 1,
      maxItems: 200,
      'x-error-code': 'invoice.invalid_body',
      items: conceptoBody,
      description: 'Optional concept lines with their tax treatment (as POST /v1/invoices); the Total they make must equal `total_minor` (`invoice.conceptos_sum_mismatch`). Omitted: one line `descripcion` for `total_minor` with IVA 16 % inside.',
    },
  },
} as const;
export type CreatePpdBody = FromSchema<typeof createPpdBody>;

export const registerPaymentBody = {
  type: 'object',
  additionalProperties: false,
  'x-error-code': 'invoice.invalid_body',
  required: ['payment_intent_id'],
  properties: { payment_intent_id: { ...uuid, 'x-error-code': 'invoice.invalid_body', description: 'A succeeded charge that settles part or all of the remaining balance.' } },
} as const;
export type RegisterPaymentBody = FromSchema<typeof registerPaymentBody>;

export const cancelBody = {
  type: 'object',
  additionalProperties: false,
  'x-error-code': 'invoice.invalid_body',
  required: ['motivo'],
  properties: {
    motivo: { type: 'string', enum: ['01', '02', '03', '04'], 'x-error-code': 'invoice.invalid_body', description: 'SAT motive: 01 con errores con relación (needs folio_sustitucion), 02 con errores sin relación, 03 no se llevó a cabo la operación, 04 operación nominativa relacionada en una factura global.' },
    folio_sustitucion: { ...uuid, 'x-error-code': 'invoice.invalid_body', description: 'UUID of the CFDI that replaces this one; required with motivo 01, refused with the others. It must be a live invoice of this account issued with `replaces` = this invoice (CfdiRelacionados TipoRelacion 04) for the same receptor RFC (`invoice.invalid_folio_sustitucion`).' },
  },
} as const;
export type CancelBody = FromSchema<typeof cancelBody>;

export const creditNoteBody = {
  type: 'object',
  additionalProperties: false,
  'x-error-code': 'invoice.invalid_body',
  required: ['total_minor'],
  properties: {
    total_minor: { type: 'integer', minimum: 1, maximum: 999_999_999_999, 'x-error-code': 'invoice.invalid_body', description: 'Credit in cents: the credit note\'s Total (what the customer is credited; a PPD invoice\'s saldo goes down by it), with the invoice\'s IVA inside (16 % for a default invoice) and, when the invoice has retenciones, net of them. It is split over the invoice\'s tax groups in proportion (docs/invoices.md).' },
    motivo: { ...str(300), description: 'Free text printed as the concept (default "Bonificación").' },
  },
} as const;
export type CreditNoteBody = FromSchema<typeof creditNoteBody>;

const receptorResource = {
  type: 'object',
  required: ['rfc', 'nombre', 'uso_cfdi', 'regimen_fiscal', 'cp'],
  properties: { rfc: { type: 'string' }, nombre: { type: 'string' }, uso_cfdi: { type: 'string' }, regimen_fiscal: { type: 'string' }, cp: { type: 'string' } },
} as const;

export const invoiceResource = {
  type: 'object',
  required: ['id', 'object', 'status', 'total_minor', 'base_minor', 'iva_minor', 'currency', 'receptor', 'pac', 'metodo_pago', 'parcialidades', 'livemode', 'created_at', 'updated_at'],
  properties: {
    id: uuid,
    object: { const: 'invoice' },
    status: { type: 'string', enum: ['pending', 'stamped', 'error', 'cancel_pending', 'cancelled'], description: '`pending` while the PAC is called; `stamped`; `error` (rejected, not live: a corrected request for the same charge may stamp); `cancel_pending` (SAT awaits the receptor); `cancelled`.' },
    payment_intent_id: uuid,
    uuid_fiscal: { type: 'string', description: 'Folio fiscal (UUID) of the TimbreFiscalDigital.' },
    serie: { type: 'string' },
    folio: { type: 'string' },
    total_minor: { type: 'integer' },
    base_minor: { type: 'integer' },
    iva_minor: { type: 'integer' },
    currency: { type: 'string' },
    receptor: receptorResource,
    pac: { type: 'string', description: '`sim` or the real PAC (`finkok`).' },
    metodo_pago: { type: 'string', enum: ['PUE', 'PPD'] },
    saldo_insoluto_minor: { type: 'integer', description: 'PPD only: what is still owed.' },
    parcialidades: { type: 'integer', description: 'Payment complements registered (PPD).' },
    credited_minor: { type: 'integer', description: 'Sum of live credit notes.' },
    replaces_invoice_id: { ...uuid, description: 'The invoice this one replaces (motivo 01; the CFDI carries CfdiRelacionados TipoRelacion 04 with its UUID).' },
    error_detail: { type: 'string', description: 'Why stamping failed (status `error`): the code and the PAC\'s message.' },
    livemode: { type: 'boolean' },
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;

export const invoicePaymentResource = {
  type: 'object',
  required: ['id', 'object', 'invoice_id', 'payment_intent_id', 'parcialidad', 'monto_minor', 'saldo_anterior_minor', 'saldo_insoluto_minor', 'currency', 'status', 'livemode', 'created_at', 'updated_at'],
  properties: {
    id: uuid,
    object: { const: 'invoice_payment' },
    invoice_id: uuid,
    payment_intent_id: uuid,
    parcialidad: { type: 'integer' },
    monto_minor: { type: 'integer' },
    saldo_anterior_minor: { type: 'integer' },
    saldo_insoluto_minor: { type: 'integer' },
    currency: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'stamped', 'error', 'cancel_pending', 'cancelled'], description: 'machines/cfdi-document.ts. Listed and answered once stamped: `stamped`; `cancel_pending` (SAT holds its cancellation for the receptor\'s acceptance: still live, it keeps its place in the chain, and no later REP is registered until SAT answers); `cancelled` (its amount and NumParcialidad went back to the invoice). `pending`/`error`: while the PAC is called / refused, never listed.' },
    rep_uuid: { type: 'string', description: 'Folio fiscal of the payment complement CFDI.' },
    livemode: { type: 'boolean' },
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;
export const invoicePaymentList = listOf(invoicePaymentResource);

export const cancellationResource = {
  type: 'object',
  required: ['id', 'object', 'invoice_id', 'motivo', 'status'],
  properties: {
    id: uuid,
    object: { const: 'invoice_cancellation' },
    invoice_id: uuid,
    motivo: { type: 'string' },
    folio_sustitucion: { type: 'string' },
    status: { type: 'string', enum: ['cancelled', 'pending', 'rejected'], description: '`pending`: SAT waits for the receptor\'s acceptance (the invoice, payment complement or credit note is `cancel_pending`, followed by the job `invoice.cancel_follow` until SAT\'s final answer); `rejected`: the receptor refused (it is `stamped` again).' },
    document_kind: { type: 'string', enum: ['invoice', 'payment', 'credit_note'], description: 'What was cancelled: the invoice, one of its payment complements or one of its credit notes.' },
    document_id: { ...uuid, description: 'The cancelled CFDI\'s id (the invoice\'s, the REP\'s or the credit note\'s).' },
    uuid_fiscal: { type: 'string', description: 'The cancelled CFDI\'s UUID.' },
    acuse: { type: 'string', description: 'SAT acknowledgment (XML) as the PAC returned it.' },
    created_at: timestamp,
  },
} as const;

export const creditNoteResource = {
  type: 'object',
  required: ['id', 'object', 'invoice_id', 'total_minor', 'status'],
  properties: {
    id: uuid,
    object: { const: 'credit_note' },
    invoice_id: uuid,
    total_minor: { type: 'integer' },
    base_minor: { type: 'integer' },
    iva_minor: { type: 'integer' },
    uuid_fiscal: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'stamped', 'error', 'cancel_pending', 'cancelled'], description: 'machines/cfdi-document.ts: `stamped`; `cancel_pending` (SAT holds its cancellation for the receptor\'s acceptance: it keeps its share of the invoice until SAT answers); `cancelled` (its amount went back to the invoice). `pending`/`error`: while the PAC is called / refused.' },
    created_at: timestamp,
  },
} as const;

export const fiscalProfileBody = {
  type: 'object',
  additionalProperties: false,
  'x-error-code': 'fiscal_profile.invalid',
  required: ['rfc', 'nombre', 'regimen_fiscal', 'cp', 'pac_provider'],
  properties: {
    rfc: { ...str(13), description: 'Issuer RFC (Emisor Rfc); must be the CSD\'s.' },
    nombre: { ...str(254), description: 'Issuer name as registered with SAT.' },
    regimen_fiscal: { ...str(3), description: 'Issuer c_RegimenFiscal key.' },
    cp: { type: 'string', pattern: '^[0-9]{5}$', description: 'LugarExpedicion: postal code where invoices are issued.' },
    serie: { type: 'string', maxLength: 25, pattern: '^[^|]*$', description: 'Serie of the invoices (default "F"); credit notes use "NC", payment complements "RP".' },
    pac_provider: { type: 'string', enum: ['sim', 'finkok'], description: '`sim` (test mode only, decisions.md §5) or `finkok` (live only).' },
    pac_user: { type: 'string', maxLength: 200 },
    pac_password: { type: 'string', maxLength: 200, writeOnly: true, description: 'Never returned nor logged; omitted = keep the stored one; "" = remove it.' },
    self_invoice_enabled: { type: 'boolean', default: false },
    self_invoice_slug: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{2,62}$', description: 'Address of the self-invoice page /factura/{slug}; unique across tenants.' },
    csd: {
      type: 'object',
      additionalProperties: false,
      required: ['cer_base64', 'key_base64', 'password'],
      writeOnly: true,
      description: 'Optional CSD upload: the .cer and .key files in base64 and the key password. Stored encrypted (AES-256-GCM), never returned; GET shows its certificate number and validity.',
      properties: { cer_base64: { type: 'string', maxLength: 20000 }, key_base64: { type: 'string', maxLength: 20000 }, password: { type: 'string', maxLength: 200 } },
    },
  },
} as const;
export type FiscalProfileBody = FromSchema<typeof fiscalProfileBody>;

export const fiscalProfileResource = {
  type: 'object',
  required: ['object', 'rfc', 'nombre', 'regimen_fiscal', 'cp', 'pac_provider', 'pac_password_set', 'self_invoice_enabled', 'livemode'],
  properties: {
    object: { const: 'fiscal_profile' },
    rfc: { type: 'string' },
    nombre: { type: 'string' },
    regimen_fiscal: { type: 'string' },
    cp: { type: 'string' },
    serie: { type: 'string' },
    pac_provider: { type: 'string' },
    pac_user: { type: 'string' },
    pac_password_set: { type: 'boolean', description: 'Whether a PAC password is stored (the password itself is never returned).' },
    self_invoice_enabled: { type: 'boolean' },
    self_invoice_slug: { type: 'string' },
    self_invoice_url: { type: 'string', description: 'Relative path of the page: /factura/{slug}.' },
    csd: {
      type: 'object',
      properties: { source: { type: 'string', enum: ['uploaded', 'sat_test'] }, no_certificado: { type: 'string' }, rfc: { type: 'string' }, valid_from: timestamp, valid_to: timestamp },
      description: 'The CSD that seals this mode\'s documents: the uploaded one, or in test mode SAT\'s public test CSD.',
    },
    livemode: { type: 'boolean' },
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;

export const autofacturaBody = {
  type: 'object',
  additionalProperties: false,
  'x-error-code': 'autofactura.invalid_body',
  required: ['receipt_code', 'rfc', 'nombre', 'uso_cfdi', 'regimen_fiscal', 'cp'],
  properties: {
    receipt_code: { type: 'string', minLength: 1, maxLength: 20, description: 'The receipt code printed on the ticket (W-XXXXX).' },
    rfc: { type: 'string', minLength: 1, maxLength: 20 },
    nombre: str(254),
    uso_cfdi: str(4),
    regimen_fiscal: str(3),
    cp: str(5),
    email: { type: 'string', maxLength: 320, description: 'Captured, no effect on stamping.' },
  },
} as const;
export type AutofacturaBody = FromSchema<typeof autofacturaBody>;

export const autofacturaResource = {
  type: 'object',
  required: ['object', 'status', 'uuid_fiscal', 'total_minor', 'currency'],
  description: 'The invoice, public fields only.',
  properties: {
    object: { const: 'invoice' },
    status: { type: 'string' },
    uuid_fiscal: { type: 'string' },
    serie: { type: 'string' },
    folio: { type: 'string' },
    total_minor: { type: 'integer' },
    base_minor: { type: 'integer' },
    iva_minor: { type: 'integer' },
    currency: { type: 'string' },
    receptor: receptorResource,
    livemode: { type: 'boolean' },
    created_at: timestamp,
  },
} as const;

export const autofacturaQuery = {
  type: 'object',
  additionalProperties: false,
  'x-error-code': 'autofactura.invalid_body',
  required: ['receipt_code', 'rfc'],
  properties: {
    receipt_code: { type: 'string', minLength: 1, maxLength: 20 },
    rfc: { type: 'string', minLength: 1, maxLength: 20 },
    format: { type: 'string', enum: ['xml', 'pdf'], default: 'pdf' },
  },
} as const;

/** GET /v1/invoices (issue 27): every stamped CFDI of the key's tenant and mode. */
export const cfdiListQuery = {
  type: 'object',
  additionalProperties: false,
  'x-error-code': 'invoice.invalid_body',
  properties: {
    kind: { type: 'string', enum: ['invoice', 'global', 'payment', 'credit_note'], 'x-error-code': 'invoice.invalid_body', description: '`invoice` (PUE/PPD ingreso, also a replacement), `global` (público en general), `payment` (REP, Pagos 2.0), `credit_note` (egreso).' },
    status: { type: 'string', enum: ['stamped', 'cancel_pending', 'cancelled'], 'x-error-code': 'invoice.invalid_body', description: 'Live (`stamped`), cancellation awaiting the receptor, or cancelled.' },
    customer: { ...uuid, 'x-error-code': 'invoice.invalid_body', description: 'A customer id: the CFDIs of charges of that customer (a credit note follows its invoice; a PPD invoice has no charge of its own: filter it by `receptor_rfc`).' },
    receptor_rfc: { type: 'string', minLength: 12, maxLength: 13, 'x-error-code': 'invoice.invalid_body', description: 'The receptor\'s RFC (case-insensitive).' },
    period: { type: 'string', pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$', 'x-error-code': 'invoice.invalid_body', description: 'A month, `YYYY-MM`, of the CFDI\'s Fecha (Mexico City local time).' },
    cursor: { type: 'string', maxLength: 600, 'x-error-code': 'reports.invalid_cursor', description: 'The `next_cursor` of the previous page, as received.' },
    limit: { type: 'integer', minimum: 1, 'x-error-code': 'invoice.invalid_body', description: 'Default 20; values above 100 are clamped to 100.' },
  },
} as const;
export type CfdiListQueryBody = FromSchema<typeof cfdiListQuery>;

export const cfdiDocumentResource = {
  type: 'object',
  required: ['id', 'object', 'kind', 'tipo_de_comprobante', 'status', 'cancelled', 'invoice_id', 'uuid_fiscal', 'total_minor', 'currency', 'receptor_rfc', 'receptor_nombre', 'xml_url', 'pdf_url', 'livemode', 'created_at'],
  properties: {
    id: { ...uuid, description: 'The document\'s own id: the invoice\'s, the payment complement\'s or the credit note\'s. GET /v1/invoices/{id}/xml and /pdf take it.' },
    object: { const: 'cfdi_document' },
    kind: { type: 'string', enum: ['invoice', 'global', 'payment', 'credit_note'] },
    tipo_de_comprobante: { type: 'string', enum: ['I', 'E', 'P'], description: 'SAT\'s TipoDeComprobante.' },
    metodo_pago: { type: 'string', enum: ['PUE', 'PPD'], description: 'Invoices only.' },
    status: { type: 'string', enum: ['stamped', 'cancel_pending', 'cancelled'] },
    cancelled: { type: 'boolean', description: 'SAT cancelled it: still listed and downloadable, marked (the PDF says CFDI CANCELADO).' },
    invoice_id: { ...uuid, description: 'The invoice it belongs to (its own id for an invoice).' },
    uuid_fiscal: { type: 'string', description: 'Folio fiscal.' },
    serie: { type: 'string' },
    folio: { type: 'string' },
    total_minor: { type: 'integer', description: 'Total (a REP: the amount paid, ImpPagado).' },
    base_minor: { type: 'integer' },
    iva_minor: { type: 'integer' },
    currency: { type: 'string' },
    receptor_rfc: { type: 'string' },
    receptor_nombre: { type: 'string' },
    payment_intent_id: uuid,
    customer_id: uuid,
    fecha: { type: 'string', description: 'The CFDI\'s Fecha as written in it (Mexico City local time, no offset).' },
    xml_url: { type: 'string' },
    pdf_url: { type: 'string' },
    livemode: { type: 'boolean' },
    created_at: timestamp,
  },
} as const;

export const cfdiDocumentPage = {
  type: 'object',
  required: ['object', 'data', 'has_more'],
  properties: {
    object: { const: 'list' },
    data: { type: 'array', items: cfdiDocumentResource },
    has_more: { type: 'boolean' },
    next_cursor: { type: 'string', description: 'Omitted when `has_more` is false.' },
  },
} as const;
