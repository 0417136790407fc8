// Housekeeping jobs of the service itself, as a capability (one run at a time across all workers):
// idempotency records past their retention are pruned every hour; every minute the revoked-keys set
// the rate limiter reads is healed from Postgres (a release's notice lost in a crash: api/auth.ts);
// every second the reports' summaries of new ledger entries are written (kernel/ledger.ts).
import type { Capability } from '../kernel/capability.js';
import type { Sql } from '../kernel/db.js';
import { pruneIdempotency } from '../kernel/idempotency.js';
import { summarizeAll, vacuumPending } from '../kernel/ledger.js';
import { defineJob, jobRequest } from '../kernel/jobs.js';
import type { Logger } from '../kernel/log.js';

/** How often the worker writes the reports' pending summaries (kernel/ledger.ts summarizeAll). */
export const LEDGER_SUMMARY_EVERY_MS = 1000;
/** And how often a worker's run also vacuums the pending list (kernel/ledger.ts vacuumPending). */
export const LEDGER_PENDING_VACUUM_EVERY_MS = 60_000;

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
  // The reports' summaries of the entries posted since the last run (migration 0180); readers are
  // exact meanwhile (the *_now views), so this only keeps the pending list short.
  let lastVacuum = 0;
  const summarize = defineJob<Record<string, never>>({
    queue: 'maintenance',
    name: 'summarize-ledger',
    shape: {},
    id: () => 'summarize-ledger',
    shardKey: () => 'summarize-ledger',
    run: async () => {
      const summarized = await summarizeAll(d.sql);
      if (Date.now() - lastVacuum >= LEDGER_PENDING_VACUUM_EVERY_MS) {
        lastVacuum = Date.now();
        await vacuumPending(d.sql);
      }
      return { summarized };
    },
  });
  return {
    name: 'maintenance',
    jobs: [prune, heal, summarize],
    schedules: [
      { name: 'prune-idempotency', everyMs: 3600_000, job: jobRequest(prune, { retentionHours: d.retentionHours }) },
      { name: 'heal-revoked-keys', everyMs: 60_000, job: jobRequest(heal, {}) },
      { name: 'summarize-ledger', everyMs: LEDGER_SUMMARY_EVERY_MS, job: jobRequest(summarize, {}) },
    ],
  };
}
