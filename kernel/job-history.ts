// Job history for operators (docs/operator.md): every run of a declared job (each BullMQ attempt)
// is appended to a capped, expiring Redis list per entity the job names (each uuid in its data:
// the intent and its attempt, the refund, the payout, the invoice), with its outcome, error and
// trace id. BullMQ itself keeps no finished job (removeOnComplete/removeOnFail: Postgres is the
// truth and the reconcilers rebuild lost work), so this is the only record of attempts and
// errors. Appending is fire-and-forget after the run: it never delays or fails a job.
import { isCluster, type RedisClient } from './redis.js';

export interface JobRun {
  job_id: string;
  queue: string;
  name: string;
  /** 1 for the first run of the job. */
  attempt: number;
  /** How many runs BullMQ allows. */
  max_attempts: number;
  started_at: string;
  duration_ms: number;
  /** completed; retrying (failed, BullMQ runs it again); failed (no run left, or unrecoverable). */
  outcome: 'completed' | 'retrying' | 'failed';
  error?: string;
  trace_id?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Fields that name no inspectable object: the tenant (every job of a tenant names it; nothing reads a
 * tenant's list, the inspection is per object) and the trace.
 */
const NOT_AN_OBJECT = new Set(['_trace', 'tenantId', 'tenant_id']);

/** The entity ids a job's data names (each uuid-valued field but the tenant's), at most 4. */
export function entitiesOf(data: unknown): string[] {
  if (!data || typeof data !== 'object') return [];
  const out = new Set<string>();
  for (const [k, v] of Object.entries(data as Record<string, unknown>)) {
    if (!NOT_AN_OBJECT.has(k) && typeof v === 'string' && UUID.test(v)) out.add(v.toLowerCase());
    if (out.size >= 4) break;
  }
  return [...out];
}

/** Appends one entry to each list named (KEYS), keeps the newest ARGV[2] + 1 and sets their expiry. */
const APPEND = `
for i = 1, #KEYS do
  redis.call('LPUSH', KEYS[i], ARGV[1])
  redis.call('LTRIM', KEYS[i], 0, tonumber(ARGV[2]))
  redis.call('EXPIRE', KEYS[i], tonumber(ARGV[3]))
end
return #KEYS`;

type WithAppend = RedisClient & { orqJobHistoryAppend(numKeys: number, ...args: Array<string | number>): Promise<number> };

export class JobHistory {
  constructor(
    private redis: RedisClient,
    private prefix: string,
    /** Entries kept per entity, and for how long after the last one (0 disables the history). */
    private opts: { max: number; ttlSeconds: number },
  ) {
    if (!isCluster(redis) && !(redis as unknown as Partial<WithAppend>).orqJobHistoryAppend) redis.defineCommand('orqJobHistoryAppend', { lua: APPEND });
  }

  private key(entityId: string) {
    return `${this.prefix}:jobhist:${entityId}`;
  }

  get enabled() {
    return this.opts.ttlSeconds > 0 && this.opts.max > 0;
  }

  /** Appends a run under every entity its data names. Never throws; never awaited by the job. */
  record(data: unknown, run: JobRun): void {
    if (!this.enabled) return;
    const ids = entitiesOf(data);
    if (!ids.length) return;
    const entry = JSON.stringify(run);
    // On a Redis Cluster one MULTI per entity (each touches one key, so it stays in one hash slot);
    // on a single Redis one script call for all of them: one command, one write and one answer per
    // run (it was a round trip per entity, three for a capture, then a MULTI of eight commands:
    // bench/RESULTS.md, issue 26 sixth and tenth sessions).
    if (isCluster(this.redis)) {
      for (const id of ids) this.append(this.redis.multi(), id, entry).exec().catch(() => {});
    } else {
      (this.redis as unknown as WithAppend).orqJobHistoryAppend(ids.length, ...ids.map((id) => this.key(id)), entry, this.opts.max - 1, this.opts.ttlSeconds).catch(() => {});
    }
  }

  private append(m: ReturnType<RedisClient['multi']>, id: string, entry: string) {
    const key = this.key(id);
    return m.lpush(key, entry).ltrim(key, 0, this.opts.max - 1).expire(key, this.opts.ttlSeconds);
  }

  /** The runs recorded for an entity, oldest first. */
  async of(entityId: string): Promise<JobRun[]> {
    if (!UUID.test(entityId)) return [];
    const raw = await this.redis.lrange(this.key(entityId.toLowerCase()), 0, -1);
    return raw.reverse().map((s) => JSON.parse(s) as JobRun);
  }
}
