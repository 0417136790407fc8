-- The cost of a payment (issue 26): the ledger's checks per statement of lines instead of per line.
--
-- 1. An entry's balance is checked by the statement trigger journal_lines_summarize, once per
--    statement of lines, instead of by the deferred per-row constraint trigger journal_lines_balanced
--    (0002, tenant named in 0162), which ran at commit once per LINE and summed the same entry's lines
--    each time (6 times per capture; bench/cost: 0.165 ms self per payment). Every entry the statement
--    touched must balance per currency over ALL its lines (those of earlier statements too). Same
--    message and errcode as before: 'journal entry % does not balance in %: lines sum to %', 23514.
--
--    STRICTER than before: the deferred trigger checked at COMMIT, so an entry's lines could be
--    spread over several statements of one transaction and only had to balance in the end; now each
--    insert statement must leave every entry it touches balanced, and the refusal comes at that
--    statement. All writers insert an entry's lines in one statement (kernel/ledger.ts postEntry;
--    actors/bank-statements.ts, many entries in one statement; the benches and tests), so none
--    changes. SET CONSTRAINTS journal_lines_balanced no longer names anything (nothing in the
--    repository used it). When several entries of one statement are unbalanced, the error names the
--    first by entry id (the deferred trigger named the first in line order), and of an entry
--    unbalanced in several currencies the first currency by name (before: whichever its group by
--    gave first). A statement that also breaks the closed-period or tenant/mode rule reports those
--    (as before: they were raised at the statement, the balance only at commit).
--
-- 2. The check adds no statement: the book loop's query (0174) reads, for each entry by
--    journal_lines_entry_tenant (entry_id, tenant_id) in a LATERAL subquery with OFFSET 0 (0174's
--    device: one index lookup per entry whatever the statistics), the smallest and largest currency
--    and the sum of its lines: one currency (the usual case) balances when the sum is 0; several are
--    summed per currency (a subquery evaluated only for such entries). Only when an entry is
--    unbalanced does a second query find the entry and currency the message names. The verdict is
--    raised after the loop, so the lock order ((tenant, mode), shared) and the closed-period and
--    tenant/mode refusals are as before. The cash_facts and ledger_daily statements are 0175's,
--    unchanged.
--    Measured and not kept: writing cash_facts and ledger_daily in one statement (a data-modifying
--    CTE reading each entry once): fewer buffers (57 -> 39 per capture) but no less CPU (one backend,
--    1,000 captures, 5 interleaved rounds: 0.617 ms min per capture against 0.583 with the two
--    statements; the hash join and CTE scans cost what the 6 index lookups saved); and producing the
--    failing entry and currency in the loop's query with ordered array_agg (three sorts per book).
--
-- Not changed: journal_entry_accounting_date (BEFORE INSERT on journal_entries) keeps its own lock
-- and closed-period lookup. Skipping the summarize's lookup when the same transaction inserted the
-- entry (and so already holds the book's lock) is not provably equivalent: a close run inside the
-- same transaction after the entry insert takes the lock without waiting and would be missed.

drop trigger journal_lines_balanced on journal_lines;
-- Nothing else calls it (the only trigger using it is dropped above).
drop function journal_entry_balanced();

CREATE OR REPLACE FUNCTION public.journal_lines_summarize()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
declare
  b record;
  last_closed date;
  unbalanced boolean := false;
  bad record;
begin
  for b in
    select j.tenant_id, j.livemode, min(j.accounting_date) as first_day,
           bool_or(n.tenants > 1 or n.all_live <> j.livemode or n.any_live <> j.livemode) as mixed,
           -- one currency among the entry's lines (the usual case): its sum; several: a sum per currency
           bool_or(case when u.lo = u.hi then u.total <> 0
                        else exists (select 1 from journal_lines l where l.entry_id = n.entry_id and l.tenant_id = n.tenant_id
                                      group by l.currency having sum(l.amount_minor) <> 0) end) as unbalanced
      from (select entry_id, tenant_id, count(*) over (partition by entry_id) as tenants, bool_and(livemode) as all_live, bool_or(livemode) as any_live
              from new_lines group by entry_id, tenant_id) n
      cross join lateral (select j.tenant_id, j.livemode, j.accounting_date from journal_entries j where j.id = n.entry_id and j.tenant_id = n.tenant_id offset 0) j
      -- all the entry's lines, this statement's and earlier ones' (the trigger runs after the insert)
      cross join lateral (select min(l.currency) as lo, max(l.currency) as hi, sum(l.amount_minor) as total from journal_lines l
                           where l.entry_id = n.entry_id and l.tenant_id = n.tenant_id offset 0) u
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
    unbalanced := unbalanced or b.unbalanced;
  end loop;
  if unbalanced then
    -- the refusal's message: the first unbalanced entry (by id) and one of its unbalanced currencies
    select n.entry_id, u.currency, u.total into bad
      from (select distinct entry_id, tenant_id from new_lines) n
      cross join lateral (select l.currency, sum(l.amount_minor) as total from journal_lines l
                           where l.entry_id = n.entry_id and l.tenant_id = n.tenant_id
                           group by l.currency having sum(l.amount_minor) <> 0 order by l.currency limit 1) u
     order by n.entry_id
     limit 1;
    raise exception 'journal entry % does not balance in %: lines sum to %', bad.entry_id, bad.currency, bad.total
      using errcode = '23514';
  end if;

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
