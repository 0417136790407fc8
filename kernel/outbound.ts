// The outbound protocol: how an entity calls a provider that moves money or issues a document
// (a card charge, a refund, a SPEI payout, a CFDI stamp or cancellation, a bill payment, a
// recharge) so that the call is never made twice and its outcome is never lost.
//
//   1. mark   — the entity records, inside its fenced transaction, that the call is about to leave
//               (a `send_started_at` column, or the row's creation itself when the call follows it
//               at once). From then on a crash, a timeout or an unreadable answer means "ask first".
//   2. send   — after the commit, under the entity's lock (never inside a transaction), with a key
//               derived from the entity's id (the same key at every retry).
//   3. lookup — when the mark is there (a retried job, a reconciler, a replayed request) the
//               provider is asked for the real state before anything is sent again; only a call
//               the provider never saw is sent (again, with the same key).
//   4. record — the provider's answer (or its lookup) is a command of the entity, applied by the
//               entity actor under the same lock: row, history, ledger, events in one transaction.
//
// Every connector kind signals an unknown outcome (timeout, 5xx after the request left, malformed
// answer, an answer without the document's id) with the one error below; the caller leaves the
// entity waiting (its job retries, its reconciler re-enqueues, a replayed request asks first).
// docs/architecture.md ("Outbound calls") has the recipe.
import type { EntityActor, EntityDef, Hydrated } from './entity.js';
import { inSpan, SpanKind, ATTR } from './tracing.js';

/** Why an outcome is unknown. */
export type OutcomeUnknownReason =
  /** No answer: network error, connection refused, the deadline passed (the request may have arrived). */
  | 'unreachable'
  /** The provider failed (HTTP 5xx) after the request left: it may have acted. */
  | 'provider_error'
  /** An answer that is not the documented shape (or a code its documentation does not show). */
  | 'bad_response'
  /** A PAC answered "stamped" without the document's UUID. */
  | 'no_uuid'
  /** The provider could not be asked (no credentials, nothing to ask about yet): ask again later. */
  | 'not_ready';

/**
 * The outcome of an outside call is unknown: whatever the provider did, it must be asked (lookup)
 * before anything is sent again. Thrown by every connector kind (card acquirers, payout rails, PACs,
 * biller and recharge aggregators); declines and rejections are values, never this.
 */
export class OutcomeUnknown extends Error {
  override name = 'OutcomeUnknown';
  constructor(
    readonly reason: OutcomeUnknownReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const isOutcomeUnknown = (e: unknown): e is OutcomeUnknown => e instanceof OutcomeUnknown;

/**
 * One outside call of an entity, described for settle(). `H` is the hydrated entity, `A` the
 * provider's answer (a send's or a lookup's), `R` what recording it returns.
 */
export interface OutboundCall<H extends Hydrated, A, R> {
  /** For spans and logs: `connector <connector>.<op>` (e.g. conekta.refund). */
  readonly connector: string;
  readonly op: string;
  /** The lookup's span name (`connector <connector>.<lookupOp>`); `<op>.lookup` by default. */
  readonly lookupOp?: string;
  /** Span attributes naming the entity (ids only: never a CLABE, a phone, an amount). */
  readonly attrs?: Record<string, string>;
  /** Whether the entity still waits on the provider (otherwise there is nothing to do). */
  due(h: H): boolean;
  /** Whether a call may have left already (the mark is committed, a job ran before, a replay). */
  started(h: H): boolean;
  /** Commits the mark inside the entity's fenced transaction; returns the state after it. Absent: the creation was the mark. */
  mark?(h: H): Promise<H>;
  /** After the mark's commit, before the call (e.g. a test's crash point); rarely needed. */
  afterMark?(h: H): Promise<void>;
  send(h: H): Promise<A>;
  /** The provider's word on the call: its answer, or null when it never saw it. */
  lookup(h: H): Promise<A | null>;
  /** Applies the answer as a command of the entity, under its lock (a fenced step). */
  record(h: H, answer: A): Promise<R>;
  /** Whether a call the provider never saw may be sent (again) now. Default: yes. */
  resend?(h: H): boolean;
  /** What a settle returns when the call is not due, or unseen and not to be resent. */
  idle(h: H, why: 'not_due' | 'unseen'): R | Promise<R>;
}

/** What settle did, for logs and tests: the call's path and the result of recording (or idling). */
export interface Settled<R> {
  path: 'not_due' | 'sent' | 'looked_up' | 'looked_up_then_sent' | 'unseen';
  result: R;
}

function span<T>(c: { connector: string; op: string; attrs?: Record<string, string> }, op: string, fn: () => Promise<T>): Promise<T> {
  return inSpan(`connector ${c.connector}.${op}`, { [ATTR.connector]: c.connector, ...(c.attrs ?? {}) }, fn, { kind: SpanKind.CLIENT });
}

/**
 * Runs the protocol on an entity the caller holds the lock of (`h` read under it): ask first when
 * the call may have left, mark then send when it did not, record the answer. An OutcomeUnknown from
 * send or lookup propagates: the entity stays waiting, its mark committed.
 */
export async function settleLocked<H extends Hydrated, A, R>(call: OutboundCall<H, A, R>, h: H): Promise<Settled<R>> {
  if (!call.due(h)) return { path: 'not_due', result: await call.idle(h, 'not_due') };
  let looked = false;
  if (call.started(h)) {
    looked = true;
    const known = await span(call, call.lookupOp ?? `${call.op}.lookup`, () => call.lookup(h));
    if (known !== null) return { path: 'looked_up', result: await call.record(h, known) };
    if (call.resend && !call.resend(h)) return { path: 'unseen', result: await call.idle(h, 'unseen') };
  } else if (call.mark) {
    h = await call.mark(h);
    if (call.afterMark) await call.afterMark(h);
  }
  const answer = await span(call, call.op, () => call.send(h));
  return { path: looked ? 'looked_up_then_sent' : 'sent', result: await call.record(h, answer) };
}

/** settleLocked under the entity's lock, on state read under it (a worker's job, a timer, a reconciler). */
export async function settle<H extends Hydrated, A, R>(
  actor: EntityActor,
  def: EntityDef<H, any, any>,
  id: string,
  call: (h: H) => OutboundCall<H, A, R>,
  opts: { waitMs?: number; worker?: boolean } = {},
): Promise<Settled<R> | undefined> {
  return actor.withLock(def, id, opts.waitMs ?? 2000, async () => {
    const h = await def.hydrate(actorSql(actor), id, undefined);
    if (!h) return undefined;
    return settleLocked(call(h), h);
  }, opts.worker ?? true);
}

/** The pool the entity actor commits with (hydrates read from it). */
const actorSql = (actor: EntityActor) => actor.sql;
