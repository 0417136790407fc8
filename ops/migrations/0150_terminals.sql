-- Terminals (issue 30; docs/terminals.md): the card-present readers and counter CoDi devices of a
-- tenant, one row per device and mode, on the entity actor (kernel/entity.ts; steps in
-- entity_history). A charge whose metadata.terminal_id names no active terminal of its tenant and
-- mode is refused at create and at confirm (decisions.md §7).
create table terminals (
  id            uuid primary key,
  tenant_id     uuid not null references tenants(id),
  livemode      boolean not null,
  status        text not null check (status in ('registered', 'active', 'inactive')),
  version       integer not null default 0,
  -- the manufacturer's serial number, unique within the tenant and mode (terminal.serial_conflict)
  serial        text not null,
  branch        text not null,
  register      text,
  label         text,
  activated_at  timestamptz,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now()
);
create unique index terminals_serial on terminals (tenant_id, livemode, serial);
create index terminals_tenant on terminals (tenant_id, livemode, created_at desc, id);

-- The cash cut by terminal reads the tenant's charges that name one (few of all intents).
create index payment_intents_terminal on payment_intents (tenant_id, livemode, (metadata->>'terminal_id'))
  where metadata ? 'terminal_id';

-- The operators' audit log (docs/operator.md): one row per action of an operator, of the admin key
-- or of a merchant's member on what operators oversee (terminals, decisions), written in the same
-- transaction as the change it records. Append-only: updates, deletes and truncation are refused
-- by the database itself.
create table audit_log (
  seq          bigserial primary key,
  id           uuid not null unique,
  at           timestamptz not null default now(),
  -- who: 'admin_key' (the shared X-Admin-Key), 'operator' (a named operator), 'member' (a
  -- merchant's portal member), 'system'
  actor_kind   text not null check (actor_kind in ('admin_key', 'operator', 'member', 'system')),
  actor_id     text not null,
  actor_name   text,
  action       text not null,
  tenant_id    uuid,
  livemode     boolean,
  target_kind  text,
  target_id    text,
  reason       text,
  before       jsonb,
  after        jsonb,
  request_id   text
);
create index audit_log_tenant on audit_log (tenant_id, seq);
create index audit_log_target on audit_log (target_id, seq);
create index audit_log_actor on audit_log (actor_kind, actor_id, seq);

create function audit_log_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'audit_log is append-only: % refused', tg_op using errcode = '42501';
end $$;
create trigger audit_log_no_update before update or delete on audit_log
  for each row execute function audit_log_append_only();
create trigger audit_log_no_truncate before truncate on audit_log
  for each statement execute function audit_log_append_only();
