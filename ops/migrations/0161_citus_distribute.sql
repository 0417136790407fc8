-- Distributes the schema where the database is a Citus coordinator (issue 31; docs/scaling.md).
-- Without the citus extension (this repository's Postgres: Citus is in neither Debian 12's packages
-- nor npm) the function returns 0 and changes nothing. ops/migrate.ts calls it again after every
-- run of migrations, so a table that a later migration adds is distributed on the next start.
--
-- - The declared reference tables (orq_reference_tables(), migration 0160) are copied to every node
--   with create_reference_table.
-- - Every other table is hash-distributed by tenant_id and colocated with the others: one tenant's
--   rows of every table are on one shard, so the payment path's transactions, joins and foreign keys
--   stay on one node.
-- - A table is distributed only after the tables its foreign keys name (Citus refuses a foreign key
--   to a table that is still local), reference tables first.
-- - Triggers: the ledger's and the refunds' triggers read rows of the same tenant (same shard);
--   Citus runs a distributed table's triggers only with citus.enable_unsafe_triggers on, set here
--   for this transaction and required in the cluster's configuration (docs/scaling.md).
-- orq_citus_distribution_plan() is the order and the method, read from the catalog (it runs on plain
-- Postgres: test/citus-schema.test.ts checks it); orq_citus_distribute() carries it out. Never run
-- against a real Citus cluster here (none can be installed on this machine).
create or replace function orq_citus_distribution_plan(already text[] default '{}')
returns table (step integer, table_name text, method text) language plpgsql stable as $$
declare
  refs text[] := orq_reference_tables();
  done text[] := coalesce(already, '{}');
  todo text[];
  t text;
  progressed boolean;
  n integer := 0;
begin
  select coalesce(array_agg(c.relname::text order by c.relname), '{}') into todo
    from pg_class c join pg_namespace ns on ns.oid = c.relnamespace
   where ns.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition
     and not (c.relname::text = any(done));
  while cardinality(todo) > 0 loop
    progressed := false;
    foreach t in array todo loop
      -- ready when every table its foreign keys name is done (or is itself)
      if not exists (
        select 1 from pg_constraint f join pg_class r on r.oid = f.confrelid
         where f.contype = 'f' and f.conrelid = t::regclass and r.relname::text <> t and not (r.relname::text = any(done))
      ) then
        n := n + 1;
        step := n;
        table_name := t;
        method := case when t = any(refs) then 'reference' else 'distributed' end;
        return next;
        done := done || t;
        todo := array_remove(todo, t);
        progressed := true;
      end if;
    end loop;
    if not progressed then
      raise exception 'orq_citus_distribution_plan: foreign keys form a cycle among %', todo;
    end if;
  end loop;
end
$$;

create or replace function orq_citus_distribute() returns integer language plpgsql as $$
declare
  done text[];
  p record;
  anchor text;
  n integer := 0;
begin
  if not exists (select 1 from pg_extension where extname = 'citus') then
    return 0;
  end if;
  execute 'set local citus.multi_shard_modify_mode to sequential';
  execute 'set local citus.enable_unsafe_triggers to on';
  execute 'select coalesce(array_agg(logicalrelid::regclass::text), ''{}'') from pg_dist_partition' into done;
  for p in select * from orq_citus_distribution_plan(done) order by step loop
    if p.method = 'reference' then
      perform create_reference_table(p.table_name::regclass);
    else
      -- colocated with the tables distributed before it (the first one starts the group)
      execute 'select logicalrelid::regclass::text from pg_dist_partition where partmethod = ''h'' order by logicalrelid::regclass::text limit 1' into anchor;
      perform create_distributed_table(p.table_name::regclass, 'tenant_id', colocate_with => coalesce(anchor, 'none'));
    end if;
    n := n + 1;
  end loop;
  return n;
end
$$;

select orq_citus_distribute();
