// Housekeeping jobs of the service itself, as a capability: idempotency records past their
// retention are pruned every hour (one run at a time across all workers).
import type { Capability } from '../kernel/capability.js';
import type { Sql } from '../kernel/db.js';
import { pruneIdempotency } from '../kernel/idempotency.js';
import { defineJob, jobRequest } from '../kernel/jobs.js';
import type { Logger } from '../kernel/log.js';

export function maintenanceCapability(d: { sql: Sql; log: Logger; retentionHours: number }): Capability {
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
  return {
    name: 'maintenance',
    jobs: [prune],
    schedules: [{ name: 'prune-idempotency', everyMs: 3600_000, job: jobRequest(prune, { retentionHours: d.retentionHours }) }],
  };
}
