-- The card adapters' book (connectors/card/key-book.ts): our idempotency key → the provider's id
-- (Conekta order, Openpay charge, their refunds), so a repeat of a key reads the first answer back.
create table connector_refs (
  connector_key    text not null,
  idempotency_key  text not null,
  provider_id      text not null,
  tenant_id        text not null,
  livemode         boolean not null,
  created_at       timestamptz not null default now(),
  primary key (connector_key, idempotency_key)
);
create index connector_refs_provider on connector_refs (connector_key, provider_id);
