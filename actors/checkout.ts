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

/**
 * Who asks, as the browser tells it: the page's `Origin` header and the `Host` it asked. No Origin
 * (curl, a server, a same-origin GET) is not a cross-origin browser call.
 */
export interface Caller {
  origin?: string;
  host?: string;
  /** The browser's address (the shopper's IP, for connectors that need it). */
  ip?: string;
}

const originList = (v: unknown): string[] | null => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : null);

/**
 * decisions §7: `/public/*` serves pages of any origin, unless the merchant listed its origins in
 * checkout_settings; a same-origin request (Orquesta's own `/pay` pages) is always served.
 */
export function originAllowed(allowed: readonly string[] | null, caller: Caller | undefined): boolean {
  if (!allowed || !caller?.origin) return true;
  let o: URL;
  try {
    o = new URL(caller.origin);
  } catch {
    return false; // "null" (a sandboxed frame, a file) is no listed origin
  }
  if (caller.host && o.host === caller.host.toLowerCase()) return true;
  return allowed.includes(o.origin);
}

function assertOrigin(allowed: readonly string[] | null, caller: Caller | undefined) {
  if (originAllowed(allowed, caller)) return;
  throw new ApiError(
    'checkout.origin_unauthorized',
    `This page's origin (${String(caller?.origin).slice(0, 200)}) is not among the merchant's allowed_origins; the merchant adds it with PUT /v1/checkout_settings.`,
  );
}

/** The intent if the secret is its own (the same 404 otherwise), and the page's origin is one the merchant allows. */
export async function authorize(deps: { sql: Sql }, id: string, secret: string | undefined, caller?: Caller) {
  const rows = UUID.test(id)
    ? await deps.sql`
        select pi.tenant_id, pi.livemode, pi.client_secret, t.settings->'checkout_allowed_origins' as allowed_origins,
               coalesce((t.settings->>'checkout_tips_enabled')::boolean, true) and not coalesce(pi.metadata ? 'receivable_id', false) as tips_enabled
          from payment_intents pi join tenants t on t.id = pi.tenant_id where pi.id = ${id}`
    : [];
  const expected = rows.length ? digest(rows[0].client_secret as string) : DUMMY;
  const ok = timingSafeEqual(expected, digest(secret ?? '')) && rows.length > 0;
  if (!ok) throw notFound();
  const allowedOrigins = originList(rows[0].allowed_origins);
  assertOrigin(allowedOrigins, caller);
  return { tenantId: rows[0].tenant_id as string, livemode: rows[0].livemode as boolean, allowedOrigins, tipsEnabled: rows[0].tips_enabled as boolean };
}

/**
 * A confirm's `return_url` (where the 3-D Secure page sends the shopper back): when the merchant
 * lists its origins, it must be on one of them or on Orquesta's own pages; no open redirect.
 */
export function assertReturnUrl(url: string | undefined, allowed: readonly string[] | null, ownOrigins: readonly string[]) {
  if (url === undefined || !allowed) return;
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch {
    throw new ApiError('payment_intent.invalid_return_url');
  }
  if (allowed.includes(origin) || ownOrigins.includes(origin)) return;
  throw new ApiError('payment_intent.invalid_return_url', `\`return_url\` is on ${origin}, which is not among the merchant's allowed_origins (PUT /v1/checkout_settings).`);
}

/** The authenticated confirm's check of its `return_url` against the tenant's allowed origins. */
export async function checkReturnUrl(deps: { sql: Sql; config: { publicBaseUrl: string } }, tenantId: string, url: string | undefined) {
  if (url === undefined) return;
  const [row] = await deps.sql`select settings->'checkout_allowed_origins' as allowed_origins from tenants where id = ${tenantId}`;
  assertReturnUrl(url, originList(row?.allowed_origins), [new URL(deps.config.publicBaseUrl).origin]);
}

/** The 3-D Secure page's way back: the confirm's `return_url` of the test-mode attempt waiting on it. */
export async function threeDsReturnUrl(deps: { sql: Sql }, providerRef: string): Promise<string | undefined> {
  const [a] = await deps.sql`select return_url from attempts where provider_ref = ${providerRef} and not livemode and return_url is not null`;
  return (a?.return_url as string | undefined) ?? undefined;
}

export async function publicGet(deps: { sql: Sql }, id: string, secret: string | undefined, caller?: Caller) {
  const owner = await authorize(deps, id, secret, caller);
  const h = await hydrate(deps.sql, id, owner.tenantId);
  if (!h) throw notFound();
  return publicView(h.row);
}

export async function publicConfirm(deps: { sql: Sql; payments: Pick<PaymentIntents, 'confirm'>; config: { publicBaseUrl: string } }, id: string, body: PublicConfirmBody, caller?: Caller) {
  const owner = await authorize(deps, id, body.client_secret, caller);
  // A checkout without tips (a receivable's page, or the merchant turned them off) takes none.
  if (!owner.tipsEnabled && (body.tip_minor ?? 0) > 0) throw new ApiError('payment_intent.invalid_tip', 'This checkout takes no tip (a receivable, or the merchant turned tips off in its checkout settings); send tip_minor 0 or omit it.');
  const own = [new URL(deps.config.publicBaseUrl).origin, ...(caller?.host ? [`http://${caller.host}`, `https://${caller.host}`] : [])];
  assertReturnUrl(body.return_url, owner.allowedOrigins, own);
  // A link deactivated meanwhile (a canceled receivable) takes no more payments, even from an open page.
  // (by the link's primary key: metadata is text, and a merchant's own metadata may hold anything)
  const [link] = await deps.sql`
    select l.active, l.paid_at from payment_intents pi join payment_links l
        on l.tenant_id = pi.tenant_id and l.id = case when pi.metadata->>'payment_link_id' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then (pi.metadata->>'payment_link_id')::uuid end
     where pi.id = ${id} and pi.tenant_id = ${owner.tenantId}`;
  if (link && !link.active && !link.paid_at) throw new ApiError('payment_intent.not_confirmable', 'This payment link is no longer active.');
  const p = { tenantId: owner.tenantId, livemode: owner.livemode, keyId: 'public_checkout', scopes: [] };
  const res = await deps.payments.confirm(p, id, { payment_token: body.payment_token, payment_method: body.payment_method, tip_minor: body.tip_minor, return_url: body.return_url, ...(caller?.ip ? { payer_ip: caller.ip } : {}) });
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
  /** decisions §7: null = any origin may use the kit and /public; a list restricts them. */
  allowed_origins: string[] | null;
  /** Whether the checkout offers a tip (default true). */
  tips_enabled: boolean;
}
const SETTING_KEYS = { logo_url: 'checkout_logo_url', privacy_url: 'checkout_privacy_url', terms_url: 'checkout_terms_url' } as const;

function settingsView(settings: Record<string, unknown> | null): CheckoutSettings {
  const s = settings ?? {};
  const v = (k: string) => (typeof s[k] === 'string' ? (s[k] as string) : null);
  return {
    logo_url: v(SETTING_KEYS.logo_url),
    privacy_url: v(SETTING_KEYS.privacy_url),
    terms_url: v(SETTING_KEYS.terms_url),
    allowed_origins: originList(s.checkout_allowed_origins),
    tips_enabled: s.checkout_tips_enabled !== false,
  };
}

/** `https://Tienda.example.mx/` → `https://tienda.example.mx`: the form a browser's Origin header has. */
function normalizeOrigin(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ApiError('checkout.invalid_settings', `${JSON.stringify(raw.slice(0, 100))} is not an origin; write it as https://tienda.example.mx (scheme, host and port, no path).`);
  }
  if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.username || u.password || (u.pathname !== '/' && u.pathname !== '') || u.search || u.hash) {
    throw new ApiError('checkout.invalid_settings', `${JSON.stringify(raw.slice(0, 100))} is not an origin; write it as https://tienda.example.mx (scheme, host and port, no path).`);
  }
  return u.origin;
}

export async function getCheckoutSettings(deps: { sql: Sql }, p: Pick<Principal, 'tenantId'>) {
  const [row] = await deps.sql`select settings from tenants where id = ${p.tenantId}`;
  return { object: 'checkout_settings' as const, ...settingsView(row?.settings ?? null) };
}

/** Replaces the branding: a field omitted or null is removed (the page then shows the merchant's initials / no link). */
export async function putCheckoutSettings(deps: { sql: Sql }, p: Pick<Principal, 'tenantId'>, body: Partial<Omit<CheckoutSettings, 'tips_enabled'>> & { tips_enabled?: boolean | null }) {
  const patch: Record<string, string | string[] | boolean | null> = {};
  for (const [field, key] of Object.entries(SETTING_KEYS)) patch[key] = body[field as keyof typeof SETTING_KEYS] ?? null;
  patch.checkout_allowed_origins = body.allowed_origins ? [...new Set(body.allowed_origins.map(normalizeOrigin))] : null;
  patch.checkout_tips_enabled = body.tips_enabled ?? null;
  const [row] = await deps.sql`update tenants set settings = settings || ${deps.sql.json(patch)} where id = ${p.tenantId} returning settings`;
  return { object: 'checkout_settings' as const, ...settingsView(row.settings) };
}

/** What a page shows of the settings (not the origin list, which is the merchant's business). */
function brandingOf(settings: Record<string, unknown> | null) {
  const { logo_url, privacy_url, terms_url } = settingsView(settings);
  return { logo_url, privacy_url, terms_url };
}

export async function checkoutConfig(deps: { sql: Sql; routing?: { tokenizerFor(tenantId: string, livemode: boolean): Promise<unknown> } }, id: string, secret: string | undefined, caller?: Caller) {
  const owner = await authorize(deps, id, secret, caller);
  const [row] = await deps.sql`
    select pi.*, t.name as merchant, t.settings, l.concepto, fp.self_invoice_slug,
           (select a.status from attempts a where a.payment_intent_id = pi.id and a.tenant_id = pi.tenant_id order by a.created_at desc limit 1) as attempt_status
      from payment_intents pi join tenants t on t.id = pi.tenant_id
      left join payment_links l on l.id::text = pi.metadata->>'payment_link_id' and l.tenant_id = pi.tenant_id
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
    // No tip chooser on a receivable's page (B2B) nor when the merchant turned tips off.
    tips_enabled: owner.tipsEnabled,
    tip_suggestions: owner.tipsEnabled ? [10, 15, 20].map((percent) => ({ percent, amount_minor: Math.round((amount * percent) / 100) })) : [],
    merchant_display_name: row.merchant as string,
    ...brandingOf(row.settings),
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
