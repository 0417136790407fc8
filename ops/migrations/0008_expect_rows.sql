-- A check that fails inside Postgres, for transactions whose statements are pipelined with their
-- COMMIT (ops/db.ts atomically): a fenced update that matched no row must abort the transaction
-- itself, since the client cannot withdraw a COMMIT that is already on its way.
-- Usage: with u as (update … where id = $1 and version = $2 returning …)
--        select orq_expect_rows(count(*), 'payment intent …') as n, max(u.version) … from u
create function orq_expect_rows(n bigint, what text) returns bigint language plpgsql as $$
begin
  if n = 0 then
    raise exception 'version fence: % changed concurrently', what using errcode = 'OQ409';
  end if;
  return n;
end $$;
