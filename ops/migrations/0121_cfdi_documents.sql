-- Issue 27 (defect 2): every stamped CFDI of a tenant in one listing (GET /v1/invoices, the portal):
-- invoices (PUE/PPD, global), payment complements (REP) and credit notes, with their status (a
-- cancelled one stays listed, marked) and what to filter on. `fecha` is the CFDI's own Fecha (local
-- time of Mexico City, as SAT reads it; the tenant's clock in test mode), read from the stamped XML.
create or replace view cfdi_documents as
  select i.id, i.tenant_id, i.livemode,
         case when i.receptor->>'rfc' = 'XAXX010101000' and i.receptor->>'nombre' = 'PUBLICO EN GENERAL' then 'global' else 'invoice' end as kind,
         i.metodo_pago, i.status, i.id as invoice_id, i.uuid_fiscal, i.serie, i.folio,
         i.total_minor, i.base_minor, i.iva_minor, i.currency,
         i.receptor->>'rfc' as receptor_rfc, i.receptor->>'nombre' as receptor_nombre,
         i.payment_intent_id, pi.customer_id,
         substring(i.xml from ' Fecha="([^"]+)"')::timestamp as fecha,
         i.created_at, i.updated_at
    from invoices i left join payment_intents pi on pi.id = i.payment_intent_id
   where i.status in ('stamped', 'cancel_pending', 'cancelled')
  union all
  select p.id, p.tenant_id, p.livemode, 'payment', null, p.status, p.invoice_id, p.rep_uuid, p.serie, p.folio,
         p.monto_minor, null::bigint, null::bigint, p.currency,
         i.receptor->>'rfc', i.receptor->>'nombre',
         p.payment_intent_id, pi.customer_id,
         substring(p.xml from ' Fecha="([^"]+)"')::timestamp,
         p.created_at, p.updated_at
    from invoice_payments p join invoices i on i.id = p.invoice_id left join payment_intents pi on pi.id = p.payment_intent_id
   where p.status not in ('pending', 'error')
  union all
  select n.id, n.tenant_id, n.livemode, 'credit_note', null, n.status, n.invoice_id, n.uuid_fiscal, n.serie, n.folio,
         n.total_minor, n.base_minor, n.iva_minor, 'MXN',
         i.receptor->>'rfc', i.receptor->>'nombre',
         i.payment_intent_id, pi.customer_id,
         substring(n.xml from ' Fecha="([^"]+)"')::timestamp,
         n.created_at, n.updated_at
    from credit_notes n join invoices i on i.id = n.invoice_id left join payment_intents pi on pi.id = i.payment_intent_id
   where n.status not in ('pending', 'error');
create index if not exists invoice_payments_tenant on invoice_payments (tenant_id, livemode, created_at desc);
create index if not exists credit_notes_tenant on credit_notes (tenant_id, livemode, created_at desc);
