-- Approvals as one entity kind (issue 24.2): every four-eyes decision (refunds and payouts above the
-- tenant's threshold; operator decisions later) is a row here, changed only by the entity actor
-- (machines/approval.ts: pending -> approved | rejected; history in entity_history, kind 'approval').
-- The two tables of before become views of it with their old columns (reads and checks that name
-- them keep working); their rows move here with their ids.
create table approvals (
  id             uuid primary key,
  tenant_id      uuid not null references tenants(id),
  livemode       boolean not null,
  -- what is asked for: a refund or a payout (the kind of entity an approval creates)
  subject_kind   text not null check (subject_kind in ('refund', 'payout')),
  status         text not null check (status in ('pending', 'approved', 'rejected')),
  version        integer not null default 0,
  amount_minor   bigint not null check (amount_minor > 0),
  currency       text not null,
  -- the request as asked, without secrets (refund: attempt_id, reason; payout: beneficiary, concepto, reference, connector_key)
  request        jsonb not null,
  -- a secret of the request sealed for this approval (a payout's CLABE) and its masked form
  secret_sealed  text,
  secret_masked  text,
  requested_by   text not null,
  approver       text,
  -- the refund or payout created when approved
  subject_id     uuid,
  created_at     timestamptz not null default now(),
  updated_at     timestamptz not null default now(),
  resolved_at    timestamptz
);
create index approvals_tenant on approvals (tenant_id, livemode, subject_kind, created_at desc);

insert into approvals (id, tenant_id, livemode, subject_kind, status, amount_minor, currency, request, requested_by, approver, subject_id, created_at, updated_at, resolved_at)
select id, tenant_id, livemode, 'refund', status, amount_minor, currency,
       jsonb_build_object('attempt_id', attempt_id, 'reason', reason), requested_by, approver, refund_id, created_at, coalesce(resolved_at, created_at), resolved_at
  from refund_approvals;
insert into approvals (id, tenant_id, livemode, subject_kind, status, amount_minor, currency, request, secret_sealed, secret_masked, requested_by, approver, subject_id, created_at, updated_at, resolved_at)
select id, tenant_id, livemode, 'payout', status, amount_minor, currency, request, clabe_sealed, clabe_masked, requested_by, approver, payout_id, created_at, coalesce(resolved_at, created_at), resolved_at
  from payout_approvals;

drop table refund_approvals;
drop table payout_approvals;

create view refund_approvals as
  select id, tenant_id, livemode, (request->>'attempt_id')::uuid as attempt_id, amount_minor, currency, request->>'reason' as reason,
         requested_by, status, approver, subject_id as refund_id, created_at, resolved_at
    from approvals where subject_kind = 'refund';
create view payout_approvals as
  select id, tenant_id, livemode, status, request, secret_sealed as clabe_sealed, secret_masked as clabe_masked, amount_minor, currency,
         requested_by, approver, subject_id as payout_id, created_at, resolved_at
    from approvals where subject_kind = 'payout';
