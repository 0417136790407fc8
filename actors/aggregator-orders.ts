// What service payments (actors/billers.ts) and mobile recharges (actors/recharges.ts) share: an
// order to an aggregator that is paid or delivered at once, created by a request that carries its
// own Idempotency-Key, executed in that request, and settled on the outbound protocol
// (kernel/outbound.ts). Each kind declares its row, its aggregator calls and its ledger entry;
// everything below runs the same for both.
//
// - Idempotency: the kernel's idempotency record (kernel/idempotency.ts), written in the
//   transaction that creates the order; its answer names the order. Same key + same request
//   answers the order as it is now (a pending one resolved first, with the aggregator's evidence);
//   same key + another request is the kind's own 409 (spec: `service_payment.idempotency_conflict`,
//   `recharge.idempotency_conflict`); a replay while the order executes is the kind's busy 409
//   (`idempotency_key_in_progress`, `recharge.retry_conflict`).
// - Never sent twice: the order is created `pending` under its lock (taken before the row exists),
//   `send_started_at` is committed before the aggregator is called with a key derived from the id;
//   a timeout leaves it `pending`; a replay, the job or the reconciler asks first and sends only
//   when the aggregator never saw the order.
// - Steps see the tenant's clock (the test clock in test mode).
import { reconciler, staleRows, type Capability } from '../kernel/capability.js';
import { nowFor } from '../kernel/clock.js';
import type { Sql } from '../kernel/db.js';
import { LockBusy, type EntityActor, type EntityDef, type EntityRow, type Hydrated, type Plan, type StepEnv } from '../kernel/entity.js';
import type { ErrorCode } from '../kernel/error-catalog.js';
import { ApiError } from '../kernel/errors.js';
import { isIdempotencyConflict, requestHash, type IdempotencyHandle } from '../kernel/idempotency.js';
import { defineJob, jobRequest, type JobDef } from '../kernel/jobs.js';
import type { EntryInput } from '../kernel/ledger.js';
import type { Logger } from '../kernel/log.js';
import { machineStep } from '../kernel/machine-step.js';
import { isOutcomeUnknown, settleLocked, type OutboundCall } from '../kernel/outbound.js';
import type { aggregatorOrderMachine } from '../machines/aggregator-order.js';

/** The columns an aggregator order has besides the entity's own. */
export interface AggregatorOrderRow extends EntityRow {
  send_started_at: Date | null;
  provider_ref: string | null;
  failure_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The aggregator's word on an order. */
export type AggregatorAnswer<Done extends string> = { state: Done; providerRef: string } | { state: 'failed'; providerRef: string; reason: string };

/** A step of an order: the mark, or the aggregator's evidence (`kind`: the aggregator's name, e.g. `biller`). */
export type AggregatorOrderCommand<Source extends string, Done extends string> = { kind: 'send_started' } | { kind: Source; state: AggregatorAnswer<Done> };

/** What an order kind declares for the pure plan. */
export interface AggregatorOrderPlanKind<R extends AggregatorOrderRow, Source extends string, Done extends string> {
  machine: ReturnType<typeof aggregatorOrderMachine<Source, Done>>;
  source: Source;
  /** The ledger entry of a paid/delivered order. */
  entry(r: R): EntryInput;
  toRow(r: Record<string, unknown>): R;
}

/** An order's step: pure (the machine → row, history, ledger entry). */
export function planAggregatorOrder<R extends AggregatorOrderRow, Source extends string, Done extends string>(
  k: AggregatorOrderPlanKind<R, Source, Done>,
  h: Hydrated<R>,
  cmd: AggregatorOrderCommand<Source, Done>,
  env: StepEnv,
): Plan<R> {
  const r = h.row;
  if (r.status !== 'pending') return { result: r };
  const s = cmd.kind === 'send_started' ? undefined : (cmd as { state: AggregatorAnswer<Done> }).state;
  const event = s ? `${k.source}.${s.state}` : 'send_started';
  const step = machineStep(k.machine, r.status, undefined, { type: event } as never);
  const set: Record<string, unknown> = { updated_at: env.at };
  const plan: Plan<R> = { ledger: [], result: r };
  for (const e of step.effects) {
    if (e.type === 'markSending') set.send_started_at = env.at;
    else if (e.type === 'recordProvider' && s) set.provider_ref = s.providerRef;
    else if (e.type === 'recordFailure' && s?.state === 'failed') set.failure_reason = (s as { reason: string }).reason;
    else if (e.type === 'postDone') plan.ledger!.push(k.entry(r));
  }
  if (step.value !== r.status) set.status = step.value;
  plan.set = set;
  plan.history = { event, data: s ? { provider_ref: s.providerRef } : undefined };
  plan.result = k.toRow({ ...(r as unknown as Record<string, unknown>), ...set, version: r.version + 1 });
  return plan;
}

/** What an order kind declares for its runs. */
export interface AggregatorOrderKind<R extends AggregatorOrderRow, Source extends string, Done extends string> {
  def: EntityDef<Hydrated<R>, AggregatorOrderCommand<Source, Done>>;
  source: Source;
  /** The route that creates it: its idempotency record's method and path. */
  path: string;
  /** Same key, another request (spec: the kind's own code). */
  conflict: ErrorCode;
  queue: string;
  /** The resolve job's name (e.g. `recharge.resolve`) and its id prefix. */
  jobName: string;
  /** For spans: the aggregator's key, the ops (`<op>` and `<lookupOp>`), and the order's id attribute. */
  connector: string;
  op: string;
  lookupOp: string;
  idAttr: string;
  send(r: R): Promise<AggregatorAnswer<Done>>;
  /** What became of the order at the aggregator, or null when it never saw it. */
  status(r: R): Promise<AggregatorAnswer<Done> | null>;
  /** The log line of a timed-out order, and its fields (never a phone in clear). */
  timeoutMessage: string;
  logFields(r: R): Record<string, unknown>;
}

export class AggregatorOrders<R extends AggregatorOrderRow, Source extends string, Done extends string> {
  readonly resolveJob: JobDef<{ id: string }>;

  constructor(
    private d: { sql: Sql; actor: EntityActor; log: Logger },
    private k: AggregatorOrderKind<R, Source, Done>,
  ) {
    this.resolveJob = defineJob<{ id: string }>({
      queue: k.queue,
      name: k.jobName,
      shape: { id: 'uuid' },
      id: (x) => `${k.def.kind.replace(/_/g, '-')}-${x.id}`,
      shardKey: (x) => x.id,
      transient: (e) => isOutcomeUnknown(e) || e instanceof LockBusy,
      run: async (x) => {
        const r = await this.d.actor.withLock(this.k.def, x.id, 2000, () => this.resolveLocked(x.id), true);
        return { status: r.status };
      },
    });
  }

  /** The idempotency handle of a create request (the request hash: the kind's fields, canonical). */
  handle(p: { tenantId: string; livemode: boolean }, key: string, request: unknown): IdempotencyHandle {
    return { tenantId: p.tenantId, livemode: p.livemode, key, requestHash: requestHash('POST', this.k.path, request), method: 'POST', path: this.k.path };
  }

  /** The order an earlier request with this key created: the kind's conflict, or the order as it is now (a pending one resolved first). */
  async byKey(idem: IdempotencyHandle): Promise<R | undefined> {
    const [rec] = await this.d.sql`
      select request_hash, response_body from idempotency_keys where tenant_id = ${idem.tenantId} and livemode = ${idem.livemode} and key = ${idem.key}`;
    if (!rec) return undefined;
    if (rec.request_hash !== idem.requestHash) throw new ApiError(this.k.conflict);
    const id = (JSON.parse(rec.response_body as string) as { id: string }).id;
    const h = await this.k.def.hydrate(this.d.sql, id, { tenantId: idem.tenantId, livemode: idem.livemode });
    if (!h) throw new ApiError(this.k.def.notFound);
    if (h.row.status !== 'pending') return h.row;
    return this.d.actor.withLock(this.k.def, id, 0, () => this.resolveLocked(id), false);
  }

  /**
   * The first request with a key: the order created `pending` with its idempotency record (the
   * lock taken before the row exists, so a replay meanwhile is the busy 409), then executed. A twin
   * request that committed first is answered as a replay.
   */
  async create(p: { tenantId: string; livemode: boolean }, row: R, idem: IdempotencyHandle, o: { history: unknown; view(r: R): unknown }): Promise<{ row: R; replayed: boolean }> {
    try {
      const done = await this.d.actor.withLock(this.k.def, row.id, 0, async () => {
        const now = await nowFor(this.d.sql, p.tenantId, p.livemode);
        await this.d.actor.create(this.k.def, p, {
          create: { ...(row as unknown as Record<string, unknown>) },
          history: { event: 'create', data: o.history },
          response: { status: 200, body: o.view(row) },
          result: row,
        }, { idem, at: row.created_at, now });
        return this.settle({ row, clockOffsetMs: p.livemode ? 0 : now.getTime() - row.created_at.getTime() });
      }, false);
      return { row: done, replayed: false };
    } catch (e) {
      if (!isIdempotencyConflict(e)) throw e;
      const twin = await this.byKey(idem);
      if (twin) return { row: twin, replayed: true };
      throw e;
    }
  }

  /** The order's aggregator call as an outbound call (kernel/outbound.ts). */
  private call(): OutboundCall<Hydrated<R>, AggregatorAnswer<Done>, R> {
    const step = (h: Hydrated<R>, cmd: AggregatorOrderCommand<Source, Done>) =>
      this.d.actor.runLocked<Hydrated<R>, AggregatorOrderCommand<Source, Done>, void, R>(this.k.def, undefined, h.row.id, cmd, { waitMs: 0, known: h });
    return {
      connector: this.k.connector,
      op: this.k.op,
      lookupOp: this.k.lookupOp,
      due: (h) => h.row.status === 'pending',
      started: (h) => h.row.send_started_at !== null,
      mark: async (h) => ({ ...h, row: await step(h, { kind: 'send_started' }) }),
      send: (h) => this.k.send(h.row),
      lookup: (h) => this.k.status(h.row),
      record: (h, state) => step(h, { kind: this.k.source, state } as AggregatorOrderCommand<Source, Done>),
      idle: (h) => h.row,
    };
  }

  /** Settles an order the caller holds the lock of; an unknown outcome (a timeout) leaves it pending. */
  private async settle(h: Hydrated<R>): Promise<R> {
    const call = this.call();
    let marked = h;
    try {
      return (await settleLocked({ ...call, attrs: { [this.k.idAttr]: h.row.id }, mark: async (x) => (marked = await call.mark!(x)) }, h)).result;
    } catch (e) {
      if (!isOutcomeUnknown(e)) throw e;
      this.d.log.warn(this.k.timeoutMessage, { [`${this.k.def.kind}_id`]: h.row.id, reason: e.reason, ...this.k.logFields(h.row) });
      return marked.row;
    }
  }

  /** A pending order (the caller holds the lock): ask the aggregator first; send only if it never saw the order. */
  async resolveLocked(id: string): Promise<R> {
    const h = await this.k.def.hydrate(this.d.sql, id, undefined);
    if (!h) throw new ApiError(this.k.def.notFound);
    return this.settle(h);
  }

  capability(): Pick<Capability, 'jobs' | 'reconcilers'> {
    const sql = this.d.sql;
    return {
      jobs: [this.resolveJob],
      reconcilers: [
        reconciler(
          `${this.k.def.kind.replace(/_/g, ' ')}s left pending (a timeout, a crash)`,
          () => staleRows(sql, { table: this.k.def.table }),
          (r) => jobRequest(this.resolveJob, { id: r.id as string }),
        ),
      ],
    };
  }
}
