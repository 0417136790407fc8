// The outbox: committed events, written by actors inside the transaction of the change they
// announce, with the trace context of that transaction so that their webhook deliveries join it;
// and the wake-up that tells the relay, right after such a commit, that there is something to relay.
import { randomUUID } from 'node:crypto';
import type { RedisClient } from './redis.js';
import type { Db } from './db.js';
import { injectTrace } from './tracing.js';

export interface NewEvent {
  tenantId: string;
  livemode: boolean;
  type: string;
  entityId: string;
  data: unknown;
  /** A deterministic event id (e.g. derived from the fact it announces); a new random one otherwise. */
  eventId?: string;
}

/** Appends one event inside the caller's transaction (a new event_id, the active trace context). */
export function appendEvent(tx: Db, e: NewEvent) {
  const trace = injectTrace();
  return tx`
    insert into outbox_events (event_id, tenant_id, livemode, event_type, entity_id, data, traceparent)
    values (${e.eventId ?? randomUUID()}, ${e.tenantId}, ${e.livemode}, ${e.type}, ${e.entityId}, ${tx.json(e.data as never)},
            ${Object.keys(trace).length ? tx.json(trace) : null})`;
}

/** The Redis channel on which committing processes wake the relays of the deployment `prefix`. */
export const relayWakeChannel = (prefix: string) => `${prefix}:outbox:wake`;

/**
 * A relay running in this process: takes a wake-up (naming the tenant whose events were committed,
 * or none: look for any) and says whether it will relay (false: paused).
 */
export type LocalRelay = (tenantId?: string) => boolean;
const localRelays = new Map<string, Set<LocalRelay>>();
/** Per prefix, the tenants of this turn's wake-ups to publish ('' = one without a tenant). */
const publishing = new Map<string, Set<string>>();

/**
 * Wakes the outbox relay at once. Call it right after the COMMIT of a transaction that appended
 * outbox events (never before: a relay woken before the commit finds nothing, and the events then
 * wait for the next RELAY_INTERVAL_MS poll, which stays the safety net).
 *
 * Contract: synchronous, never throws, never waits, costs no query. When a relay of `prefix` runs
 * in this process (ROLE=all or worker) and is not paused, it is woken directly and nothing is
 * published; otherwise one PUBLISH on `relayWakeChannel(prefix)` per event-loop turn, whatever the
 * number of calls in it, wakes the workers: its message is the turn's tenants, comma-separated
 * ('' when a call named none). Either way the relay coalesces: wake-ups that arrive during a pass
 * cost one more pass, not one each. A lost publish (Redis down) only means the poll relays the
 * events.
 *
 * `tenantId`: the tenant whose events the transaction wrote. The relay then relays that tenant's
 * events only (`where tenant_id = …`: one shard under Citus, docs/scaling.md); without it, the
 * relay looks for every tenant with unrelayed events (the poll's sweep).
 */
export function wakeRelay(redis: Pick<RedisClient, 'publish'>, prefix: string, tenantId?: string): void {
  const local = localRelays.get(prefix);
  if (local) {
    let taken = false;
    for (const relay of local) if (relay(tenantId)) taken = true;
    if (taken) return;
  }
  let turn = publishing.get(prefix);
  if (turn) {
    turn.add(tenantId ?? '');
    return;
  }
  publishing.set(prefix, (turn = new Set([tenantId ?? ''])));
  setImmediate(() => {
    publishing.delete(prefix);
    // One wake-up without a tenant makes the whole message a sweep ('').
    const message = turn.has('') ? '' : [...turn].join(',');
    redis.publish(relayWakeChannel(prefix), message).catch(() => undefined);
  });
}

/** Registers a relay of this process for `wakeRelay`'s in-process path; returns its removal. */
export function onRelayWake(prefix: string, relay: LocalRelay): () => void {
  let set = localRelays.get(prefix);
  if (!set) localRelays.set(prefix, (set = new Set()));
  set.add(relay);
  return () => {
    set.delete(relay);
    if (!set.size && localRelays.get(prefix) === set) localRelays.delete(prefix);
  };
}
