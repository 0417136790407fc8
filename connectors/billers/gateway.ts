// The biller aggregator: one interface for the party that knows amounts due and takes bill
// payments (a sim implementation for test mode; no live adapter yet: live keys get no route).
export interface BillInquiry {
  amountDueMinor: number;
  currency: string;
  holderName: string;
  /** YYYY-MM-DD */
  dueDate: string;
}

export interface BillOrder {
  /** Our key for the payment (derived from the service payment id): a repeat pays nothing again. */
  key: string;
  tenantId: string;
  billerCode: string;
  reference: string;
  amountMinor: number;
}

export type BillState = { state: 'paid'; providerRef: string } | { state: 'failed'; providerRef: string; reason: string };


export interface BillerGateway {
  readonly key: string;
  /** The account behind a reference, or null when the biller knows none. */
  inquire(billerCode: string, reference: string): Promise<BillInquiry | null>;
  /** Throws OutcomeUnknown (kernel/outbound.ts) when the aggregator did not answer: ask status() later. */
  pay(order: BillOrder): Promise<BillState>;
  /** What became of a payment key, or null when the aggregator never saw it. */
  status(key: string): Promise<BillState | null>;
}
