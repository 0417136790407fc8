// The card/push acquirer interface. One file per provider implements it; `sim` is the reference.
// Declines are values; only transport or contract faults throw (OutcomeUnknown, kernel/outbound.ts),
// which means the outcome is unknown and must be settled with retrieve() (a refund: lookupRefund())
// before anything else happens.

export type PaymentMethod = 'card' | 'spei' | 'codi' | 'oxxo' | 'dimo';
export const PAYMENT_METHODS: readonly PaymentMethod[] = ['card', 'spei', 'codi', 'oxxo', 'dimo'];

export type NextAction =
  | { type: 'redirect'; redirect_url: string }
  /** `referencia_numerica`: Orquesta's, not the connector's (added by the payment intent actor; docs/bank-statements.md). */
  | { type: 'bank_transfer'; clabe: string; beneficiary: string; expires_at: string; referencia_numerica?: number }
  | { type: 'codi_qr'; qr_payload: string; expires_at: string }
  | { type: 'oxxo_voucher'; reference: string; expires_at: string };

export type ProviderOutcome =
  | { kind: 'captured'; providerRef: string; dispute?: { reason: string } }
  | { kind: 'authorized'; providerRef: string }
  | { kind: 'action_required'; providerRef: string; nextAction: NextAction; expiresAt?: string }
  | { kind: 'hard_decline'; providerRef?: string; code: string; message: string }
  | { kind: 'soft_decline'; providerRef?: string; code: string; message: string }
  | { kind: 'voided'; providerRef: string };

export interface ChargeRequest {
  /** Derived from the attempt id: the same attempt always sends the same key. */
  idempotencyKey: string;
  attemptId: string;
  tenantId: string;
  livemode: boolean;
  method: PaymentMethod;
  amountMinor: number;
  currency: string;
  paymentToken?: string;
  /** The shopper's IP (confirm's `payer_ip`, or the browser's address at the public checkout); Openpay requires it. */
  payerIp?: string;
  /**
   * The buyer, when the intent names a customer (its name and email; the spec's customer has no
   * phone). Personal data: sent to the connector only, never logged. Conekta requires one per order.
   */
  buyer?: { name?: string; email?: string };
  /** The tenant's clock (test mode follows the test clock): push expiries are computed from it. */
  now: Date;
}

/** Who an operation after the charge is for: real adapters need the tenant's credentials (and Conekta's capture the amount). */
export interface CallContext {
  tenantId: string;
  livemode: boolean;
  amountMinor?: number;
  currency?: string;
}

export type RefundOutcome = { kind: 'succeeded'; providerRef: string } | { kind: 'failed'; code: string; message: string };

/** A refund of part or all of a captured charge (`chargeKey`: the charge's idempotency key). */
export interface RefundRequest {
  idempotencyKey: string;
  chargeKey: string;
  amountMinor: number;
  currency: string;
  tenantId: string;
  livemode: boolean;
}

/** What a refund lookup needs besides the refund: what tells this refund from the charge's others. */
export interface RefundLookup extends RefundRequest {
  /** When this refund's first send may have left (its send_started_at): a provider refund made before is not this one. */
  sentAfter: Date;
  /** The provider refs of the charge's other refunds already recorded: never this one. */
  claimed: string[];
}

export type SaveOutcome = { kind: 'saved'; providerRef: string; brand: string; last4: string } | { kind: 'failed'; code: string; message: string };

export interface Acquirer {
  readonly key: string;
  /** A simulator (test mode only): live mode never routes to it (architecture invariant 9). */
  readonly simulated: boolean;
  /** false: this adapter cannot keep cards on file yet (saving answers payment_method.no_route at once). */
  readonly savesMethods?: boolean;
  supports(method: PaymentMethod): boolean;
  /** Idempotent on idempotencyKey: a repeat returns the first outcome and moves no money. */
  charge(req: ChargeRequest): Promise<ProviderOutcome>;
  /** What the provider knows of a key; null when it never saw it. */
  retrieve(idempotencyKey: string, ctx?: CallContext): Promise<ProviderOutcome | null>;
  capture(idempotencyKey: string, ctx?: CallContext): Promise<ProviderOutcome>;
  void(idempotencyKey: string, ctx?: CallContext): Promise<ProviderOutcome>;
  /** Refunds part or all of a captured charge (a repeat of the key is absorbed where the provider allows it). */
  refund(req: RefundRequest): Promise<RefundOutcome>;
  /**
   * What the provider knows of a refund sent before whose answer was lost (a timeout, a 5xx, a
   * killed worker): its outcome, or null when the provider never saw it (then it may be sent). The
   * ask-first half of the outbound protocol (kernel/outbound.ts): no refund is ever sent twice.
   */
  lookupRefund(req: RefundLookup): Promise<RefundOutcome | null>;
  /** Exchanges a single-use token for a reusable reference (card on file); idempotent on idempotencyKey. */
  saveMethod(req: { idempotencyKey: string; token: string; tenantId: string; livemode: boolean }): Promise<SaveOutcome>;
}


/** The provider idempotency key of an attempt: never random (architecture invariant 4). */
export const providerKeyFor = (attemptId: string) => `orq_att_${attemptId}`;
export const refundKeyFor = (refundId: string) => `orq_ref_${refundId}`;
export const saveKeyFor = (paymentMethodId: string) => `orq_pm_${paymentMethodId}`;
