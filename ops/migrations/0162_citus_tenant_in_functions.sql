-- Every query inside the schema's own functions and views names the tenant (issue 31; docs/scaling.md
-- "Single-shard queries"): under Citus a trigger runs on the worker that holds its row's shard, and a
-- read there by id alone (journal_entries by id, attempts by id) is a query over every shard; a view's
-- join between two distributed tables must be on tenant_id. Same bodies as before (0050, 0061, 0080,
-- 0110, 0121), with tenant_id added to each lookup and join; the composite foreign keys of 0160 already
-- guarantee the rows joined are of one tenant, so no result changes. On one Postgres the plans stay:
-- the keys (id, tenant_id) lead with id.

CREATE OR REPLACE FUNCTION public.journal_entry_balanced()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
declare bad record;
begin
  select currency, sum(amount_minor) as total into bad
    from journal_lines where entry_id = new.entry_id and tenant_id = new.tenant_id
    group by currency having sum(amount_minor) <> 0 limit 1;
  if found then
    raise exception 'journal entry % does not balance in %: lines sum to %', new.entry_id, bad.currency, bad.total
      using errcode = '23514';
  end if;
  return null;
end $function$;

CREATE OR REPLACE FUNCTION public.journal_lines_summarize()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
declare
  eid uuid;
  tid uuid;
  e record;
  last_closed date;
  ids uuid[] := '{}';
  tenants uuid[] := '{}';
  modes boolean[] := '{}';
  days date[] := '{}';
begin
  for eid, tid in select distinct entry_id, tenant_id from new_lines order by 1, 2 loop
    select j.tenant_id, j.livemode, j.accounting_date, j.occurred_at, j.kind, j.ref_type, j.ref_id into e
      from journal_entries j where j.id = eid and j.tenant_id = tid;
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
        from attempts a join payment_intents pi on pi.id = a.payment_intent_id and pi.tenant_id = a.tenant_id
       where a.id = e.ref_id and a.tenant_id = e.tenant_id
      on conflict do nothing;
    elsif e.kind = 'refund.succeeded' and e.ref_type = 'refund' then
      insert into cash_facts (kind, source_id, entry_id, tenant_id, livemode, occurred_at, currency, method, connector_key, branch, register,
                              payment_intent_id, attempt_id, amount_minor, tip_minor, card_fingerprint)
      select 'refund', r.id, eid, e.tenant_id, e.livemode, e.occurred_at, r.currency, a.method, a.connector_key,
             pi.metadata->>'branch', pi.metadata->>'register', pi.id, a.id, r.amount_minor, 0, a.card_fingerprint
        from refunds r join attempts a on a.id = r.attempt_id and a.tenant_id = r.tenant_id join payment_intents pi on pi.id = a.payment_intent_id and pi.tenant_id = a.tenant_id
       where r.id = e.ref_id and r.tenant_id = e.tenant_id
      on conflict do nothing;
    end if;
  end loop;

  insert into ledger_daily as d (tenant_id, livemode, currency, day, account, stripe, debit_minor, credit_minor, line_count)
  select x.tenant_id, x.livemode, l.currency, x.day, l.account, (pg_backend_pid() % 32767)::smallint,
         sum(greatest(l.amount_minor, 0)), sum(greatest(-l.amount_minor, 0)), count(*)
    from new_lines l join unnest(ids, tenants, modes, days) x(id, tenant_id, livemode, day) on x.id = l.entry_id and x.tenant_id = l.tenant_id
   group by x.tenant_id, x.livemode, l.currency, x.day, l.account
   order by 1, 2, 3, 4, 5
  on conflict (tenant_id, livemode, currency, day, account, stripe) do update
     set debit_minor = d.debit_minor + excluded.debit_minor,
         credit_minor = d.credit_minor + excluded.credit_minor,
         line_count = d.line_count + excluded.line_count;
  return null;
end $function$;

CREATE OR REPLACE FUNCTION public.refunds_within_captured()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
declare
  captured bigint;
  live bigint;
begin
  if new.status not in ('requested', 'succeeded') then
    return new;
  end if;
  if tg_op = 'UPDATE' and old.status in ('requested', 'succeeded') and new.amount_minor <= old.amount_minor then
    return new;
  end if;
  select amount_minor into captured from attempts where id = new.attempt_id and tenant_id = new.tenant_id for update;
  select coalesce(sum(amount_minor), 0) into live from refunds
   where attempt_id = new.attempt_id and tenant_id = new.tenant_id and status in ('requested', 'succeeded') and id <> new.id;
  if live + new.amount_minor > captured then
    raise exception 'refunds of attempt % would exceed the captured amount: % already live, % requested, % captured',
      new.attempt_id, live, new.amount_minor, captured using errcode = 'OQ422';
  end if;
  return new;
end $function$;

CREATE OR REPLACE FUNCTION public.connect_transfers_within_captured()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
declare
  captured bigint;
  refunded bigint;
  split bigint;
begin
  perform pg_advisory_xact_lock(hashtextextended('connect_transfer:' || new.payment_intent_id::text, 0));
  select coalesce(sum(amount_minor), 0) into captured from attempts
   where payment_intent_id = new.payment_intent_id and tenant_id = new.tenant_id and status in ('captured', 'settled', 'partially_refunded', 'refunded');
  select coalesce(sum(r.amount_minor), 0) into refunded from refunds r join attempts a on a.id = r.attempt_id and a.tenant_id = r.tenant_id
   where a.payment_intent_id = new.payment_intent_id and a.tenant_id = new.tenant_id and r.status in ('requested', 'succeeded');
  select coalesce(sum(charge_amount_minor), 0) into split from connect_transfers
   where payment_intent_id = new.payment_intent_id and tenant_id = new.tenant_id and id <> new.id;
  if split + new.charge_amount_minor > captured - refunded then
    raise exception 'transfers of payment intent % would exceed what it captured: % already split, % requested, % captured less refunds',
      new.payment_intent_id, split, new.charge_amount_minor, captured - refunded using errcode = 'OQ461';
  end if;
  return new;
end $function$;

create or replace view cfdi_documents as
 SELECT i.id,
    i.tenant_id,
    i.livemode,
        CASE
            WHEN (i.receptor ->> 'rfc'::text) = 'XAXX010101000'::text AND (i.receptor ->> 'nombre'::text) = 'PUBLICO EN GENERAL'::text THEN 'global'::text
            ELSE 'invoice'::text
        END AS kind,
    i.metodo_pago,
    i.status,
    i.id AS invoice_id,
    i.uuid_fiscal,
    i.serie,
    i.folio,
    i.total_minor,
    i.base_minor,
    i.iva_minor,
    i.currency,
    i.receptor ->> 'rfc'::text AS receptor_rfc,
    i.receptor ->> 'nombre'::text AS receptor_nombre,
    i.payment_intent_id,
    pi.customer_id,
    "substring"(i.xml, ' Fecha="([^"]+)"'::text)::timestamp without time zone AS fecha,
    i.created_at,
    i.updated_at
   FROM invoices i
     LEFT JOIN payment_intents pi ON pi.id = i.payment_intent_id AND pi.tenant_id = i.tenant_id
  WHERE i.status = ANY (ARRAY['stamped'::text, 'cancel_pending'::text, 'cancelled'::text])
UNION ALL
 SELECT p.id,
    p.tenant_id,
    p.livemode,
    'payment'::text AS kind,
    NULL::text AS metodo_pago,
    p.status,
    p.invoice_id,
    p.rep_uuid AS uuid_fiscal,
    p.serie,
    p.folio,
    p.monto_minor AS total_minor,
    NULL::bigint AS base_minor,
    NULL::bigint AS iva_minor,
    p.currency,
    i.receptor ->> 'rfc'::text AS receptor_rfc,
    i.receptor ->> 'nombre'::text AS receptor_nombre,
    p.payment_intent_id,
    pi.customer_id,
    "substring"(p.xml, ' Fecha="([^"]+)"'::text)::timestamp without time zone AS fecha,
    p.created_at,
    p.updated_at
   FROM invoice_payments p
     JOIN invoices i ON i.id = p.invoice_id AND i.tenant_id = p.tenant_id
     LEFT JOIN payment_intents pi ON pi.id = p.payment_intent_id AND pi.tenant_id = p.tenant_id
  WHERE p.status <> ALL (ARRAY['pending'::text, 'error'::text])
UNION ALL
 SELECT n.id,
    n.tenant_id,
    n.livemode,
    'credit_note'::text AS kind,
    NULL::text AS metodo_pago,
    n.status,
    n.invoice_id,
    n.uuid_fiscal,
    n.serie,
    n.folio,
    n.total_minor,
    n.base_minor,
    n.iva_minor,
    'MXN'::text AS currency,
    i.receptor ->> 'rfc'::text AS receptor_rfc,
    i.receptor ->> 'nombre'::text AS receptor_nombre,
    i.payment_intent_id,
    pi.customer_id,
    "substring"(n.xml, ' Fecha="([^"]+)"'::text)::timestamp without time zone AS fecha,
    n.created_at,
    n.updated_at
   FROM credit_notes n
     JOIN invoices i ON i.id = n.invoice_id AND i.tenant_id = n.tenant_id
     LEFT JOIN payment_intents pi ON pi.id = i.payment_intent_id AND pi.tenant_id = i.tenant_id
  WHERE n.status <> ALL (ARRAY['pending'::text, 'error'::text]);

create or replace view fee_facts as
 SELECT d.tenant_id,
    d.livemode,
    d.id AS attempt_id,
    d.chosen AS connector_key,
    j.created_at AS occurred_at,
    d.currency,
    d.chosen_fee_minor AS expected_fee_minor,
    COALESCE(a.fee_minor, 0::bigint) AS charged_fee_minor
   FROM routing_decisions d
     JOIN attempts a ON a.id = d.id AND a.tenant_id = d.tenant_id
     JOIN journal_entries j ON j.ref_type = 'attempt'::text AND j.ref_id = d.id AND j.kind = 'charge.captured'::text AND j.tenant_id = d.tenant_id;

create or replace view savings_facts as
 SELECT d.tenant_id,
    d.livemode,
    d.payment_intent_id,
    d.chosen AS connector_key,
    j.created_at AS occurred_at,
    d.currency,
        CASE
            WHEN d.reason = 'cheapest'::text AND d.default_fee_minor IS NOT NULL THEN GREATEST(d.default_fee_minor - COALESCE(a.fee_minor, d.chosen_fee_minor), 0::bigint)
            ELSE 0::bigint
        END AS routing_saved_minor,
        CASE
            WHEN d.reason = 'retry'::text THEN a.amount_minor
            ELSE 0::bigint
        END AS retry_recovered_minor,
        CASE
            WHEN d.reason = 'dunning'::text THEN a.amount_minor
            ELSE 0::bigint
        END AS dunning_recovered_minor
   FROM routing_decisions d
     JOIN attempts a ON a.id = d.id AND a.tenant_id = d.tenant_id
     JOIN journal_entries j ON j.ref_type = 'attempt'::text AND j.ref_id = d.id AND j.kind = 'charge.captured'::text AND j.tenant_id = d.tenant_id;
