-- Issue 27 (defect 1, rest): a payment complement (REP) or a credit note whose cancellation SAT holds
-- for the receptor's acceptance ("En proceso") is `cancel_pending`, as an invoice is, and followed by
-- the reconciler until SAT's final answer (RMF rule 2.7.1.35: a REP is never cancelled without
-- acceptance for its amount alone, fr. I; docs/invoices.md "Cancellation"). Live while it waits: it
-- keeps its place in the chain (invoice_payments_chain / _charge count it) and its share of the credit.
alter table invoice_payments drop constraint if exists invoice_payments_status_check;
alter table invoice_payments add constraint invoice_payments_status_check check (status in ('pending', 'stamped', 'error', 'cancel_pending', 'cancelled'));
alter table credit_notes drop constraint if exists credit_notes_status_check;
alter table credit_notes add constraint credit_notes_status_check check (status in ('pending', 'stamped', 'error', 'cancel_pending', 'cancelled'));
create index if not exists invoice_payments_cancel_pending on invoice_payments (updated_at) where status = 'cancel_pending';
create index if not exists credit_notes_cancel_pending on credit_notes (updated_at) where status = 'cancel_pending';
