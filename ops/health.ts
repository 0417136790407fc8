// The probes of the health routes (api/services.ts Health): the pools, Redis and the workers' heartbeats.
import type { RedisClient } from '../kernel/redis.js';
import type { Health } from '../api/services.js';
import type { Sql } from '../kernel/db.js';
import { liveWorkers } from './heartbeat.js';

export function createHealth(d: { sql: Sql; readSql: Sql; redis: RedisClient; redisPrefix: string }): Health {
  const { sql, readSql, redis } = d;
  return {
    database: () => sql`select 1`,
    redis: () => redis.ping(),
    async standbys() {
      const rows = await sql`
        -- replicas streaming from this primary, with their replay lag
        select application_name, state, coalesce(extract(epoch from replay_lag), 0)::float8 as lag from pg_stat_replication`;
      return rows.map((r) => ({ name: r.application_name as string, state: r.state as string, lag: Number(r.lag) }));
    },
    replicaLag:
      readSql === sql
        ? undefined
        : async () => {
            const [r] = await readSql`
              -- seconds since the replica last replayed a transaction (0 when not in recovery)
              select case when pg_is_in_recovery() then coalesce(extract(epoch from now() - pg_last_xact_replay_timestamp()), 0) else 0 end::float8 as lag`;
            return Number(r.lag);
          },
    workers: () => liveWorkers(redis, d.redisPrefix),
  };
}
