// The dispatcher of a worker process: the deliveries it holds in memory (leased to it in Postgres),
// one FIFO per endpoint, served round robin with at most PER_ENDPOINT_IN_FLIGHT POSTs per endpoint
// and `maxInFlight` per process, and a fill (`maxHeld`) past which the relay takes no new events
// (backpressure). What one attempt does is given (`attempt`); this file only decides when.
import type { DeliveryItem } from './item.js';

/** In-flight deliveries per endpoint, so one slow receiver does not hold up the others. */
export const PER_ENDPOINT_IN_FLIGHT = 8;
/** Deliveries one dispatcher holds in memory at most (WebhookDeps.maxHeld overrides, for tests). */
export const MAX_HELD = 10_000;

/** One endpoint's deliveries waiting in this process, and how many of its POSTs are in flight. */
class EndpointQueue {
  items: DeliveryItem[] = [];
  head = 0;
  inFlight = 0;
  inRing = false;
  constructor(readonly id: string) {}
  get waiting() {
    return this.items.length - this.head;
  }
  push(i: DeliveryItem) {
    this.items.push(i);
  }
  shift(): DeliveryItem | undefined {
    if (this.head >= this.items.length) return undefined;
    const i = this.items[this.head];
    this.items[this.head++] = undefined as never;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return i;
  }
}

export interface DispatcherOptions {
  maxInFlight: number;
  maxHeld: number;
  /** One attempt of a delivery (sign, POST, record the outcome); its failure is logged by `onError`. */
  attempt(i: DeliveryItem): Promise<void>;
  onError(i: DeliveryItem, err: unknown): void;
}

export class Dispatcher {
  /** Whether this process dispatches (a worker after `start`): the relay leases and hands over only then. */
  running = false;
  /** Everything held, waiting or in flight, by delivery id. */
  readonly held = new Map<number, DeliveryItem>();
  /** Endpoints disabled while this process held their deliveries: nothing more is sent to them. */
  readonly disabled = new Set<string>();
  readonly maxHeld: number;
  private endpoints = new Map<string, EndpointQueue>();
  private ring: EndpointQueue[] = [];
  private ringHead = 0;
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly o: DispatcherOptions) {
    this.maxHeld = o.maxHeld;
  }

  /** Backpressure: a running dispatcher holding half its fill takes no new events (they wait in the outbox). */
  get paused(): boolean {
    return this.running && this.held.size >= this.maxHeld / 2;
  }

  /** Deliveries it may still take (claims stop there). */
  get room(): number {
    return this.maxHeld - this.held.size;
  }

  hold(i: DeliveryItem) {
    this.held.set(i.id, i);
    let q = this.endpoints.get(i.endpointId);
    if (!q) this.endpoints.set(i.endpointId, (q = new EndpointQueue(i.endpointId)));
    q.push(i);
    this.ready(q);
  }

  /** Starts POSTs while there is room: round robin over endpoints, at most PER_ENDPOINT_IN_FLIGHT each. */
  pump() {
    while (this.running && this.inFlight < this.o.maxInFlight && this.ringHead < this.ring.length) {
      const q = this.ring[this.ringHead++];
      q.inRing = false;
      const i = q.shift();
      if (i) {
        if (this.held.get(i.id) !== i) {
          // dropped (no longer ours)
        } else if (this.disabled.has(i.endpointId)) {
          this.held.delete(i.id);
        } else if (i.leaseUntil <= Date.now()) {
          this.held.delete(i.id); // the lease lapsed (renewals failed): whoever claims it next sends it
        } else {
          this.send(q, i);
        }
      }
      this.ready(q);
      if (q.waiting === 0 && q.inFlight === 0) this.endpoints.delete(q.id);
    }
    if (this.ringHead > 1024 && this.ringHead * 2 > this.ring.length) {
      this.ring = this.ring.slice(this.ringHead);
      this.ringHead = 0;
    }
  }

  /** Stops starting POSTs and forgets what waits in memory; returns those ids (their leases are to be released). */
  drain(): number[] {
    this.running = false;
    const unsent: number[] = [];
    for (const q of this.endpoints.values()) for (let i = q.shift(); i; i = q.shift()) if (!i.inFlight && this.held.delete(i.id)) unsent.push(i.id);
    this.ring = [];
    this.ringHead = 0;
    return unsent;
  }

  /** Resolves when no POST is in flight (or after timeoutMs). */
  idle(timeoutMs = Infinity): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    const done = new Promise<void>((r) => this.idleWaiters.push(r));
    if (!Number.isFinite(timeoutMs)) return done;
    return Promise.race([done, new Promise<void>((r) => setTimeout(r, timeoutMs).unref())]);
  }

  private ready(q: EndpointQueue) {
    if (!q.inRing && q.waiting > 0 && q.inFlight < PER_ENDPOINT_IN_FLIGHT) {
      q.inRing = true;
      this.ring.push(q);
    }
  }

  private send(q: EndpointQueue, i: DeliveryItem) {
    i.inFlight = true;
    q.inFlight++;
    this.inFlight++;
    this.o
      .attempt(i)
      .catch((e) => this.o.onError(i, e))
      .finally(() => {
        this.held.delete(i.id);
        q.inFlight--;
        this.inFlight--;
        this.ready(q);
        if (q.waiting === 0 && q.inFlight === 0 && this.endpoints.get(q.id) === q) this.endpoints.delete(q.id);
        if (this.inFlight === 0) for (const r of this.idleWaiters.splice(0)) r();
        this.pump();
      });
  }
}
