// The outbox: committed events, written by actors inside the transaction of the change they
// announce, with the trace context of that transaction so that their webhook deliveries join it.
import { randomUUID } from 'node:crypto';
import type { Db } from '../ops/db.js';
import { injectTrace } from '../ops/tracing.js';

export interface NewEvent {
  tenantId: string;
  livemode: boolean;
  type: string;
  entityId: string;
  data: unknown;
}

/** Appends one event inside the caller's transaction (a new event_id, the active trace context). */
export function appendEvent(tx: Db, e: NewEvent) {
  const trace = injectTrace();
  return tx`
    insert into outbox_events (event_id, tenant_id, livemode, event_type, entity_id, data, traceparent)
    values (${randomUUID()}, ${e.tenantId}, ${e.livemode}, ${e.type}, ${e.entityId}, ${tx.json(e.data as never)},
            ${Object.keys(trace).length ? tx.json(trace) : null})`;
}
