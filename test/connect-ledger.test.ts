// Ledger lines of Connect and payouts (actors/connect-ledger.ts): balanced, and the accounts the
// docs name. Pure: no database.
import t from 'tap';
import { assertBalanced } from '../kernel/ledger.js';
import { payoutReturnedLines, payoutSentLines, transferLines } from '../actors/connect-ledger.js';

t.test('a transfer: the sale divided into the fee and one payable per split', async (t) => {
  const lines = transferLines('MXN', 10_000, 1_500, [
    { connectAccountId: 'a1', amountMinor: 6_000 },
    { connectAccountId: 'a2', amountMinor: 2_500 },
  ]);
  t.same(lines, [
    { account: 'sales', currency: 'MXN', amountMinor: 10_000 },
    { account: 'platform_fee_income', currency: 'MXN', amountMinor: -1_500 },
    { account: 'connect_payable:a1', currency: 'MXN', amountMinor: -6_000 },
    { account: 'connect_payable:a2', currency: 'MXN', amountMinor: -2_500 },
  ]);
  t.doesNotThrow(() => assertBalanced(lines));
  t.doesNotThrow(() => assertBalanced(transferLines('MXN', 100, 0, [{ connectAccountId: 'a', amountMinor: 100 }])), 'a zero fee');
  t.throws(() => transferLines('MXN', 10_000, 1_000, [{ connectAccountId: 'a', amountMinor: 8_000 }]), /does not add up/);
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
