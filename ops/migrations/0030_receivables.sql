-- Receivables (issue 15, docs/receivables.md): what a customer owes, with its single-use payment
-- link. `status` is the stored machine state; reads derive `overdue` from the tenant's clock too.
create table receivables (
  id                      uuid primary key,
  tenant_id               uuid not null references tenants(id),
  livemode                boolean not null,
  status                  text not null check (status in ('open', 'overdue', 'paid', 'canceled')),
  version                 integer not null default 0,
  customer_name           text not null,
  -- lower-cased: statements and filters match e-mails case-insensitively
  customer_email          text not null,
  customer_phone          text,
  customer_rfc            text,
  customer_uso_cfdi       text,
  customer_regimen_fiscal text,
  customer_cp             text,
  concepto                text not null,
  amount_minor            bigint not null check (amount_minor > 0),
  currency                text not null,
  due_date                timestamptz not null,
  -- inserted in the same transaction, after this row
  payment_link_id         uuid not null unique references payment_links(id) deferrable initially deferred,
  payment_link_slug       text not null,
  -- a PPD invoice this receivable pays part of (each payment stamps its REP)
  ppd_invoice_id          uuid references invoices(id),
  metadata                jsonb,
  payment_intent_id       uuid,
  paid_at                 timestamptz,
  canceled_at             timestamptz,
  -- the automatic CFDI: none | pending | stamped | error (pending is retried; invoice_error says why).
  -- No CHECK here: the table keeps one CHECK that mentions "status", the machine's (test/vocabulary).
  invoice_status          text not null default 'none',
  invoice_id              uuid,
  invoice_payment_id      uuid,
  invoice_error           text,
  invoice_attempts        integer not null default 0,
  created_at              timestamptz not null default now(),
  updated_at              timestamptz not null default now(),
  check ((customer_rfc is null) = (customer_uso_cfdi is null) and (customer_rfc is null) = (customer_regimen_fiscal is null) and (customer_rfc is null) = (customer_cp is null))
);
create index receivables_list on receivables (tenant_id, livemode, created_at desc, id desc);
-- list filtered by status, newest first (the overdue filter reads 'overdue' and the few 'open' whose timer has not fired yet)
create index receivables_list_status on receivables (tenant_id, livemode, status, created_at desc, id desc);
-- the 'open' ones past due whose timer has not fired yet (normally none): a tight range
create index receivables_open_due on receivables (tenant_id, livemode, due_date) where status = 'open';
create index receivables_customer on receivables (tenant_id, livemode, customer_email, due_date);
-- ageing: the unpaid ones per customer and currency, read index-only (no sort of the rows)
create index receivables_ageing on receivables (tenant_id, livemode, customer_email, currency) include (due_date, customer_name, amount_minor) where status in ('open', 'overdue');
create index receivables_invoice_pending on receivables (updated_at) where invoice_status = 'pending';
