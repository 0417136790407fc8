// Public checkout (spec: Public checkout): the intent's client_secret authenticates; an unknown id
// and a wrong secret give the very same 404, and the secret is compared in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Sql } from '../kernel/db.js';
import type { PaymentIntents } from './payment-intents.js';
import { ApiError } from '../kernel/errors.js';
import type { PublicConfirmBody } from '../schemas/checkout.js';
import { hydrate, publicView, type IntentRow } from './payment-intent-store.js';

const TEST_TOKENS = ['tok_sim_ok', 'tok_sim_auth', 'tok_sim_3ds', 'tok_sim_insufficient', 'tok_sim_fraud', 'tok_sim_issuer_down', 'tok_sim_slow'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const digest = (s: string) => createHash('sha256').update(s).digest();
const DUMMY = digest('pi_secret_not-a-real-secret');

export { publicView } from './payment-intent-store.js';

/**
 * The one answer for an unknown id and a wrong client secret (the edge gives the same to a
 * malformed id): nothing tells the cases apart, and no API key is involved on /public.
 */
export const PUBLIC_NOT_FOUND_MESSAGE = 'No payment intent matches this id and client secret.';
const notFound = () => new ApiError('payment_intent.not_found', PUBLIC_NOT_FOUND_MESSAGE);

/** The intent if the secret is its own; the same 404 otherwise. */
export async function authorize(deps: { sql: Sql }, id: string, secret: string | undefined) {
  const rows = UUID.test(id) ? await deps.sql`select id, tenant_id, livemode, client_secret from payment_intents where id = ${id}` : [];
  const expected = rows.length ? digest(rows[0].client_secret as string) : DUMMY;
  const ok = timingSafeEqual(expected, digest(secret ?? '')) && rows.length > 0;
  if (!ok) throw notFound();
  return { tenantId: rows[0].tenant_id as string, livemode: rows[0].livemode as boolean };
}

export async function publicGet(deps: { sql: Sql }, id: string, secret: string | undefined) {
  const owner = await authorize(deps, id, secret);
  const h = await hydrate(deps.sql, id, owner.tenantId);
  if (!h) throw notFound();
  return publicView(h.row);
}

export async function publicConfirm(deps: { sql: Sql; payments: Pick<PaymentIntents, 'confirm'> }, id: string, body: PublicConfirmBody) {
  const owner = await authorize(deps, id, body.client_secret);
  const p = { ...owner, keyId: 'public_checkout', scopes: [] };
  const res = await deps.payments.confirm(p, id, { payment_token: body.payment_token, payment_method: body.payment_method, tip_minor: body.tip_minor });
  if ((res as { object?: string }).object === 'risk_review') {
    const h = await hydrate(deps.sql, id, owner.tenantId);
    return publicView(h!.row);
  }
  return publicView(res as unknown as IntentRow & { total_minor: number });
}

export async function checkoutConfig(deps: { sql: Sql; routing?: { tokenizerFor(tenantId: string, livemode: boolean): Promise<unknown> } }, id: string, secret: string | undefined) {
  const owner = await authorize(deps, id, secret);
  const [row] = await deps.sql`
    select pi.*, t.name as merchant, l.concepto from payment_intents pi join tenants t on t.id = pi.tenant_id
      left join payment_links l on l.id::text = pi.metadata->>'payment_link_id'
     where pi.id = ${id} and pi.tenant_id = ${owner.tenantId}`;
  const amount = Number(row.amount_minor);
  return {
    object: 'checkout_config' as const,
    payment_intent_id: id,
    amount_minor: amount,
    tip_minor: Number(row.tip_minor),
    total_minor: amount + Number(row.tip_minor),
    currency: row.currency as string,
    status: row.status as string,
    allowed_methods: ['card', 'spei', 'codi', 'oxxo'],
    tip_suggestions: [10, 15, 20].map((percent) => ({ percent, amount_minor: Math.round((amount * percent) / 100) })),
    merchant_display_name: row.merchant as string,
    concepto: (row.concepto as string | null) ?? null,
    test_mode: !owner.livemode,
    test_tokens: owner.livemode ? null : TEST_TOKENS,
    // Live mode: the card connector's browser tokenizer (web/tokenize.js); no card number reaches Orquesta.
    card_tokenizer: owner.livemode && deps.routing ? await deps.routing.tokenizerFor(owner.tenantId, true) : null,
  };
}
