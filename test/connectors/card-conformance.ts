// The card connector conformance suite: the same scenarios against `sim`, `sim_b` and every real
// adapter (against its local fake). What the payment intent actor relies on: a charge answers an
// outcome (declines are values), a repeat of a key never moves money twice, retrieve knows what a
// key did (null when never seen), a fault means "unknown" and retrieve settles it consistently with
// what moved, refunds are idempotent on their key, an authorization can be captured.
import type { Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { type Acquirer, type ChargeRequest, type ProviderOutcome } from '../../connectors/acquirer.js';
import { OutcomeUnknown } from '../../kernel/outbound.js';

type T = Test;

export interface CardHarness {
  name: string;
  acquirer: Acquirer;
  tenantId: string;
  livemode: boolean;
  tokens: {
    ok: string;
    /** A hard decline and the Orquesta code it maps to. */
    hard: [string, string];
    /** A soft decline (retryable elsewhere), when the connector has one. */
    soft?: string;
    /** The provider fails (5xx) and moves no money. */
    fault: string;
    /** The provider fails (5xx) after moving money. */
    faultCharged?: string;
    /** The answer comes after the deadline (the money moved). */
    timeout?: string;
    /** The answer is not the documented shape. */
    malformed?: string;
    /** Authorized only (capture needed). */
    preauth?: string;
  };
  /** How many times money moved for our key at the provider. */
  moved(key: string): Promise<number>;
}

const DECLINES = ['hard_decline', 'soft_decline'];

export function cardConformance(t: T, h: CardHarness) {
  const req = (token: string, amountMinor = 25000): ChargeRequest => {
    const attemptId = randomUUID();
    return { idempotencyKey: `orq_att_${attemptId}`, attemptId, tenantId: h.tenantId, livemode: h.livemode, method: 'card', amountMinor, currency: 'MXN', paymentToken: token, payerIp: '203.0.113.7', now: new Date() };
  };
  const ctx = (r: ChargeRequest) => ({ tenantId: r.tenantId, livemode: r.livemode, amountMinor: r.amountMinor, currency: r.currency });
  const a = h.acquirer;

  t.test(`${h.name}: success captures once; a repeat of the key moves no money`, async (t) => {
    t.ok(a.supports('card'));
    const r = req(h.tokens.ok);
    const first = await a.charge(r);
    t.equal(first.kind, 'captured');
    t.ok((first as { providerRef?: string }).providerRef, 'a provider reference');
    const again = await a.charge(r);
    t.same(again, first, 'the repeat answers the first outcome');
    t.equal(await h.moved(r.idempotencyKey), 1, 'money moved once');
    t.same(await a.retrieve(r.idempotencyKey, ctx(r)), first, 'retrieve knows it');
  });

  t.test(`${h.name}: retrieve of a key never sent is null`, async (t) => {
    const r = req(h.tokens.ok);
    t.equal(await a.retrieve(r.idempotencyKey, ctx(r)), null);
  });

  t.test(`${h.name}: a hard decline is a value with an Orquesta code`, async (t) => {
    const r = req(h.tokens.hard[0]);
    const o = await a.charge(r);
    t.match(o, { kind: 'hard_decline', code: h.tokens.hard[1] });
    t.type((o as { message: string }).message, 'string');
    t.equal(await h.moved(r.idempotencyKey), 0);
  });

  if (h.tokens.soft) {
    t.test(`${h.name}: a soft decline is a value (another connector may take it)`, async (t) => {
      const r = req(h.tokens.soft!);
      const o = await a.charge(r);
      t.equal(o.kind, 'soft_decline');
      t.equal(await h.moved(r.idempotencyKey), 0);
    });
  }

  const settles = async (t: T, token: string, label: string) => {
    const r = req(token);
    await t.rejects(a.charge(r), OutcomeUnknown, `${label}: the outcome is unknown (OutcomeUnknown)`);
    const settled: ProviderOutcome | null = await a.retrieve(r.idempotencyKey, ctx(r));
    const moved = await h.moved(r.idempotencyKey);
    if (moved > 0) t.equal(settled?.kind, 'captured', `${label}: money moved, retrieve says captured`);
    else t.ok(settled === null || DECLINES.includes(settled.kind), `${label}: nothing moved, retrieve says never seen or declined (${settled?.kind ?? 'null'})`);
    return { r, settled, moved };
  };

  t.test(`${h.name}: a provider fault is unknown until retrieved; retrieve matches what moved`, async (t) => {
    const { moved } = await settles(t, h.tokens.fault, '5xx');
    t.equal(moved, 0);
  });

  if (h.tokens.faultCharged) {
    t.test(`${h.name}: a fault after the money moved is settled as captured, and a new charge of the key does not charge again`, async (t) => {
      const { r, moved } = await settles(t, h.tokens.faultCharged!, '5xx after charging');
      t.equal(moved, 1);
      const again = await a.charge(r);
      t.equal(again.kind, 'captured');
      t.equal(await h.moved(r.idempotencyKey), 1, 'still once');
    });
  }

  if (h.tokens.timeout) {
    t.test(`${h.name}: a timeout is unknown; retrieve settles it`, async (t) => {
      const { moved } = await settles(t, h.tokens.timeout!, 'timeout');
      t.equal(moved, 1);
    });
  }

  if (h.tokens.malformed) {
    t.test(`${h.name}: a malformed answer is unknown, never a success or a decline`, async (t) => {
      const r = req(h.tokens.malformed!);
      await t.rejects(a.charge(r), OutcomeUnknown);
    });
  }

  t.test(`${h.name}: refund is idempotent on its key`, async (t) => {
    const r = req(h.tokens.ok, 30000);
    await a.charge(r);
    const key = `orq_ref_${randomUUID()}`;
    const one = await a.refund({ idempotencyKey: key, chargeKey: r.idempotencyKey, amountMinor: 10000, currency: 'MXN', tenantId: h.tenantId, livemode: h.livemode });
    t.equal(one.kind, 'succeeded');
    const two = await a.refund({ idempotencyKey: key, chargeKey: r.idempotencyKey, amountMinor: 10000, currency: 'MXN', tenantId: h.tenantId, livemode: h.livemode });
    t.same(two, one, 'the repeat answers the first refund');
  });

  t.test(`${h.name}: lookupRefund finds a refund made, and nothing for one never sent`, async (t) => {
    const r = req(h.tokens.ok, 30000);
    await a.charge(r);
    const base = { chargeKey: r.idempotencyKey, currency: 'MXN', tenantId: h.tenantId, livemode: h.livemode };
    const sentAfter = new Date();
    const never = await a.lookupRefund({ ...base, idempotencyKey: `orq_ref_${randomUUID()}`, amountMinor: 10000, sentAfter, claimed: [] });
    t.equal(never, null, 'a refund never sent: the provider never saw it');
    const key = `orq_ref_${randomUUID()}`;
    const one = await a.refund({ ...base, idempotencyKey: key, amountMinor: 10000 });
    t.equal(one.kind, 'succeeded');
    const found = await a.lookupRefund({ ...base, idempotencyKey: key, amountMinor: 10000, sentAfter, claimed: [] });
    t.same(found, one, 'the lookup answers the refund made');
  });

  if (h.tokens.preauth) {
    t.test(`${h.name}: authorize, then capture`, async (t) => {
      const r = req(h.tokens.preauth!);
      t.equal((await a.charge(r)).kind, 'authorized');
      t.equal(await h.moved(r.idempotencyKey), 0, 'an authorization moves nothing yet');
      t.equal((await a.capture(r.idempotencyKey, ctx(r))).kind, 'captured');
      t.equal((await a.capture(r.idempotencyKey, ctx(r))).kind, 'captured', 'a repeated capture answers captured');
      t.equal(await h.moved(r.idempotencyKey), 1);
    });
  }
}
