-- The cost of a payment (issue 26): fewer executor start-ups in the ledger's and the attempts' triggers.
--
-- 1. The foreign key journal_lines_entry_id_fkey ((entry_id, tenant_id) -> journal_entries (id,
--    tenant_id), 0160) is dropped; journal_lines_summarize checks it instead. The key cost one AFTER
--    row trigger event and one SPI query (`SELECT 1 FROM ONLY journal_entries ... FOR KEY SHARE`, with
--    its executor start-up) per LINE: 6 per payment. The summarize trigger already read every entry
--    its statement's lines name, by primary key (the book loop's LATERAL, OFFSET 0); that read is now
--    a LEFT JOIN, and the entries named but not found form the loop's group without tenant, sorted
--    first: the statement is refused with SQLSTATE 23503 (foreign_key_violation), constraint name
--    journal_lines_entry_id_fkey, a message naming the entry and tenant. No statement is added.
--    Why this is the key's guarantee: a foreign key promises (a) that the referenced row exists when
--    the referencing row is inserted and (b) that it is never deleted or its key changed while
--    referenced. (a) is the check above, at the end of the inserting statement like the key's
--    (its snapshot is taken after the insert; an entry inserted by another transaction that has not
--    committed is invisible to both). (b): entries are append-only: ledger_append_only (0002) refuses
--    every UPDATE and DELETE of journal_entries and journal_lines (a cascade from tenants too: 0177
--    refuses deleting tenants), and TRUNCATE, which bypasses row triggers, is refused below on both
--    tables (the key refused TRUNCATE journal_entries without journal_lines; TRUNCATE of both was
--    allowed by the key and is now refused as well: STRICTER, nothing in the repository truncates
--    them). session_replication_role = replica disabled the key's triggers as it disables these.
--    The precedence is the key's: a missing entry is reported before the closed-period, tenant/mode
--    and balance refusals. The key's row lock (FOR KEY SHARE on the entry) is not taken: it only
--    guarded against a concurrent delete or key update, which cannot happen.
--    test/ledger-summaries named the constraint in the error it expects; the message and the error's
--    constraint field still name it.
--
-- 2. attempts_card_fingerprint and attempts_card_funding (two BEFORE INSERT FOR EACH ROW triggers on
--    attempts, 0050 and 0122) become one trigger, attempts_card, whose function does both with the
--    same rules (they set different columns and read none the other sets, so their order never
--    mattered). The two old functions are dropped (nothing else calls them).
--
-- Measured and not kept: journal_entry_accounting_date reading the test clock's offset and the last
-- close in one statement after the lock (two scalar subqueries) instead of two: one nested statement
-- fewer per payment, but no less time (20,000 entry inserts in one backend, 12 interleaved rounds:
-- 29.86 us min / 31.09 median per insert against 29.69 / 31.38 with the two statements): the
-- one-statement form pays for its two subplans what the second executor start-up cost.
--
-- Measured (bench/RESULTS.md, "Issue 26, fourth session: entry checks (0179)"): 6 nested statements
-- fewer per payment (the key's checks) and ~28 buffers fewer; the insert of a capture's 6 lines
-- 578 -> 542 us min, 689 -> 640 median (one backend, 5,000 entries x 12 interleaved rounds); an
-- attempts insert 45.2 -> 44.3 us min, 50.1 -> 47.7 median (20,000 inserts x 12 rounds).

alter table journal_lines drop constraint journal_lines_entry_id_fkey;

create or replace function ledger_never_truncated() returns trigger language plpgsql as $$
begin
  raise exception 'the ledger is append-only (TRUNCATE on % refused): journal lines name their entries without a foreign key (migration 0179); post reversing entries instead', tg_table_name
    using errcode = 'restrict_violation';
end $$;
create trigger journal_entries_never_truncated before truncate on journal_entries for each statement execute function ledger_never_truncated();
create trigger journal_lines_never_truncated before truncate on journal_lines for each statement execute function ledger_never_truncated();

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
           -- the entries named but not found (their group is the one without tenant, sorted first)
           min(n.entry_id::text || ' of tenant ' || n.tenant_id::text) filter (where j.tenant_id is null) as missing,
           bool_or(n.tenants > 1 or n.all_live <> j.livemode or n.any_live <> j.livemode) as mixed,
           -- one currency among the entry's lines (the usual case): its sum; several: a sum per currency
           bool_or(case when u.lo = u.hi then u.total <> 0
                        else exists (select 1 from journal_lines l where l.entry_id = n.entry_id and l.tenant_id = n.tenant_id
                                      group by l.currency having sum(l.amount_minor) <> 0) end) as unbalanced
      from (select entry_id, tenant_id, count(*) over (partition by entry_id) as tenants, bool_and(livemode) as all_live, bool_or(livemode) as any_live
              from new_lines group by entry_id, tenant_id) n
      left join lateral (select j.tenant_id, j.livemode, j.accounting_date from journal_entries j where j.id = n.entry_id and j.tenant_id = n.tenant_id offset 0) j on true
      -- all the entry's lines, this statement's and earlier ones' (the trigger runs after the insert)
      cross join lateral (select min(l.currency) as lo, max(l.currency) as hi, sum(l.amount_minor) as total from journal_lines l
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

create or replace function attempts_card() returns trigger language plpgsql as $$
begin
  if new.method = 'card' and new.payment_token is not null then
    if new.card_fingerprint is null then
      new.card_fingerprint := encode(sha256(convert_to(new.tenant_id::text || ':' || new.payment_token, 'UTF8')), 'hex');
    end if;
    if new.card_funding is null and not new.livemode then
      new.card_funding := case when new.payment_token like 'tok_sim_debit%' then 'debit' when new.payment_token like 'tok_sim_prepaid%' then 'prepaid' else null end;
    end if;
  end if;
  return new;
end $$;
drop trigger attempts_card_fingerprint on attempts;
drop trigger attempts_card_funding on attempts;
drop function attempts_card_fingerprint();
drop function attempts_card_funding();
create trigger attempts_card before insert on attempts for each row execute function attempts_card();
