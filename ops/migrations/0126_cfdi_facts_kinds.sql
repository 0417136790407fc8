-- Issue 27 (defect 4): a capture's póliza carries the CFDI that documents that charge — its invoice,
-- global invoice or the REP it paid — not a credit note of its invoice (which posts, and carries, its
-- own entry) nor a cancelled CFDI.
create or replace view cfdi_facts as
  select d.tenant_id, d.livemode, d.payment_intent_id, d.uuid_fiscal,
         (d.fecha at time zone 'America/Mexico_City') as issued_at, d.serie, d.folio,
         fp.rfc as rfc_emisor, d.receptor_rfc as rfc_receptor, d.total_minor, d.currency,
         d.kind, d.id as document_id, d.status
    from cfdi_documents d
    left join fiscal_profiles fp on fp.tenant_id = d.tenant_id and fp.livemode = d.livemode
   where d.kind in ('invoice', 'global', 'payment') and d.status <> 'cancelled';
