// Every stamped CFDI of a tenant and mode (issue 27, defect 2): invoices (PUE, PPD, global),
// payment complements (REP) and credit notes, listed newest first with filters and a signed cursor
// (GET /v1/invoices), and downloadable as XML and PDF by their own id (GET /v1/invoices/{id}/xml|pdf).
// SAT requires the issuer to deliver each CFDI to its receptor (CFF art. 29 fr. V): a REP or credit
// note the merchant cannot download cannot be delivered. A cancelled document stays listed and
// downloadable, marked (`cancelled: true`; the PDF says "CFDI CANCELADO").
// Reads only: the view cfdi_documents (migration 0121) unions the three tables.
import type { Sql } from '../kernel/db.js';
import { ApiError } from '../kernel/errors.js';
import type { Principal } from '../kernel/principal.js';
import { renderPdf } from '../formats/cfdi/pdf.js';
import { listCursor } from './list-cursor.js';

export const CFDI_KINDS = ['invoice', 'global', 'payment', 'credit_note'] as const;
export type CfdiKind = (typeof CFDI_KINDS)[number];

export interface CfdiListQuery {
  kind?: CfdiKind;
  status?: 'stamped' | 'cancel_pending' | 'cancelled';
  customer?: string;
  receptor_rfc?: string;
  /** `YYYY-MM`: the month of the CFDI's Fecha (Mexico City). */
  period?: string;
  cursor?: string;
  limit?: number;
}

const cursor = listCursor('cfdi_documents');
const iso = (d: Date | null) => (d ? d.toISOString() : undefined);
type Row = Record<string, any>;

/** A CFDI's file name: serie-folio-UUID (what accountants' tools expect). */
export const cfdiFileName = (r: { serie?: string | null; folio?: string | null; uuid_fiscal?: string | null }) => `${r.serie ?? 'F'}-${r.folio ?? ''}-${r.uuid_fiscal ?? ''}`;

export function cfdiDocumentView(r: Row) {
  const base = `/v1/invoices/${r.id}`;
  return {
    id: r.id as string,
    object: 'cfdi_document' as const,
    kind: r.kind as CfdiKind,
    tipo_de_comprobante: r.kind === 'payment' ? 'P' : r.kind === 'credit_note' ? 'E' : 'I',
    metodo_pago: (r.metodo_pago as string | null) ?? undefined,
    status: r.status as string,
    cancelled: r.status === 'cancelled',
    invoice_id: r.invoice_id as string,
    uuid_fiscal: r.uuid_fiscal as string,
    serie: (r.serie as string | null) ?? undefined,
    folio: (r.folio as string | null) ?? undefined,
    total_minor: Number(r.total_minor),
    base_minor: r.base_minor === null ? undefined : Number(r.base_minor),
    iva_minor: r.iva_minor === null ? undefined : Number(r.iva_minor),
    currency: r.currency as string,
    receptor_rfc: r.receptor_rfc as string,
    receptor_nombre: r.receptor_nombre as string,
    payment_intent_id: (r.payment_intent_id as string | null) ?? undefined,
    customer_id: (r.customer_id as string | null) ?? undefined,
    fecha: r.fecha ? String(r.fecha_text) : undefined,
    xml_url: `${base}/xml`,
    pdf_url: `${base}/pdf`,
    livemode: r.livemode as boolean,
    created_at: iso(r.created_at)!,
  };
}
export type CfdiDocumentView = ReturnType<typeof cfdiDocumentView>;

const LIMIT_DEFAULT = 20;
const LIMIT_MAX = 100;

export async function listCfdiDocuments(sql: Sql, p: Principal, q: CfdiListQuery) {
  const limit = Math.min(q.limit ?? LIMIT_DEFAULT, LIMIT_MAX);
  const pos = q.cursor ? await cursor.read(sql, p, q.cursor) : undefined;
  let from: string | undefined;
  let to: string | undefined;
  if (q.period) {
    const m = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(q.period);
    if (!m) throw new ApiError('invoice.invalid_body', '`period` is a month, YYYY-MM.');
    const y = Number(m[1]);
    const mo = Number(m[2]);
    from = `${m[1]}-${m[2]}-01T00:00:00`;
    to = mo === 12 ? `${y + 1}-01-01T00:00:00` : `${m[1]}-${String(mo + 1).padStart(2, '0')}-01T00:00:00`;
  }
  const rows = await sql`
    select d.*, d.created_at::text as created_key, to_char(d.fecha, 'YYYY-MM-DD"T"HH24:MI:SS') as fecha_text
      from cfdi_documents d
     where d.tenant_id = ${p.tenantId} and d.livemode = ${p.livemode}
       ${q.kind ? sql`and d.kind = ${q.kind}` : sql``}
       ${q.status ? sql`and d.status = ${q.status}` : sql``}
       ${q.customer ? sql`and d.customer_id = ${q.customer}` : sql``}
       ${q.receptor_rfc ? sql`and d.receptor_rfc = ${q.receptor_rfc.trim().toUpperCase()}` : sql``}
       ${from ? sql`and d.fecha >= ${from}::timestamp and d.fecha < ${to!}::timestamp` : sql``}
       ${pos ? sql`and (d.created_at, d.id) < (${pos.c}::timestamptz, ${pos.i}::uuid)` : sql``}
     order by d.created_at desc, d.id desc limit ${limit + 1}`;
  const hasMore = rows.length > limit;
  const shown = rows.slice(0, limit);
  const last = shown[shown.length - 1];
  return {
    object: 'list' as const,
    data: shown.map(cfdiDocumentView),
    has_more: hasMore,
    next_cursor: hasMore && last ? await cursor.sign(sql, p, { c: last.created_key as string, i: last.id as string }) : undefined,
  };
}

/** The stamped XML of any CFDI of the tenant by its id (invoice, REP or credit note). */
async function documentRow(sql: Sql, p: Principal, id: string): Promise<Row> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) throw new ApiError('invoice.not_found');
  const [r] = await sql`
    select id, status, serie, folio, uuid_fiscal, xml, livemode, updated_at from invoices where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}
    union all select id, status, serie, folio, rep_uuid, xml, livemode, updated_at from invoice_payments where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}
    union all select id, status, serie, folio, uuid_fiscal, xml, livemode, updated_at from credit_notes where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
  if (!r) throw new ApiError('invoice.not_found');
  if (!['stamped', 'cancel_pending', 'cancelled'].includes(r.status) || !r.xml) throw new ApiError('invoice.not_stamped', `CFDI ${id} is "${r.status}": it has no stamped XML.`);
  return r;
}

export async function cfdiXml(sql: Sql, p: Principal, id: string): Promise<{ xml: string; name: string; status: string }> {
  const r = await documentRow(sql, p, id);
  return { xml: r.xml, name: cfdiFileName(r), status: r.status };
}

export async function cfdiPdf(sql: Sql, p: Principal, id: string): Promise<{ pdf: Buffer; name: string; status: string }> {
  const r = await documentRow(sql, p, id);
  const cancelled = r.status === 'cancelled' || r.status === 'cancel_pending' ? { status: r.status as 'cancelled' | 'cancel_pending', at: r.status === 'cancelled' ? (r.updated_at as Date).toISOString().slice(0, 10) : undefined } : undefined;
  return { pdf: await renderPdf(r.xml, { testMode: !r.livemode, cancelled }), name: cfdiFileName(r), status: r.status };
}
