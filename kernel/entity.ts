// The entity actor: the one way a stateful resource changes.
//
//   lock → hydrate → pure plan (machine transition → rows, events, ledger lines, timers, jobs,
//   the answer) → one fenced Postgres transaction → jobs after commit
//
// - The lock (Redis, one writer per entity) keeps writers from stepping on each other; the row's
//   `version` is the fencing token for a writer whose lock expired: the update is
//   `where version = <seen>` and fails *inside* Postgres when no row matched (orq_expect_rows,
//   migration 0008), so the whole transaction aborts and the writer retries from fresh state.
// - The plan is data, computed by a pure function of the hydrated state, the command and the step's
//   environment (time, new ids): it is tested without a database.
// - The transaction holds everything the step means: the entity row (version + 1), the rows it
//   writes, its history row, its outbox events, its ledger entries, its timers, the idempotency
//   record of the request that caused it, and what subscribers (reactions) add for its events.
//   Its statements are pipelined with BEGIN and COMMIT in one flight (kernel/db.ts atomically).
// - Jobs run after the commit; if Redis is unreachable the commit stands and the reconcilers
//   enqueue the same jobs (same ids) from Postgres.
// docs/architecture.md has the recipe for a new resource.
import { randomUUID } from 'node:crypto';
import type postgres from 'postgres';
import { tenantOffsetMsSql } from './clock.js';
import { atomically, type Sql } from './db.js';
import { ApiError } from './errors.js';
import type { ErrorCode } from './error-catalog.js';
import { idempotencyCte, saveIdempotent, type IdempotencyHandle } from './idempotency.js';
import { postEntry, type EntryInput } from './ledger.js';
import type { EntityLocks } from './lock.js';
import type { Logger } from './log.js';
import { appendEvent } from './outbox.js';
import type { JobRegistry, JobRequest } from './jobs.js';
import type { Timers } from './timers.js';
import { activeTraceId, ATTR, inSpan, SpanKind } from './tracing.js';

/**
 * The columns every entity row has: each kind's row type extends this (`interface RefundRow extends
 * EntityRow { … }`, with its status vocabulary as `S` when it has one) instead of redeclaring them.
 */
export interface EntityRow<S extends string = string> {
  id: string;
  tenant_id: string;
  livemode: boolean;
  status: S;
  version: number;
}

/** What a hydrate returns: the row, the test-clock offset of its tenant, and whatever else the plan needs. */
export interface Hydrated<R extends EntityRow = EntityRow> {
  row: R;
  /** The tenant's test-clock offset in ms (0 in live mode): the step's `now`. */
  clockOffsetMs: number;
}

export interface Scope {
  tenantId: string;
  livemode: boolean;
}

/** The step's environment: the only sources of time and randomness a plan may use. */
export interface StepEnv {
  /** Real time of the step: created_at / updated_at of the rows it writes. */
  at: Date;
  /** The tenant's clock (test clock in test mode): every time-based rule reads this. */
  now: Date;
  newId(): string;
}

type Row = Record<string, unknown>;

/** A row the step writes besides the entity's own. */
export type Write =
  | { op: 'insert'; table: string; row: Row; onConflictDoNothing?: boolean }
  /** An update by id (and the step's tenant); `expect: 1` makes it fail inside Postgres (and abort the step) when no row matched. */
  | { op: 'update'; table: string; id: string; set: Row; where?: Row; expect?: 1 };

/** A durable timer (table timers: one per kind and entity): set (or moved), or cancelled. */
export type TimerWrite = { kind: string; entityId: string; dueAt: Date } | { kind: string; entityId: string; cancel: true };

export interface PlannedEvent {
  type: string;
  data: unknown;
  /** The entity the event is about (the step's entity by default). */
  entityId?: string;
  /** A deterministic event id; random otherwise. */
  eventId?: string;
}

/** What the actor needs to know of an entity kind to commit its steps. */
export type EntityKindDef = Pick<EntityDef<Hydrated, unknown, unknown>, 'kind' | 'table' | 'history' | 'lostRace'>;

/** An entity's event as reactions see it (kernel/reactions.ts subscribes to them). */
export interface DomainEvent {
  type: string;
  tenantId: string;
  livemode: boolean;
  /** The kind of the entity whose step emitted it (payment_intent, refund, …). */
  entityKind: string;
  entityId: string;
  data: unknown;
}

/** What the actor needs of the reactions registry (kernel/reactions.ts Reactions): this file does not import it (no cycle). */
export interface ReactionRunner {
  run(events: readonly DomainEvent[], ctx: { tx: Sql; sql: Sql; at: Date; now: Date; after(job: JobRequest): void }): Promise<EntityPlan[]>;
}

/**
 * Another entity's step, committed in the transaction of the step that carries it: a decision
 * that creates or changes a second entity (an approval creates its refund), or what a reaction
 * returns for the entity it changes (a paid intent pays its receivable). It is fenced, recorded
 * and emits like any step; no side door writes an entity's row by hand.
 */
export interface EntityPlan {
  def: EntityKindDef;
  /** The row as read (its `version` fences `set`); for a creation, its tenant and mode (`create` holds the rest). */
  row: EntityRow;
  plan: Omit<Plan, 'result' | 'response'>;
}

/** What one step decides, as data. */
export interface Plan<Result = unknown> {
  /** Columns of the entity's row that change (status, …): written fenced, with version + 1. */
  set?: Row;
  /** The entity's own row when the step creates it (no lock, no fence: the id is new). */
  create?: Row;
  writes?: Write[];
  /** The history row of the step (from/to status come from the row and `set`). */
  history?: { event: string; data?: unknown };
  /** Outbox events (webhooks and /v1/events), committed with the step. */
  events?: PlannedEvent[];
  /** Internal events: only reactions see them (not sent as webhooks). */
  signals?: Array<{ type: string; data: unknown; entityId?: string }>;
  ledger?: EntryInput[];
  timers?: TimerWrite[];
  /** Jobs to enqueue once the transaction committed. */
  jobs?: JobRequest[];
  /** The answer stored with the request's Idempotency-Key, in the same transaction. */
  response?: { status: number; body: unknown };
  /** Steps of other entities committed in this transaction (each fenced and recorded as its own). */
  also?: EntityPlan[];
  /** What the command returns to its caller. */
  result: Result;
}

/** The declaration of an entity kind. */
export interface EntityDef<H extends Hydrated, C, P = void> {
  /** Lock prefix and history kind, e.g. `payment_intent`. */
  readonly kind: string;
  readonly table: string;
  /** History rows: `entity_history` (generic) unless the kind keeps its own table. */
  readonly history?: { table: string; key: string };
  readonly notFound: ErrorCode;
  /** Answered to a caller when another writer holds the entity (409). */
  readonly busy: ErrorCode;
  /** Reads the entity and what its plan needs, scoped by tenant and mode when a scope is given. */
  hydrate(sql: Sql, id: string, scope: Scope | undefined, cmd?: C): Promise<H | undefined>;
  /** Reads or asks outside the transaction what the plan needs besides the hydrated state (optional). */
  prepare?(h: H, cmd: C): Promise<P>;
  /** The pure step. Throws ApiError to refuse the command (nothing is written). */
  plan(h: H, cmd: C, env: StepEnv, prepared: P): Plan;
  /** Commit errors that mean another writer won a race the fence does not see (a unique index). */
  lostRace?(e: unknown): boolean;
}

export interface RunOptions {
  /** How long to wait for the lock (a caller's request: short; a worker: longer). */
  waitMs: number;
  idem?: IdempotencyHandle;
  /** State already read under the lock the caller holds (see withLock). */
  known?: Hydrated;
}

export interface EntityActorDeps {
  sql: Sql;
  locks: EntityLocks;
  jobs: JobRegistry;
  reactions: ReactionRunner;
  timers: Timers;
  log: Logger;
  lockMs: number;
  /** Called after a commit that wrote outbox events, once per tenant whose events it wrote (wakes the webhook relay for that tenant). */
  onEvents?: (tenantId?: string) => void;
}

/** A writer whose view was stale: it retries from fresh state (`cause`: what Postgres said). */
class Fenced extends Error {
  constructor(readonly original: unknown) {
    super('fenced');
  }
}

/** A worker found the entity locked: its job is retried later. */
export class LockBusy extends Error {
  override name = 'LockBusy';
}

const isFence = (e: unknown) => (e as { code?: string })?.code === 'OQ409';
/** A create's guard (EntityActor.create) found no row: `what` is the label it gave orq_expect_rows. */
export const isGuardFailure = (e: unknown, what: string) => isFence(e) && String((e as { message?: string }).message).includes(`fence: ${what} changed`);

export class EntityActor {
  constructor(private d: EntityActorDeps) {}

  /** The pool steps commit with (hydrates read from it). */
  get sql(): Sql {
    return this.d.sql;
  }

  /** Runs a command: lock, then the step (retrying from fresh state when fenced). */
  async run<H extends Hydrated, C, P, R = unknown>(def: EntityDef<H, C, P>, scope: Scope | undefined, id: string, cmd: C, opts: RunOptions & { worker?: boolean }): Promise<R> {
    return this.withLock(def, id, opts.waitMs, () => this.runLocked<H, C, P, R>(def, scope, id, cmd, opts), opts.worker);
  }

  /** Runs fn holding the entity's lock (a worker: provider call and step under one lock). */
  async withLock<T>(def: Pick<EntityDef<Hydrated, unknown, unknown>, 'kind' | 'busy'>, id: string, waitMs: number, fn: () => Promise<T>, worker = true): Promise<T> {
    const key = `${def.kind}:${id}`;
    const token = await this.d.locks.acquire(key, this.d.lockMs, waitMs);
    if (!token) {
      if (worker) throw new LockBusy(`${def.kind} ${id} is locked`);
      throw new ApiError(def.busy, `Another request is changing this ${def.kind.replace(/_/g, ' ')} right now; read it again and retry.`);
    }
    // Kept alive while fn runs (a PAC or a rail slower than the TTL must not let a second holder in);
    // a dead holder's lock still expires after lockMs.
    this.d.locks.keepAlive(key, token, this.d.lockMs);
    try {
      return await fn();
    } finally {
      this.d.locks.forget(key, token);
      await this.d.locks.release(key, token).catch(() => {});
    }
  }

  /** The step, for a caller that holds the entity's lock. */
  async runLocked<H extends Hydrated, C, P, R = unknown>(def: EntityDef<H, C, P>, scope: Scope | undefined, id: string, cmd: C, opts: RunOptions): Promise<R> {
    for (let round = 0; round < 3; round++) {
      const h = round === 0 && opts.known ? (opts.known as H) : await def.hydrate(this.d.sql, id, scope, cmd);
      if (!h) throw new ApiError(def.notFound);
      const prepared = def.prepare ? await def.prepare(h, cmd) : (undefined as P);
      const env = stepEnv(h);
      const plan = def.plan(h, cmd, env, prepared);
      try {
        return (await inSpan(
          `${def.kind}.transition`,
          { [ATTR.tenantId]: h.row.tenant_id, [ATTR.livemode]: h.row.livemode, [ATTR.event]: plan.history?.event ?? 'none', [ATTR.fromStatus]: h.row.status },
          async (span) => {
            await this.commit(def, h.row, plan, env, opts.idem);
            span.setAttribute(ATTR.toStatus, (plan.set?.status as string | undefined) ?? h.row.status);
            return plan.result as R;
          },
        ));
      } catch (e) {
        if (!(e instanceof Fenced)) throw e;
      }
    }
    throw new ApiError(def.busy, `The ${def.kind.replace(/_/g, ' ')} kept changing while this request ran; read it again and retry.`);
  }

  /**
   * Creates an entity: its row and everything the plan holds, in one transaction (no lock: the id is new).
   * `guard`: a query of the stored state the creation was decided on, run in the same transaction;
   * it must answer its row count through `orq_expect_rows` (which aborts everything when 0: an
   * OQ409 error the caller catches, isGuardFailure), so that a check and the write need one round trip.
   */
  async create<R = unknown>(def: EntityKindDef, scope: Scope, plan: Plan<R>, opts: { idem?: IdempotencyHandle; now?: Date; at?: Date; guard?: postgres.PendingQuery<postgres.Row[]> } = {}): Promise<R> {
    if (!plan.create) throw new Error(`create of a ${def.kind} without a row`);
    const row = { tenant_id: scope.tenantId, livemode: scope.livemode, version: 0, ...plan.create } as EntityRow;
    const at = opts.at ?? new Date();
    try {
      await this.commit(def, row, plan, { at, now: opts.now ?? at, newId: randomUUID }, opts.idem, opts.guard);
    } catch (e) {
      // A creation has no fresher state to retry from: the caller sees what Postgres said.
      throw e instanceof Fenced ? e.original : e;
    }
    return plan.result;
  }

  /**
   * The one transaction of a step. Exposed for a command that must write without a state change
   * of its own entity (e.g. a no-op that still records its idempotency answer).
   */
  private async commit(def: EntityKindDef, row: EntityRow, plan: Plan, env: StepEnv, idem?: IdempotencyHandle, guard?: postgres.PendingQuery<postgres.Row[]>): Promise<void> {
    const sql = this.d.sql;
    const creating = !!plan.create;
    const hasWork =
      creating || plan.set || plan.writes?.length || plan.events?.length || plan.signals?.length || plan.ledger?.length || plan.timers?.length || plan.also?.length || (idem && plan.response);
    const after: JobRequest[] = [...(plan.jobs ?? [])];
    if (!hasWork) {
      await this.d.jobs.enqueueAfterCommit(after);
      return;
    }
    if (creating && !plan.set && !plan.writes?.length && !plan.events?.length && !plan.signals?.length && !plan.ledger?.length && !plan.timers?.length && !plan.also?.length) {
      // A creation that writes only its row, its history and the idempotency record is one statement
      // (data-modifying CTEs: one implicit transaction, one round trip, one parse), the commonest
      // write of the API (bench/RESULTS.md: creates).
      const hist = plan.history ? sql`, history as (insert into ${sql(def.history?.table ?? 'entity_history')} ${sql(historyRow(sql, def, row, plan))})` : sql``;
      await inSpan('postgres statement', { [ATTR.dbSystem]: 'postgresql', [ATTR.dbOperation]: `${def.kind}.create` }, () => sql`
        with entity as (insert into ${sql(def.table)} ${sql(values(sql, { ...plan.create, tenant_id: row.tenant_id, livemode: row.livemode, version: 0 }))})
        ${hist} ${idem && plan.response ? idempotencyCte(sql, idem, plan.response.status, plan.response.body) : sql``}
        ${guard ? sql`, guard as (${guard}) select * from guard` : sql`select 1`}`, { kind: SpanKind.CLIENT });
      await this.d.jobs.enqueueAfterCommit(after);
      return;
    }
    const wroteEvents = new Set<string>(); // the tenants whose events the step wrote
    await inSpan('postgres transaction', { [ATTR.dbSystem]: 'postgresql', [ATTR.dbOperation]: `${def.kind}.step` }, () =>
      atomically(sql, async (tx) => {
        // Every statement below is issued on `tx` without awaiting it: `atomically` sends COMMIT
        // behind them in the same flight and reports the first that failed (a fence, the guard, a
        // ledger check), so no statement's result is waited for here. (Awaiting the ledger's and
        // the guard's results before returning cost every step with a ledger entry a second round
        // trip: COMMIT went out only after their answers.)
        if (guard) tx`${guard}`;
        // The steps of other entities the step carries (plan.also: first, so that the step's own
        // rows may refer to them), the step, then the steps its events' reactions return: each
        // with its own fence, history, timers, events and ledger, in this one transaction.
        // Reactions see the events of every step, to a bounded depth.
        const carried = (st: EntityPlan): EntityPlan[] => [...(st.plan.also ?? []).flatMap(carried), st];
        let steps: EntityPlan[] = carried({ def, row, plan });
        for (let depth = 0; steps.length; depth++) {
          if (depth > 4) throw new Error(`reactions of ${def.kind} ${row.id} kept returning plans`);
          const domain: DomainEvent[] = [];
          for (const st of steps) {
            this.issue(tx, st, env, after, domain);
            if (st.plan !== plan) after.push(...(st.plan.jobs ?? []));
            if (st.plan.events?.length) wroteEvents.add(st.row.tenant_id);
          }
          steps = domain.length ? (await this.d.reactions.run(domain, { tx, sql, at: env.at, now: env.now, after: (j) => after.push(j) })).flatMap(carried) : [];
        }
        if (idem && plan.response) void saveIdempotent(tx, idem, plan.response.status, plan.response.body);
      }).catch((e: unknown) => {
        throw isFence(e) || def.lostRace?.(e) ? new Fenced(e) : e;
      }),
      { kind: SpanKind.CLIENT },
    );
    for (const tenantId of wroteEvents) this.d.onEvents?.(tenantId);
    await this.d.jobs.enqueueAfterCommit(after);
  }

  /** The statements of one entity's step, issued (pipelined) on the transaction; its domain events are collected. */
  private issue(tx: Sql, st: EntityPlan, env: StepEnv, after: JobRequest[], domain: DomainEvent[]): void {
    const sql = this.d.sql;
    const { def, plan } = st;
    const row = plan.create ? ({ ...st.row, ...plan.create, version: 0 } as EntityRow) : st.row;
    const tenant = { tenantId: row.tenant_id, livemode: row.livemode };
    if (plan.create) tx`insert into ${sql(def.table)} ${sql(values(sql, { ...plan.create, tenant_id: row.tenant_id, livemode: row.livemode, version: 0 }))}`;
    for (const w of plan.writes ?? []) {
      if (w.op === 'insert') {
        if (w.onConflictDoNothing) tx`insert into ${sql(w.table)} ${sql(values(sql, w.row))} on conflict do nothing`;
        else tx`insert into ${sql(w.table)} ${sql(values(sql, w.row))}`;
      } else {
        const where = whereOf(sql, w.where);
        if (w.expect) {
          tx`
            with u as (update ${sql(w.table)} set ${sql(values(sql, w.set))} where id = ${w.id} and ${sql(tenantColumn(w.table))} = ${row.tenant_id} ${where} returning 1)
            select orq_expect_rows(count(*), ${`${w.table} ${w.id}`}) from u`;
        } else tx`update ${sql(w.table)} set ${sql(values(sql, w.set))} where id = ${w.id} and ${sql(tenantColumn(w.table))} = ${row.tenant_id} ${where}`;
      }
    }
    if (plan.set) {
      // The fenced write: only the holder of the version we read may commit. Every statement of the
      // step names its tenant: one shard under Citus (docs/scaling.md).
      tx`
        with u as (update ${sql(def.table)} set ${sql(values(sql, { ...plan.set, version: row.version + 1 }))} where id = ${row.id} and tenant_id = ${row.tenant_id} and version = ${row.version} returning 1)
        select orq_expect_rows(count(*), ${`${def.kind} ${row.id}`}) from u`;
    }
    if (plan.history) tx`insert into ${sql(def.history?.table ?? 'entity_history')} ${sql(historyRow(sql, def, row, plan))}`;
    for (const t of plan.timers ?? []) {
      if ('cancel' in t) tx`update timers set fired_at = ${env.at} where tenant_id = ${row.tenant_id} and kind = ${t.kind} and entity_id = ${t.entityId} and fired_at is null`;
      else {
        tx`
          insert into timers (id, tenant_id, livemode, kind, entity_id, due_at) values (${randomUUID()}, ${row.tenant_id}, ${row.livemode}, ${t.kind}, ${t.entityId}, ${t.dueAt})
          on conflict (kind, entity_id, tenant_id) do update set due_at = excluded.due_at, fired_at = null`;
        after.push(this.d.timers.request(t.kind, { ...tenant, entityId: t.entityId, dueAt: t.dueAt }, env.now));
      }
    }
    // The entry's statements are tracked by `atomically` like the others; its own promise is not awaited.
    for (const e of plan.ledger ?? []) postEntry(tx, e).catch(() => {});
    for (const e of plan.events ?? []) appendEvent(tx, { ...tenant, type: e.type, entityId: e.entityId ?? row.id, data: e.data, eventId: e.eventId });
    for (const e of [...(plan.events ?? []), ...(plan.signals ?? [])]) domain.push({ type: e.type, data: e.data, entityId: e.entityId ?? row.id, ...tenant, entityKind: def.kind });
  }
}

/** The history row of a step (from/to status come from the row and `set`). */
function historyRow(sql: Sql, def: EntityKindDef, row: EntityRow, plan: Pick<Plan, 'create' | 'set' | 'history'>): Row {
  const h = plan.history!;
  const table = def.history ?? { table: 'entity_history', key: 'entity_id' };
  return {
    [table.key]: row.id,
    tenant_id: row.tenant_id,
    livemode: row.livemode,
    event: h.event,
    from_status: plan.create ? null : row.status,
    to_status: (plan.set?.status as string | undefined) ?? row.status,
    data: h.data === undefined ? null : sql.json(h.data as never),
    // The trace of the step (null with tracing off): operators follow it from the object (docs/operator.md).
    trace_id: activeTraceId(),
    ...(def.history ? {} : { entity_kind: def.kind }),
  };
}

/**
 * The column that names a row's tenant, for a step's write (one shard under Citus): `tenant_id`, or
 * `id` in `tenants` itself (an operator's release of a suspended tenant is that tenant's step).
 */
const tenantColumn = (table: string) => (table === 'tenants' ? 'id' : 'tenant_id');

/** `and col = value …` for an update's extra conditions (built with the pool's sql: a fragment). */
function whereOf(sql: Sql, where: Row | undefined) {
  let frag = sql``;
  for (const [k, v] of Object.entries(where ?? {})) frag = sql`${frag} and ${sql(k)} = ${v as never}`;
  return frag;
}

/** A row's values as Postgres takes them: plain objects (metadata, next_action, …) as jsonb. */
function values(sql: Sql, row: Row): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(row)) {
    out[k] = v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date) && !Buffer.isBuffer(v) && Object.getPrototypeOf(v) === Object.prototype ? sql.json(v as never) : v;
  }
  return out;
}

/** The environment of a step on a hydrated entity: its tenant's clock. */
export function stepEnv(h: Hydrated): StepEnv {
  const at = new Date();
  return { at, now: h.row.livemode ? at : new Date(at.getTime() + h.clockOffsetMs), newId: randomUUID };
}

/** A hydrate result for a row read with `coalesce(tc.offset_ms, 0) as clock_offset_ms`. */
export const clockOf = (r: { livemode: boolean; clock_offset_ms?: unknown }) => (r.livemode ? 0 : Number(r.clock_offset_ms ?? 0));

/**
 * The usual hydrate: one row of `table` by id (scoped by tenant and mode when a scope is given) with
 * its tenant's test-clock offset, mapped by `toRow`. Kinds whose plan needs more write their own.
 */
export function hydrateRow<R extends EntityRow>(table: string, toRow: (r: Record<string, unknown>) => R) {
  return async (sql: Sql, id: string, scope: Scope | undefined): Promise<Hydrated<R> | undefined> => {
    const [r] = await sql`
      select x.*, ${tenantOffsetMsSql(sql, 'x.tenant_id', 'x.livemode')} as clock_offset_ms
        from ${sql(table)} x
       where x.id = ${id} ${scope ? sql`and x.tenant_id = ${scope.tenantId} and x.livemode = ${scope.livemode}` : sql``}`;
    if (!r) return undefined;
    const { clock_offset_ms, ...row } = r;
    return { row: toRow(row), clockOffsetMs: clockOf({ livemode: r.livemode as boolean, clock_offset_ms }) };
  };
}
