-- A schema ready for Citus (issue 31; docs/scaling.md "A schema for Citus"). Every table is either
-- distributed by tenant_id (its primary key, unique keys and foreign keys carry tenant_id, so that
-- Citus can check them per shard and every foreign key stays inside one tenant's shard) or a
-- declared reference table (copied to every node). test/citus-schema.test.ts reads the migrated
-- catalog and fails on any table that breaks this (ops/citus-schema.ts).
--
-- tenant_id is put *last* in the keys: (id, tenant_id), not (tenant_id, id). Citus asks that the
-- distribution column be part of every key, not that it lead; with id first, every lookup that goes
-- by id alone (workers' hydrates, webhook leases, id = any(...) batches) keeps the plan it has
-- today (an index scan on the key's first column), and a lookup by (tenant_id, id) uses the same
-- index. Constraint and index names do not change: the code matches some of them
-- (attempts_one_open, invoices_live_per_charge, invoice_payments_chain, terminals_serial, …).
--
-- Uniqueness that was global becomes per tenant for random or tenant-issued values (client_secret,
-- provider_key, event_id, payment link slugs: 12 random characters, 60 bits), for keys a provider or
-- the SAT issues to one tenant (CFDI UUIDs, tracking keys) and for the simulators' keys. The one value
-- a person chooses and that a public address finds without a tenant, the self-invoice slug, keeps a
-- global directory: self_invoice_slugs (a reference table).

-- The reference tables: catalogs and the directories that find a tenant before it is known (an API
-- key's hash, a portal member's email or session, a sign-up). Small, read on every request,
-- written rarely. Redefined by a later migration that adds a catalog.
create or replace function orq_reference_tables() returns text[] language sql immutable as $$
  select array[
    -- catalogs
    'schema_migrations', 'blocked_taxpayers', 'operator_settings', 'report_cursor_keys',
    -- the tenants themselves: every distributed table's foreign key to tenants is to a reference table
    'tenants',
    -- who is calling: looked up by a hash or an email before the tenant is known
    'api_keys', 'portal_members', 'portal_sessions', 'portal_invitations', 'portal_password_resets',
    'signups', 'notification_outbox', 'self_invoice_slugs',
    -- the platform's operators and their audit trail (actions on no tenant or across tenants)
    'operators', 'operator_platform', 'audit_log'
  ]::text[]
$$;

-- The self-invoice page /factura/{slug} finds its tenant here (one slug per tenant and mode, unique
-- across all tenants as before).
create table self_invoice_slugs (
  slug       text primary key,
  tenant_id  uuid not null references tenants(id),
  livemode   boolean not null,
  unique (tenant_id, livemode)
);
insert into self_invoice_slugs (slug, tenant_id, livemode)
  select self_invoice_slug, tenant_id, livemode from fiscal_profiles where self_invoice_slug is not null;

-- connector_refs kept tenant_id as text: one type (uuid) for every distribution column.
alter table connector_refs alter column tenant_id type uuid using tenant_id::uuid;

-- webhook_secrets had no tenant_id: its endpoint's.
alter table webhook_secrets add column tenant_id uuid;
update webhook_secrets s set tenant_id = e.tenant_id from webhook_endpoints e where e.id = s.endpoint_id;
alter table webhook_secrets alter column tenant_id set not null;

-- foreign keys that name a key rebuilt below, or that do not pair tenant_id
alter table attempts drop constraint attempts_payment_intent_id_fkey;
alter table connect_accounts drop constraint connect_accounts_onboarding_application_id_fkey;
alter table connect_splits drop constraint connect_splits_connect_account_id_fkey;
alter table connect_splits drop constraint connect_splits_payout_id_fkey;
alter table connect_splits drop constraint connect_splits_transfer_id_fkey;
alter table connect_transfers drop constraint connect_transfers_payment_intent_id_fkey;
alter table credit_notes drop constraint credit_notes_invoice_id_fkey;
alter table disputes drop constraint disputes_attempt_id_fkey;
alter table disputes drop constraint disputes_payment_intent_id_fkey;
alter table invoice_cancellations drop constraint invoice_cancellations_invoice_id_fkey;
alter table invoice_payments drop constraint invoice_payments_invoice_id_fkey;
alter table invoice_payments drop constraint invoice_payments_payment_intent_id_fkey;
alter table invoices drop constraint invoices_payment_intent_id_fkey;
alter table journal_lines drop constraint journal_lines_entry_id_fkey;
alter table payment_intent_history drop constraint payment_intent_history_payment_intent_id_fkey;
alter table payment_intents drop constraint payment_intents_customer_id_fkey;
alter table payment_links drop constraint payment_links_current_intent_id_fkey;
alter table payment_methods drop constraint payment_methods_customer_id_fkey;
alter table payouts drop constraint payouts_connect_account_id_fkey;
alter table receivables drop constraint receivables_payment_link_id_fkey;
alter table receivables drop constraint receivables_ppd_invoice_id_fkey;
alter table refunds drop constraint refunds_attempt_id_fkey;
alter table refunds drop constraint refunds_payment_intent_id_fkey;
alter table risk_reviews drop constraint risk_reviews_payment_intent_id_fkey;
alter table risk_reviews drop constraint risk_reviews_rule_id_fkey;
alter table routing_decisions drop constraint routing_decisions_payment_intent_id_fkey;
alter table webhook_deliveries drop constraint webhook_deliveries_endpoint_id_fkey;
alter table webhook_deliveries drop constraint webhook_deliveries_event_id_fkey;
alter table webhook_secrets drop constraint webhook_secrets_endpoint_id_fkey;

-- keys: tenant_id appended (names kept)
alter table customers drop constraint customers_pkey, add constraint customers_pkey primary key (id, tenant_id);
alter table payment_intents drop constraint payment_intents_client_secret_key, add constraint payment_intents_client_secret_key unique (client_secret, tenant_id);
alter table payment_intents drop constraint payment_intents_pkey, add constraint payment_intents_pkey primary key (id, tenant_id);
drop index attempts_one_open;
create unique index attempts_one_open on attempts (payment_intent_id, tenant_id) WHERE (status = ANY (ARRAY['pending'::text, 'authorized'::text, 'requires_action'::text]));
alter table attempts drop constraint attempts_pkey, add constraint attempts_pkey primary key (id, tenant_id);
alter table attempts drop constraint attempts_provider_key_key, add constraint attempts_provider_key_key unique (provider_key, tenant_id);
alter table payment_intent_history drop constraint payment_intent_history_pkey, add constraint payment_intent_history_pkey primary key (id, tenant_id);
alter table outbox_events drop constraint outbox_events_event_id_key, add constraint outbox_events_event_id_key unique (event_id, tenant_id);
alter table outbox_events drop constraint outbox_events_pkey, add constraint outbox_events_pkey primary key (id, tenant_id);
alter table timers drop constraint timers_kind_entity_id_key, add constraint timers_kind_entity_id_key unique (kind, entity_id, tenant_id);
alter table timers drop constraint timers_pkey, add constraint timers_pkey primary key (id, tenant_id);
alter table risk_rules drop constraint risk_rules_pkey, add constraint risk_rules_pkey primary key (id, tenant_id);
drop index risk_reviews_one_pending;
create unique index risk_reviews_one_pending on risk_reviews (payment_intent_id, tenant_id) WHERE (status = 'pending'::text);
alter table risk_reviews drop constraint risk_reviews_pkey, add constraint risk_reviews_pkey primary key (id, tenant_id);
alter table journal_entries drop constraint journal_entries_pkey, add constraint journal_entries_pkey primary key (id, tenant_id);
alter table journal_entries drop constraint journal_entries_ref_type_ref_id_kind_key, add constraint journal_entries_ref_type_ref_id_kind_key unique (ref_type, ref_id, kind, tenant_id);
alter table journal_lines drop constraint journal_lines_pkey, add constraint journal_lines_pkey primary key (id, tenant_id);
alter table sim_provider_calls drop constraint sim_provider_calls_pkey, add constraint sim_provider_calls_pkey primary key (idempotency_key, tenant_id);
alter table sim_provider_calls drop constraint sim_provider_calls_provider_ref_key, add constraint sim_provider_calls_provider_ref_key unique (provider_ref, tenant_id);
alter table webhook_endpoints drop constraint webhook_endpoints_pkey, add constraint webhook_endpoints_pkey primary key (id, tenant_id);
alter table webhook_deliveries drop constraint webhook_deliveries_event_id_endpoint_key_key, add constraint webhook_deliveries_event_id_endpoint_key_key unique (event_id, endpoint_key, tenant_id);
alter table webhook_deliveries drop constraint webhook_deliveries_pkey, add constraint webhook_deliveries_pkey primary key (id, tenant_id);
alter table refunds drop constraint refunds_pkey, add constraint refunds_pkey primary key (id, tenant_id);
alter table payment_methods drop constraint payment_methods_pkey, add constraint payment_methods_pkey primary key (id, tenant_id);
alter table disputes drop constraint disputes_attempt_id_key, add constraint disputes_attempt_id_key unique (attempt_id, tenant_id);
alter table disputes drop constraint disputes_pkey, add constraint disputes_pkey primary key (id, tenant_id);
alter table payment_links drop constraint payment_links_pkey, add constraint payment_links_pkey primary key (id, tenant_id);
alter table payment_links drop constraint payment_links_slug_key, add constraint payment_links_slug_key unique (slug, tenant_id);
alter table entity_history drop constraint entity_history_pkey, add constraint entity_history_pkey primary key (id, tenant_id);
alter table inbox drop constraint inbox_dedupe_key_key, add constraint inbox_dedupe_key_key unique (dedupe_key, tenant_id);
alter table inbox drop constraint inbox_pkey, add constraint inbox_pkey primary key (id, tenant_id);
alter table fiscal_profiles drop constraint fiscal_profiles_self_invoice_slug_key, add constraint fiscal_profiles_self_invoice_slug_key unique (self_invoice_slug, tenant_id);
alter table invoices drop constraint invoices_pkey, add constraint invoices_pkey primary key (id, tenant_id);
drop index invoices_uuid;
create unique index invoices_uuid on invoices (uuid_fiscal, tenant_id) WHERE (uuid_fiscal IS NOT NULL);
drop index invoice_payments_chain;
create unique index invoice_payments_chain on invoice_payments (invoice_id, parcialidad, tenant_id) WHERE (status <> 'error'::text);
alter table invoice_payments drop constraint invoice_payments_pkey, add constraint invoice_payments_pkey primary key (id, tenant_id);
drop index invoice_payments_rep_uuid;
create unique index invoice_payments_rep_uuid on invoice_payments (rep_uuid, tenant_id) WHERE (rep_uuid IS NOT NULL);
alter table credit_notes drop constraint credit_notes_pkey, add constraint credit_notes_pkey primary key (id, tenant_id);
drop index credit_notes_uuid;
create unique index credit_notes_uuid on credit_notes (uuid_fiscal, tenant_id) WHERE (uuid_fiscal IS NOT NULL);
alter table invoice_cancellations drop constraint invoice_cancellations_pkey, add constraint invoice_cancellations_pkey primary key (id, tenant_id);
alter table receivables drop constraint receivables_payment_link_id_key, add constraint receivables_payment_link_id_key unique (payment_link_id, tenant_id);
alter table receivables drop constraint receivables_pkey, add constraint receivables_pkey primary key (id, tenant_id);
alter table bank_statements drop constraint bank_statements_pkey, add constraint bank_statements_pkey primary key (id, tenant_id);
drop index bank_statement_lines_one_per_charge;
create unique index bank_statement_lines_one_per_charge on bank_statement_lines (attempt_id, tenant_id) WHERE (match_status = 'matched'::text);
alter table bank_statement_lines drop constraint bank_statement_lines_pkey, add constraint bank_statement_lines_pkey primary key (id, tenant_id);
alter table cash_facts drop constraint cash_facts_pkey, add constraint cash_facts_pkey primary key (kind, source_id, tenant_id);
alter table sim_payout_orders drop constraint sim_payout_orders_pkey, add constraint sim_payout_orders_pkey primary key (key, tenant_id);
alter table sim_payout_orders drop constraint sim_payout_orders_provider_ref_key, add constraint sim_payout_orders_provider_ref_key unique (provider_ref, tenant_id);
alter table onboarding_applications drop constraint onboarding_applications_pkey, add constraint onboarding_applications_pkey primary key (id, tenant_id);
alter table connect_accounts drop constraint connect_accounts_onboarding_application_id_key, add constraint connect_accounts_onboarding_application_id_key unique (onboarding_application_id, tenant_id);
alter table connect_accounts drop constraint connect_accounts_pkey, add constraint connect_accounts_pkey primary key (id, tenant_id);
alter table payouts drop constraint payouts_order_key_key, add constraint payouts_order_key_key unique (order_key, tenant_id);
alter table payouts drop constraint payouts_pkey, add constraint payouts_pkey primary key (id, tenant_id);
alter table payouts drop constraint payouts_tracking_key_key, add constraint payouts_tracking_key_key unique (tracking_key, tenant_id);
alter table connect_transfers drop constraint connect_transfers_pkey, add constraint connect_transfers_pkey primary key (id, tenant_id);
alter table connect_splits drop constraint connect_splits_payout_id_key, add constraint connect_splits_payout_id_key unique (payout_id, tenant_id);
alter table connect_splits drop constraint connect_splits_pkey, add constraint connect_splits_pkey primary key (id, tenant_id);
alter table connect_splits drop constraint connect_splits_transfer_id_position_key, add constraint connect_splits_transfer_id_position_key unique (transfer_id, position, tenant_id);
alter table service_payments drop constraint service_payments_pkey, add constraint service_payments_pkey primary key (id, tenant_id);
alter table recharges drop constraint recharges_order_key_key, add constraint recharges_order_key_key unique (order_key, tenant_id);
alter table recharges drop constraint recharges_pkey, add constraint recharges_pkey primary key (id, tenant_id);
alter table recharge_bag_movements drop constraint recharge_bag_movements_pkey, add constraint recharge_bag_movements_pkey primary key (id, tenant_id);
alter table sim_biller_payments drop constraint sim_biller_payments_pkey, add constraint sim_biller_payments_pkey primary key (key, tenant_id);
alter table sim_biller_payments drop constraint sim_biller_payments_provider_ref_key, add constraint sim_biller_payments_provider_ref_key unique (provider_ref, tenant_id);
alter table sim_recharge_orders drop constraint sim_recharge_orders_pkey, add constraint sim_recharge_orders_pkey primary key (key, tenant_id);
alter table sim_recharge_orders drop constraint sim_recharge_orders_provider_ref_key, add constraint sim_recharge_orders_provider_ref_key unique (provider_ref, tenant_id);
alter table routing_decisions drop constraint routing_decisions_pkey, add constraint routing_decisions_pkey primary key (id, tenant_id);
alter table connector_refs drop constraint connector_refs_pkey, add constraint connector_refs_pkey primary key (connector_key, idempotency_key, tenant_id);
alter table approvals drop constraint approvals_pkey, add constraint approvals_pkey primary key (id, tenant_id);
alter table portal_audit drop constraint portal_audit_pkey, add constraint portal_audit_pkey primary key (id, tenant_id);
alter table terminals drop constraint terminals_pkey, add constraint terminals_pkey primary key (id, tenant_id);
-- one open operator decision per operation and target (0153): the target is of the decision's tenant
drop index approvals_operator_open;
create unique index approvals_operator_open on approvals ((request->>'action'), (request->>'target_id'), tenant_id)
  where subject_kind = 'operator_decision' and status = 'pending';

alter table webhook_secrets drop constraint webhook_secrets_pkey, add constraint webhook_secrets_pkey primary key (endpoint_id, tenant_id);

-- foreign keys again, tenant_id paired
alter table attempts add constraint attempts_payment_intent_id_fkey foreign key (payment_intent_id, tenant_id) references payment_intents (id, tenant_id);
alter table connect_accounts add constraint connect_accounts_onboarding_application_id_fkey foreign key (onboarding_application_id, tenant_id) references onboarding_applications (id, tenant_id);
alter table connect_splits add constraint connect_splits_connect_account_id_fkey foreign key (connect_account_id, tenant_id) references connect_accounts (id, tenant_id);
alter table connect_splits add constraint connect_splits_payout_id_fkey foreign key (payout_id, tenant_id) references payouts (id, tenant_id);
alter table connect_splits add constraint connect_splits_transfer_id_fkey foreign key (transfer_id, tenant_id) references connect_transfers (id, tenant_id);
alter table connect_transfers add constraint connect_transfers_payment_intent_id_fkey foreign key (payment_intent_id, tenant_id) references payment_intents (id, tenant_id);
alter table credit_notes add constraint credit_notes_invoice_id_fkey foreign key (invoice_id, tenant_id) references invoices (id, tenant_id);
alter table disputes add constraint disputes_attempt_id_fkey foreign key (attempt_id, tenant_id) references attempts (id, tenant_id);
alter table disputes add constraint disputes_payment_intent_id_fkey foreign key (payment_intent_id, tenant_id) references payment_intents (id, tenant_id);
alter table invoice_cancellations add constraint invoice_cancellations_invoice_id_fkey foreign key (invoice_id, tenant_id) references invoices (id, tenant_id);
alter table invoice_payments add constraint invoice_payments_invoice_id_fkey foreign key (invoice_id, tenant_id) references invoices (id, tenant_id);
alter table invoice_payments add constraint invoice_payments_payment_intent_id_fkey foreign key (payment_intent_id, tenant_id) references payment_intents (id, tenant_id);
alter table invoices add constraint invoices_payment_intent_id_fkey foreign key (payment_intent_id, tenant_id) references payment_intents (id, tenant_id);
alter table journal_lines add constraint journal_lines_entry_id_fkey foreign key (entry_id, tenant_id) references journal_entries (id, tenant_id);
alter table payment_intent_history add constraint payment_intent_history_payment_intent_id_fkey foreign key (payment_intent_id, tenant_id) references payment_intents (id, tenant_id);
alter table payment_intents add constraint payment_intents_customer_id_fkey foreign key (customer_id, tenant_id) references customers (id, tenant_id);
alter table payment_links add constraint payment_links_current_intent_id_fkey foreign key (current_intent_id, tenant_id) references payment_intents (id, tenant_id);
alter table payment_methods add constraint payment_methods_customer_id_fkey foreign key (customer_id, tenant_id) references customers (id, tenant_id);
alter table payouts add constraint payouts_connect_account_id_fkey foreign key (connect_account_id, tenant_id) references connect_accounts (id, tenant_id);
alter table receivables add constraint receivables_payment_link_id_fkey foreign key (payment_link_id, tenant_id) references payment_links (id, tenant_id) DEFERRABLE INITIALLY DEFERRED;
alter table receivables add constraint receivables_ppd_invoice_id_fkey foreign key (ppd_invoice_id, tenant_id) references invoices (id, tenant_id);
alter table refunds add constraint refunds_attempt_id_fkey foreign key (attempt_id, tenant_id) references attempts (id, tenant_id);
alter table refunds add constraint refunds_payment_intent_id_fkey foreign key (payment_intent_id, tenant_id) references payment_intents (id, tenant_id);
alter table risk_reviews add constraint risk_reviews_payment_intent_id_fkey foreign key (payment_intent_id, tenant_id) references payment_intents (id, tenant_id);
alter table risk_reviews add constraint risk_reviews_rule_id_fkey foreign key (rule_id, tenant_id) references risk_rules (id, tenant_id);
alter table routing_decisions add constraint routing_decisions_payment_intent_id_fkey foreign key (payment_intent_id, tenant_id) references payment_intents (id, tenant_id);
alter table webhook_deliveries add constraint webhook_deliveries_endpoint_id_fkey foreign key (endpoint_id, tenant_id) references webhook_endpoints (id, tenant_id);
alter table webhook_deliveries add constraint webhook_deliveries_event_id_fkey foreign key (event_id, tenant_id) references outbox_events (id, tenant_id);
alter table webhook_secrets add constraint webhook_secrets_endpoint_id_fkey foreign key (endpoint_id, tenant_id) references webhook_endpoints (id, tenant_id);
