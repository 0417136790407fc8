-- The operator console's four-eyes decisions fold into the approvals entity (issue 30; migration
-- 0095; docs/operator.md): a decision is an approval of subject kind 'operator_decision', changed
-- only by the entity actor (machines/approval.ts: the approver differs from the requester), and
-- approving it carries the asked operation's step in the same transaction (actors/operator-decisions.ts).
-- The console's own table of 0152 (operator_decisions) is emptied into approvals and dropped.

alter table approvals drop constraint approvals_subject_kind_check;
alter table approvals add constraint approvals_subject_kind_check check (subject_kind in ('refund', 'payout', 'operator_decision'));
-- A decision on a tenant or an application has no amount; refunds and payouts keep theirs.
alter table approvals alter column amount_minor drop not null;
alter table approvals alter column currency drop not null;
alter table approvals add constraint approvals_amount_present check (subject_kind = 'operator_decision' or (amount_minor is not null and currency is not null));
-- The second person's note (an operator's reason for approving or rejecting).
alter table approvals add column resolution_note text;

-- One open decision per operation and target: asking twice gives the open one back.
create unique index approvals_operator_open on approvals ((request->>'action'), (request->>'target_id'))
  where subject_kind = 'operator_decision' and status = 'pending';
create index approvals_operator on approvals (status, created_at desc) where subject_kind = 'operator_decision';

-- The rows of 0152 with their ids. request holds what was asked (action, target, reason, snapshot,
-- the route's parameters and body) and, for a decision of before, its recorded outcome. A 'failed'
-- decision (approved, then the operation was refused) has no state in the approvals machine, where a
-- refused operation leaves the approval pending: it becomes 'rejected' with the refusal as its note.
insert into approvals (id, tenant_id, livemode, subject_kind, status, version, amount_minor, currency, request, requested_by, approver, subject_id,
                       resolution_note, created_at, updated_at, resolved_at)
select d.id, d.tenant_id, d.livemode, 'operator_decision',
       case d.status when 'failed' then 'rejected' else d.status end, d.version,
       case when d.action = 'payout_approval.approve' then (d.snapshot->>'amount_minor')::bigint end,
       case when d.action = 'payout_approval.approve' then d.snapshot->>'currency' end,
       jsonb_strip_nulls(jsonb_build_object('action', d.action, 'target_kind', d.target_kind, 'target_id', d.target_id, 'reason', d.reason,
                                            'snapshot', d.snapshot, 'params', d.command->'params', 'body', d.command->'body', 'outcome', d.outcome)),
       d.requested_by::text, d.decided_by::text,
       case when d.status = 'approved' and d.target_id ~* '^[0-9a-f-]{36}$' then d.target_id::uuid end,
       case when d.status = 'failed' then concat_ws(' · ', d.decision_note, 'refused when run: ' || coalesce(d.outcome->>'code', d.outcome::text)) else d.decision_note end,
       d.created_at, d.updated_at, d.decided_at
  from operator_decisions d;

-- Their steps stay in entity_history, under the approvals' kind.
update entity_history set entity_kind = 'approval' where entity_kind = 'operator_decision';

drop table operator_decisions;

-- A suspension is kept to the millisecond from now on (actors/operator-views.ts): a JS Date holds it
-- exactly, so approving a release is guarded on the very suspension it was asked for.
update tenants set suspended_at = date_trunc('milliseconds', suspended_at) where suspended_at is not null;
