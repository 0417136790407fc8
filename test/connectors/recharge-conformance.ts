// One conformance suite for every recharge aggregator and biller aggregator (connectors/recharge/,
// connectors/billers/): the same scenarios run against each implementation through its harness.
// Today only the `sim` ones exist; a real adapter (against a local fake of its API in test/fakes/)
// adds its harness to recharge-conformance.test.ts.
import type { Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { reportDay, type RechargeAggregator, type RechargeOrder } from '../../connectors/recharge/aggregator.js';
import type { BillerGateway, BillOrder } from '../../connectors/billers/gateway.js';
import { OutcomeUnknown } from '../../kernel/outbound.js';

export interface AggregatorHarness {
  name: string;
  aggregator: RechargeAggregator;
  tenantId: string;
  livemode: boolean;
  /** A phone this aggregator rejects, and one whose delivery answer is lost (a timeout). */
  failingPhone: string;
  timeoutPhone: string;
  okPhone: string;
  /** How many orders the aggregator registered for this key. */
  registered(key: string): Promise<number>;
}

const order = (h: AggregatorHarness, phone: string): RechargeOrder => {
  const p = h.aggregator.products().find((x) => x.active)!;
  return { key: `rc_${randomUUID().replace(/-/g, '')}`, tenantId: h.tenantId, livemode: h.livemode, carrierCode: p.carrier_code, productCode: p.code, phone, amountMinor: p.face_amount_minor };
};

export function aggregatorConformance(t: Test, h: AggregatorHarness) {
  t.test(`${h.name}: catalog: products of known carriers, commission inside the face amount`, async (t) => {
    const carriers = new Set(h.aggregator.carriers().map((c) => c.code));
    for (const p of h.aggregator.products()) {
      t.ok(carriers.has(p.carrier_code), `${p.code}: known carrier`);
      t.ok(Number.isSafeInteger(p.face_amount_minor) && p.face_amount_minor > 0 && p.merchant_commission_minor >= 0 && p.merchant_commission_minor < p.face_amount_minor, `${p.code}: amounts`);
    }
  });
  t.test(`${h.name}: a delivery, repeated with its key, is delivered once; status answers it`, async (t) => {
    const o = order(h, h.okPhone);
    t.equal(await h.aggregator.status(o.key), null, 'unknown before the send');
    const first = await h.aggregator.send(o);
    t.equal(first.state, 'delivered');
    const again = await h.aggregator.send(o);
    t.same(again, first, 'the same outcome');
    t.equal(await h.registered(o.key), 1, 'registered once');
    t.same(await h.aggregator.status(o.key), first);
  });
  t.test(`${h.name}: a rejected phone fails with a reason`, async (t) => {
    const s = await h.aggregator.send(order(h, h.failingPhone));
    t.equal(s.state, 'failed');
    t.match((s as { reason: string }).reason, /\S/);
  });
  t.test(`${h.name}: a lost answer is a timeout, and status tells the truth afterwards`, async (t) => {
    const o = order(h, h.timeoutPhone);
    await t.rejects(h.aggregator.send(o), OutcomeUnknown);
    t.equal((await h.aggregator.status(o.key))?.state, 'delivered');
  });
  t.test(`${h.name}: the bag report: unique movement ids, amounts and raw amounts agree`, async (t) => {
    const a = { tenantId: h.tenantId, livemode: h.livemode };
    const now = new Date();
    for (const day of [reportDay(new Date(now.getTime() - 86_400_000)), reportDay(now)]) {
      const ms = await h.aggregator.movements(a, day);
      t.equal(new Set(ms.map((m) => m.movementId)).size, ms.length, `${day}: unique ids`);
      for (const m of ms) {
        t.equal(m.isDeposit, m.amountMinor > 0, `${m.movementId}: a deposit is a credit`);
        t.equal(Math.round(Number(m.rawAmount) * 100), m.amountMinor, `${m.movementId}: raw amount`);
        t.equal(reportDay(m.registeredAt), day, `${m.movementId}: registered on its report's day`);
      }
    }
    const b = await h.aggregator.balance(a);
    t.ok(Number.isSafeInteger(b.balanceMinor));
  });
}

export interface BillerHarness {
  name: string;
  gateway: BillerGateway;
  tenantId: string;
  known: { billerCode: string; reference: string };
  unknown: { billerCode: string; reference: string };
  failing: { billerCode: string; reference: string };
  paid(key: string): Promise<number>;
}

export function billerConformance(t: Test, h: BillerHarness) {
  const bill = (x: { billerCode: string; reference: string }, amountMinor: number): BillOrder => ({ key: `sp_${randomUUID().replace(/-/g, '')}`, tenantId: h.tenantId, ...x, amountMinor });
  t.test(`${h.name}: inquiry of a known and an unknown account`, async (t) => {
    const due = await h.gateway.inquire(h.known.billerCode, h.known.reference);
    t.ok(due && due.amountDueMinor > 0 && /^\d{4}-\d{2}-\d{2}$/.test(due.dueDate));
    t.equal(await h.gateway.inquire(h.unknown.billerCode, h.unknown.reference), null);
  });
  t.test(`${h.name}: a payment, repeated with its key, is paid once`, async (t) => {
    const o = bill(h.known, (await h.gateway.inquire(h.known.billerCode, h.known.reference))!.amountDueMinor);
    t.equal(await h.gateway.status(o.key), null);
    const s = await h.gateway.pay(o);
    t.equal(s.state, 'paid');
    t.same(await h.gateway.pay(o), s);
    t.same(await h.gateway.status(o.key), s);
    t.equal(await h.paid(o.key), 1);
  });
  t.test(`${h.name}: a refused payment fails with a reason`, async (t) => {
    const s = await h.gateway.pay(bill(h.failing, 1000));
    t.equal(s.state, 'failed');
    t.match((s as { reason: string }).reason, /\S/);
  });
}
