// Ledger lines of Connect and payouts: pure functions, posted by the actors in the transaction of
// the change they record (kernel/ledger.ts postEntry; entries balance per currency). Same books as
// kernel/ledger.ts captureLines: the merchant's (tenant's) own, never the orchestrator's, which
// holds no funds. Accounts (docs/connect.md has the table):
//
//   sales                              credited at capture (captureLines)
//   platform_fee_income                the platform's application fee on a split charge
//   connect_payable:<connect account>  what the platform owes a sub-merchant until it is paid out
//   payouts                            money sent to a beneficiary by a plain payout (no split)
//   payout_source:<connector>          the merchant's own account at the rail (its STP account):
//                                      payouts leave from it, devoluciones come back to it
import { accounts, type Account } from '../kernel/accounts.js';
import type { Line } from '../kernel/ledger.js';

export interface SplitLine {
  connectAccountId: string;
  amountMinor: number;
}

/**
 * A transfer splits a captured charge: its sale is taken back (debit `sales` by the charge) and
 * divided into the platform's fee (credit `platform_fee_income`) and one payable per split
 * (credit `connect_payable:<account>`). Balanced because fee + Σ splits = charge (checked first).
 */
export function transferLines(currency: string, chargeMinor: number, feeMinor: number, splits: readonly SplitLine[]): Line[] {
  const sum = splits.reduce((s, x) => s + x.amountMinor, 0);
  if (feeMinor + sum !== chargeMinor) throw new Error(`transfer does not add up: fee ${feeMinor} + splits ${sum} != charge ${chargeMinor}`);
  return [
    { account: accounts.sales, currency, amountMinor: chargeMinor },
    { account: accounts.platformFeeIncome, currency, amountMinor: -feeMinor },
    ...splits.map((s) => ({ account: accounts.connectPayable(s.connectAccountId), currency, amountMinor: -s.amountMinor })),
  ];
}

/** Whom a payout pays, in the books: a sub-merchant's payable (a split's payout) or plain `payouts`. */
export const payoutDebitAccount = (connectAccountId: string | null | undefined): Account => (connectAccountId ? accounts.connectPayable(connectAccountId) : accounts.payouts);

/** A payout left the merchant's account at the rail (posted when the rail reports it paid). */
export function payoutSentLines(connector: string, currency: string, amountMinor: number, connectAccountId?: string | null): Line[] {
  return [
    { account: payoutDebitAccount(connectAccountId), currency, amountMinor },
    { account: accounts.payoutSource(connector), currency, amountMinor: -amountMinor },
  ];
}

/** A paid payout came back (devolución): the exact reverse of its sent entry. */
export function payoutReturnedLines(connector: string, currency: string, amountMinor: number, connectAccountId?: string | null): Line[] {
  return payoutSentLines(connector, currency, amountMinor, connectAccountId).map((l) => ({ ...l, amountMinor: -l.amountMinor }));
}
