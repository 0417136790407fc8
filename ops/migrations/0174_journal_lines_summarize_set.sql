-- The journal lines' summary trigger (0110, tenant named in 0162), same results, without a scan per
-- entry. It ran once per posting statement, looping over the statement's entries, and for each entry
-- scanned the whole transition table (`exists (select 1 from new_lines l where l.entry_id = eid …)`)
-- and appended to four arrays (`ids := ids || eid`, a copy each time): quadratic in the entries of one
-- statement. A payment posts one entry per statement, so it did not show; a bank statement import
-- posts one bank.deposit entry per matched line in one statement (actors/bank-statements.ts), and
-- that scan alone took 1,128 ms for 4,001 entries (pg_stat_statements, bench/RESULTS.md
-- bench/reconciliation 2026-11-27), growing with the square of the lines (39,000 matches: minutes).
--
-- Now each entry is read by primary key from a LATERAL subquery with OFFSET 0 (the planner cannot
-- turn it into a join, so it is one index lookup per entry or line whatever the statistics and the
-- cached generic plan: 0110's reason for reading entries one at a time), and the checks are per book:
-- - the book's lock (shared) for every book of the entries, in (tenant, mode) order;
-- - closed period: the book's earliest accounting date among these entries against its last close
--   (the same as checking every entry);
-- - tenant and mode: an entry's lines that name another tenant (its entry id with more than one
--   tenant among the lines) or another mode than the entry (all the lines of (entry, tenant) agree
--   with the entry's livemode): the same condition as 0162's per-entry exists;
-- - cash_facts one row per captured charge / succeeded refund, in entry order (on conflict do
--   nothing: the first entry wins, as in the loop);
-- - ledger_daily upserted in key order from the lines and their entries.
-- Only difference: a statement that breaks both checks reports the closed period first.
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
          from attempts a join payment_intents pi on pi.id = a.payment_intent_id and pi.tenant_id = a.tenant_id
         where e.kind = 'charge.captured' and a.id = e.ref_id and a.tenant_id = e.tenant_id
        union all
        select 'refund', r.id, e.id, e.tenant_id, e.livemode, e.occurred_at, r.currency, a.method, a.connector_key,
               pi.metadata->>'branch', pi.metadata->>'register', pi.id, a.id, r.amount_minor, 0, a.card_fingerprint
          from refunds r join attempts a on a.id = r.attempt_id and a.tenant_id = r.tenant_id join payment_intents pi on pi.id = a.payment_intent_id and pi.tenant_id = a.tenant_id
         where e.kind = 'refund.succeeded' and r.id = e.ref_id and r.tenant_id = e.tenant_id) s
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
