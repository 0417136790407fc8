// The payout-rail interface (outgoing SPEI transfers). One file per rail implements it; `sim` is
// the reference (decisions.md §5: orders succeed; a beneficiary_name of `FAIL` fails with a
// failure_reason), `stp` the real adapter (STP's registraOrden).
//
// A payout is never sent twice (architecture invariant 4, as for card attempts): the order's key
// and clave de rastreo derive from the payout id, the payout records that it is about to send
// before it sends, and a payout that may have been sent already (a crash between send and record)
// is asked about with status() before anything is sent again.
//
// Rejections are values (`failed`); only transport or contract faults throw (OutcomeUnknown,
// kernel/outbound.ts: 'unreachable', or 'bad_response' for an answer STP does not document), which
// means the outcome is unknown and must be settled with status() first.
import { createHash } from 'node:crypto';

export interface PayoutOrder {
  /** The rail's idempotency key, derived from the payout id (payoutKeyFor). */
  key: string;
  /** Clave de rastreo (SPEI tracking key), derived from the payout id (trackingKeyFor). */
  trackingKey: string;
  /** Fecha de operación (yyyyMMdd, Mexico City) of the first send: where a status query looks. */
  operationDate: string;
  tenantId: string;
  livemode: boolean;
  amountMinor: number;
  currency: string;
  /** The beneficiary's full CLABE (decrypted for the call; never logged). */
  clabe: string;
  beneficiaryName: string;
  beneficiaryRfc?: string;
  concepto: string;
  /** Numeric reference of the transfer (referencia numérica, 1..9 999 999). */
  numericReference: number;
}

/** Where an order stands at the rail. */
export type RailState =
  /** Accepted by the rail, not settled yet (STP: captured, sent, pending liquidation). */
  | { state: 'in_flight'; providerRef: string }
  /** Settled into the beneficiary's account (STP: liquidada). */
  | { state: 'paid'; providerRef: string }
  /** Refused or cancelled: no money left the account (STP: a registraOrden rejection, cancelada, rechazada). */
  | { state: 'failed'; providerRef?: string; code: string; reason: string }
  /** Settled, then sent back by the beneficiary's bank (devolución): the money came back. */
  | { state: 'returned'; providerRef: string; code: string; reason: string };

/** The identity of an order for a status query. */
export type OrderRef = Pick<PayoutOrder, 'key' | 'trackingKey' | 'operationDate' | 'tenantId' | 'livemode'>;

/** What a status callback from the rail says; a hint that makes the caller ask status() (the evidence). */
export interface CallbackNotice {
  /** The rail's order id, when the callback carries it. */
  providerRef?: string;
  trackingKey?: string;
  /** The state the callback claims; the caller does not act on it without status(). */
  claimed: RailState['state'];
  /** Company/account the callback names (STP: `empresa`), checked against the tenant's. */
  account?: string;
}

export interface PayoutRail {
  readonly key: string;
  /** Registers the order; idempotent on order.key: a repeat registers nothing and answers what the rail knows. */
  send(order: PayoutOrder): Promise<RailState>;
  /** What the rail knows of an order; null when it never saw it. */
  status(ref: OrderRef): Promise<RailState | null>;
  /** Reads a status callback's body (raw bytes as received). Throws RailCallbackError on one it cannot read. */
  parseCallback(raw: string): CallbackNotice;
  /**
   * The day's conciliation: every order the tenant's account sent on an operation day (YYYYMMDD,
   * Mexico City) with the state the rail gives it now. Like a callback, a claim: a payout it
   * disagrees with gets a notice, and the payout's outbound call asks the rail (status).
   */
  conciliate(tenantId: string, livemode: boolean, operationDate: string): Promise<ConciliatedOrder[]>;
}

/** One order of an operation day as the rail's conciliation lists it: our tracking key and its state. */
export interface ConciliatedOrder {
  trackingKey: string;
  state: RailState;
}

/**
 * The rail refused the connection itself (HTTP 401/403 or an HTML page from its gateway: the calling
 * IP is not registered, the VPN is down): a configuration fault the tenant or operator must fix.
 * Not transient (retrying cannot help) and certain that the rail's application never saw the call.
 */
export class RailConfigurationError extends Error {
  override name = 'RailConfigurationError';
}

/** A callback body that is not one the rail sends. */
export class RailCallbackError extends Error {
  override name = 'RailCallbackError';
}

/** The rail idempotency key of a payout: never random. */
export const payoutKeyFor = (payoutId: string) => `orq_po_${payoutId}`;

/**
 * The clave de rastreo of a payout: `ORQ` + the payout id's 128 bits in base 36 (25 characters,
 * upper case): 28 alphanumeric characters, under STP's 29 (shared/formats/stp.md §7), unique per
 * payout and the same at every retry, so a resend on the same day is refused by STP as a
 * duplicate (-1) instead of paying twice.
 */
export function trackingKeyFor(payoutId: string): string {
  const hex = payoutId.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new Error(`payout id must be a UUID, got ${payoutId}`);
  return `ORQ${BigInt(`0x${hex}`).toString(36).toUpperCase().padStart(25, '0')}`;
}

/** A referencia numérica derived from the payout id (1..9 999 999), for payouts sent without a numeric reference. */
export function numericReferenceFor(payoutId: string): number {
  return (createHash('sha256').update(payoutId).digest().readUInt32BE(0) % 9_999_999) + 1;
}

/** The fecha de operación (yyyyMMdd) of an instant, in Mexico City's time (SPEI's calendar). */
export function operationDateOf(at: Date): string {
  const p = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Mexico_City', year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(at);
  const part = (t: string) => p.find((x) => x.type === t)!.value;
  return `${part('year')}${part('month')}${part('day')}`;
}
