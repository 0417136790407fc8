-- journal_lines_summarize: the AFTER INSERT statement trigger on journal_lines (REFERENCING NEW TABLE
-- AS new_lines; created by 0050, set-based since 0174). A repeatable function file (ops/migrate.ts):
-- edit it here; numbered migrations 0050, 0110, 0162, 0174, 0175, 0178, 0179 and 0180 re-created it
-- in full before this file existed, and this is 0180's version unchanged.
--
-- Per statement of lines, in this order (the order is the refusals' precedence):
-- 1. every line's (entry_id, tenant_id) names an entry: 23503, constraint journal_lines_entry_id_fkey
--    (the foreign key this check replaced in 0179; entries are append-only and never truncated);
-- 2. per book (tenant, mode), sorted: the book's advisory lock, shared (a period close waits for the
--    lines; 0050), and no line on an entry dated in a closed month (23514);
-- 3. no line naming another tenant or mode than its entry (23514);
-- 4. no line on an entry that already had lines before this statement (23514, since 0180);
-- 5. every entry the statement touched balances per currency over all its lines (23514, since 0178);
-- 6. the statement's entries are listed in ledger_pending: their reports' summaries (cash_facts,
--    ledger_daily) are written later by ledger_summarize (0180; docs/reports.md, "Summaries").
CREATE OR REPLACE FUNCTION public.journal_lines_summarize()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
declare
  b record;
  last_closed date;
  unbalanced boolean := false;
  reposted text;
  bad record;
begin
  for b in
    select j.tenant_id, j.livemode, min(j.accounting_date) as first_day,
           -- the entries named but not found (their group is the one without tenant, sorted first)
           min(n.entry_id::text || ' of tenant ' || n.tenant_id::text) filter (where j.tenant_id is null) as missing,
           bool_or(n.tenants > 1 or n.all_live <> j.livemode or n.any_live <> j.livemode) as mixed,
           -- an entry that already had lines before this statement (0180: an entry's lines are one statement's)
           min(n.entry_id::text) filter (where u.lines > n.here) as reposted,
           -- one currency among the entry's lines (the usual case): its sum; several: a sum per currency
           bool_or(case when u.lo = u.hi then u.total <> 0
                        else exists (select 1 from journal_lines l where l.entry_id = n.entry_id and l.tenant_id = n.tenant_id
                                      group by l.currency having sum(l.amount_minor) <> 0) end) as unbalanced
      from (select entry_id, tenant_id, count(*) over (partition by entry_id) as tenants, bool_and(livemode) as all_live, bool_or(livemode) as any_live,
                   count(*) as here
              from new_lines group by entry_id, tenant_id) n
      left join lateral (select j.tenant_id, j.livemode, j.accounting_date from journal_entries j where j.id = n.entry_id and j.tenant_id = n.tenant_id offset 0) j on true
      -- all the entry's lines, this statement's and earlier ones' (the trigger runs after the insert)
      cross join lateral (select min(l.currency) as lo, max(l.currency) as hi, sum(l.amount_minor) as total, count(*) as lines from journal_lines l
                           where l.entry_id = n.entry_id and l.tenant_id = n.tenant_id offset 0) u
     group by j.tenant_id, j.livemode
     order by 1 nulls first, 2
  loop
    -- The foreign key journal_lines_entry_id_fkey (0160, dropped in 0179): every line's (entry_id,
    -- tenant_id) names an entry. Raised first, as the key's check came before this trigger.
    if b.tenant_id is null then
      raise exception 'insert on table "journal_lines" violates foreign key "journal_lines_entry_id_fkey": entry % is not present in table "journal_entries"', b.missing
        using errcode = '23503', constraint = 'journal_lines_entry_id_fkey', table = 'journal_lines', schema = 'public';
    end if;
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
    reposted := coalesce(reposted, b.reposted);
  end loop;
  if reposted is not null then
    raise exception 'journal lines refused: entry % already has lines from an earlier statement; an entry''s lines are inserted together, in one statement (post a new entry instead)', reposted
      using errcode = '23514';
  end if;
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

  -- The reports' summaries are written later, in batches (ledger_summarize, below); until then the
  -- entry is pending, and the *_now views count it from the journal.
  insert into ledger_pending (tenant_id, livemode, entry_id)
  select distinct tenant_id, livemode, entry_id from new_lines order by 1, 2, 3;
  return null;
end $function$;
