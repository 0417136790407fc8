-- Invoices (CFDI 4.0; history in entity_history, kind 'invoice'), payment complements (REP), credit notes and cancellations
-- (docs/invoices.md). Every table has (tenant_id, livemode); every query filters on both.
create table invoices (
  id                   uuid primary key,
  tenant_id            uuid not null references tenants(id),
  livemode             boolean not null,
  metodo_pago          text not null check (metodo_pago in ('PUE', 'PPD')),
  status               text not null check (status in ('pending', 'stamped', 'error', 'cancel_pending', 'cancelled')),
  payment_intent_id    uuid references payment_intents(id),
  source               text not null default 'api',
  receptor             jsonb not null,
  conceptos            jsonb not null,
  forma_pago           text not null,
  serie                text,
  folio                text,
  total_minor          bigint not null check (total_minor > 0),
  base_minor           bigint not null,
  iva_minor            bigint not null,
  currency             text not null,
  pac                  text not null,
  uuid_fiscal          text,
  -- the sealed CFDI sent to the PAC (re-sent as is after a lost answer) and the stamped one
  sealed_xml           text not null,
  xml                  text,
  error_code           text,
  error_detail         text,
  saldo_insoluto_minor bigint check (saldo_insoluto_minor >= 0),
  parcialidades        integer not null default 0,
  credited_minor       bigint not null default 0,
  version              integer not null default 0,
  created_at           timestamptz not null,
  updated_at           timestamptz not null,
  check (credited_minor >= 0 and credited_minor <= total_minor),
  check (saldo_insoluto_minor is null or saldo_insoluto_minor <= total_minor)
);
create index invoices_tenant on invoices (tenant_id, livemode, created_at desc);
-- One live invoice per charge (spec: "a live invoice blocks another"); `error` and `cancelled` are not live.
create unique index invoices_live_per_charge on invoices (tenant_id, livemode, payment_intent_id)
  where payment_intent_id is not null and status in ('pending', 'stamped', 'cancel_pending');
create unique index invoices_uuid on invoices (uuid_fiscal) where uuid_fiscal is not null;

create table invoice_payments (
  id                   uuid primary key,
  tenant_id            uuid not null references tenants(id),
  livemode             boolean not null,
  invoice_id           uuid not null references invoices(id),
  payment_intent_id    uuid not null references payment_intents(id),
  status               text not null check (status in ('pending', 'stamped', 'error')),
  parcialidad          integer not null check (parcialidad > 0),
  monto_minor          bigint not null check (monto_minor > 0),
  saldo_anterior_minor bigint not null,
  saldo_insoluto_minor bigint not null check (saldo_insoluto_minor >= 0),
  currency             text not null,
  serie                text,
  folio                text,
  rep_uuid             text,
  sealed_xml           text not null,
  xml                  text,
  error_detail         text,
  created_at           timestamptz not null,
  updated_at           timestamptz not null,
  check (saldo_anterior_minor - monto_minor = saldo_insoluto_minor)
);
create index invoice_payments_invoice on invoice_payments (invoice_id, parcialidad);
-- The chain: one live complement per parcialidad; a charge is applied once.
create unique index invoice_payments_chain on invoice_payments (invoice_id, parcialidad) where status <> 'error';
create unique index invoice_payments_charge on invoice_payments (tenant_id, livemode, payment_intent_id) where status <> 'error';

create table credit_notes (
  id           uuid primary key,
  tenant_id    uuid not null references tenants(id),
  livemode     boolean not null,
  invoice_id   uuid not null references invoices(id),
  status       text not null check (status in ('pending', 'stamped', 'error', 'cancelled')),
  total_minor  bigint not null check (total_minor > 0),
  base_minor   bigint not null,
  iva_minor    bigint not null,
  motivo       text,
  serie        text,
  folio        text,
  uuid_fiscal  text,
  sealed_xml   text not null,
  xml          text,
  error_detail text,
  created_at   timestamptz not null,
  updated_at   timestamptz not null
);
create index credit_notes_invoice on credit_notes (invoice_id, created_at);

create table invoice_cancellations (
  id                uuid primary key,
  tenant_id         uuid not null references tenants(id),
  livemode          boolean not null,
  invoice_id        uuid not null references invoices(id),
  motivo            text not null,
  folio_sustitucion text,
  status            text not null check (status in ('cancelled', 'pending')),
  acuse             text,
  created_at        timestamptz not null,
  updated_at        timestamptz not null
);
create index invoice_cancellations_invoice on invoice_cancellations (invoice_id, created_at);
