// A local fake of Conekta's API (v2.3.0, ../shared/formats/card-processors.md): orders with one card
// charge, decided by the token; capture, refunds, cancel; order listing with `search` and
// `created_at` filters; webhook events with a DIGEST header. It shares nothing with the adapter's
// mapping, and every request it receives and every answer it gives is checked against Conekta's
// published schema (test/fixtures/conekta, conekta-schema.ts): a mismatch is answered 422 (requests)
// and recorded in `violations`, which the tests require to stay empty.
//
// What it does as Conekta does, where the adapter once assumed otherwise:
// - tokens are single-use: a token issued by `issueToken()` (like Conekta.js's `tok_…`) charged once is
//   refused afterwards with `conekta.errors.processing.tokenization.used` (the named `tok_test_*`
//   tokens and other literal tokens the older tests use stay reusable, as Conekta's test tokens are);
// - `search` is a general search (Conekta: "e.g. by mail, reference etc."): here it matches the order
//   id and the buyer's email only, never metadata ([U] what it covers: the worst case is assumed);
// - DIGEST is the RSA encryption with Conekta's private key of the hex SHA-256 of the raw body, base64
//   (docs: "el sha256 del mensaje cifrado por la llave privada");
// - a chargeback names its charge (`charge_id`), not its order;
// - createOrder takes an optional `Idempotency-Key`: a repeat answers the original response
//   (`honorsIdempotencyKey`; off, the fake is Conekta before the header).
import { createHash, createSign, generateKeyPairSync, privateEncrypt, randomBytes } from 'node:crypto';
import { CardFake, type FakeAnswer, type FakeReq } from './card-server.js';
import { conektaViolation, type ConektaShape } from './conekta-schema.js';

/** Every decline / validation code Conekta documents (the fake's list; the adapter must map each). */
export const CONEKTA_DOCUMENTED_CODES = [
  'conekta.errors.processing.bank.declined',
  'conekta.errors.processing.bank_bindings.declined',
  'conekta.errors.processing.bank.insufficient_funds',
  'conekta.errors.processing.bank_bindings.insufficient_funds',
  'conekta.errors.processing.charge.card_payment.suspicious_behaviour',
  'conekta.errors.processing.charge.card_payment.declined_by_3ds',
  'conekta.errors.processing.tokenization.used',
  'conekta.errors.parameter_validation.payment_method.token_id.nonexistent_token',
  'conekta.errors.parameter_validation.expiration_date.expired',
  'conekta.errors.parameter_validation.card.number',
  'conekta.errors.parameter_validation.card.cvc',
  'conekta.errors.authentication.missing_key',
];
export const CONEKTA_DOCUMENTED_FAILURE_CODES = ['suspected_fraud', 'restricted_card', 'insufficient_funds', 'card_declined'];

type Order = Record<string, any> & { id: string; created_at: number; metadata: Record<string, string>; charges: { object: string; has_more: boolean; data: Array<Record<string, any>> } };
/** What a token issued by `issueToken` does when charged. */
export type TokenBehaviour = 'ok' | 'timeout' | '500_charged' | 'declined';

const typeOf = (code: string) =>
  code.includes('.parameter_validation.') ? { type: 'parameter_validation_error', status: 422 } : code.includes('.authentication.') ? { type: 'authentication_error', status: 401 } : { type: 'processing_error', status: 402 };

export class FakeConekta extends CardFake {
  readonly privateKey = 'key_test_fake_private';
  readonly orders = new Map<string, Order>();
  readonly keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  readonly publicKeyPem = this.keys.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  /** Answer delay of a timing-out token (longer than the adapter's deadline in tests). */
  slowMs = 1500;
  /** A refund is made (the money moves) but its answer comes after slowMs: the adapter's deadline passes first. */
  loseRefundAnswers = false;
  /** Requests or answers that did not match Conekta's published schema. */
  readonly violations: string[] = [];
  /** The `Accept` header of every call (the API version asked for). */
  readonly accepts: string[] = [];
  /** Whether a repeated `Idempotency-Key` on POST /orders answers the original response (the newer OpenAPI's header); false: Conekta as the v2.3.0 document of 82ce68e describes it, without the header. */
  honorsIdempotencyKey = true;
  /** The `Idempotency-Key` of every POST /orders, in order. */
  readonly idempotencyKeys: string[] = [];
  private readonly replies = new Map<string, { status: number; json: unknown }>();
  /** The clock of `created_at` (Unix seconds); tests may move it. */
  now = () => Math.floor(Date.now() / 1000);
  private n = 0;
  private readonly issued = new Map<string, TokenBehaviour>();
  private readonly usedTokens = new Set<string>();

  /** A single-use token, as Conekta.js would hand the browser. */
  issueToken(behaviour: TokenBehaviour = 'ok'): string {
    const t = `tok_${randomBytes(8).toString('hex')}`;
    this.issued.set(t, behaviour);
    return t;
  }

  /** The refunds Conekta made on an order (what moved back to the cardholder). */
  refundsOn(orderId: string): Array<{ id: string; amount: number }> {
    const ch = this.orders.get(orderId)?.charges.data[0];
    return (ch?.refunds.data ?? []).map((r: any) => ({ id: r.id, amount: -r.amount }));
  }

  /** Orders that moved money (paid) for our key. */
  paidFor(key: string) {
    return [...this.orders.values()].filter((o) => o.metadata.orquesta_key === key && ['paid', 'refunded', 'partially_refunded'].includes(o.charges.data[0]!.status)).length;
  }

  /** Orders that moved money charged with this token. */
  paidWithToken(token: string) {
    return [...this.orders.values()].filter((o) => o.charges.data[0]!.payment_method.token === token && ['paid', 'refunded', 'partially_refunded'].includes(o.charges.data[0]!.status)).length;
  }

  private error(status: number, type: string, code: string, message: string, data?: unknown, param: string | null = 'payment_method.token_id'): FakeAnswer {
    return { status, json: { object: 'error', type, log_id: `log_${++this.n}`, details: [{ code, param, message, debug_message: message }], ...(data ? { data } : {}) } };
  }

  private newOrder(body: any, status: string, token: string): Order {
    const id = `ord_${(++this.n).toString(16).padStart(8, '0')}fake`;
    const ch = body.charges?.[0] ?? {};
    const amount = ch.amount ?? body.line_items?.[0]?.unit_price;
    const created = this.now();
    const o: Order = {
      id, object: 'order', livemode: false, amount, amount_refunded: 0, currency: body.currency, payment_status: status, metadata: body.metadata ?? {}, created_at: created, updated_at: created,
      customer_info: { object: 'customer_info', ...body.customer_info },
      charges: {
        object: 'list', has_more: false,
        data: [{ id: `6${(this.n).toString(16).padStart(23, '0')}`, object: 'charge', status, amount, currency: body.currency, order_id: id, created_at: created, livemode: false, fee: 0, paid_at: status === 'paid' ? created : null, payment_method: { object: 'card_payment', type: 'credit', brand: 'visa', last4: '4242', token }, refunds: { data: [] } }],
      },
    };
    this.orders.set(id, o);
    return o;
  }

  /** A webhook delivery of an event: [body, DIGEST], DIGEST as Conekta makes it (see the header). */
  event(type: string, object: Record<string, unknown>): [string, string] {
    const body = JSON.stringify({ id: `evt_${++this.n}`, object: 'event', type, livemode: false, created_at: this.now(), data: { object, previous_attributes: {} } });
    return [body, this.digest(body)];
  }

  /** DIGEST of a body: base64 of the RSA encryption (private key, PKCS#1 v1.5) of its hex SHA-256. */
  digest(body: string): string {
    const hex = createHash('sha256').update(body, 'utf8').digest('hex');
    return privateEncrypt(this.keys.privateKey, Buffer.from(hex, 'utf8')).toString('base64');
  }

  /** A standard RSA-SHA256 signature of the body (what the adapter once required): not Conekta's scheme. */
  pkcs1Signature(body: string): string {
    return createSign('sha256').update(body, 'utf8').sign(this.keys.privateKey, 'base64');
  }

  /** A chargeback on an order's charge, as Conekta's chargeback object (names the charge, not the order). */
  chargeback(order: Order, reason = 'fraudulent'): Record<string, unknown> {
    const cb = { id: `cbk_${++this.n}`, object: 'chargeback', charge_id: order.charges.data[0]!.id as string, status: 'pending_review', reason, created_at: this.now() };
    this.check('chargeback', cb, 'chargeback event');
    return cb;
  }

  private check(shape: ConektaShape, value: unknown, what: string): string | null {
    const v = conektaViolation(shape, value);
    if (v) this.violations.push(`${what}: ${v}`);
    return v;
  }

  protected handle(r: FakeReq): FakeAnswer {
    this.accepts.push(String(r.headers.accept ?? ''));
    const a = this.route(r);
    // Every answer is checked against the published schema too.
    if (a.json !== undefined && a.status >= 400) this.check('error', a.json, `answer ${a.status} to ${r.method} ${r.path}`);
    else if (a.json !== undefined && r.method === 'GET' && r.path === '/orders') this.check('order_list', a.json, 'order list answer');
    else if (a.json !== undefined && r.path.startsWith('/orders')) this.check('order_response', a.json, `answer to ${r.method} ${r.path}`);
    return a;
  }

  private invalid(what: string, violation: string): FakeAnswer {
    return this.error(422, 'parameter_validation_error', 'conekta.errors.parameter_validation.schema', `${what}: ${violation}`, undefined, null);
  }

  private route(r: FakeReq): FakeAnswer {
    if (r.headers.authorization !== `Bearer ${this.privateKey}`) return this.error(401, 'authentication_error', 'conekta.errors.authentication.missing_key', 'Acceso no autorizado.', undefined, null);
    const m = r.path.match(/^\/orders(?:\/([^/]+))?(?:\/(capture|refunds|cancel))?$/);
    if (!m) return { status: 404, json: { object: 'error', type: 'resource_not_found_error', log_id: null, details: [{ code: 'conekta.errors.resource_not_found.entity', param: null, message: 'not found' }] } };
    const [, id, action] = m;
    if (!id && r.method === 'GET') return this.list(r.query);
    if (!id && r.method === 'POST') {
      const bad = this.check('order_request', r.body, 'POST /orders body');
      if (bad) return this.invalid('order', bad);
      // createOrder's optional `Idempotency-Key` (conekta/openapi, parameters/commons/headers/idempotency_key.yml):
      // a repeat of a key answers the original response and does nothing again. A 5xx is not kept
      // (the request may be retried), as idempotency layers usually do ([U] for Conekta).
      const ik = r.headers['idempotency-key'];
      if (typeof ik === 'string') this.idempotencyKeys.push(ik);
      const scope = typeof ik === 'string' && this.honorsIdempotencyKey ? `${r.headers.authorization} ${ik}` : undefined;
      const prior = scope ? this.replies.get(scope) : undefined;
      if (prior) return { status: prior.status, json: structuredClone(prior.json) };
      const a = this.create(r.body as any);
      if (scope && a.status < 500 && a.json !== undefined) this.replies.set(scope, { status: a.status, json: structuredClone(a.json) });
      return a;
    }
    const o = id ? this.orders.get(id) : undefined;
    if (!o) return { status: 404, json: { object: 'error', type: 'resource_not_found_error', log_id: null, details: [{ code: 'conekta.errors.resource_not_found.entity', param: null, message: 'The order was not found.' }] } };
    const ch = o.charges.data[0]!;
    if (!action) return { status: 200, json: o };
    if (action === 'capture') {
      const bad = this.check('order_capture_request', r.body ?? {}, 'capture body');
      if (bad) return this.invalid('capture', bad);
      if (ch.status !== 'pre_authorized') return this.error(428, 'precondition_required_error', 'conekta.errors.precondition.order.capture', 'The order cannot be captured.');
      ch.status = 'paid';
      ch.paid_at = this.now();
      o.payment_status = 'paid';
      return { status: 200, json: o };
    }
    if (action === 'cancel') {
      if (ch.status !== 'pre_authorized') return this.error(428, 'precondition_required_error', 'conekta.errors.precondition.order.cancel', 'The order cannot be canceled.');
      ch.status = 'canceled';
      o.payment_status = 'canceled';
      return { status: 200, json: o };
    }
    const bad = this.check('order_refund_request', r.body ?? {}, 'refund body');
    if (bad) return this.invalid('refund', bad);
    const amount = (r.body as any).amount as number;
    const refunded = -ch.refunds.data.reduce((s: number, x: any) => s + x.amount, 0);
    if (refunded + amount > ch.amount) return this.error(422, 'parameter_validation_error', 'conekta.errors.parameter_validation.refund.amount', 'The refund exceeds what is left of the order.', undefined, 'amount');
    ch.refunds.data.push({ id: `ref_${++this.n}`, object: 'refund', amount: -amount, auth_code: '000000', created_at: this.now() });
    o.amount_refunded = refunded + amount;
    ch.status = refunded + amount >= ch.amount ? 'refunded' : 'partially_refunded';
    o.payment_status = ch.status;
    return { status: 200, json: o, ...(this.loseRefundAnswers ? { delayMs: this.slowMs } : {}) };
  }

  private list(q: URLSearchParams): FakeAnswer {
    const query: Record<string, unknown> = {};
    for (const [k, v] of q) query[k] = /^(limit|created_at(\.gte|\.lte)?|updated_at\.(gte|lte))$/.test(k) && /^-?\d+$/.test(v) ? Number(v) : v;
    const bad = this.check('order_list_query', query, 'GET /orders query');
    if (bad) return this.invalid('query', bad);
    const search = q.get('search');
    const gte = query['created_at.gte'] as number | undefined;
    const lte = query['created_at.lte'] as number | undefined;
    const limit = (query.limit as number | undefined) ?? 20;
    // Newest first, as Conekta lists; `next` is the id after which the page starts.
    let all = [...this.orders.values()].reverse().filter((o) => (gte === undefined || o.created_at >= gte) && (lte === undefined || o.created_at <= lte));
    if (search) all = all.filter((o) => o.id === search || o.customer_info?.email === search);
    const after = q.get('next');
    const start = after ? all.findIndex((o) => o.id === after) + 1 : 0;
    const page = all.slice(start, start + limit);
    const more = start + limit < all.length;
    return { status: 200, json: { object: 'list', has_more: more, next_page_url: more ? `${this.url}/orders?limit=${limit}&next=${page[page.length - 1]!.id}` : null, previous_page_url: null, data: page } };
  }

  private create(body: any): FakeAnswer {
    const pm = body.charges?.[0]?.payment_method ?? {};
    const token: string = pm.token_id ?? pm.payment_source_id ?? '';
    if (token.startsWith('tok_test_code:')) {
      const code = token.slice('tok_test_code:'.length);
      const t = typeOf(code);
      const data = t.status === 402 ? { order_id: this.newOrder(body, 'declined', token).id } : undefined;
      return this.error(t.status, t.type, code, `Documented code ${code}.`, data);
    }
    if (token.startsWith('tok_test_failure:')) {
      const o = this.newOrder(body, 'declined', token);
      Object.assign(o.charges.data[0]!, { failure_code: token.slice('tok_test_failure:'.length), failure_message: 'declined by the issuer' });
      return { status: 402, json: { object: 'error', type: 'processing_error', log_id: 'x', details: [], data: o.charges.data[0] } };
    }
    const behaviour = this.issued.get(token);
    if (behaviour) {
      // Single-use: a token charged once is spent, whatever the first answer was.
      if (this.usedTokens.has(token)) return this.error(402, 'processing_error', 'conekta.errors.processing.tokenization.used', 'The token has already been used.');
      this.usedTokens.add(token);
      switch (behaviour) {
        case 'timeout':
          return { status: 200, json: this.newOrder(body, 'paid', token), delayMs: this.slowMs };
        case '500_charged':
          this.newOrder(body, 'paid', token);
          return { status: 500, json: { object: 'error', type: 'api_error', log_id: null, details: [{ code: 'conekta.errors.api.system', param: null, message: 'Error interno.' }] } };
        case 'declined':
          return this.error(402, 'processing_error', 'conekta.errors.processing.bank.declined', 'La tarjeta ha sido declinada.', { order_id: this.newOrder(body, 'declined', token).id });
        default:
          return { status: 200, json: this.newOrder(body, 'paid', token) };
      }
    }
    switch (token) {
      case 'tok_test_card_declined':
        return this.error(402, 'processing_error', 'conekta.errors.processing.bank.declined', 'La tarjeta ha sido declinada.', { order_id: this.newOrder(body, 'declined', token).id });
      case 'tok_test_insufficient_funds':
        return this.error(402, 'processing_error', 'conekta.errors.processing.bank.insufficient_funds', 'La tarjeta no tiene fondos suficientes.', { order_id: this.newOrder(body, 'declined', token).id });
      case 'tok_test_unknown_code':
        return this.error(402, 'processing_error', 'conekta.errors.processing.bank.brand_new_reason', 'A code nobody documented.');
      case 'tok_test_500':
        return { status: 500, json: { object: 'error', type: 'api_error', log_id: null, details: [{ code: 'conekta.errors.api.system', param: null, message: 'Error interno.' }] } };
      case 'tok_test_500_charged':
        this.newOrder(body, 'paid', token);
        return { status: 500, json: { object: 'error', type: 'api_error', log_id: null, details: [{ code: 'conekta.errors.api.system', param: null, message: 'Error interno.' }] } };
      case 'tok_test_timeout':
        return { status: 200, json: this.newOrder(body, 'paid', token), delayMs: this.slowMs };
      case 'tok_test_malformed':
        return { status: 200, text: '<html>Bad gateway</html>' };
      case 'tok_test_preauth':
        return { status: 200, json: this.newOrder(body, 'pre_authorized', token) };
      default:
        return { status: 200, json: this.newOrder(body, 'paid', token) };
    }
  }
}
