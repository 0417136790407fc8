// Cross-entity reactions inside one transaction. A capability subscribes to a domain event (an
// outbox event or an internal signal of a step) instead of the emitting actor knowing about it:
// a paid intent marks its payment link paid, a paid receivable asks for its invoice, a split is
// made on capture. A reaction runs in the committing transaction: what it writes commits or rolls
// back with the step. It may issue statements with `tx` (pipelined; await one only when its result
// decides what to do next) and ask for jobs after the commit. It must not call outside parties.
import type { Sql } from './db.js';
import type { DomainEvent, EntityPlan } from './entity.js';
import type { JobRequest } from './jobs.js';

export type { DomainEvent } from './entity.js';

export interface ReactionContext {
  /** The step's transaction. */
  tx: Sql;
  /** The pool, for building fragments (never issue statements with it here). */
  sql: Sql;
  /** Real time of the step. */
  at: Date;
  /** The tenant's clock. */
  now: Date;
  /** A job to enqueue after the commit. */
  after(job: JobRequest): void;
}

/**
 * A reaction. One that changes another entity returns that entity's step (read it with `ctx.tx`,
 * plan it with the entity's pure plan): the entity actor commits it, fenced and recorded, in the
 * causing transaction, instead of the reaction writing the row by hand.
 */
export type Reaction = (e: DomainEvent, ctx: ReactionContext) => ReactionResult | Promise<ReactionResult>;
export type ReactionResult = void | EntityPlan | EntityPlan[];

export class Reactions {
  private byType = new Map<string, Reaction[]>();

  on(type: string, reaction: Reaction): void {
    const list = this.byType.get(type) ?? [];
    list.push(reaction);
    this.byType.set(type, list);
  }

  has(type: string): boolean {
    return this.byType.has(type);
  }

  /** Runs the subscribers of each event, in order, inside the transaction; resolves to the steps they returned. */
  async run(events: readonly DomainEvent[], ctx: ReactionContext): Promise<EntityPlan[]> {
    const pending: Array<ReactionResult | Promise<ReactionResult>> = [];
    for (const e of events) for (const r of this.byType.get(e.type) ?? []) pending.push(r(e, ctx));
    const out: EntityPlan[] = [];
    for (const x of await Promise.all(pending)) if (x) out.push(...(Array.isArray(x) ? x : [x]));
    return out;
  }
}
