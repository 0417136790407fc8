-- The cost of a payment (issue 26): the reports' summaries leave the payment's transaction.
--
-- Until now every statement of journal lines wrote the summaries the reports read, in the posting's
-- own transaction, from journal_lines_summarize: cash_facts (one row per captured charge and succeeded
-- refund, four indexes, read through three lookups) and ledger_daily (one upsert per account, currency
-- and day: a capture touches five rows). Measured (one backend, 2,000 captures per round, 4 rounds
-- interleaved, the backend's CPU from /proc): 0.58-0.73 ms per capture with them, 0.38-0.49 ms with an
-- insert into a pending list instead (bench/RESULTS.md, "Issue 26, fifth session").
--
-- 1. ledger_pending: the entries whose summaries are not written yet, one row per entry, inserted by
--    journal_lines_summarize in the posting's transaction (its checks, lock and refusals unchanged).
-- 2. ledger_summarize(limit, tenant, livemode) writes the summaries of pending entries and deletes
--    them, in one transaction: without a book, up to `limit` entries of any book, skipping rows another
--    summarizer holds (the worker's maintenance job, every second, kernel/ledger.ts); with a book, all
--    its pending entries, waiting for rows another summarizer holds (the bank reconciliation's write
--    transactions, which look charges up in cash_facts by its indexes). The summaries of an entry are
--    computed from the journal by ledger_cash_fact_of and ledger_daily_lines_of, the same functions the
--    views below use: one definition.
-- 3. Exact at every instant: an entry is either pending or summarized, never both, never neither (the
--    row is deleted in the transaction that writes its summaries). The views cash_facts_now and
--    ledger_daily_now are the tables plus the pending entries computed from the journal, read in one
--    snapshot: the reports read them (on a replica too: they write nothing). test/ledger-summaries.
-- 4. STRICTER: an entry's lines are inserted by one statement. A later statement adding lines to an
--    entry that has lines is refused (23514), balanced or not (0178 let a balanced pair through).
--    Every writer posts an entry's lines in one statement (kernel/ledger.ts postEntry, the bank
--    import, the benches); the pending list is per entry, so an entry's summary is all its lines.
--    The refusal comes after the foreign-key, closed-period and tenant/mode ones, before the balance.

create table ledger_pending (
  tenant_id uuid not null,
  livemode boolean not null,
  entry_id uuid not null,
  primary key (tenant_id, livemode, entry_id)
);

-- The cash fact of one entry: a charge's capture or a refund's success (no row for other entries).
create function ledger_cash_fact_of(p_tenant uuid, p_entry uuid)
returns table (kind text, source_id uuid, entry_id uuid, tenant_id uuid, livemode boolean, occurred_at timestamptz, currency text, method text,
               connector_key text, branch text, register text, payment_intent_id uuid, attempt_id uuid, amount_minor bigint, tip_minor bigint, card_fingerprint text)
language sql stable as $$
  select s.* from (select j.id, j.tenant_id, j.livemode, j.occurred_at, j.kind, j.ref_id from journal_entries j
                    where j.id = p_entry and j.tenant_id = p_tenant
                      and ((j.kind = 'charge.captured' and j.ref_type = 'attempt') or (j.kind = 'refund.succeeded' and j.ref_type = 'refund')) offset 0) e
  cross join lateral (
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
$$;

-- One entry's lines as ledger_daily counts them (a row per line; the summary sums them).
create function ledger_daily_lines_of(p_tenant uuid, p_entry uuid)
returns table (currency text, day date, account text, debit_minor bigint, credit_minor bigint)
language sql stable as $$
  select l.currency, e.accounting_date, l.account, greatest(l.amount_minor, 0), greatest(-l.amount_minor, 0)
    from (select j.accounting_date from journal_entries j where j.id = p_entry and j.tenant_id = p_tenant offset 0) e
    cross join lateral (select l.currency, l.account, l.amount_minor from journal_lines l where l.entry_id = p_entry and l.tenant_id = p_tenant offset 0) l
$$;

-- The summaries as of the reader's snapshot: what is written plus what is pending. Filters on
-- tenant_id and livemode reach ledger_pending's key; a pending entry costs its lookups by key.
create view cash_facts_now as
  select kind, source_id, entry_id, tenant_id, livemode, occurred_at, currency, method, connector_key, branch, register,
         payment_intent_id, attempt_id, amount_minor, tip_minor, card_fingerprint
    from cash_facts
  union all
  select f.kind, f.source_id, p.entry_id, p.tenant_id, p.livemode, f.occurred_at, f.currency, f.method, f.connector_key, f.branch, f.register,
         f.payment_intent_id, f.attempt_id, f.amount_minor, f.tip_minor, f.card_fingerprint
    from ledger_pending p
    cross join lateral ledger_cash_fact_of(p.tenant_id, p.entry_id) f
   -- the table keeps the first fact of a source (on conflict do nothing): a second capture entry of one attempt adds none
   where not exists (select 1 from cash_facts c where c.kind = f.kind and c.source_id = f.source_id and c.tenant_id = p.tenant_id);

create view ledger_daily_now as
  select tenant_id, livemode, currency, day, account, debit_minor, credit_minor, line_count
    from ledger_daily
  union all
  select p.tenant_id, p.livemode, d.currency, d.day, d.account, d.debit_minor, d.credit_minor, 1::bigint
    from ledger_pending p
    cross join lateral ledger_daily_lines_of(p.tenant_id, p.entry_id) d;

create function ledger_summarize(p_limit integer, p_tenant uuid default null, p_livemode boolean default null) returns integer
language plpgsql as $$
declare
  ts uuid[];
  ms boolean[];
  es uuid[];
begin
  if p_tenant is null then
    select array_agg(tenant_id), array_agg(livemode), array_agg(entry_id) into ts, ms, es
      from (select tenant_id, livemode, entry_id from ledger_pending order by tenant_id, livemode, entry_id limit p_limit for update skip locked) k;
  else
    select array_agg(tenant_id), array_agg(livemode), array_agg(entry_id) into ts, ms, es
      from (select tenant_id, livemode, entry_id from ledger_pending where tenant_id = p_tenant and livemode = p_livemode
             order by entry_id limit p_limit for update) k;
  end if;
  if es is null then
    return 0;
  end if;
  insert into cash_facts (kind, source_id, entry_id, tenant_id, livemode, occurred_at, currency, method, connector_key, branch, register,
                          payment_intent_id, attempt_id, amount_minor, tip_minor, card_fingerprint)
  select f.kind, f.source_id, f.entry_id, f.tenant_id, f.livemode, f.occurred_at, f.currency, f.method, f.connector_key, f.branch, f.register,
         f.payment_intent_id, f.attempt_id, f.amount_minor, f.tip_minor, f.card_fingerprint
    from unnest(ts, es) k(tenant_id, entry_id)
    cross join lateral ledger_cash_fact_of(k.tenant_id, k.entry_id) f
   order by f.entry_id, f.tenant_id
  on conflict do nothing;
  insert into ledger_daily as d (tenant_id, livemode, currency, day, account, stripe, debit_minor, credit_minor, line_count)
  select k.tenant_id, k.livemode, l.currency, l.day, l.account, (pg_backend_pid() % 32767)::smallint, sum(l.debit_minor), sum(l.credit_minor), count(*)
    from unnest(ts, ms, es) k(tenant_id, livemode, entry_id)
    cross join lateral ledger_daily_lines_of(k.tenant_id, k.entry_id) l
   group by 1, 2, 3, 4, 5
   order by 1, 2, 3, 4, 5
  on conflict (tenant_id, livemode, currency, day, account, stripe) do update
     set debit_minor = d.debit_minor + excluded.debit_minor,
         credit_minor = d.credit_minor + excluded.credit_minor,
         line_count = d.line_count + excluded.line_count;
  delete from ledger_pending p
   using unnest(ts, ms, es) k(tenant_id, livemode, entry_id)
   where p.tenant_id = k.tenant_id and p.livemode = k.livemode and p.entry_id = k.entry_id;
  return cardinality(es);
end $$;

-- What was summarized in the transaction is summarized as before: nothing pending to carry over.
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
