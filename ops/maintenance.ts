// Housekeeping jobs of the service itself, as a capability (one run at a time across all workers):
// idempotency records past their retention are pruned every hour; every minute the revoked-keys set
// the rate limiter reads is healed from Postgres (a release's notice lost in a crash: api/auth.ts).
import type { Capability } from '../kernel/capability.js';
import type { Sql } from '../kernel/db.js';
import { pruneIdempotency } from '../kernel/idempotency.js';
import { defineJob, jobRequest } from '../kernel/jobs.js';
import type { Logger } from '../kernel/log.js';

export function maintenanceCapability(d: { sql: Sql; log: Logger; retentionHours: number; healRevokedKeys(): Promise<number> }): Capability {
  const prune = defineJob<{ retentionHours: number }>({
    queue: 'maintenance',
    name: 'prune-idempotency',
    shape: { retentionHours: 'number' },
    id: () => 'prune-idempotency',
    shardKey: () => 'prune-idempotency',
    run: async (data) => {
      const n = await pruneIdempotency(d.sql, data.retentionHours);
      d.log.info('pruned idempotency records', { count: n });
      return { pruned: n };
    },
  });
  const heal = defineJob<Record<string, never>>({
    queue: 'maintenance',
    name: 'heal-revoked-keys',
    shape: {},
    id: () => 'heal-revoked-keys',
    shardKey: () => 'heal-revoked-keys',
    run: async () => {
      const n = await d.healRevokedKeys();
      if (n) d.log.warn('released keys were still in the revoked set (a release\'s notice was lost): healed', { count: n });
      return { healed: n };
    },
  });
  return {
    name: 'maintenance',
    jobs: [prune, heal],
    schedules: [
      { name: 'prune-idempotency', everyMs: 3600_000, job: jobRequest(prune, { retentionHours: d.retentionHours }) },
      { name: 'heal-revoked-keys', everyMs: 60_000, job: jobRequest(heal, {}) },
    ],
  };
}
