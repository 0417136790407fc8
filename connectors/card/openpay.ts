// Openpay (México) card adapter, from its public API (../shared/formats/card-processors.md; the
// official SDK open-pay/openpay-python and plugin open-pay/openpay-woocommerce-cards). Paths are
// `/v1/{merchant_id}/…`, HTTP Basic with the private key, amounts in decimal pesos. Idempotency is
// Openpay's own: `order_id` (our key) is unique per merchant and a repeat answers 1006/409, after
// which the adapter reads the existing charge (`GET …/charges?order_id=`, [U] filter: docs/routing.md).
// Error codes are mapped exhaustively: one not in OPENPAY_CODES is `unmapped_decline` (hard).
// As the official PHP SDK (open-pay/openpay-php, since 2024-05) every call carries the shopper's IP
// as `X-Forwarded-For` (the SDK refuses to call without one); card charges carry `device_session_id`
// (Openpay's antifraud) and a description. A charge without either is not sent: a soft decline, so
// another connector may take it. Sources per rule: docs/routing.md ("Openpay").
import { type Acquirer, type CallContext, type ChargeRequest, type PaymentMethod, type ProviderOutcome, type RefundLookup, type RefundOutcome, type RefundRequest, type SaveOutcome } from '../acquirer.js';
import { callJson, faultIf5xx, isObj, malformed, type CredentialsFor, type HttpOptions, type JsonAnswer, type KeyBook } from './http.js';
import { OutcomeUnknown } from '../../kernel/outbound.js';

type Mapped = { kind: 'hard_decline' | 'soft_decline' | 'fault' | 'duplicate'; code: string };
const hard = (code: string): Mapped => ({ kind: 'hard_decline', code });

/**
 * Every known `error_code` → Orquesta's outcome. Where each code comes from is OPENPAY_CODE_SOURCES
 * (docs/routing.md "Openpay"): Openpay's API reference source (open-pay/slate), Openpay's official
 * plugins, or nobody's material (unconfirmed; kept so such an answer is never read as a success).
 */
export const OPENPAY_CODES: Record<number, Mapped> = {
  1000: { kind: 'fault', code: 'provider_error' },
  1001: hard('provider_rejected_request'),
  1002: hard('invalid_credentials'),
  1003: hard('provider_rejected_request'),
  // Openpay says it is unavailable and did not process the request: not charged, another connector may take it.
  1004: { kind: 'soft_decline', code: 'provider_unavailable' },
  1005: hard('provider_rejected_request'),
  1006: { kind: 'duplicate', code: 'duplicate_order_id' },
  1007: hard('transfer_rejected'),
  1008: hard('account_deactivated'),
  1009: hard('provider_rejected_request'), // 413 the request body is too large
  1010: hard('invalid_credentials'), // 403 the public key used where the private one is needed (or the private key from JavaScript)
  1011: hard('provider_rejected_request'), // [U] 404 resource marked deleted
  1012: hard('amount_out_of_range'), // [U] 412 amount outside the allowed limits
  1013: hard('not_permitted'), // [U] 423 operation not allowed on the resource
  1014: hard('account_deactivated'), // [U] 401 account inactive
  1015: { kind: 'fault', code: 'provider_error' }, // [U] 504 no answer from the gateway: outcome unknown
  1016: hard('provider_rejected_request'), // [U] 409 merchant already processed
  1017: { kind: 'fault', code: 'provider_error' }, // [U] 503 payment gateway unavailable: outcome unknown
  1018: hard('card_declined'), // [U] charge attempts with the card exceeded
  2001: hard('provider_rejected_request'), // 409 a bank account with this CLABE is already registered on the customer
  2002: hard('provider_rejected_request'), // 409 a card with this number is already registered on the customer
  2003: hard('provider_rejected_request'), // 409 a customer with this external id already exists
  2004: hard('invalid_card_number'), // 422 the card number's check digit is invalid (Luhn)
  2005: hard('expired_card'), // 400 the expiration date is before today
  2006: hard('invalid_cvc'), // 400 CVV2 not given
  2007: hard('card_not_supported'), // 412 a test card number: usable in the sandbox only
  2008: hard('card_not_supported'), // 412 the card is not valid for points
  2009: hard('invalid_cvc'), // 412 CVV2 not valid
  2010: hard('authentication_failed'), // 3-D Secure authentication failed (official Magento 2 plugin; HTTP status [U])
  2011: hard('card_not_supported'), // [U] 412 card product type not supported
  3001: hard('card_declined'), // 402 declined
  3002: hard('expired_card'), // 402 expired
  3003: hard('insufficient_funds'), // 402 insufficient funds
  3004: hard('card_declined'), // 402 identified as stolen
  3005: hard('suspected_fraud'), // 402 identified as fraudulent
  3006: hard('not_permitted'), // 412 operation not allowed for this customer or transaction
  3007: hard('card_declined'), // grouped with 3001 "La tarjeta fue rechazada" by the official plugins (HTTP status [U])
  3008: hard('card_not_supported'), // 412 not supported in online transactions
  3009: hard('lost_card'), // 402 reported lost
  3010: hard('restricted_card'), // 402 restricted by the bank
  3011: hard('retain_card'), // 402 the bank asks to retain the card
  3012: hard('call_issuer'), // 412 a bank authorization is required
  3201: hard('not_permitted'), // [U] 412 merchant not authorized for months without interest
  3203: hard('provider_rejected_request'), // [U] 402 invalid months-without-interest plan
  3204: hard('provider_rejected_request'), // [U] 412 amount not valid for months without interest
  4001: hard('provider_rejected_request'), // 412 the Openpay account has not enough funds (payouts)
  6001: hard('provider_rejected_request'), // the webhook already exists (official plugins; HTTP status [U])
  6002: hard('provider_rejected_request'), // the webhook could not be created (official plugins; HTTP status [U])
  6003: hard('provider_rejected_request'), // the webhook could not be created (official plugins; HTTP status [U])
};

/**
 * Where each code of OPENPAY_CODES is documented (docs/routing.md "Openpay"):
 * - `openpay_docs`: Openpay's API reference source, `open-pay/slate@f9ca7fe` `source/includes/es/errors.md`
 *   (code, HTTP status and meaning; the published errors page is built from it);
 * - `openpay_plugins`: only Openpay's official plugins handle it by code (`open-pay/openpay-woocommerce@935e1d1`,
 *   `open-pay/openpay-magento2-cards@2af4575`, `open-pay/openpay-prestashop@2069a31`): code and meaning, not the HTTP status;
 * - `unconfirmed`: in no material of Openpay's read here.
 */
export type OpenpayCodeSource = 'openpay_docs' | 'openpay_plugins' | 'unconfirmed';
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
export const OPENPAY_CODE_SOURCES: Record<number, OpenpayCodeSource> = Object.fromEntries([
  ...[...range(1000, 1010), ...range(2001, 2009), ...range(3001, 3006), ...range(3008, 3012), 4001].map((c) => [c, 'openpay_docs']),
  ...[2010, 3007, 6001, 6002, 6003].map((c) => [c, 'openpay_plugins']),
  ...[...range(1011, 1018), 2011, 3201, 3203, 3204].map((c) => [c, 'unconfirmed']),
]);

/** An error answer (`{category, error_code, description, http_code, request_id}`, text in `description`) or a failed charge (text in `error_message`). */
export function mapOpenpayError(body: Record<string, unknown>): Mapped & { message: string } {
  const n = typeof body.error_code === 'number' ? body.error_code : Number(body.error_code);
  const text = body.object === 'charge' || body.transaction_type === 'charge' || typeof body.error_message === 'string' ? body.error_message : body.description;
  const message = typeof text === 'string' ? text : `Openpay error ${String(body.error_code)}`;
  const m = OPENPAY_CODES[n];
  return m ? { ...m, message } : { kind: 'hard_decline', code: 'unmapped_decline', message: `Openpay ${String(body.error_code)}: ${message}` };
}

export interface OpenpayOptions extends HttpOptions {
  /** Test-mode keys go to Openpay's sandbox (baseUrl is live). */
  sandboxUrl?: string;
  credentials: CredentialsFor;
  book: KeyBook;
}

const pesos = (minor: number) => Math.round(minor) / 100;

export class OpenpayAcquirer implements Acquirer {
  readonly key = 'openpay';
  readonly simulated = false;
  readonly savesMethods = false;
  constructor(private o: OpenpayOptions) {}

  supports(method: PaymentMethod): boolean {
    return method === 'card';
  }

  private async auth(tenantId: string, livemode: boolean, payerIp?: string): Promise<{ headers: Record<string, string>; base: string; http: HttpOptions } | null> {
    const c = await this.o.credentials(tenantId, livemode);
    if (!c) return null;
    const http = { baseUrl: livemode ? this.o.baseUrl : this.o.sandboxUrl ?? this.o.baseUrl, timeoutMs: this.o.timeoutMs };
    const headers: Record<string, string> = { authorization: `Basic ${Buffer.from(`${c.private_key}:`).toString('base64')}` };
    if (payerIp) headers['x-forwarded-for'] = payerIp;
    return { headers, base: `/v1/${encodeURIComponent(c.merchant_id!)}`, http };
  }

  private chargeOutcome(ch: unknown): ProviderOutcome {
    if (!isObj(ch) || typeof ch.id !== 'string' || typeof ch.status !== 'string') malformed('charge without id or status');
    const providerRef = ch.id;
    switch (ch.status) {
      case 'completed':
      case 'refunded':
        return { kind: 'captured', providerRef };
      case 'in_progress': {
        const pm = isObj(ch.payment_method) ? ch.payment_method : undefined;
        if (pm?.type === 'redirect' && typeof pm.url === 'string') return { kind: 'action_required', providerRef, nextAction: { type: 'redirect', redirect_url: pm.url } };
        return { kind: 'authorized', providerRef };
      }
      case 'cancelled':
        return { kind: 'voided', providerRef };
      case 'failed': {
        const m = mapOpenpayError(ch);
        if (m.kind !== 'hard_decline' && m.kind !== 'soft_decline') return { kind: 'hard_decline', providerRef, code: 'card_declined', message: m.message };
        return { kind: m.kind, providerRef, code: m.code, message: m.message };
      }
      default:
        return malformed(`charge status ${String(ch.status)}`);
    }
  }

  private async answer(a: JsonAnswer, onDuplicate: () => Promise<ProviderOutcome>): Promise<ProviderOutcome> {
    if (a.status === 200 || a.status === 201) return this.chargeOutcome(a.json);
    if (!isObj(a.json) || a.json.error_code === undefined) {
      faultIf5xx(a, 'Openpay');
      malformed(`HTTP ${a.status} without an error_code`);
    }
    const m = mapOpenpayError(a.json);
    if (m.kind === 'duplicate') return onDuplicate();
    if (m.kind === 'fault') throw new OutcomeUnknown('unreachable', `Openpay ${String(a.json.error_code)}: ${m.message}`);
    return { kind: m.kind, code: m.code, message: m.message };
  }

  async charge(req: ChargeRequest): Promise<ProviderOutcome> {
    const au = await this.auth(req.tenantId, req.livemode, req.payerIp);
    if (!au) return { kind: 'hard_decline', code: 'invalid_credentials', message: 'No Openpay credentials are stored for this tenant and mode.' };
    // The browser tokenizer sends `<token>#<device_session_id>` (web/tokenize.js: OpenPay.deviceData.setup()).
    const [sourceId, deviceSessionId] = (req.paymentToken ?? '').split('#', 2);
    // Not sent without what Openpay's antifraud and SDK require: another connector may take it.
    if (!req.payerIp) return { kind: 'soft_decline', code: 'payer_ip_required', message: 'Openpay needs the shopper\'s IP: confirm with `payer_ip` (the public checkout sends the browser\'s address).' };
    if (!deviceSessionId) return { kind: 'soft_decline', code: 'device_session_required', message: 'Openpay needs the device session id of its browser tokenizer: the payment token is `<token>#<device_session_id>` (OpenPay.deviceData.setup()).' };
    const a = await callJson(au.http, 'POST', `${au.base}/charges`, au.headers, {
      method: 'card',
      source_id: sourceId,
      device_session_id: deviceSessionId,
      amount: pesos(req.amountMinor),
      currency: req.currency,
      description: 'Orquesta',
      order_id: req.idempotencyKey,
      capture: true,
    });
    const outcome = await this.answer(a, async () => {
      // The order_id was charged before (our earlier call got no answer): its charge is the outcome.
      const known = await this.retrieve(req.idempotencyKey, req);
      if (!known) throw new OutcomeUnknown('unreachable', 'Openpay says the order was processed but does not list it yet');
      return known;
    });
    if ('providerRef' in outcome && outcome.providerRef) await this.o.book.put(this.key, req.idempotencyKey, outcome.providerRef, req.tenantId, req.livemode);
    return outcome;
  }

  private async chargeIdFor(key: string, au: { headers: Record<string, string>; base: string; http: HttpOptions }): Promise<string | null> {
    const known = await this.o.book.get(this.key, key);
    if (known) return known;
    const a = await callJson(au.http, 'GET', `${au.base}/charges?order_id=${encodeURIComponent(key)}`, au.headers);
    faultIf5xx(a, 'Openpay charge search');
    if (a.status !== 200 || !Array.isArray(a.json)) malformed(`charge search answered HTTP ${a.status}`);
    const hit = (a.json as unknown[]).find((c) => isObj(c) && c.order_id === key) as Record<string, unknown> | undefined;
    return hit && typeof hit.id === 'string' ? hit.id : null;
  }

  async retrieve(idempotencyKey: string, ctx?: CallContext): Promise<ProviderOutcome | null> {
    if (!ctx) throw new OutcomeUnknown('not_ready', 'Openpay retrieve needs the tenant');
    const au = await this.auth(ctx.tenantId, ctx.livemode);
    if (!au) throw new OutcomeUnknown('not_ready', 'No Openpay credentials to ask with');
    const id = await this.chargeIdFor(idempotencyKey, au);
    if (!id) return null;
    const a = await callJson(au.http, 'GET', `${au.base}/charges/${encodeURIComponent(id)}`, au.headers);
    faultIf5xx(a, 'Openpay charge read');
    if (a.status === 404) return null;
    if (a.status !== 200) malformed(`charge read answered HTTP ${a.status}`);
    return this.chargeOutcome(a.json);
  }

  async capture(idempotencyKey: string, ctx?: CallContext): Promise<ProviderOutcome> {
    if (!ctx) throw new OutcomeUnknown('not_ready', 'Openpay capture needs the tenant');
    const au = await this.auth(ctx.tenantId, ctx.livemode);
    if (!au) throw new OutcomeUnknown('not_ready', 'No Openpay credentials');
    const id = await this.chargeIdFor(idempotencyKey, au);
    if (!id) throw new OutcomeUnknown('unreachable', `Openpay: no charge for ${idempotencyKey} to capture`);
    const a = await callJson(au.http, 'POST', `${au.base}/charges/${encodeURIComponent(id)}/capture`, au.headers, ctx.amountMinor ? { amount: pesos(ctx.amountMinor) } : {});
    // 1003: not capturable (already captured or cancelled): the charge says what it is.
    if (a.status === 422) return (await this.retrieve(idempotencyKey, ctx)) ?? malformed('capture refused for an unknown charge');
    return this.answer(a, async () => (await this.retrieve(idempotencyKey, ctx)) ?? malformed('duplicate capture of an unknown charge'));
  }

  async void(idempotencyKey: string, ctx?: CallContext): Promise<ProviderOutcome> {
    // A pre-authorization is released by refunding it ([U]: docs/routing.md).
    if (!ctx) throw new OutcomeUnknown('not_ready', 'Openpay void needs the tenant');
    const au = await this.auth(ctx.tenantId, ctx.livemode);
    if (!au) throw new OutcomeUnknown('not_ready', 'No Openpay credentials');
    const id = await this.chargeIdFor(idempotencyKey, au);
    if (!id) throw new OutcomeUnknown('unreachable', `Openpay: no charge for ${idempotencyKey} to void`);
    const a = await callJson(au.http, 'POST', `${au.base}/charges/${encodeURIComponent(id)}/refund`, au.headers, { description: 'void' });
    return this.answer(a, async () => (await this.retrieve(idempotencyKey, ctx)) ?? malformed('void of an unknown charge'));
  }

  async refund(req: RefundRequest): Promise<RefundOutcome> {
    const done = await this.o.book.get(this.key, req.idempotencyKey);
    if (done) return { kind: 'succeeded', providerRef: done };
    const au = await this.auth(req.tenantId, req.livemode);
    if (!au) return { kind: 'failed', code: 'invalid_credentials', message: 'No Openpay credentials are stored for this tenant and mode.' };
    const id = await this.chargeIdFor(req.chargeKey, au);
    if (!id) return { kind: 'failed', code: 'charge_not_found', message: 'Openpay does not know the charge.' };
    const a = await callJson(au.http, 'POST', `${au.base}/charges/${encodeURIComponent(id)}/refund`, au.headers, { description: req.idempotencyKey, amount: pesos(req.amountMinor) });
    if (a.status !== 200) {
      faultIf5xx(a, 'Openpay refund');
      const m = isObj(a.json) ? mapOpenpayError(a.json) : undefined;
      if (m?.kind === 'fault') throw new OutcomeUnknown('unreachable', m.message);
      return { kind: 'failed', code: m?.code ?? 'refund_declined', message: m?.message ?? `Openpay answered HTTP ${a.status}` };
    }
    if (!isObj(a.json)) malformed('refund answer');
    const refund = isObj(a.json.refund) && typeof a.json.refund.id === 'string' ? a.json.refund.id : `${id}:refund:${req.idempotencyKey}`;
    await this.o.book.put(this.key, req.idempotencyKey, refund, req.tenantId, req.livemode);
    return { kind: 'succeeded', providerRef: refund };
  }

  /**
   * A refund whose answer was lost: Openpay keeps one refund per charge, with our key as its
   * `description`; the charge is read and its refund is this one unless another refund of ours
   * recorded it or it names another key. (A resend instead would be refused, 1003, and a refund
   * that succeeded recorded failed.)
   */
  async lookupRefund(req: RefundLookup): Promise<RefundOutcome | null> {
    const done = await this.o.book.get(this.key, req.idempotencyKey);
    if (done) return { kind: 'succeeded', providerRef: done };
    const au = await this.auth(req.tenantId, req.livemode);
    if (!au) throw new OutcomeUnknown('not_ready', 'No Openpay credentials to ask with');
    const id = await this.chargeIdFor(req.chargeKey, au);
    if (!id) return null;
    const a = await callJson(au.http, 'GET', `${au.base}/charges/${encodeURIComponent(id)}`, au.headers);
    faultIf5xx(a, 'Openpay charge read');
    if (a.status === 404) return null;
    if (a.status !== 200 || !isObj(a.json)) malformed(`charge read answered HTTP ${a.status}`);
    const r = a.json.refund;
    if (!isObj(r) || typeof r.id !== 'string') return null;
    if (req.claimed.includes(r.id) || (typeof r.description === 'string' && r.description !== req.idempotencyKey)) return null;
    if (r.status === 'failed') return { kind: 'failed', code: 'refund_declined', message: 'Openpay shows the refund failed.' };
    if (typeof r.status === 'string' && r.status !== 'completed') throw new OutcomeUnknown('not_ready', `Openpay shows the refund ${r.id} ${r.status}: ask again later`);
    await this.o.book.put(this.key, req.idempotencyKey, r.id, req.tenantId, req.livemode);
    return { kind: 'succeeded', providerRef: r.id };
  }

  async saveMethod(): Promise<SaveOutcome> {
    // Openpay keeps cards under a customer (`/customers/{id}/cards`): not wired yet (docs/routing.md).
    return { kind: 'failed', code: 'save_not_supported', message: 'Saving cards with Openpay is not supported yet.' };
  }
}

/**
 * An Openpay delivery: no payload signature exists; the webhook's own user and password (HTTP Basic,
 * [U]) are checked when the tenant stored them, and the charge is always re-read from Openpay
 * before anything changes. Returns the event, or null when the credentials do not match.
 */
export function readOpenpayWebhook(body: unknown, authorization: string | undefined, creds: Record<string, string> | null): { type: string; transaction?: Record<string, unknown>; verificationCode?: string } | null {
  if (creds?.webhook_user) {
    const want = `Basic ${Buffer.from(`${creds.webhook_user}:${creds.webhook_password ?? ''}`).toString('base64')}`;
    if (authorization !== want) return null;
  }
  if (!isObj(body) || typeof body.type !== 'string') return null;
  return {
    type: body.type,
    transaction: isObj(body.transaction) ? body.transaction : undefined,
    verificationCode: typeof body.verification_code === 'string' ? body.verification_code : undefined,
  };
}
