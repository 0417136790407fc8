// One delivery as the dispatcher holds it in memory: everything needed to sign and POST it without
// a query. Built in one place (`ItemBatch`) from what the relay just inserted or what a claim just
// leased; one envelope body per event, shared by all of that event's endpoints in the batch.
import type { Carrier } from '../../kernel/tracing.js';
import type { Target } from './http-client.js';
import { API_VERSION } from './version.js';

export { API_VERSION };

/** The delivery envelope (spec: Events > Delivery envelope); also the `data` of a stream item. */
export function envelope(e: { event_id: string; event_type: string; created_at: Date; livemode: boolean; data: unknown }) {
  return { event_id: e.event_id, event_type: e.event_type, created_at: e.created_at.toISOString(), api_version: API_VERSION, livemode: e.livemode, data: e.data };
}

export interface DeliveryItem {
  id: number;
  tenantId: string;
  endpointId: string;
  target: Target | null;
  secrets: string[];
  body: string;
  eventType: string;
  /** Failed attempts so far. */
  attempts: number;
  createdAtMs: number;
  /** queued_at on the tenant's clock. */
  queuedAtMs: number;
  livemode: boolean;
  /** The tenant's test-clock offset (0 in live mode): read when claimed, refreshed when the clock is advanced. */
  offsetMs: number;
  trace: Carrier | null;
  /** Local deadline of the lease (local clock, taken before the statement that set it). */
  leaseUntil: number;
  inFlight: boolean;
}

/** What a relay or claim row gives for one delivery. */
export interface DeliverySource {
  id: number;
  tenantId: string;
  endpointId: string;
  url: string;
  secret: string;
  previousSecret: string | null;
  eventId: string;
  eventType: string;
  data: unknown;
  createdAt: Date;
  livemode: boolean;
  traceparent: Carrier | null;
  attempts: number;
  queuedAtMs: number;
  offsetMs: number;
}

/** Builds the items of one relay or claim batch (the delivery-item builder, written once). */
export class ItemBatch {
  private bodies = new Map<string, string>();
  constructor(
    private readonly targetOf: (url: string) => Target | null,
    private readonly leaseUntil: number,
  ) {}

  item(s: DeliverySource): DeliveryItem {
    let body = this.bodies.get(s.eventId); // one body per event, shared by its endpoints
    if (body === undefined) {
      body = JSON.stringify(envelope({ event_id: s.eventId, event_type: s.eventType, created_at: s.createdAt, livemode: s.livemode, data: s.data }));
      this.bodies.set(s.eventId, body);
    }
    return {
      id: s.id,
      tenantId: s.tenantId,
      endpointId: s.endpointId,
      target: this.targetOf(s.url),
      secrets: s.previousSecret ? [s.secret, s.previousSecret] : [s.secret],
      body,
      eventType: s.eventType,
      attempts: s.attempts,
      createdAtMs: s.createdAt.getTime(),
      queuedAtMs: s.queuedAtMs,
      livemode: s.livemode,
      offsetMs: s.offsetMs,
      trace: s.traceparent,
      leaseUntil: this.leaseUntil,
      inFlight: false,
    };
  }

  /** The item of a delivery from its event's columns and its endpoint's (a claim's joined row is both). */
  fromRows(id: number, endpointId: string, e: Record<string, unknown>, ep: Record<string, unknown>, attempts: number, queuedAtMs: number, offsetMs: number): DeliveryItem {
    return this.item({
      id,
      tenantId: e.tenant_id as string,
      endpointId,
      url: ep.url as string,
      secret: ep.secret as string,
      previousSecret: (ep.previous_secret as string | null) ?? null,
      eventId: e.event_id as string,
      eventType: e.event_type as string,
      data: e.data,
      createdAt: e.created_at as Date,
      livemode: e.livemode as boolean,
      traceparent: (e.traceparent as Carrier | null) ?? null,
      attempts,
      queuedAtMs,
      offsetMs,
    });
  }
}

/** A bigint[] literal for `= any(…::bigint[])`: one parameter whatever the count. */
export const idArray = (ids: number[]) => `{${ids.join(',')}}`;
