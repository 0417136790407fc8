-- Issue 27 (defect 1): cancellation as SAT orders it.
-- A payment complement (REP) can be cancelled; a cancelled REP gives its place in the chain back (the
-- next REP takes its NumParcialidad) and its charge may pay again.
alter table invoice_payments drop constraint if exists invoice_payments_status_check;
alter table invoice_payments add constraint invoice_payments_status_check check (status in ('pending', 'stamped', 'error', 'cancelled'));
drop index if exists invoice_payments_chain;
create unique index invoice_payments_chain on invoice_payments (invoice_id, parcialidad, tenant_id) where status not in ('error', 'cancelled');
drop index if exists invoice_payments_charge;
create unique index invoice_payments_charge on invoice_payments (tenant_id, livemode, payment_intent_id) where status not in ('error', 'cancelled');
-- Motivo 01: the replacement is issued first, relating the CFDI it replaces (CfdiRelacionados
-- TipoRelacion 04). It may be live next to the invoice it replaces until that one is cancelled: one
-- live invoice per charge, plus at most one live replacement per invoice.
-- (Its foreign key, (replaces_invoice_id, tenant_id) → invoices (id, tenant_id), is added by 0170 once
-- invoices' key carries tenant_id (0160); a key on id alone here would stop 0160 from rebuilding it.)
alter table invoices add column if not exists replaces_invoice_id uuid;
drop index if exists invoices_live_per_charge;
create unique index invoices_live_per_charge on invoices (tenant_id, livemode, payment_intent_id)
  where payment_intent_id is not null and replaces_invoice_id is null and status in ('pending', 'stamped', 'cancel_pending');
create unique index if not exists invoices_live_replacement on invoices (replaces_invoice_id, tenant_id)
  where replaces_invoice_id is not null and status in ('pending', 'stamped', 'cancel_pending');
-- What a cancellation is of: the invoice itself, one of its REPs or one of its credit notes.
alter table invoice_cancellations add column if not exists document_kind text not null default 'invoice' check (document_kind in ('invoice', 'payment', 'credit_note'));
alter table invoice_cancellations add column if not exists document_id uuid;
alter table invoice_cancellations add column if not exists uuid_fiscal text;
-- SAT's final answer to a cancellation that waited for the receptor: accepted (cancelled) or refused.
alter table invoice_cancellations drop constraint if exists invoice_cancellations_status_check;
alter table invoice_cancellations add constraint invoice_cancellations_status_check check (status in ('cancelled', 'pending', 'rejected'));
create index if not exists invoices_cancel_pending on invoices (updated_at) where status = 'cancel_pending';
