-- The generic entity actor (kernel/entity.ts): a history table for every entity kind that does not
-- keep its own, a version (fencing token) on refunds and saved payment methods, and the inbox of
-- provider evidence.

-- One row per step of an entity (payment intents keep payment_intent_history).
create table entity_history (
  id           bigserial primary key,
  entity_kind  text not null,
  entity_id    uuid not null,
  tenant_id    uuid not null references tenants(id),
  livemode     boolean not null,
  event        text not null,
  from_status  text,
  to_status    text not null,
  data         jsonb,
  created_at   timestamptz not null default now()
);
create index entity_history_entity on entity_history (entity_id, id);

-- Fencing tokens: every write of the entity actor is "where version = <seen>" and bumps it.
alter table refunds add column version integer not null default 0;
alter table payment_methods add column version integer not null default 0;

-- Provider evidence (a payment notice, an operator's simulation of one, a 3-D Secure result) is
-- written here before it is acknowledged, so that a lost job or a flushed Redis never loses a
-- payment: the reconciler replays what is not processed. `processed_at` is set in the same
-- transaction as the step the notice caused (or that found nothing to do).
create table inbox (
  id            uuid primary key,
  tenant_id     uuid not null references tenants(id),
  livemode      boolean not null,
  -- what the notice is about, e.g. 'attempt.notice'; the capability that owns the kind replays it
  kind          text not null,
  -- who sent it: 'simulate-inbound', '3ds', 'webhook:<provider>'
  source        text not null,
  -- the entity it concerns (e.g. the attempt)
  subject_id    uuid not null,
  -- the provider's own id of the notice, when it has one (a repeated delivery is one row)
  dedupe_key    text unique,
  payload       jsonb,
  received_at   timestamptz not null default now(),
  processed_at  timestamptz
);
create index inbox_pending on inbox (received_at) where processed_at is null;
create index inbox_subject on inbox (subject_id);

-- Live refunds (requested or succeeded) never sum past what the attempt captured, whatever
-- writes them: the attempt row is locked so that concurrent refunds of one attempt are checked
-- one after the other (each statement of this function sees what committed before it).
create function refunds_within_captured() returns trigger language plpgsql as $$
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
  select amount_minor into captured from attempts where id = new.attempt_id for update;
  select coalesce(sum(amount_minor), 0) into live from refunds
   where attempt_id = new.attempt_id and status in ('requested', 'succeeded') and id <> new.id;
  if live + new.amount_minor > captured then
    raise exception 'refunds of attempt % would exceed the captured amount: % already live, % requested, % captured',
      new.attempt_id, live, new.amount_minor, captured using errcode = 'OQ422';
  end if;
  return new;
end $$;

create trigger refunds_within_captured before insert or update on refunds
  for each row execute function refunds_within_captured();
