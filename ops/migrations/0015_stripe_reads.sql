-- What a Stripe user expects: an intent may belong to a customer; customers can be deleted
-- (logically: the row stays for the intents and methods that reference it); lists of intents and
-- refunds page by (created_at, id).
alter table payment_intents add column customer_id uuid references customers(id);
create index payment_intents_customer on payment_intents (customer_id, created_at desc) where customer_id is not null;
create index payment_intents_tenant_page on payment_intents (tenant_id, livemode, created_at desc, id desc);
create index refunds_intent on refunds (payment_intent_id);
create index refunds_tenant_page on refunds (tenant_id, livemode, created_at desc, id desc);
alter table customers add column deleted_at timestamptz;
create index customers_email on customers (tenant_id, livemode, lower(email)) where deleted_at is null;
