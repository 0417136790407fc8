// Public checkout (spec: Public checkout): the intent's client_secret authenticates; an unknown id
// and a wrong secret give the very same 404, and the secret is compared in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Sql } from '../kernel/db.js';
import type { Principal } from '../kernel/principal.js';
import type { PaymentIntents } from './payment-intents.js';
import { ApiError } from '../kernel/errors.js';
import { bankTagOf } from '../formats/clabe.js';
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
  // A link deactivated meanwhile (a canceled receivable) takes no more payments, even from an open page.
  // (by the link's primary key: metadata is text, and a merchant's own metadata may hold anything)
  const [link] = await deps.sql`
    select l.active, l.paid_at from payment_intents pi join payment_links l
        on l.id = case when pi.metadata->>'payment_link_id' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then (pi.metadata->>'payment_link_id')::uuid end
     where pi.id = ${id}`;
  if (link && !link.active && !link.paid_at) throw new ApiError('payment_intent.not_confirmable', 'This payment link is no longer active.');
  const p = { ...owner, keyId: 'public_checkout', scopes: [] };
  const res = await deps.payments.confirm(p, id, { payment_token: body.payment_token, payment_method: body.payment_method, tip_minor: body.tip_minor });
  if ((res as { object?: string }).object === 'risk_review') {
    const h = await hydrate(deps.sql, id, owner.tenantId);
    return publicView(h!.row);
  }
  return publicView(res as unknown as IntentRow & { total_minor: number });
}

/** The merchant's branding on its checkout pages (tenant settings; decisions: docs/checkout.md). */
export interface CheckoutSettings {
  logo_url: string | null;
  privacy_url: string | null;
  terms_url: string | null;
}
const SETTING_KEYS = { logo_url: 'checkout_logo_url', privacy_url: 'checkout_privacy_url', terms_url: 'checkout_terms_url' } as const;

function settingsView(settings: Record<string, unknown> | null): CheckoutSettings {
  const s = settings ?? {};
  const v = (k: string) => (typeof s[k] === 'string' ? (s[k] as string) : null);
  return { logo_url: v(SETTING_KEYS.logo_url), privacy_url: v(SETTING_KEYS.privacy_url), terms_url: v(SETTING_KEYS.terms_url) };
}

export async function getCheckoutSettings(deps: { sql: Sql }, p: Pick<Principal, 'tenantId'>) {
  const [row] = await deps.sql`select settings from tenants where id = ${p.tenantId}`;
  return { object: 'checkout_settings' as const, ...settingsView(row?.settings ?? null) };
}

/** Replaces the branding: a field omitted or null is removed (the page then shows the merchant's initials / no link). */
export async function putCheckoutSettings(deps: { sql: Sql }, p: Pick<Principal, 'tenantId'>, body: Partial<CheckoutSettings>) {
  const patch: Record<string, string | null> = {};
  for (const [field, key] of Object.entries(SETTING_KEYS)) patch[key] = body[field as keyof CheckoutSettings] ?? null;
  const [row] = await deps.sql`update tenants set settings = settings || ${deps.sql.json(patch)} where id = ${p.tenantId} returning settings`;
  return { object: 'checkout_settings' as const, ...settingsView(row.settings) };
}

export async function checkoutConfig(deps: { sql: Sql; routing?: { tokenizerFor(tenantId: string, livemode: boolean): Promise<unknown> } }, id: string, secret: string | undefined) {
  const owner = await authorize(deps, id, secret);
  const [row] = await deps.sql`
    select pi.*, t.name as merchant, t.settings, l.concepto, fp.self_invoice_slug,
           (select a.status from attempts a where a.payment_intent_id = pi.id order by a.created_at desc limit 1) as attempt_status
      from payment_intents pi join tenants t on t.id = pi.tenant_id
      left join payment_links l on l.id::text = pi.metadata->>'payment_link_id'
      left join fiscal_profiles fp on fp.tenant_id = pi.tenant_id and fp.livemode = pi.livemode and fp.self_invoice_enabled
     where pi.id = ${id} and pi.tenant_id = ${owner.tenantId}`;
  const amount = Number(row.amount_minor);
  const receipt = row.receipt_code as string;
  const lastError = row.last_error as { code: string; decline?: string } | null;
  const nextAction = row.next_action as { type: string; clabe?: string } | null;
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
    ...settingsView(row.settings),
    concepto: (row.concepto as string | null) ?? null,
    // The code on the shopper's receipt (and the SPEI payment reference that reconciliation matches).
    receipt_code: receipt,
    // The self-invoice page with the code filled in, when the merchant has self-invoicing on in this mode.
    self_invoice_url: row.self_invoice_slug ? `/factura/${encodeURIComponent(row.self_invoice_slug as string)}?receipt_code=${encodeURIComponent(receipt)}` : null,
    // The bank of the CLABE to transfer to (its short name, e.g. STP), while a SPEI transfer is awaited.
    spei_bank: nextAction?.type === 'bank_transfer' && nextAction.clabe ? bankTagOf(nextAction.clabe) : null,
    // Why the last attempt was declined, as a code the page words in the shopper's language (never the provider's English).
    last_payment_error: lastError ? { code: lastError.code, decline: lastError.decline ?? null } : null,
    // processing with an authorized attempt: the merchant captures later (the page says so instead of "processing").
    awaiting_capture: row.status === 'processing' && row.attempt_status === 'authorized',
    test_mode: !owner.livemode,
    test_tokens: owner.livemode ? null : TEST_TOKENS,
    // Live mode: the card connector's browser tokenizer (web/tokenize.js); no card number reaches Orquesta.
    card_tokenizer: owner.livemode && deps.routing ? await deps.routing.tokenizerFor(owner.tenantId, true) : null,
  };
}
