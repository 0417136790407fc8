// Payment links (decisions.md §3): amount, currency, concepto, single-use or reusable, a slug.
// Opening /pay/{slug} (or POST /public/payment_links/{slug}/intent) creates the intent that pays
// it, with metadata.payment_link_id; a single-use link reuses its intent while unpaid and shows
// as paid once that intent succeeded.
import { randomBytes, randomUUID } from 'node:crypto';
import type { PaymentIntents } from './payment-intents.js';
import { ApiError } from '../kernel/errors.js';
import type { Principal } from '../kernel/principal.js';
import type { CreatePaymentLinkBody } from '../schemas/checkout.js';
import type { Db, Sql } from '../kernel/db.js';
import { saveIdempotent, type IdempotencyHandle } from '../kernel/idempotency.js';
import { hydrate, intentView } from './payment-intent-store.js';
import type { Capability } from '../kernel/capability.js';
import { originAllowed, type Caller } from './checkout.js';

const SLUG_ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';
export function slug(): string {
  let s = '';
  for (const b of randomBytes(12)) s += SLUG_ALPHABET[b % SLUG_ALPHABET.length];
  return s;
}

export function linkView(r: Record<string, unknown>) {
  return {
    id: r.id as string,
    object: 'payment_link' as const,
    slug: r.slug as string,
    url: `/pay/${String(r.slug)}`,
    amount_minor: Number(r.amount_minor),
    currency: r.currency as string,
    concepto: r.concepto as string,
    reusable: r.reusable as boolean,
    active: r.active as boolean,
    metadata: (r.metadata as Record<string, string> | null) ?? null,
    paid_at: r.paid_at ? (r.paid_at as Date).toISOString() : null,
    livemode: r.livemode as boolean,
    created_at: (r.created_at as Date).toISOString(),
  };
}

/** Creates a link; with an Idempotency-Key the record commits in the same transaction. */
export async function createLink(sql: Sql, p: Pick<Principal, 'tenantId' | 'livemode'>, body: CreatePaymentLinkBody, idem?: IdempotencyHandle) {
  return sql.begin(async (tx) => {
    const link = await insertLink(tx, p, body);
    await saveIdempotent(tx, idem, 201, link);
    return link;
  });
}

/** The demo tenant `npm start` created, if any. */
export async function demoTenantId(db: Db): Promise<string | undefined> {
  const [row] = await db`select value from operator_settings where name = 'demo_tenant_id'`;
  return row ? (row.value as string) : undefined;
}

async function insertLink(db: Db, p: Pick<Principal, 'tenantId' | 'livemode'>, body: CreatePaymentLinkBody) {
  const [row] = await db`
    insert into payment_links (id, tenant_id, livemode, slug, amount_minor, currency, concepto, reusable, metadata)
    values (${randomUUID()}, ${p.tenantId}, ${p.livemode}, ${slug()}, ${body.amount_minor}, ${body.currency}, ${body.concepto}, ${body.reusable ?? false},
            ${body.metadata ? db.json(body.metadata) : null})
    returning *`;
  return linkView(row);
}

export async function listLinks(db: Db, p: Principal) {
  const rows = await db`select * from payment_links where tenant_id = ${p.tenantId} and livemode = ${p.livemode} order by created_at desc limit 10000`;
  return { object: 'list' as const, data: rows.map(linkView) };
}

export async function getLink(db: Db, p: Principal, id: string) {
  const rows = await db`select * from payment_links where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
  if (!rows.length) throw new ApiError('payment_link.not_found');
  return linkView(rows[0]);
}

export interface LinkCheckout {
  link: ReturnType<typeof linkView>;
  merchant: string;
  /** The merchant's logo (checkout settings), for the page's image policy. */
  logoUrl: string | null;
  /** The intent that pays the link now, with its secret (absent once a single-use link is paid). */
  intent?: ReturnType<typeof intentView>;
  /** The single-use link's previous intent when this visit replaced it (the page says so, and why it failed). */
  replaced?: { status: string; declineCode?: string };
}

/** The intent paying a link: created once per single-use link and reused while unpaid; new for reusable links. */
export async function intentForLink(deps: { sql: Sql; payments: Pick<PaymentIntents, 'create'> }, slugValue: string, caller?: Caller): Promise<LinkCheckout> {
  const [row] = await deps.sql`
    select l.*, t.name as merchant, t.settings->>'checkout_logo_url' as logo_url, t.settings->'checkout_allowed_origins' as allowed_origins
      from payment_links l join tenants t on t.id = l.tenant_id where l.slug = ${slugValue}`;
  if (!row) throw new ApiError('payment_link.not_found');
  if (caller && !originAllowed(Array.isArray(row.allowed_origins) ? (row.allowed_origins as string[]) : null, caller)) {
    throw new ApiError('checkout.origin_unauthorized', `This page's origin (${String(caller.origin).slice(0, 200)}) is not among the merchant's allowed_origins.`);
  }
  const link = linkView(row);
  const merchant = row.merchant as string;
  const logoUrl = (row.logo_url as string | null) ?? null;
  if (!row.reusable && row.paid_at) return { link, merchant, logoUrl };
  if (!row.active) return { link, merchant, logoUrl };
  let replaced: LinkCheckout['replaced'];
  if (!row.reusable && row.current_intent_id) {
    const h = await hydrate(deps.sql, row.current_intent_id as string, row.tenant_id as string);
    // Reuse while it can still be paid; a failed/expired/canceled one is replaced.
    if (h && !['failed', 'expired', 'canceled'].includes(h.row.status)) return { link, merchant, logoUrl, intent: intentView(h.row) };
    if (h) replaced = { status: h.row.status, declineCode: h.row.last_error?.code };
  }
  const p = { tenantId: row.tenant_id as string, livemode: row.livemode as boolean, keyId: `payment_link:${String(row.id)}`, scopes: [] };
  const intent = await deps.payments.create(p, {
    amount_minor: Number(row.amount_minor),
    currency: row.currency as string,
    metadata: { ...((row.metadata as Record<string, string> | null) ?? {}), payment_link_id: row.id as string },
  });
  if (!row.reusable) {
    // Two visitors at once: only one intent becomes the link's; the other is left unused.
    const won = await deps.sql`update payment_links set current_intent_id = ${intent.id} where id = ${row.id as string} and current_intent_id is not distinct from ${(row.current_intent_id as string | null) ?? null} returning id`;
    if (!won.length) return intentForLink(deps, slugValue, caller);
  }
  return { link, merchant, logoUrl, intent, replaced };
}

/** The intent a payer opens for a link, with its client_secret; 404 once the link cannot be paid. */
export async function payableIntent(deps: { sql: Sql; payments: Pick<PaymentIntents, 'create'> }, slugValue: string, caller?: Caller) {
  const co = await intentForLink(deps, slugValue, caller);
  if (!co.intent) throw new ApiError('payment_link.not_found', co.link.paid_at ? 'This payment link was already paid.' : 'This payment link is no longer active.');
  return co.intent;
}

/**
 * A single-use link is paid once its intent succeeded, in the same transaction as the payment (a
 * reaction to payment_intent.succeeded: the intent actor does not know about links).
 */
export const paymentLinksCapability: Capability = {
  name: 'payment_links',
  reactions: [
    {
      on: 'payment_intent.succeeded',
      run: (e, { tx, at }) => {
        const linkId = (e.data as { metadata?: Record<string, string> | null }).metadata?.payment_link_id;
        if (!linkId || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(linkId)) return;
        // by primary key (`id::text = …` scanned every link of every tenant)
        tx`
          update payment_links set paid_at = coalesce(paid_at, ${at}), active = reusable
           where id = ${linkId} and tenant_id = ${e.tenantId} and not reusable`;
      },
    },
  ],
};
