-- Issue 27 after issue 31: what 0123 and 0124 set, restated once 0160-0162 have run. Migrations apply
-- in number order, so on a new database 0160 rebuilds invoice_payments_chain with its own predicate
-- (status <> 'error', which would keep a cancelled REP's place in the chain and refuse the REP that
-- replaces it) and 0162 rewrites cfdi_documents without a REP's base and IVA; on a database migrated
-- before 0123-0126 existed, this runs after them and changes nothing they did not.
drop index if exists invoice_payments_chain;
create unique index invoice_payments_chain on invoice_payments (invoice_id, parcialidad, tenant_id) where status not in ('error', 'cancelled');

-- Motivo 01: a replacement relates an invoice of the same tenant (invoices' key is (id, tenant_id) since 0160).
alter table invoices drop constraint if exists invoices_replaces_invoice_id_fkey;
alter table invoices add constraint invoices_replaces_invoice_id_fkey foreign key (replaces_invoice_id, tenant_id) references invoices (id, tenant_id);

-- the listing shows a REP's taxes (0123), with the joins naming the tenant (0162)
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
