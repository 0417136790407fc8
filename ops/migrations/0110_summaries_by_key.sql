-- The cost of a payment (issue 26): the journal lines' summary trigger, same results, two changes.
--
-- 1. Every entry of the posted lines is read by its primary key, one at a time. The trigger of
--    0050 joined unnest(ids) (and the transition table) to journal_entries; PL/pgSQL caches a
--    generic plan, and on a table the planner had no statistics for (every fresh database, and any
--    table growing faster than autovacuum analyzes it) that plan scanned journal_entries — all
--    the charge.captured entries through the (ref_type, ref_id, kind) index, 388 buffers for 400
--    entries (EXPLAIN (ANALYZE, BUFFERS) in bench/RESULTS.md): a cost per payment that grew with the
--    ledger (pg_stat_user_tables: one sequential or full index scan of journal_entries per posting).
--    A single-row lookup by primary key has one plan whatever the statistics say.
-- 2. ledger_daily's stripe is the backend's pid mod 32767 instead of mod 16: a backend runs one
--    transaction at a time, so two postings in flight update the same row only when two backends'
--    pids agree mod 32767 (practically never), where mod 16 made them wait for each other's commit
--    (pg_stat_statements: the upsert's mean time 18–44 ms under load, at 33–51 buffers per call).
--    Readers already sum the stripes (actors/reports/ledger.ts); rows per account and day are now
--    the backends that posted that day instead of at most 16.
-- Unchanged: the same transaction (the summaries cannot drift from the lines), the book's lock
-- taken shared, the closed-period and tenant checks, ledger_daily upserted in key order (no
-- deadlock between two postings), cash_facts one row per captured charge / succeeded refund.
create or replace function journal_lines_summarize() returns trigger language plpgsql as $$
declare
  eid uuid;
  e record;
  last_closed date;
  ids uuid[] := '{}';
  tenants uuid[] := '{}';
  modes boolean[] := '{}';
  days date[] := '{}';
begin
  for eid in select distinct entry_id from new_lines order by 1 loop
    select j.tenant_id, j.livemode, j.accounting_date, j.occurred_at, j.kind, j.ref_type, j.ref_id into e
      from journal_entries j where j.id = eid;
    -- Lines join the book's lock (a close waits for them) and never land in a closed month, whatever
    -- entry they belong to.
    perform pg_advisory_xact_lock_shared(orq_book_lock_key(e.tenant_id, e.livemode));
    select max(period) into last_closed from ledger_period_closes where tenant_id = e.tenant_id and livemode = e.livemode;
    if last_closed is not null and e.accounting_date < (last_closed + interval '1 month')::date then
      raise exception 'journal lines refused: their entry is dated in a closed period (closed through %); post a new entry instead', last_closed
        using errcode = '23514';
    end if;
    if exists (select 1 from new_lines l where l.entry_id = eid and (l.tenant_id <> e.tenant_id or l.livemode <> e.livemode)) then
      raise exception 'journal lines refused: they name another tenant or mode than their entry' using errcode = '23514';
    end if;
    ids := ids || eid;
    tenants := tenants || e.tenant_id;
    modes := modes || e.livemode;
    days := days || e.accounting_date;

    if e.kind = 'charge.captured' and e.ref_type = 'attempt' then
      insert into cash_facts (kind, source_id, entry_id, tenant_id, livemode, occurred_at, currency, method, connector_key, branch, register,
                              payment_intent_id, attempt_id, amount_minor, tip_minor, card_fingerprint)
      select 'charge', a.id, eid, e.tenant_id, e.livemode, e.occurred_at, pi.currency, a.method, a.connector_key,
             pi.metadata->>'branch', pi.metadata->>'register', pi.id, a.id, pi.amount_minor, pi.tip_minor, a.card_fingerprint
        from attempts a join payment_intents pi on pi.id = a.payment_intent_id
       where a.id = e.ref_id
      on conflict do nothing;
    elsif e.kind = 'refund.succeeded' and e.ref_type = 'refund' then
      insert into cash_facts (kind, source_id, entry_id, tenant_id, livemode, occurred_at, currency, method, connector_key, branch, register,
                              payment_intent_id, attempt_id, amount_minor, tip_minor, card_fingerprint)
      select 'refund', r.id, eid, e.tenant_id, e.livemode, e.occurred_at, r.currency, a.method, a.connector_key,
             pi.metadata->>'branch', pi.metadata->>'register', pi.id, a.id, r.amount_minor, 0, a.card_fingerprint
        from refunds r join attempts a on a.id = r.attempt_id join payment_intents pi on pi.id = a.payment_intent_id
       where r.id = e.ref_id
      on conflict do nothing;
    end if;
  end loop;

  insert into ledger_daily as d (tenant_id, livemode, currency, day, account, stripe, debit_minor, credit_minor, line_count)
  select x.tenant_id, x.livemode, l.currency, x.day, l.account, (pg_backend_pid() % 32767)::smallint,
         sum(greatest(l.amount_minor, 0)), sum(greatest(-l.amount_minor, 0)), count(*)
    from new_lines l join unnest(ids, tenants, modes, days) x(id, tenant_id, livemode, day) on x.id = l.entry_id
   group by x.tenant_id, x.livemode, l.currency, x.day, l.account
   order by 1, 2, 3, 4, 5
  on conflict (tenant_id, livemode, currency, day, account, stripe) do update
     set debit_minor = d.debit_minor + excluded.debit_minor,
         credit_minor = d.credit_minor + excluded.credit_minor,
         line_count = d.line_count + excluded.line_count;
  return null;
end $$;
