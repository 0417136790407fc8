-- Status vocabularies enforced by the database: each status column accepts exactly the states of
-- its machine (machines/*.ts). test/vocabulary.test.ts checks machine states, schema enums and
-- these constraints against each other.
alter table payment_intents add constraint payment_intents_status_check
  check (status in ('requires_payment_method', 'requires_confirmation', 'processing', 'requires_action', 'succeeded', 'failed', 'expired', 'canceled'));
alter table attempts add constraint attempts_status_check
  check (status in ('pending', 'authorized', 'requires_action', 'captured', 'settled', 'partially_refunded', 'refunded', 'failed', 'canceled', 'expired'));
