// Ledger lines of Connect and payouts: pure functions, posted by the actors in the transaction of
// the change they record (kernel/ledger.ts postEntry; entries balance per currency). Same books as
// kernel/ledger.ts captureLines: the merchant's (tenant's) own, never the orchestrator's, which
// holds no funds. Accounts (docs/connect.md has the table):
//
//   sales, iva_trasladado_cobrado,     credited at capture (captureLines): a transfer takes back its
//   tips_payable                       share of exactly what the charge's capture credited
//   platform_fee_income                the platform's application fee on a split charge, net of IVA;
//                                      its IVA (16 % included) credited to iva_trasladado_cobrado
//   connect_payable:<connect account>  what the platform owes a sub-merchant until it is paid out
//   payouts                            money sent to a beneficiary by a plain payout (no split)
//   payout_source:<connector>          the merchant's own account at the rail (its STP account):
//                                      payouts leave from it, devoluciones come back to it
import { accounts, type Account } from '../kernel/accounts.js';
import { ivaInside, type Line } from '../kernel/ledger.js';

export interface SplitLine {
  connectAccountId: string;
  amountMinor: number;
}

/**
 * The share of a capture's credits that a transfer of `chargeMinor` takes back (debits). `credits`
 * are the capture entries' own credit lines for the charge (negative amounts: `sales`, the IVA
 * trasladado, `tips_payable`; not the connector's fee netting), read from the journal, so the
 * reversal is what was booked, never a recomputed tax. Each account gets its pro-rata share
 * (half up, integer arithmetic), the largest account the remainder, so the lines sum to exactly
 * `chargeMinor`; a transfer of the whole captured amount reverses every credit exactly.
 */
export function captureShareLines(currency: string, chargeMinor: number, credits: readonly Line[]): Line[] {
  const byAccount = new Map<string, number>();
  for (const l of credits) {
    if (l.currency !== currency || l.amountMinor >= 0) continue;
    byAccount.set(l.account, (byAccount.get(l.account) ?? 0) - l.amountMinor);
  }
  const captured = [...byAccount.values()].reduce((s, x) => s + x, 0);
  if (!captured) throw new Error('transfer of a charge whose capture credited nothing: no capture entry found');
  if (chargeMinor > captured) throw new Error(`transfer of ${chargeMinor} exceeds the ${captured} its capture credited`);
  const rows = [...byAccount.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const C = BigInt(chargeMinor);
  const T = BigInt(captured);
  const shares = rows.map(([, amt], i) => (i === 0 ? 0 : Number((2n * BigInt(amt) * C + T) / (2n * T))));
  shares[0] = chargeMinor - shares.slice(1).reduce((s, x) => s + x, 0);
  if (shares[0] < 0) throw new Error('transfer share does not fit the capture');
  return rows.map(([account], i) => ({ account: account as Account, currency, amountMinor: shares[i] }));
}

/**
 * A transfer splits a captured charge: its share of what the capture credited is taken back
 * (captureShareLines: `sales` and the IVA trasladado as booked, and the tip if the charge carried
 * one) and divided into the platform's fee and one payable per split (credit
 * `connect_payable:<account>`). The fee is the platform's income for a service (intermediation),
 * IVA 16 % included like every amount at the tenant's default treatment (decisions.md §6):
 * `platform_fee_income` round(fee/1.16), its IVA in `iva_trasladado_cobrado` (208.01) because it is
 * collected when retained from a collected charge (LIVA art. 1-B). Balanced because both sides sum
 * to the charge (fee + Σ splits = charge, checked first).
 */
export function transferLines(currency: string, chargeMinor: number, feeMinor: number, splits: readonly SplitLine[], captureCredits: readonly Line[]): Line[] {
  const sum = splits.reduce((s, x) => s + x.amountMinor, 0);
  if (feeMinor + sum !== chargeMinor) throw new Error(`transfer does not add up: fee ${feeMinor} + splits ${sum} != charge ${chargeMinor}`);
  const fee = ivaInside(feeMinor);
  return [
    ...captureShareLines(currency, chargeMinor, captureCredits),
    { account: accounts.platformFeeIncome, currency, amountMinor: -fee.baseMinor },
    { account: accounts.ivaTrasladadoCobrado, currency, amountMinor: -fee.ivaMinor },
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
