// One conformance suite for every payout rail (connectors/payout/): the same scenarios run against
// the `sim` rail and the `stp` adapter (against test/fakes/stp.ts). Each rail's harness says how
// to make an order fail at that rail, how to settle and return one, and how to count what the
// rail registered; scenarios that need a transport (faults) run for rails that have one.
import type { Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { RailCallbackError, numericReferenceFor, operationDateOf, payoutKeyFor, trackingKeyFor, type PayoutOrder, type PayoutRail, type RailState } from '../../connectors/payout/rail.js';
import { OutcomeUnknown } from '../../kernel/outbound.js';

export interface RailHarness {
  name: string;
  rail: PayoutRail;
  tenantId: string;
  livemode: boolean;
  /** An order this rail refuses (sim: beneficiary FAIL; stp: an account STP does not know). */
  failing(order: PayoutOrder): PayoutOrder;
  /** Brings an accepted order to `paid` at the rail (stp: liquidada), if it is not already. */
  settle(order: PayoutOrder, sent: RailState): Promise<void>;
  /** The beneficiary's bank sends a paid order back (devolución). */
  returnPaid(order: PayoutOrder, sent: RailState): Promise<void>;
  /** How many orders the rail registered for this order's key. */
  registered(order: PayoutOrder): Promise<number>;
  /** The raw body of the rail's status callback for the order. */
  callbackBody(order: PayoutOrder, sent: RailState): Promise<string>;
  /** Transport faults, for rails that have a transport. */
  faults?: {
    /** The next call answers HTTP 5xx / never answers / answers a body that is not JSON. */
    next(kind: 'http500' | 'timeout' | 'malformed'): void;
    /** The next send registers the order and then fails at the transport. */
    registerThenFail(): void;
  };
}

export function newOrder(h: Pick<RailHarness, 'tenantId' | 'livemode'>, over: Partial<PayoutOrder> = {}): PayoutOrder {
  const id = randomUUID();
  return {
    key: payoutKeyFor(id),
    trackingKey: trackingKeyFor(id),
    operationDate: operationDateOf(new Date()),
    tenantId: h.tenantId,
    livemode: h.livemode,
    amountMinor: 123_45,
    currency: 'MXN',
    clabe: '072691004495711499',
    beneficiaryName: 'Ricardo Sánchez',
    concepto: 'Pago de comisiones',
    numericReference: numericReferenceFor(id),
    ...over,
  };
}

export function payoutConformance(t: Test, h: RailHarness) {
  t.test(`${h.name}: an order is accepted, then paid; the rail registered it once`, async (t) => {
    const o = newOrder(h);
    const sent = await h.rail.send(o);
    t.ok(sent.state === 'in_flight' || sent.state === 'paid', `accepted (${sent.state})`);
    t.type((sent as { providerRef?: string }).providerRef, 'string', 'with the rail reference');
    await h.settle(o, sent);
    const st = await h.rail.status(o);
    t.match(st, { state: 'paid', providerRef: (sent as { providerRef: string }).providerRef });
    t.equal(await h.registered(o), 1);
  });

  t.test(`${h.name}: sending the same key again registers nothing and answers the same order`, async (t) => {
    const o = newOrder(h);
    const first = await h.rail.send(o);
    await h.settle(o, first);
    const again = await h.rail.send(o);
    t.equal((again as { providerRef?: string }).providerRef, (first as { providerRef?: string }).providerRef, 'same rail reference');
    t.equal(again.state, 'paid');
    t.equal(await h.registered(o), 1, 'one order at the rail');
  });

  t.test(`${h.name}: status of an order the rail never saw is null`, async (t) => {
    t.equal(await h.rail.status(newOrder(h)), null);
  });

  t.test(`${h.name}: a refused order fails with a reason and is never paid`, async (t) => {
    const o = h.failing(newOrder(h));
    const sent = await h.rail.send(o);
    t.match(sent, { state: 'failed', code: String, reason: String });
    const st = await h.rail.status(o);
    t.ok(st === null || st.state === 'failed', `status afterwards: ${st?.state ?? 'unknown to the rail'}`);
  });

  t.test(`${h.name}: a paid order returned by the beneficiary bank (devolución) is returned`, async (t) => {
    const o = newOrder(h);
    const sent = await h.rail.send(o);
    await h.settle(o, sent);
    await h.returnPaid(o, sent);
    t.match(await h.rail.status(o), { state: 'returned', code: String, reason: String });
  });

  t.test(`${h.name}: the day's conciliation lists the orders sent that day with their state now`, async (t) => {
    const paid = newOrder(h);
    await h.settle(paid, await h.rail.send(paid));
    const ret = newOrder(h);
    const sentRet = await h.rail.send(ret);
    await h.settle(ret, sentRet);
    await h.returnPaid(ret, sentRet);
    const day = await h.rail.conciliate(h.tenantId, h.livemode, paid.operationDate);
    t.match(day.find((x) => x.trackingKey === paid.trackingKey), { state: { state: 'paid' } }, 'a paid order');
    t.match(day.find((x) => x.trackingKey === ret.trackingKey), { state: { state: 'returned', code: String, reason: String } }, 'a devolución, as the rail has it now');
    t.same(await h.rail.conciliate(h.tenantId, h.livemode, '20000101'), [], 'a day without orders');
  });

  t.test(`${h.name}: a status callback names the order and is only a claim`, async (t) => {
    const o = newOrder(h);
    const sent = await h.rail.send(o);
    await h.settle(o, sent);
    const notice = h.rail.parseCallback(await h.callbackBody(o, sent));
    t.equal(notice.providerRef, (sent as { providerRef: string }).providerRef);
    t.equal(notice.claimed, 'paid');
    t.throws(() => h.rail.parseCallback('not json'), RailCallbackError);
    t.throws(() => h.rail.parseCallback('{"hello":"world"}'), RailCallbackError);
  });

  if (!h.faults) {
    t.test(`${h.name}: transport faults`, { skip: `${h.name} has no transport` }, async () => {});
    return;
  }
  const faults = h.faults;
  for (const kind of ['http500', 'timeout', 'malformed'] as const) {
    t.test(`${h.name}: ${kind} on send is an unknown outcome; asking first, then sending, pays once`, async (t) => {
      const o = newOrder(h);
      faults.next(kind);
      await t.rejects(h.rail.send(o), OutcomeUnknown);
      t.equal(await h.rail.status(o), null, 'the rail never registered it');
      const sent = await h.rail.send(o);
      await h.settle(o, sent);
      t.match(await h.rail.status(o), { state: 'paid' });
      t.equal(await h.registered(o), 1);
    });
    t.test(`${h.name}: ${kind} on status is an unknown outcome`, async (t) => {
      const o = newOrder(h);
      await h.rail.send(o);
      faults.next(kind);
      await t.rejects(h.rail.status(o), OutcomeUnknown);
    });
  }
  t.test(`${h.name}: registered but the answer was lost: status finds it, a resend registers nothing`, async (t) => {
    const o = newOrder(h);
    faults.registerThenFail();
    await t.rejects(h.rail.send(o), OutcomeUnknown);
    const found = await h.rail.status(o);
    t.ok(found && (found.state === 'in_flight' || found.state === 'paid'), 'the rail has it');
    const again = await h.rail.send(o);
    t.equal((again as { providerRef?: string }).providerRef, (found as { providerRef?: string }).providerRef, 'a resend answers the same order');
    t.equal(await h.registered(o), 1, 'one order at the rail');
  });
}
