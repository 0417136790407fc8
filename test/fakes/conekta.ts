// A local fake of Conekta's API (v2, ../shared/formats/card-processors.md): orders with one card
// charge, decided by the token; capture, refunds, cancel; order search by our key; webhook events
// signed with a test RSA key in DIGEST. It shares nothing with the adapter's mapping: the error
// bodies are written here as Conekta's documentation and mocks show them.
import { generateKeyPairSync, createSign } from 'node:crypto';
import { CardFake, type FakeAnswer, type FakeReq } from './card-server.js';

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

type Order = Record<string, any> & { id: string; metadata: Record<string, string>; charges: { object?: string; data: Array<Record<string, any>> } };

const typeOf = (code: string) =>
  code.includes('.parameter_validation.') ? { type: 'parameter_validation_error', status: 422 } : code.includes('.authentication.') ? { type: 'authentication_error', status: 401 } : { type: 'processing_error', status: 402 };

export class FakeConekta extends CardFake {
  readonly privateKey = 'key_test_fake_private';
  readonly orders = new Map<string, Order>();
  readonly keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  readonly publicKeyPem = this.keys.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  /** Answer delay of tok_test_timeout (longer than the adapter's deadline in tests). */
  slowMs = 1500;
  /** A refund is made (the money moves) but its answer comes after slowMs: the adapter's deadline passes first. */
  loseRefundAnswers = false;
  private n = 0;

  /** The refunds Conekta made on an order (what moved back to the cardholder). */
  refundsOn(orderId: string): Array<{ id: string; amount: number }> {
    const ch = this.orders.get(orderId)?.charges.data[0];
    return (ch?.refunds.data ?? []).map((r: any) => ({ id: r.id, amount: -r.amount }));
  }

  /** Orders that moved money (paid) for our key. */
  paidFor(key: string) {
    return [...this.orders.values()].filter((o) => o.metadata.orquesta_key === key && ['paid', 'refunded', 'partially_refunded'].includes(o.charges.data[0]!.status)).length;
  }

  private error(status: number, type: string, code: string, message: string, data?: unknown): FakeAnswer {
    return { status, json: { object: 'error', type, log_id: `log_${++this.n}`, details: [{ code, param: 'payment_method.token_id', message, debug_message: message }], ...(data ? { data } : {}) } };
  }

  private newOrder(body: any, status: string): Order {
    const id = `ord_${(++this.n).toString(16).padStart(8, '0')}fake`;
    const ch = body.charges?.[0] ?? {};
    const o: Order = {
      id, object: 'order', livemode: false, amount: ch.amount ?? body.line_items?.[0]?.unit_price, currency: body.currency, payment_status: status, metadata: body.metadata ?? {},
      charges: { object: 'list', data: [{ id: `ch_${this.n}`, object: 'charge', status, amount: ch.amount, currency: body.currency, order_id: id, fee: 0, payment_method: { object: 'card_payment', type: 'credit', brand: 'visa', last4: '4242' }, refunds: { data: [] } }] },
    };
    this.orders.set(id, o);
    return o;
  }

  /** A signed webhook delivery of an event about an order: [body, DIGEST]. */
  event(type: string, order: Order): [string, string] {
    const body = JSON.stringify({ id: `evt_${++this.n}`, object: 'event', type, livemode: false, created_at: Math.floor(Date.now() / 1000), data: { object: order, previous_attributes: {} } });
    return [body, createSign('sha256').update(body, 'utf8').sign(this.keys.privateKey, 'base64')];
  }

  protected handle(r: FakeReq): FakeAnswer {
    if (r.headers.authorization !== `Bearer ${this.privateKey}`) return this.error(401, 'authentication_error', 'conekta.errors.authentication.missing_key', 'Acceso no autorizado.');
    const m = r.path.match(/^\/orders(?:\/([^/]+))?(?:\/(capture|refunds|cancel))?$/);
    if (!m) return { status: 404, json: { object: 'error', type: 'resource_not_found_error', details: [{ code: 'conekta.errors.resource_not_found.entity', message: 'not found' }] } };
    const [, id, action] = m;
    if (!id && r.method === 'GET') {
      const q = r.query.get('search') ?? '';
      return { status: 200, json: { object: 'list', has_more: false, data: [...this.orders.values()].filter((o) => Object.values(o.metadata).includes(q)) } };
    }
    if (!id && r.method === 'POST') return this.create(r.body as any);
    const o = id ? this.orders.get(id) : undefined;
    if (!o) return { status: 404, json: { object: 'error', type: 'resource_not_found_error', details: [{ code: 'conekta.errors.resource_not_found.entity', message: 'The order was not found.' }] } };
    const ch = o.charges.data[0]!;
    if (!action) return { status: 200, json: o };
    if (action === 'capture') {
      if (ch.status !== 'pre_authorized') return this.error(428, 'precondition_required_error', 'conekta.errors.precondition.order.capture', 'The order cannot be captured.');
      ch.status = 'paid';
      o.payment_status = 'paid';
      return { status: 200, json: o };
    }
    if (action === 'cancel') {
      if (ch.status !== 'pre_authorized') return this.error(428, 'precondition_required_error', 'conekta.errors.precondition.order.cancel', 'The order cannot be canceled.');
      ch.status = 'canceled';
      o.payment_status = 'canceled';
      return { status: 200, json: o };
    }
    const amount = (r.body as any)?.amount;
    if (!Number.isInteger(amount) || !(r.body as any)?.reason) return this.error(422, 'parameter_validation_error', 'conekta.errors.parameter_validation.refund.amount', 'amount and reason are required');
    ch.refunds.data.push({ id: `ref_${++this.n}`, object: 'refund', amount: -amount, auth_code: '000000', created_at: Math.floor(Date.now() / 1000) });
    const refunded = -ch.refunds.data.reduce((s: number, x: any) => s + x.amount, 0);
    ch.status = refunded >= ch.amount ? 'refunded' : 'partially_refunded';
    o.payment_status = ch.status;
    return { status: 200, json: o, ...(this.loseRefundAnswers ? { delayMs: this.slowMs } : {}) };
  }

  private create(body: any): FakeAnswer {
    if (!body?.currency || !body?.customer_info || !Array.isArray(body?.line_items)) return this.error(422, 'parameter_validation_error', 'conekta.errors.parameter_validation.order.required', 'currency, customer_info and line_items are required');
    const token: string = body.charges?.[0]?.payment_method?.token_id ?? body.charges?.[0]?.payment_method?.payment_source_id ?? '';
    if (token.startsWith('tok_test_code:')) {
      const code = token.slice('tok_test_code:'.length);
      const t = typeOf(code);
      const data = t.status === 402 ? { order_id: this.newOrder(body, 'declined').id } : undefined;
      return this.error(t.status, t.type, code, `Documented code ${code}.`, data);
    }
    if (token.startsWith('tok_test_failure:')) {
      const o = this.newOrder(body, 'declined');
      Object.assign(o.charges.data[0]!, { failure_code: token.slice('tok_test_failure:'.length), failure_message: 'declined by the issuer' });
      return { status: 402, json: { object: 'error', type: 'processing_error', log_id: 'x', details: [], data: o.charges.data[0] } };
    }
    switch (token) {
      case 'tok_test_card_declined':
        return this.error(402, 'processing_error', 'conekta.errors.processing.bank.declined', 'La tarjeta ha sido declinada.', { order_id: this.newOrder(body, 'declined').id });
      case 'tok_test_insufficient_funds':
        return this.error(402, 'processing_error', 'conekta.errors.processing.bank.insufficient_funds', 'La tarjeta no tiene fondos suficientes.', { order_id: this.newOrder(body, 'declined').id });
      case 'tok_test_unknown_code':
        return this.error(402, 'processing_error', 'conekta.errors.processing.bank.brand_new_reason', 'A code nobody documented.');
      case 'tok_test_500':
        return { status: 500, json: { object: 'error', type: 'api_error', details: [{ code: 'conekta.errors.api.system', message: 'Error interno.' }] } };
      case 'tok_test_500_charged':
        this.newOrder(body, 'paid');
        return { status: 500, json: { object: 'error', type: 'api_error', details: [{ code: 'conekta.errors.api.system', message: 'Error interno.' }] } };
      case 'tok_test_timeout':
        return { status: 200, json: this.newOrder(body, 'paid'), delayMs: this.slowMs };
      case 'tok_test_malformed':
        return { status: 200, text: '<html>Bad gateway</html>' };
      case 'tok_test_preauth':
        return { status: 200, json: this.newOrder(body, 'pre_authorized') };
      default:
        return { status: 200, json: this.newOrder(body, 'paid') };
    }
  }
}
