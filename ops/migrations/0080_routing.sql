-- Routing (issue 20; docs/routing.md): the connectors each tenant enables per mode with their fee
-- tables and sealed credentials, one routing decision per attempt (candidates, chosen, reason, the
-- answer's outcome and latency), and the savings and fee contract views of the reports
-- (docs/reports.md "Contracts with other capabilities") now fed from those decisions.

create table routing_connectors (
  tenant_id       uuid not null references tenants(id),
  livemode        boolean not null,
  connector_key   text not null,
  enabled         boolean not null default true,
  -- the connector whose fee routing savings are measured against (one per tenant and mode)
  is_default      boolean not null default false,
  -- {<method>: {bps, fixed_minor, brands?: {<brand>: {bps, fixed_minor}}}}
  fees            jsonb not null,
  -- AES-256-GCM (kernel/secret-box.ts), bound to tenant, mode and connector; never answered
  credentials_sealed text,
  credentials_hint   text,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now(),
  primary key (tenant_id, livemode, connector_key)
);
create unique index routing_connectors_one_default on routing_connectors (tenant_id, livemode) where is_default;

-- One per attempt (id = the attempt's id), written in the transaction that opens the attempt.
create table routing_decisions (
  id                 uuid primary key,
  tenant_id          uuid not null references tenants(id),
  livemode           boolean not null,
  payment_intent_id  uuid not null references payment_intents(id),
  method             text not null,
  brand              text,
  amount_minor       bigint not null,
  currency           text not null,
  -- [{connector_key, fee_minor, eligible, reason?}] in ranking order
  candidates         jsonb not null,
  chosen             text not null,
  reason             text not null check (reason in ('cheapest', 'retry', 'dunning')),
  default_connector  text,
  default_fee_minor  bigint,
  chosen_fee_minor   bigint not null,
  -- set by the evidence step that answers the attempt
  outcome            text,
  latency_ms         integer,
  answered_at        timestamptz,
  created_at         timestamptz not null default now()
);
create index routing_decisions_tenant on routing_decisions (tenant_id, livemode, created_at desc, id);
create index routing_decisions_scores on routing_decisions (tenant_id, livemode, chosen, answered_at) where answered_at is not null;

-- Savings: a captured attempt (capture = its ledger entry) saved the default connector's fee minus
-- the fee paid when routing chose it as the cheapest; a captured retry recovered the charge; a
-- captured dunning retry recovered it for dunning.
create or replace view savings_facts as
select d.tenant_id, d.livemode, d.payment_intent_id, d.chosen as connector_key,
       j.created_at as occurred_at, d.currency,
       (case when d.reason = 'cheapest' and d.default_fee_minor is not null
             then greatest(d.default_fee_minor - coalesce(a.fee_minor, d.chosen_fee_minor), 0) else 0 end)::bigint as routing_saved_minor,
       (case when d.reason = 'retry' then a.amount_minor else 0 end)::bigint as retry_recovered_minor,
       (case when d.reason = 'dunning' then a.amount_minor else 0 end)::bigint as dunning_recovered_minor
  from routing_decisions d
  join attempts a on a.id = d.id
  join journal_entries j on j.ref_type = 'attempt' and j.ref_id = d.id and j.kind = 'charge.captured';

-- Fee leakage: the fee the tenant's table promised at decision time against the fee charged.
create or replace view fee_facts as
select d.tenant_id, d.livemode, d.id as attempt_id, d.chosen as connector_key, j.created_at as occurred_at, d.currency,
       d.chosen_fee_minor::bigint as expected_fee_minor, coalesce(a.fee_minor, 0)::bigint as charged_fee_minor
  from routing_decisions d
  join attempts a on a.id = d.id
  join journal_entries j on j.ref_type = 'attempt' and j.ref_id = d.id and j.kind = 'charge.captured';
