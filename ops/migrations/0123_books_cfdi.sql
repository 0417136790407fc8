-- Issue 27 (defects 3, 4): the IVA of a payment complement (its ImpuestosDR) kept for the books
-- (moved from IVA trasladado no cobrado to cobrado when the REP is stamped), and cfdi_facts (a
-- `where false` placeholder since 0050) made real: one row per live or cancelled stamped CFDI with the
-- issuer's RFC, so pólizas carry the UUID of every entry that has a CFDI (Anexo 24 RMF).
alter table invoice_payments add column if not exists base_minor bigint;
alter table invoice_payments add column if not exists iva_minor bigint;
create or replace view cfdi_facts as
  select d.tenant_id, d.livemode, d.payment_intent_id, d.uuid_fiscal,
         (d.fecha at time zone 'America/Mexico_City') as issued_at, d.serie, d.folio,
         fp.rfc as rfc_emisor, d.receptor_rfc as rfc_receptor, d.total_minor, d.currency,
         d.kind, d.id as document_id, d.status
    from cfdi_documents d
    left join fiscal_profiles fp on fp.tenant_id = d.tenant_id and fp.livemode = d.livemode;
-- the listing shows a REP's taxes too (joins name the tenant: issue 31, as 0162 wrote it)
create or replace view cfdi_documents as
  select i.id, i.tenant_id, i.livemode,
         case when i.receptor->>'rfc' = 'XAXX010101000' and i.receptor->>'nombre' = 'PUBLICO EN GENERAL' then 'global' else 'invoice' end as kind,
         i.metodo_pago, i.status, i.id as invoice_id, i.uuid_fiscal, i.serie, i.folio,
         i.total_minor, i.base_minor, i.iva_minor, i.currency,
         i.receptor->>'rfc' as receptor_rfc, i.receptor->>'nombre' as receptor_nombre,
         i.payment_intent_id, pi.customer_id,
         substring(i.xml from ' Fecha="([^"]+)"')::timestamp as fecha,
         i.created_at, i.updated_at
    from invoices i left join payment_intents pi on pi.id = i.payment_intent_id and pi.tenant_id = i.tenant_id
   where i.status in ('stamped', 'cancel_pending', 'cancelled')
  union all
  select p.id, p.tenant_id, p.livemode, 'payment', null, p.status, p.invoice_id, p.rep_uuid, p.serie, p.folio,
         p.monto_minor, p.base_minor, p.iva_minor, p.currency,
         i.receptor->>'rfc', i.receptor->>'nombre',
         p.payment_intent_id, pi.customer_id,
         substring(p.xml from ' Fecha="([^"]+)"')::timestamp,
         p.created_at, p.updated_at
    from invoice_payments p join invoices i on i.id = p.invoice_id and i.tenant_id = p.tenant_id
         left join payment_intents pi on pi.id = p.payment_intent_id and pi.tenant_id = p.tenant_id
   where p.status not in ('pending', 'error')
  union all
  select n.id, n.tenant_id, n.livemode, 'credit_note', null, n.status, n.invoice_id, n.uuid_fiscal, n.serie, n.folio,
         n.total_minor, n.base_minor, n.iva_minor, 'MXN',
         i.receptor->>'rfc', i.receptor->>'nombre',
         i.payment_intent_id, pi.customer_id,
         substring(n.xml from ' Fecha="([^"]+)"')::timestamp,
         n.created_at, n.updated_at
    from credit_notes n join invoices i on i.id = n.invoice_id and i.tenant_id = n.tenant_id
         left join payment_intents pi on pi.id = i.payment_intent_id and pi.tenant_id = i.tenant_id
   where n.status not in ('pending', 'error');
