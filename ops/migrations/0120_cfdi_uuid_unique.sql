-- Issue 27 (defect 7): a CFDI's UUID is unique in SAT; payment complements and credit notes get the
-- same unique index invoices have (invoices_uuid, 0021). A PAC answer that repeats one is recorded as
-- the PAC's refusal (actors/invoices.ts), never a 500 nor a job retried forever.
create unique index if not exists invoice_payments_rep_uuid on invoice_payments (rep_uuid) where rep_uuid is not null;
create unique index if not exists credit_notes_uuid on credit_notes (uuid_fiscal) where uuid_fiscal is not null;
