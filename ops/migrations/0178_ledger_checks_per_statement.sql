-- The cost of a payment (issue 26): the ledger's checks per statement of lines instead of per line.
--
-- 1. An entry's balance is checked by the statement trigger journal_lines_summarize, once per
--    statement of lines, instead of by the deferred per-row constraint trigger journal_lines_balanced
--    (0002, tenant named in 0162), which ran at commit once per LINE and summed the same entry's lines
--    each time (6 times per capture; pg_stat_user_functions: 0.14 ms per payment). Every entry the
--    statement touched must balance per currency over ALL its lines (those of earlier statements
--    too), read from journal_lines_entry_tenant (entry_id, tenant_id) in a LATERAL subquery with
--    OFFSET 0 (0174's device: one index lookup per entry whatever the statistics). Same message and
--    errcode as before: 'journal entry % does not balance in %: lines sum to %', 23514.
--
--    STRICTER than before: the deferred trigger checked at COMMIT, so an entry's lines could be
--    spread over several statements of one transaction and only had to balance in the end; now each
--    insert statement must leave every entry it touches balanced. All writers insert an entry's
--    lines in one statement (kernel/ledger.ts postEntry; actors/bank-statements.ts, many entries in
--    one statement; the benches and tests), so none changes. SET CONSTRAINTS journal_lines_balanced
--    no longer names anything (nothing in the repository used it). When several entries of one
--    statement are unbalanced, the error names the first in (tenant, mode, entry id) order (the
--    deferred trigger named the first in line order); an entry unbalanced in several currencies
--    names one of them, as before.
--    The refusal now comes at the insert statement, not at COMMIT; a statement that breaks the
--    closed-period or tenant/mode rule as well reports those first (they were raised at the
--    statement, before the commit's balance check, before too).
--
-- 2. journal_lines_summarize does less per statement, same rules, same results:
--    - the book loop's query also reads each entry's unbalanced currency (if any), so the balance
--      check adds no statement (the verdict is raised after the loop: closed period and tenant/mode
--      first, as before);
--    - the lock (shared, (tenant, mode) order) and the closed-period lookup stay two statements per
--      book: the lookup must take its snapshot after the lock is granted (a close that committed
--      while the posting waited must be seen; docs/reports.md "Period close");
--    - cash_facts and ledger_daily are written by ONE statement (a data-modifying CTE), each entry
--      read once from journal_entries for both (0174 read it once per entry for cash_facts and once
--      per LINE for ledger_daily: 6 primary-key lookups per capture). The lines are first summed per
--      (entry, currency, account) and then per (tenant, mode, currency, day, account): the same sums
--      and counts. cash_facts is still inserted in entry order with on conflict do nothing, and
--      ledger_daily upserted in key order with the stripe; the cash_facts insert runs first (the
--      ledger_daily insert reads its row count, so the executor finishes it before producing a row).
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
  bad_entry uuid;
  bad_currency text;
  bad_total numeric;
begin
  for b in
    select j.tenant_id, j.livemode, min(j.accounting_date) as first_day,
           bool_or(n.tenants > 1 or n.all_live <> j.livemode or n.any_live <> j.livemode) as mixed,
           (array_agg(n.entry_id order by n.entry_id) filter (where u.total is not null))[1] as bad_entry,
           (array_agg(u.currency order by n.entry_id) filter (where u.total is not null))[1] as bad_currency,
           (array_agg(u.total order by n.entry_id) filter (where u.total is not null))[1] as bad_total
      from (select entry_id, tenant_id, count(*) over (partition by entry_id) as tenants, bool_and(livemode) as all_live, bool_or(livemode) as any_live
              from new_lines group by entry_id, tenant_id) n
      cross join lateral (select j.tenant_id, j.livemode, j.accounting_date from journal_entries j where j.id = n.entry_id and j.tenant_id = n.tenant_id offset 0) j
      -- all the entry's lines, this statement's and earlier ones' (the trigger runs after the insert)
      left join lateral (select l.currency, sum(l.amount_minor) as total from journal_lines l
                          where l.entry_id = n.entry_id and l.tenant_id = n.tenant_id
                          group by l.currency having sum(l.amount_minor) <> 0 limit 1 offset 0) u on true
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
    if bad_entry is null and b.bad_entry is not null then
      bad_entry := b.bad_entry;
      bad_currency := b.bad_currency;
      bad_total := b.bad_total;
    end if;
  end loop;
  if bad_entry is not null then
    raise exception 'journal entry % does not balance in %: lines sum to %', bad_entry, bad_currency, bad_total
      using errcode = '23514';
  end if;

  with e as materialized (
    select j.id, j.tenant_id, j.livemode, j.occurred_at, j.kind, j.ref_type, j.ref_id, j.accounting_date
      from (select distinct entry_id, tenant_id from new_lines) n
      cross join lateral (select j.id, j.tenant_id, j.livemode, j.occurred_at, j.kind, j.ref_type, j.ref_id, j.accounting_date from journal_entries j
                           where j.id = n.entry_id and j.tenant_id = n.tenant_id offset 0) j),
  facts as (
    insert into cash_facts (kind, source_id, entry_id, tenant_id, livemode, occurred_at, currency, method, connector_key, branch, register,
                            payment_intent_id, attempt_id, amount_minor, tip_minor, card_fingerprint)
    select f.kind, f.source_id, f.entry_id, f.tenant_id, f.livemode, f.occurred_at, f.currency, f.method, f.connector_key, f.branch, f.register,
           f.payment_intent_id, f.attempt_id, f.amount_minor, f.tip_minor, f.card_fingerprint
      from (select * from e where (e.kind = 'charge.captured' and e.ref_type = 'attempt') or (e.kind = 'refund.succeeded' and e.ref_type = 'refund')) e
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
    on conflict do nothing
    returning 1)
  insert into ledger_daily as d (tenant_id, livemode, currency, day, account, stripe, debit_minor, credit_minor, line_count)
  select e.tenant_id, e.livemode, l.currency, e.accounting_date, l.account, (pg_backend_pid() % 32767)::smallint,
         sum(l.debit), sum(l.credit), sum(l.n)
    from (select entry_id, tenant_id, currency, account, sum(greatest(amount_minor, 0)) as debit, sum(greatest(-amount_minor, 0)) as credit, count(*) as n
            from new_lines group by entry_id, tenant_id, currency, account) l
    join e on e.id = l.entry_id and e.tenant_id = l.tenant_id
   -- cash_facts first (as before): this condition is evaluated once, before the first row
   where (select count(*) from facts) >= 0
   group by e.tenant_id, e.livemode, l.currency, e.accounting_date, l.account
   order by 1, 2, 3, 4, 5
  on conflict (tenant_id, livemode, currency, day, account, stripe) do update
     set debit_minor = d.debit_minor + excluded.debit_minor,
         credit_minor = d.credit_minor + excluded.credit_minor,
         line_count = d.line_count + excluded.line_count;
  return null;
end $function$;
