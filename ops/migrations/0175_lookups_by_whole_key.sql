-- The cost of a payment (issue 26): two lookups by a row's whole key (id, tenant_id) that a generic plan
-- made without statistics answered through an index leading with tenant_id, reading every row of the
-- tenant to find one (EXPLAIN evidence and bench/cost figures in bench/RESULTS.md, issue 26, "Plans
-- made on an empty table").
--
-- The mechanism: the planner, without statistics (a new database; this cluster runs autovacuum =
-- off), estimates that `tenant_id = $1` matches one row, the same as the primary key; since 0160 the
-- primary keys are (id, tenant_id), two uuids, a taller B-tree than the small deduplicated tenant
-- index, so the tenant index costs less (generic plan on attempts: attempts_tenant_created 8.16
-- against attempts_pkey 8.29) and wins. Postgres keeps a statement's generic plan for the life of
-- its connection (postgres.js prepares every statement; PL/pgSQL caches its own), so a plan made
-- during the first seconds of a database stays while the tenant grows: bench/confirm measured 1,554
-- buffers per `update attempts ... where id = $ and tenant_id = $` and 1,669 per cash_facts insert.
--
-- 1. attempts_tenant_created leads with livemode: (livemode, tenant_id, created_at). Its readers
--    (reports/anomalies, routing's connector state) give livemode and tenant_id both, so they read the
--    same range as before; a lookup by (id, tenant_id) can no longer descend it by the tenant alone
--    and takes the primary key whatever the statistics (generic plan checked on the table with 237
--    rows and empty: Index Scan using attempts_pkey, Index Cond: id and tenant_id).
--    Rebuilding the index blocks writes to attempts while it builds (a large attempts table: run this
--    migration in a quiet window).
-- 2. journal_lines_summarize (0174's body) reads the capture's (or refund's) attempt, refund and
--    payment intent each by its whole key in a LATERAL subquery with OFFSET 0 (0174's own device: one
--    index lookup whatever the statistics), instead of the join `attempts a join payment_intents pi on
--    pi.id = a.payment_intent_id and pi.tenant_id = a.tenant_id` (0162, kept by 0174): in that join the
--    planner could scan payment_intents by the tenant alone (payment_intents_amount, 0142) and keep
--    `pi.id = a.payment_intent_id` as a join filter (auto_explain in bench/cost: "Index Scan using
--    payment_intents_amount on payment_intents pi ... Index Cond: (tenant_id = ...)", "Join Filter:
--    (a.payment_intent_id = pi.id)", its rows growing with the tenant). Same rows as before: a missing
--    attempt, refund or intent inserted nothing through the inner joins and inserts nothing here
--    (cross join lateral drops the entry); the rest of the body is 0174's.

drop index if exists attempts_tenant_created;
create index attempts_tenant_created on attempts (livemode, tenant_id, created_at);

CREATE OR REPLACE FUNCTION public.journal_lines_summarize()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
declare
  b record;
  last_closed date;
begin
  for b in
    select j.tenant_id, j.livemode, min(j.accounting_date) as first_day,
           bool_or(n.tenants > 1 or n.all_live <> j.livemode or n.any_live <> j.livemode) as mixed
      from (select entry_id, tenant_id, count(*) over (partition by entry_id) as tenants, bool_and(livemode) as all_live, bool_or(livemode) as any_live
              from new_lines group by entry_id, tenant_id) n
      cross join lateral (select j.tenant_id, j.livemode, j.accounting_date from journal_entries j where j.id = n.entry_id and j.tenant_id = n.tenant_id offset 0) j
     group by j.tenant_id, j.livemode
     order by 1, 2
  loop
    -- Lines join the book's lock (a close waits for them) and never land in a closed month, whatever
    -- entry they belong to.
    perform pg_advisory_xact_lock_shared(orq_book_lock_key(b.tenant_id, b.livemode));
    select max(period) into last_closed from ledger_period_closes where tenant_id = b.tenant_id and livemode = b.livemode;
    if last_closed is not null and b.first_day < (last_closed + interval '1 month')::date then
      raise exception 'journal lines refused: their entry is dated in a closed period (closed through %); post a new entry instead', last_closed
        using errcode = '23514';
    end if;
    if b.mixed then
      raise exception 'journal lines refused: they name another tenant or mode than their entry' using errcode = '23514';
    end if;
  end loop;

  insert into cash_facts (kind, source_id, entry_id, tenant_id, livemode, occurred_at, currency, method, connector_key, branch, register,
                          payment_intent_id, attempt_id, amount_minor, tip_minor, card_fingerprint)
  select f.kind, f.source_id, f.entry_id, f.tenant_id, f.livemode, f.occurred_at, f.currency, f.method, f.connector_key, f.branch, f.register,
         f.payment_intent_id, f.attempt_id, f.amount_minor, f.tip_minor, f.card_fingerprint
    from (select distinct entry_id, tenant_id from new_lines) n
    cross join lateral (select j.id, j.tenant_id, j.livemode, j.occurred_at, j.kind, j.ref_id from journal_entries j
                         where j.id = n.entry_id and j.tenant_id = n.tenant_id
                           and ((j.kind = 'charge.captured' and j.ref_type = 'attempt') or (j.kind = 'refund.succeeded' and j.ref_type = 'refund')) offset 0) e
    cross join lateral (
      select * from (
        select 'charge'::text as kind, a.id as source_id, e.id as entry_id, e.tenant_id, e.livemode, e.occurred_at, pi.currency, a.method, a.connector_key,
               pi.metadata->>'branch' as branch, pi.metadata->>'register' as register, pi.id as payment_intent_id, a.id as attempt_id, pi.amount_minor, pi.tip_minor, a.card_fingerprint
          from (select a.id, a.payment_intent_id, a.method, a.connector_key, a.card_fingerprint from attempts a
                 where e.kind = 'charge.captured' and a.id = e.ref_id and a.tenant_id = e.tenant_id offset 0) a
          cross join lateral (select pi.id, pi.currency, pi.metadata, pi.amount_minor, pi.tip_minor from payment_intents pi
                               where pi.id = a.payment_intent_id and pi.tenant_id = e.tenant_id offset 0) pi
        union all
        select 'refund', r.id, e.id, e.tenant_id, e.livemode, e.occurred_at, r.currency, a.method, a.connector_key,
               pi.metadata->>'branch', pi.metadata->>'register', pi.id, a.id, r.amount_minor, 0, a.card_fingerprint
          from (select r.id, r.attempt_id, r.currency, r.amount_minor from refunds r
                 where e.kind = 'refund.succeeded' and r.id = e.ref_id and r.tenant_id = e.tenant_id offset 0) r
          cross join lateral (select a.id, a.payment_intent_id, a.method, a.connector_key, a.card_fingerprint from attempts a
                               where a.id = r.attempt_id and a.tenant_id = e.tenant_id offset 0) a
          cross join lateral (select pi.id, pi.currency, pi.metadata, pi.amount_minor, pi.tip_minor from payment_intents pi
                               where pi.id = a.payment_intent_id and pi.tenant_id = e.tenant_id offset 0) pi) s
      offset 0) f
   order by f.entry_id, f.tenant_id
  on conflict do nothing;

  insert into ledger_daily as d (tenant_id, livemode, currency, day, account, stripe, debit_minor, credit_minor, line_count)
  select e.tenant_id, e.livemode, l.currency, e.accounting_date, l.account, (pg_backend_pid() % 32767)::smallint,
         sum(greatest(l.amount_minor, 0)), sum(greatest(-l.amount_minor, 0)), count(*)
    from new_lines l
    cross join lateral (select j.tenant_id, j.livemode, j.accounting_date from journal_entries j where j.id = l.entry_id and j.tenant_id = l.tenant_id offset 0) e
   group by e.tenant_id, e.livemode, l.currency, e.accounting_date, l.account
   order by 1, 2, 3, 4, 5
  on conflict (tenant_id, livemode, currency, day, account, stripe) do update
     set debit_minor = d.debit_minor + excluded.debit_minor,
         credit_minor = d.credit_minor + excluded.credit_minor,
         line_count = d.line_count + excluded.line_count;
  return null;
end $function$;
