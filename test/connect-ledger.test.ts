// Ledger lines of Connect and payouts (actors/connect-ledger.ts): balanced, and the accounts the
// docs name. Pure: no database.
import t from 'tap';
import { assertBalanced } from '../kernel/ledger.js';
import { captureShareLines, payoutReturnedLines, payoutSentLines, transferLines } from '../actors/connect-ledger.js';

t.test('a transfer: the capture\'s credits taken back, divided into the fee (net + IVA) and one payable per split', async (t) => {
  const capture = [
    { account: 'sales', currency: 'MXN', amountMinor: -8_621 },
    { account: 'iva_trasladado_cobrado', currency: 'MXN', amountMinor: -1_379 },
  ] as const;
  const lines = transferLines('MXN', 10_000, 1_500, [
    { connectAccountId: 'a1', amountMinor: 6_000 },
    { connectAccountId: 'a2', amountMinor: 2_500 },
  ], capture);
  t.same(lines, [
    { account: 'sales', currency: 'MXN', amountMinor: 8_621 },
    { account: 'iva_trasladado_cobrado', currency: 'MXN', amountMinor: 1_379 },
    { account: 'platform_fee_income', currency: 'MXN', amountMinor: -1_293 },
    { account: 'iva_trasladado_cobrado', currency: 'MXN', amountMinor: -207 },
    { account: 'connect_payable:a1', currency: 'MXN', amountMinor: -6_000 },
    { account: 'connect_payable:a2', currency: 'MXN', amountMinor: -2_500 },
  ]);
  t.doesNotThrow(() => assertBalanced(lines));
  t.doesNotThrow(() => assertBalanced(transferLines('MXN', 100, 0, [{ connectAccountId: 'a', amountMinor: 100 }], [{ account: 'sales', currency: 'MXN', amountMinor: -100 }])), 'a zero fee');
  t.throws(() => transferLines('MXN', 10_000, 1_000, [{ connectAccountId: 'a', amountMinor: 8_000 }], capture), /does not add up/);
  t.throws(() => transferLines('MXN', 10_001, 1_001, [{ connectAccountId: 'a', amountMinor: 9_000 }], capture), /exceeds/);
  t.throws(() => transferLines('MXN', 100, 0, [{ connectAccountId: 'a', amountMinor: 100 }], []), /no capture entry/);
});

t.test('a part of a charge: each credited account\'s share, the total exact; a booked gross sale reversed as booked', async (t) => {
  // capture of 1,160.00 with a 50.00 tip: sales 1,000.00, IVA 160.00, tip 50.00
  const capture = [
    { account: 'sales', currency: 'MXN', amountMinor: -100_000 },
    { account: 'iva_trasladado_cobrado', currency: 'MXN', amountMinor: -16_000 },
    { account: 'tips_payable', currency: 'MXN', amountMinor: -5_000 },
  ] as const;
  t.same(captureShareLines('MXN', 121_000, capture).map((l) => [l.account, l.amountMinor]), [['sales', 100_000], ['iva_trasladado_cobrado', 16_000], ['tips_payable', 5_000]], 'the whole charge: exactly the capture');
  const part = captureShareLines('MXN', 333, capture);
  t.equal(part.reduce((s, l) => s + l.amountMinor, 0), 333, 'a part sums to the part');
  t.same(part.map((l) => l.account), ['sales', 'iva_trasladado_cobrado', 'tips_payable']);
  t.same(captureShareLines('MXN', 1_000, [{ account: 'sales', currency: 'MXN', amountMinor: -1_000 }]), [{ account: 'sales', currency: 'MXN', amountMinor: 1_000 }], 'a capture booked gross (before IVA was split) is reversed gross');
});

t.test('a payout: sent from the merchant account at the rail, returned back to it', async (t) => {
  const sent = payoutSentLines('stp', 'MXN', 6_000, 'a1');
  t.same(sent, [
    { account: 'connect_payable:a1', currency: 'MXN', amountMinor: 6_000 },
    { account: 'payout_source:stp', currency: 'MXN', amountMinor: -6_000 },
  ]);
  t.same(payoutSentLines('stp', 'MXN', 700)[0], { account: 'payouts', currency: 'MXN', amountMinor: 700 }, 'a plain payout');
  const back = payoutReturnedLines('stp', 'MXN', 6_000, 'a1');
  t.same(back, [
    { account: 'connect_payable:a1', currency: 'MXN', amountMinor: -6_000 },
    { account: 'payout_source:stp', currency: 'MXN', amountMinor: 6_000 },
  ]);
  for (const l of [sent, back]) t.doesNotThrow(() => assertBalanced(l));
});
