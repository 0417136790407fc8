-- Fiscal profile per tenant and mode (decisions.md §6): the issuer's data, the PAC and its
-- credentials, the CSD that seals, the self-invoice portal. Secrets (PAC password, CSD key and its
-- password) are stored encrypted (AES-256-GCM, actors/fiscal-secrets.ts) and never returned.
create table fiscal_profiles (
  tenant_id            uuid not null references tenants(id),
  livemode             boolean not null,
  rfc                  text not null,
  nombre               text not null,
  regimen_fiscal       text not null,
  cp                   text not null,
  serie                text not null default 'F',
  pac_provider         text not null,
  pac_user             text,
  pac_password_enc     text,
  self_invoice_enabled boolean not null default false,
  self_invoice_slug    text unique,
  csd_cer              bytea,
  csd_key_enc          text,
  csd_password_enc     text,
  csd_no_certificado   text,
  csd_valid_from       timestamptz,
  csd_valid_to         timestamptz,
  -- folios per serie kind, taken with UPDATE … RETURNING inside the stamping transaction
  next_folio           bigint not null default 1,
  next_folio_nc        bigint not null default 1,
  next_folio_rp        bigint not null default 1,
  created_at           timestamptz not null default now(),
  updated_at           timestamptz not null default now(),
  primary key (tenant_id, livemode)
);
