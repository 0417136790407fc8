// A local fake of Openpay's API (México, ../shared/formats/card-processors.md): merchant-level card
// charges with a token, `order_id` unique per merchant (1006/409 on a repeat), errors as
// `{category, error_code, description, http_code, request_id}`, capture and refund, charge search by
// order_id. Tokens choose the answer; `tok_code_<n>` answers a documented error code.
// As Openpay behaves (issue 28.2): a charge needs `description`, `device_session_id` and the shopper's
// IP in `X-Forwarded-For` (the official PHP SDK sends it on every call and refuses to call without
// one) — without them it answers 1001 as the documented error envelope; a declined charge stays
// readable as a charge object with `status: failed`, `error_code` and its text in `error_message`.
import { isIP } from 'node:net';
import { CardFake, type FakeAnswer, type FakeReq } from './card-server.js';

/**
 * Every error code of Openpay's material, with its HTTP status and where it comes from (the adapter must
 * map each, and mark each as here). Written from the material itself, not from the adapter:
 * - `openpay_docs`: Openpay's API reference source `open-pay/slate@f9ca7fe` `source/includes/es/errors.md`
 *   (Generales 1000–1010, Almacenamiento 2001–2009, Tarjetas 3001–3006 and 3008–3012, Cuentas 4001), HTTP as there;
 * - `openpay_plugins`: handled by code in Openpay's official plugins (WooCommerce, Magento 2, PrestaShop):
 *   3007 (with 3001, "La tarjeta fue rechazada"), 2010 (3-D Secure failed), 6001 (webhook exists), 6002/6003
 *   (webhook cannot be created); their HTTP statuses here are guesses;
 * - `unconfirmed`: codes from an earlier reading of the published page that no stored material shows.
 */
export const OPENPAY_DOCUMENTED_CODES: Array<[number, number, 'openpay_docs' | 'openpay_plugins' | 'unconfirmed']> = [
  [1000, 500, 'openpay_docs'], [1001, 400, 'openpay_docs'], [1002, 401, 'openpay_docs'], [1003, 422, 'openpay_docs'], [1004, 503, 'openpay_docs'],
  [1005, 404, 'openpay_docs'], [1006, 409, 'openpay_docs'], [1007, 402, 'openpay_docs'], [1008, 423, 'openpay_docs'], [1009, 413, 'openpay_docs'], [1010, 403, 'openpay_docs'],
  [2001, 409, 'openpay_docs'], [2002, 409, 'openpay_docs'], [2003, 409, 'openpay_docs'], [2004, 422, 'openpay_docs'], [2005, 400, 'openpay_docs'],
  [2006, 400, 'openpay_docs'], [2007, 412, 'openpay_docs'], [2008, 412, 'openpay_docs'], [2009, 412, 'openpay_docs'],
  [3001, 402, 'openpay_docs'], [3002, 402, 'openpay_docs'], [3003, 402, 'openpay_docs'], [3004, 402, 'openpay_docs'], [3005, 402, 'openpay_docs'], [3006, 412, 'openpay_docs'],
  [3008, 412, 'openpay_docs'], [3009, 402, 'openpay_docs'], [3010, 402, 'openpay_docs'], [3011, 402, 'openpay_docs'], [3012, 412, 'openpay_docs'], [4001, 412, 'openpay_docs'],
  [2010, 402, 'openpay_plugins'], [3007, 402, 'openpay_plugins'], [6001, 409, 'openpay_plugins'], [6002, 400, 'openpay_plugins'], [6003, 400, 'openpay_plugins'],
  [1011, 404, 'unconfirmed'], [1012, 412, 'unconfirmed'], [1013, 423, 'unconfirmed'], [1014, 401, 'unconfirmed'], [1015, 504, 'unconfirmed'], [1016, 409, 'unconfirmed'],
  [1017, 503, 'unconfirmed'], [1018, 402, 'unconfirmed'], [2011, 412, 'unconfirmed'], [3201, 412, 'unconfirmed'], [3203, 402, 'unconfirmed'], [3204, 412, 'unconfirmed'],
];

type Charge = Record<string, any> & { id: string; order_id: string; status: string; amount: number };

export class FakeOpenpay extends CardFake {
  readonly merchantId = 'mfake1234567890';
  readonly privateKey = 'sk_fake_0123456789abcdef';
  readonly charges = new Map<string, Charge>();
  /** The X-Forwarded-For of every charge request (the shopper's IP as sent). */
  readonly forwardedFor: string[] = [];
  slowMs = 1500;
  /** A refund is made (the money moves) but its answer comes after slowMs: the adapter's deadline passes first. */
  loseRefundAnswers = false;
  private n = 0;

  completedFor(orderId: string) {
    return [...this.charges.values()].filter((c) => c.order_id === orderId && ['completed', 'refunded'].includes(c.status)).length;
  }

  private err(code: number, http: number, description = `error ${code}`): FakeAnswer {
    return { status: http, json: { category: code >= 3000 ? 'gateway' : code === 1000 || code === 1004 ? 'internal' : 'request', error_code: code, description, http_code: http, request_id: `req-${++this.n}` } };
  }

  /** A declined charge: kept as a failed charge object (its text in `error_message`) and answered as the error envelope. */
  private declined(body: any, code: number, http: number, text: string): FakeAnswer {
    this.newCharge(body, 'failed', { error_code: code, error_message: text });
    return this.err(code, http, text);
  }

  private newCharge(body: any, status: string, extra: Record<string, unknown> = {}): Charge {
    const c: Charge = {
      id: `tr${(++this.n).toString().padStart(10, '0')}`, authorization: status === 'completed' ? '801585' : null, operation_type: 'in', transaction_type: 'charge', method: 'card',
      status, amount: body.amount, currency: body.currency, order_id: body.order_id, description: body.description, creation_date: new Date().toISOString(), device_session_id: body.device_session_id,
      card: { type: 'debit', brand: 'visa', card_number: '411111XXXXXX1111' }, ...extra,
    };
    this.charges.set(c.id, c);
    return c;
  }

  protected handle(r: FakeReq): FakeAnswer {
    const want = `Basic ${Buffer.from(`${this.privateKey}:`).toString('base64')}`;
    if (r.headers.authorization !== want) return this.err(1002, 401, 'The api key or merchant id are invalid');
    const base = `/v1/${this.merchantId}`;
    if (!r.path.startsWith(base + '/charges')) return this.err(1005, 404, 'The requested resource doesn\'t exist');
    const rest = r.path.slice(base.length + '/charges'.length);
    if (rest === '' && r.method === 'GET') return { status: 200, json: [...this.charges.values()].filter((c) => !r.query.get('order_id') || c.order_id === r.query.get('order_id')) };
    if (rest === '' && r.method === 'POST') {
      const ip = String(r.headers['x-forwarded-for'] ?? '');
      this.forwardedFor.push(ip);
      if (!isIP(ip)) return this.err(1001, 400, 'The shopper\'s public IP (X-Forwarded-For) is required');
      return this.create(r.body as any);
    }
    const m = rest.match(/^\/([^/]+)(?:\/(capture|refund))?$/);
    const c = m ? this.charges.get(m[1]!) : undefined;
    if (!c) return this.err(1005, 404, 'The requested resource doesn\'t exist');
    if (!m![2]) return { status: 200, json: c };
    if (m![2] === 'capture') {
      if (c.status !== 'in_progress') return this.err(1003, 422, 'The charge cannot be captured');
      c.status = 'completed';
      return { status: 200, json: c };
    }
    if (c.status === 'in_progress') {
      c.status = 'cancelled';
      return { status: 200, json: c };
    }
    if (c.status !== 'completed') return this.err(1003, 422, 'The charge cannot be refunded');
    c.status = 'refunded';
    c.refund = { id: `trr${++this.n}`, amount: (r.body as any)?.amount ?? c.amount, description: (r.body as any)?.description, operation_type: 'out', transaction_type: 'refund', status: 'completed' };
    return { status: 200, json: c, ...(this.loseRefundAnswers ? { delayMs: this.slowMs } : {}) };
  }

  private create(body: any): FakeAnswer {
    if (body?.method !== 'card' || !body?.source_id || typeof body?.amount !== 'number' || !body?.order_id) return this.err(1001, 400, 'method, source_id, amount and order_id are required');
    if (!body.description) return this.err(1001, 400, 'description is required');
    if (!body.device_session_id) return this.err(1001, 400, 'device_session_id is required');
    if ([...this.charges.values()].some((c) => c.order_id === body.order_id)) return this.err(1006, 409, 'The order_id has already been processed');
    const token: string = body.source_id;
    const code = token.match(/^tok_code_(\d{4})$/);
    if (code) {
      const [n, http] = OPENPAY_DOCUMENTED_CODES.find(([k]) => k === Number(code[1])) ?? [Number(code[1]), 402];
      return this.err(n, http);
    }
    switch (token) {
      case 'tok_declined':
        return this.declined(body, 3001, 402, 'The card was declined');
      case 'tok_insufficient':
        return this.declined(body, 3003, 402, 'The card doesn\'t have sufficient funds');
      case 'tok_unavailable':
        return this.err(1004, 503, 'Service unavailable');
      case 'tok_unknown_code':
        return this.err(3999, 402, 'A code nobody documented');
      case 'tok_500':
        return this.err(1000, 500, 'Internal server error');
      case 'tok_500_charged':
        this.newCharge(body, 'completed');
        return this.err(1000, 500, 'Internal server error');
      case 'tok_timeout':
        return { status: 200, json: this.newCharge(body, 'completed'), delayMs: this.slowMs };
      case 'tok_malformed':
        return { status: 200, json: { unexpected: true } };
      case 'tok_preauth':
        return { status: 200, json: this.newCharge({ ...body }, 'in_progress') };
      default:
        return { status: 200, json: this.newCharge(body, body.capture === false ? 'in_progress' : 'completed') };
    }
  }
}
