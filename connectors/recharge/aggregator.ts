// The recharge aggregator: one interface for the party that delivers airtime/data to a handset,
// keeps the merchant's prepaid bag (bolsa) and reports its movements. A `sim` implementation
// serves test mode; live mode has no aggregator (spec: recharge.livemode_unsupported).

export interface CarrierInfo {
  code: string;
  name: string;
  active: boolean;
}

export interface ProductInfo {
  code: string;
  carrier_code: string;
  kind: 'airtime' | 'data';
  name: string;
  face_amount_minor: number;
  /** Already inside the face amount. */
  merchant_commission_minor: number;
  currency: string;
  active: boolean;
}

export interface RechargeOrder {
  /** Our order key (derived from the recharge id): a repeated send delivers nothing again. */
  key: string;
  tenantId: string;
  livemode: boolean;
  carrierCode: string;
  productCode: string;
  phone: string;
  amountMinor: number;
}

export type RechargeState = { state: 'delivered'; providerRef: string } | { state: 'failed'; providerRef: string; reason: string };


/** One movement of the bag as the aggregator's report lists it. */
export interface BagMovement {
  sourceId: string;
  movementId: string;
  registeredAt: Date;
  pouchId: string;
  pouchName: string;
  movementType: string;
  isDeposit: boolean;
  amountMinor: number;
  currency: string;
  rawAmount: string;
  units: number | null;
  additionalFolio: string | null;
  status: string;
  via: string;
}

export interface BagAccount {
  tenantId: string;
  livemode: boolean;
}

export interface RechargeAggregator {
  readonly key: string;
  carriers(): readonly CarrierInfo[];
  products(): readonly ProductInfo[];
  /** Throws OutcomeUnknown (kernel/outbound.ts) when the aggregator did not answer in time (the recharge stays pending). */
  send(order: RechargeOrder): Promise<RechargeState>;
  /** What became of an order key, or null when the aggregator never saw it. */
  status(key: string): Promise<RechargeState | null>;
  /** The movement report of one day (YYYY-MM-DD, Mexico City) of the account's bag. */
  movements(account: BagAccount, day: string): Promise<BagMovement[]>;
  balance(account: BagAccount): Promise<{ balanceMinor: number; currency: string }>;
}

/** Days as the aggregator names them (America/Mexico_City, UTC-6 all year since 2022). */
export const reportDay = (d: Date) => new Date(d.getTime() - 6 * 3600_000).toISOString().slice(0, 10);
