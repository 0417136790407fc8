// Conekta (México) card adapter, from its public API (../shared/formats/card-processors.md;
// official OpenAPI conekta/openapi@82ce68e v2.3.0 and its later createOrder `Idempotency-Key` header,
// official SDK conekta/conekta-node). A charge is an order with one card charge (`POST /orders`, sent
// with `Idempotency-Key: <our key>`); capture/refund/cancel act on the order. How long Conekta keeps
// a key is not documented, so the adapter also keeps our key → order id in the key book, puts our
// key in the order's `metadata` and the charge's `reference_id`, and books the moment it first sent
// the key. An order it never got an answer for is found by listing the orders created
// around that moment (`created_at.gte/lte`, documented filters) and matching metadata, after trying
// `search` (a general search whose reach is not documented). The token is single-use: a
// `tokenization.used` answer to a key sent before means our first send used it (outcome unknown),
// never a decline. Decline codes are mapped exhaustively: a code not in the tables below is
// `unmapped_decline` (hard) and fails the adapter tests. Sources: docs/routing.md ("Conekta").
import { createHash, createVerify, publicDecrypt } from 'node:crypto';
import { type Acquirer, type CallContext, type ChargeRequest, type PaymentMethod, type ProviderOutcome, type RefundLookup, type RefundOutcome, type RefundRequest, type SaveOutcome } from '../acquirer.js';
import { callJson, faultIf5xx, isObj, malformed, type CredentialsFor, type HttpOptions, type JsonAnswer, type KeyBook } from './http.js';
import { OutcomeUnknown } from '../../kernel/outbound.js';

/** How far Conekta's clock may be behind ours when a lost refund is looked for by its time. */
const REFUND_CLOCK_SKEW_S = 300;

/** The refunds of an order's charge, oldest first: id, amount (positive cents), created_at (unix s) when given. */
function refundsOf(order: Record<string, unknown>): Array<{ id: string; amount: number; createdAt?: number }> {
  const ch = isObj(order.charges) && Array.isArray(order.charges.data) ? order.charges.data[0] : undefined;
  const list = isObj(ch) && isObj(ch.refunds) && Array.isArray(ch.refunds.data) ? (ch.refunds.data as unknown[]) : [];
  return list
    .filter((r): r is Record<string, unknown> => isObj(r) && typeof r.id === 'string' && typeof r.amount === 'number')
    .map((r) => ({ id: r.id as string, amount: Math.abs(r.amount as number), ...(typeof r.created_at === 'number' ? { createdAt: r.created_at } : {}) }))
    .sort((x, y) => (x.createdAt ?? 0) - (y.createdAt ?? 0));
}

/** The API version the official SDK (conekta-node) and the OpenAPI document ask for [C]. */
export const CONEKTA_ACCEPT = 'application/vnd.conekta-v2.3.0+json';
/** How far around the first send the order listing looks for an order whose answer was lost. */
export const LOST_ORDER_WINDOW = { beforeS: 300, afterS: 3600, pages: 8 } as const;
const sentKey = (key: string) => `${key}#sent`;
/** The key-book entry of a Conekta charge id → its order id (a chargeback names the charge). */
const chargeKey = (chargeId: string) => `charge:${chargeId}`;

/**
 * What stands in for a buyer field Orquesta does not know. Conekta's `customer_info` requires name,
 * email and phone (conekta/openapi `schemas/customers/customer_info.yml`; the newer copy also lists
 * `corporate`, default false), but a payment intent knows at most its customer's name and email (the
 * spec's customer has no phone, and no billing details are collected). The email is on the reserved
 * `.invalid` domain (RFC 2606) and the phone a fixed ten-digit placeholder: neither reaches a person.
 */
export const CONEKTA_UNKNOWN_BUYER = { name: 'Cliente', email: 'pagos@orquesta.invalid', phone: '5500000000' } as const;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** `customer_info` of an order: the intent's customer where known, CONEKTA_UNKNOWN_BUYER for the rest (docs/routing.md). */
export function conektaCustomerInfo(buyer: ChargeRequest['buyer']): { name: string; email: string; phone: string; corporate: false } {
  const name = buyer?.name?.trim().slice(0, 250);
  const email = buyer?.email?.trim();
  return {
    name: name || CONEKTA_UNKNOWN_BUYER.name,
    email: email && EMAIL.test(email) ? email : CONEKTA_UNKNOWN_BUYER.email,
    phone: CONEKTA_UNKNOWN_BUYER.phone,
    corporate: false,
  };
}

type Mapped = { kind: 'hard_decline' | 'soft_decline'; code: string };
const hard = (code: string): Mapped => ({ kind: 'hard_decline', code });

/** `details[].code` of Conekta error bodies (402 processing_error, 422 parameter_validation_error, 401). */
export const CONEKTA_ERROR_CODES: Record<string, Mapped> = {
  'conekta.errors.processing.bank.declined': hard('card_declined'),
  'conekta.errors.processing.bank_bindings.declined': hard('card_declined'),
  'conekta.errors.processing.bank.insufficient_funds': hard('insufficient_funds'),
  'conekta.errors.processing.bank_bindings.insufficient_funds': hard('insufficient_funds'),
  'conekta.errors.processing.charge.card_payment.suspicious_behaviour': hard('suspected_fraud'),
  'conekta.errors.processing.charge.card_payment.declined_by_3ds': hard('authentication_failed'),
  'conekta.errors.processing.tokenization.used': hard('token_used'),
  'conekta.errors.parameter_validation.payment_method.token_id.nonexistent_token': hard('invalid_token'),
  'conekta.errors.parameter_validation.expiration_date.expired': hard('expired_card'),
  'conekta.errors.parameter_validation.card.number': hard('invalid_card_number'),
  'conekta.errors.parameter_validation.card.cvc': hard('invalid_cvc'),
  'conekta.errors.authentication.missing_key': hard('invalid_credentials'),
};

/** `failure_code` of a declined charge object. */
export const CONEKTA_FAILURE_CODES: Record<string, Mapped> = {
  suspected_fraud: hard('suspected_fraud'),
  restricted_card: hard('restricted_card'),
  insufficient_funds: hard('insufficient_funds'),
  card_declined: hard('card_declined'),
};

/** Error `type` → what it means when no code says more. 5xx (`api_error`) never gets here: a fault. */
export const CONEKTA_ERROR_TYPES: Record<string, Mapped> = {
  processing_error: hard('card_declined'),
  parameter_validation_error: hard('provider_rejected_request'),
  authentication_error: hard('invalid_credentials'),
  malformed_request_error: hard('provider_rejected_request'),
  precondition_required_error: hard('provider_rejected_request'),
  conflict_error: hard('provider_rejected_request'),
  resource_not_found_error: hard('provider_rejected_request'),
};

export function mapConektaError(body: Record<string, unknown>): Mapped & { message: string; providerCode: string } {
  const details = Array.isArray(body.details) ? (body.details as Array<Record<string, unknown>>) : [];
  const d = details[0] ?? {};
  const code = typeof d.code === 'string' ? d.code : undefined;
  const message = typeof d.message === 'string' ? d.message : String(body.type ?? 'declined');
  const data = isObj(body.data) ? body.data : undefined;
  const charge = data && isObj(data.charges) && Array.isArray(data.charges.data) ? (data.charges.data[0] as Record<string, unknown>) : data;
  const failure = typeof charge?.failure_code === 'string' ? charge.failure_code : undefined;
  if (code && CONEKTA_ERROR_CODES[code]) return { ...CONEKTA_ERROR_CODES[code]!, message, providerCode: code };
  if (!code && failure && CONEKTA_FAILURE_CODES[failure]) return { ...CONEKTA_FAILURE_CODES[failure]!, message, providerCode: failure };
  if (!code && !failure && typeof body.type === 'string' && CONEKTA_ERROR_TYPES[body.type]) return { ...CONEKTA_ERROR_TYPES[body.type]!, message, providerCode: body.type };
  return { kind: 'hard_decline', code: 'unmapped_decline', message: `Conekta ${code ?? failure ?? String(body.type)}: ${message}`, providerCode: code ?? failure ?? String(body.type) };
}

export interface ConektaOptions extends HttpOptions {
  credentials: CredentialsFor;
  book: KeyBook;
}

export class ConektaAcquirer implements Acquirer {
  readonly key = 'conekta';
  readonly simulated = false;
  readonly savesMethods = false;
  constructor(private o: ConektaOptions) {}

  supports(method: PaymentMethod): boolean {
    return method === 'card';
  }

  private async auth(tenantId: string, livemode: boolean): Promise<Record<string, string> | null> {
    const c = await this.o.credentials(tenantId, livemode);
    return c ? { authorization: `Bearer ${c.private_key}`, accept: CONEKTA_ACCEPT, 'accept-language': 'es' } : null;
  }

  /** An order answer → outcome (null: the order is not one we can read). */
  private orderOutcome(order: unknown): ProviderOutcome {
    if (!isObj(order) || typeof order.id !== 'string') malformed('order without id');
    const charges = isObj(order.charges) && Array.isArray(order.charges.data) ? (order.charges.data as unknown[]) : [];
    const ch = charges[0];
    if (!isObj(ch) || typeof ch.status !== 'string') malformed('order without a charge status');
    const providerRef = order.id;
    switch (ch.status) {
      case 'paid':
      case 'refunded':
      case 'partially_refunded':
        return { kind: 'captured', providerRef };
      case 'pre_authorized':
        return { kind: 'authorized', providerRef };
      case 'canceled':
      case 'voided':
        return { kind: 'voided', providerRef };
      case 'declined': {
        const m = mapConektaError({ data: ch });
        return { kind: m.kind, providerRef, code: m.code, message: typeof ch.failure_message === 'string' ? ch.failure_message : m.message };
      }
      case 'pending_payment': {
        const next = isObj(order.next_action) && isObj(order.next_action.redirect_to_url) ? order.next_action.redirect_to_url.url : undefined;
        if (typeof next === 'string') return { kind: 'action_required', providerRef, nextAction: { type: 'redirect', redirect_url: next } };
        throw new OutcomeUnknown('unreachable', 'Conekta: order pending without an action (ask again later)');
      }
      default:
        return malformed(`charge status ${String(ch.status)}`);
    }
  }

  private answerToOutcome(a: JsonAnswer): ProviderOutcome {
    faultIf5xx(a, 'Conekta');
    if (a.status === 200 || a.status === 201) return this.orderOutcome(a.json);
    if (!isObj(a.json) || a.json.object !== 'error') malformed(`HTTP ${a.status} without an error object`);
    const m = mapConektaError(a.json);
    const data = isObj(a.json.data) ? a.json.data : undefined;
    const ref = typeof data?.order_id === 'string' ? data.order_id : typeof data?.id === 'string' ? data.id : undefined;
    return { kind: m.kind, ...(ref ? { providerRef: ref } : {}), code: m.code, message: m.message };
  }

  async charge(req: ChargeRequest): Promise<ProviderOutcome> {
    const headers = await this.auth(req.tenantId, req.livemode);
    if (!headers) return { kind: 'hard_decline', code: 'invalid_credentials', message: 'No Conekta credentials are stored for this tenant and mode.' };
    // A key we already sent is looked up first (how long Conekta keeps an Idempotency-Key is undocumented): never charged twice.
    const sentBefore = await this.o.book.get(this.key, sentKey(req.idempotencyKey));
    if (sentBefore || (await this.o.book.get(this.key, req.idempotencyKey))) {
      const known = await this.retrieve(req.idempotencyKey, req);
      if (known) return known;
    }
    if (!sentBefore) await this.o.book.put(this.key, sentKey(req.idempotencyKey), String(Math.floor(Date.now() / 1000)), req.tenantId, req.livemode);
    const token = req.paymentToken ?? '';
    const pm = token.startsWith('src_') ? { type: 'card', payment_source_id: token } : { type: 'card', token_id: token };
    // Conekta's newer OpenAPI documents an optional `Idempotency-Key` on createOrder ("retrying a request
    // with the same key returns the original response"): sent with our key, so a resend after a lost
    // answer gets the first order back instead of spending the single-use token again. How long Conekta
    // keeps a key is not documented, so the lookup above stays the first resort (docs/routing.md).
    const a = await callJson(this.o, 'POST', '/orders', { ...headers, 'idempotency-key': req.idempotencyKey }, {
      currency: req.currency,
      customer_info: conektaCustomerInfo(req.buyer),
      line_items: [{ name: 'Cargo', unit_price: req.amountMinor, quantity: 1 }],
      charges: [{ payment_method: pm, amount: req.amountMinor, reference_id: req.idempotencyKey }],
      pre_authorize: false,
      metadata: { orquesta_key: req.idempotencyKey, attempt_id: req.attemptId, tenant_id: req.tenantId },
    });
    const outcome = this.answerToOutcome(a);
    // The token is single-use: refused as used when this key was sent before means our earlier send
    // spent it and its order has not been found yet. Unknown (ask again), never a decline.
    if (sentBefore && outcome.kind === 'hard_decline' && outcome.code === 'token_used') throw new OutcomeUnknown('not_ready', 'Conekta: the token was spent by an earlier send of this key whose order is not listed yet (ask again)');
    if ((a.status === 200 || a.status === 201) && isObj(a.json)) await this.bookOrder(req.idempotencyKey, a.json, req.tenantId, req.livemode);
    else if ('providerRef' in outcome && outcome.providerRef) await this.o.book.put(this.key, req.idempotencyKey, outcome.providerRef, req.tenantId, req.livemode);
    return outcome;
  }

  /** Books an order found or answered: our key → order id, and its charge id → order id (chargebacks name the charge). */
  private async bookOrder(key: string, order: Record<string, unknown>, tenantId: string, livemode: boolean): Promise<void> {
    if (typeof order.id !== 'string') return;
    await this.o.book.put(this.key, key, order.id, tenantId, livemode);
    const ch = isObj(order.charges) && Array.isArray(order.charges.data) ? order.charges.data[0] : undefined;
    if (isObj(ch) && typeof ch.id === 'string') await this.o.book.put(this.key, chargeKey(ch.id), order.id, tenantId, livemode);
  }

  /** The order id of a charge id, when this adapter booked it (webhooks: a chargeback names the charge). */
  async orderOfCharge(chargeId: string): Promise<string | null> {
    return this.o.book.get(this.key, chargeKey(chargeId));
  }

  private async orderIdFor(key: string, headers: Record<string, string>): Promise<string | null> {
    const known = await this.o.book.get(this.key, key);
    if (known) return known;
    const hit = (orders: unknown[]) => orders.find((o) => isObj(o) && isObj(o.metadata) && o.metadata.orquesta_key === key) as Record<string, unknown> | undefined;
    const list = async (query: string) => {
      const a = await callJson(this.o, 'GET', `/orders?${query}`, headers);
      faultIf5xx(a, 'Conekta order listing');
      if (a.status !== 200 || !isObj(a.json) || !Array.isArray(a.json.data)) malformed(`order listing answered HTTP ${a.status}`);
      return a.json as { data: unknown[]; has_more?: boolean; next_page_url?: string | null };
    };
    // 1. `search` (it may or may not cover metadata: [U]).
    let found = hit((await list(`search=${encodeURIComponent(key)}`)).data);
    // 2. The orders created around our first send of the key, page by page (documented filters).
    const sent = await this.o.book.get(this.key, sentKey(key));
    if (!found && sent) {
      const at = Number(sent);
      let next: string | undefined;
      for (let page = 0; page < LOST_ORDER_WINDOW.pages && !found; page++) {
        const q = `limit=250&created_at.gte=${at - LOST_ORDER_WINDOW.beforeS}&created_at.lte=${at + LOST_ORDER_WINDOW.afterS}${next ? `&next=${encodeURIComponent(next)}` : ''}`;
        const l = await list(q);
        found = hit(l.data);
        const last = l.data[l.data.length - 1];
        if (!l.has_more || !isObj(last) || typeof last.id !== 'string') break;
        next = last.id;
      }
    }
    if (!found || typeof found.id !== 'string') return null;
    // Found (our earlier call got no answer): booked, so a repeat of the key reads it back.
    const tenant = isObj(found.metadata) && typeof found.metadata.tenant_id === 'string' ? found.metadata.tenant_id : '';
    await this.bookOrder(key, found, tenant, found.livemode === true);
    return found.id;
  }

  async retrieve(idempotencyKey: string, ctx?: CallContext): Promise<ProviderOutcome | null> {
    if (!ctx) throw new OutcomeUnknown('not_ready', 'Conekta retrieve needs the tenant');
    const headers = await this.auth(ctx.tenantId, ctx.livemode);
    if (!headers) throw new OutcomeUnknown('not_ready', 'No Conekta credentials to ask with');
    const id = await this.orderIdFor(idempotencyKey, headers);
    if (!id) return null;
    const a = await callJson(this.o, 'GET', `/orders/${encodeURIComponent(id)}`, headers);
    faultIf5xx(a, 'Conekta order read');
    if (a.status === 404) return null;
    if (a.status !== 200) malformed(`order read answered HTTP ${a.status}`);
    return this.orderOutcome(a.json);
  }

  async capture(idempotencyKey: string, ctx?: CallContext): Promise<ProviderOutcome> {
    if (!ctx) throw new OutcomeUnknown('not_ready', 'Conekta capture needs the tenant and amount');
    const headers = await this.auth(ctx.tenantId, ctx.livemode);
    if (!headers) throw new OutcomeUnknown('not_ready', 'No Conekta credentials');
    const id = await this.orderIdFor(idempotencyKey, headers);
    if (!id) throw new OutcomeUnknown('unreachable', `Conekta: no order for ${idempotencyKey} to capture`);
    const a = await callJson(this.o, 'POST', `/orders/${encodeURIComponent(id)}/capture`, headers, { amount: ctx.amountMinor });
    // 428: not capturable any more (already captured or canceled): the order says what it is.
    if (a.status === 428) return (await this.retrieve(idempotencyKey, ctx)) ?? malformed('capture refused for an unknown order');
    return this.answerToOutcome(a);
  }

  async void(idempotencyKey: string, ctx?: CallContext): Promise<ProviderOutcome> {
    if (!ctx) throw new OutcomeUnknown('not_ready', 'Conekta cancel needs the tenant');
    const headers = await this.auth(ctx.tenantId, ctx.livemode);
    if (!headers) throw new OutcomeUnknown('not_ready', 'No Conekta credentials');
    const id = await this.orderIdFor(idempotencyKey, headers);
    if (!id) throw new OutcomeUnknown('unreachable', `Conekta: no order for ${idempotencyKey} to cancel`);
    const a = await callJson(this.o, 'POST', `/orders/${encodeURIComponent(id)}/cancel`, headers, {});
    if (a.status === 428) return (await this.retrieve(idempotencyKey, ctx)) ?? malformed('cancel refused for an unknown order');
    return this.answerToOutcome(a);
  }

  async refund(req: RefundRequest): Promise<RefundOutcome> {
    const done = await this.o.book.get(this.key, req.idempotencyKey);
    if (done) return { kind: 'succeeded', providerRef: done };
    const headers = await this.auth(req.tenantId, req.livemode);
    if (!headers) return { kind: 'failed', code: 'invalid_credentials', message: 'No Conekta credentials are stored for this tenant and mode.' };
    const id = await this.orderIdFor(req.chargeKey, headers);
    if (!id) return { kind: 'failed', code: 'charge_not_found', message: 'Conekta does not know the charge.' };
    // Conekta allows several partial refunds of an order and documents no idempotency key for refunds: a resend would
    // refund again. The caller asks lookupRefund first whenever this call may have left before.
    const a = await callJson(this.o, 'POST', `/orders/${encodeURIComponent(id)}/refunds`, headers, { amount: req.amountMinor, reason: 'requested_by_client' });
    faultIf5xx(a, 'Conekta refund');
    if (a.status !== 200) {
      const m = isObj(a.json) ? mapConektaError(a.json) : undefined;
      return { kind: 'failed', code: m?.code ?? 'refund_declined', message: m?.message ?? `Conekta answered HTTP ${a.status}` };
    }
    if (!isObj(a.json) || typeof a.json.id !== 'string') malformed('refund answer without the order');
    // The refund is the newest of the order's refunds of this amount (Conekta lists them on the charge).
    const mine = refundsOf(a.json).filter((r) => r.amount === req.amountMinor).pop();
    const ref = mine?.id ?? `${a.json.id}:refund:${req.idempotencyKey}`;
    await this.o.book.put(this.key, req.idempotencyKey, ref, req.tenantId, req.livemode);
    return { kind: 'succeeded', providerRef: ref };
  }

  /**
   * A refund whose answer was lost: Conekta keeps no key of ours on a refund, so the order's refunds
   * are read and this one is the oldest refund of its amount made since its first send that no
   * other refund of ours recorded (docs/routing.md: refunds, [U] for `created_at` on refunds).
   */
  async lookupRefund(req: RefundLookup): Promise<RefundOutcome | null> {
    const done = await this.o.book.get(this.key, req.idempotencyKey);
    if (done) return { kind: 'succeeded', providerRef: done };
    const headers = await this.auth(req.tenantId, req.livemode);
    if (!headers) throw new OutcomeUnknown('not_ready', 'No Conekta credentials to ask with');
    const id = await this.orderIdFor(req.chargeKey, headers);
    if (!id) return null;
    const a = await callJson(this.o, 'GET', `/orders/${encodeURIComponent(id)}`, headers);
    faultIf5xx(a, 'Conekta order read');
    if (a.status === 404) return null;
    if (a.status !== 200 || !isObj(a.json)) malformed(`order read answered HTTP ${a.status}`);
    const since = Math.floor(req.sentAfter.getTime() / 1000) - REFUND_CLOCK_SKEW_S;
    const hit = refundsOf(a.json).find((r) => r.amount === req.amountMinor && !req.claimed.includes(r.id) && (r.createdAt === undefined || r.createdAt >= since));
    if (!hit) return null;
    await this.o.book.put(this.key, req.idempotencyKey, hit.id, req.tenantId, req.livemode);
    return { kind: 'succeeded', providerRef: hit.id };
  }

  async saveMethod(): Promise<SaveOutcome> {
    // Conekta keeps cards as payment sources of a customer: not wired yet (docs/routing.md).
    return { kind: 'failed', code: 'save_not_supported', message: 'Saving cards with Conekta is not supported yet.' };
  }
}

/**
 * Verifies a Conekta delivery with the tenant's webhook key (the public half of the pair Conekta made
 * at `POST /webhook_keys`). Conekta documents DIGEST as "the sha256 of the message encrypted with the
 * private key" [C, docs]: the header (base64; URL-encoded copies are decoded first) is RSA-decrypted
 * with the public key and must give the body's SHA-256 as hex (what Conekta's PrestaShop module
 * compares with) [T]. Also accepted, being equally unforgeable without Conekta's private key: the raw
 * 32-byte digest, and a standard PKCS#1 v1.5 RSA-SHA256 signature ([U] which of these Conekta sends:
 * docs/routing.md). Returns the event or null.
 */
export function verifyConektaWebhook(rawBody: string, digest: string | undefined, publicKeyPem: string | undefined): { type: string; object: Record<string, unknown> } | null {
  if (!digest || !publicKeyPem) return null;
  if (!conektaDigestMatches(rawBody, digest, publicKeyPem)) return null;
  let ev: unknown;
  try {
    ev = JSON.parse(rawBody);
  } catch {
    return null;
  }
  if (!isObj(ev) || typeof ev.type !== 'string' || !isObj(ev.data) || !isObj(ev.data.object)) return null;
  return { type: ev.type, object: ev.data.object };
}

export function conektaDigestMatches(rawBody: string, digest: string, publicKeyPem: string): boolean {
  const sha = createHash('sha256').update(rawBody, 'utf8').digest();
  const candidates = new Set([digest.trim()]);
  try {
    candidates.add(decodeURIComponent(digest.trim()));
  } catch {
    /* not URL-encoded */
  }
  for (const c of candidates) {
    if (!/^[A-Za-z0-9+/=_-]+$/.test(c)) continue;
    const bytes = Buffer.from(c, 'base64');
    if (bytes.length < 64) continue;
    let plain: Buffer | undefined;
    try {
      plain = publicDecrypt(publicKeyPem, bytes);
    } catch {
      plain = undefined;
    }
    if (plain) {
      const text = plain.toString('utf8').trim().toLowerCase();
      if (text === sha.toString('hex') || plain.equals(sha)) return true;
    }
    try {
      if (createVerify('sha256').update(rawBody, 'utf8').verify(publicKeyPem, bytes)) return true;
    } catch {
      /* not a key or not a signature */
    }
  }
  return false;
}
