// Durable timers (architecture: Time). A timer is a row (table timers: one per kind and entity, due
// on the tenant's clock) AND a delayed job; whichever comes first fires it, and a lost Redis or an
// advanced test clock only means the sweeper fires it from Postgres. Each capability declares its
// timer kinds here with the handler that fires them; the job that fires a timer is declared once,
// per kind, so the actor that sets a timer, the sweeper and a clock advance enqueue the same job.
import { tenantNowSql } from './clock.js';
import type { Sql } from './db.js';
import { defineJob, type JobDef, type JobRegistry, type JobRequest } from './jobs.js';
import type { Logger } from './log.js';

export interface DueTimer {
  kind: string;
  entityId: string;
  tenantId: string;
  livemode: boolean;
  /** ISO timestamp on the tenant's clock. */
  dueAt: string;
}

export interface TimerDef {
  readonly kind: string;
  /** The queue kind its job runs on (usually the entity's). */
  readonly queue: string;
  /** Fires the timer (through the entity's actor). It may find the entity moved on: then it changes nothing. */
  fire(t: DueTimer): Promise<unknown>;
  transient?(e: unknown): boolean;
}

export class Timers {
  private defs = new Map<string, { def: TimerDef; job: JobDef<DueTimer> }>();

  constructor(
    private sql: Sql,
    private jobs: JobRegistry,
    private log: Logger,
  ) {}

  define(...defs: TimerDef[]): void {
    for (const def of defs) {
      if (this.defs.has(def.kind)) throw new Error(`timer kind ${def.kind} is declared twice`);
      const sql = this.sql;
      const job = defineJob<DueTimer>({
        queue: def.queue,
        name: `timer:${def.kind}`,
        shape: { kind: 'string', entityId: 'uuid', tenantId: 'uuid', livemode: 'boolean', dueAt: 'string' },
        id: (t) => `timer-${t.kind}-${t.entityId}-${Date.parse(t.dueAt)}`,
        shardKey: (t) => t.entityId,
        transient: def.transient,
        run: async (t) => {
          const [row] = await sql`
            -- the timer is still set for this due time, and due by its tenant's clock
            select fired_at, due_at, due_at <= ${tenantNowSql(sql, 't.tenant_id', 't.livemode')} as due
              from timers t where kind = ${t.kind} and entity_id = ${t.entityId}`;
          if (!row || row.fired_at) return { skipped: 'fired or cancelled' };
          if ((row.due_at as Date).getTime() !== Date.parse(t.dueAt)) return { skipped: 'moved' };
          if (!row.due) return { skipped: 'not due yet by the tenant clock' }; // the sweeper fires it when due
          const out = await def.fire(t);
          // The handler's own transaction normally marks it; a handler that found nothing to do leaves it to us.
          await sql`update timers set fired_at = now() where kind = ${t.kind} and entity_id = ${t.entityId} and due_at = ${t.dueAt} and fired_at is null`;
          return out ?? { fired: true };
        },
      });
      this.jobs.define(job);
      this.defs.set(def.kind, { def, job });
    }
  }

  /** The job that fires a timer (after the commit that set it: delayed until due by the tenant's clock). */
  request(kind: string, t: Omit<DueTimer, 'kind' | 'dueAt'> & { dueAt: Date | string }, now?: Date, idSuffix?: string): JobRequest<DueTimer> {
    const d = this.defs.get(kind);
    if (!d) throw new Error(`no timer kind ${kind} is declared`);
    const dueAt = new Date(t.dueAt).toISOString();
    const delay = now ? Math.max(0, Date.parse(dueAt) - now.getTime()) : 0;
    return { def: d.job, data: { kind, entityId: t.entityId, tenantId: t.tenantId, livemode: t.livemode, dueAt }, delay, idSuffix };
  }

  /**
   * Enqueues every timer that is due by its tenant's clock (optionally of one tenant). The job id
   * carries a suffix: the timer's own delayed job may still wait in Redis with a real-time delay.
   */
  async sweep(opts: { tenantId?: string; suffix: string; limit?: number }): Promise<number> {
    const sql = this.sql;
    const rows = await sql`
      -- timers due by their tenant's clock (test mode: real time + the tenant's offset)
      select t.kind, t.entity_id, t.tenant_id, t.livemode, t.due_at from timers t
       where t.fired_at is null and t.due_at <= ${tenantNowSql(sql, 't.tenant_id', 't.livemode')}
             ${opts.tenantId ? sql`and t.tenant_id = ${opts.tenantId}` : sql``}
       order by t.due_at limit ${opts.limit ?? 500}`;
    let n = 0;
    for (const r of rows) {
      if (!this.defs.has(r.kind as string)) {
        this.log.error('a due timer has no declared kind; it stays unfired', { kind: r.kind, entityId: r.entity_id });
        continue;
      }
      await this.jobs.enqueue(this.request(r.kind as string, { entityId: r.entity_id as string, tenantId: r.tenant_id as string, livemode: r.livemode as boolean, dueAt: r.due_at as Date }, undefined, opts.suffix));
      n++;
    }
    return n;
  }
}
