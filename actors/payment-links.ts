// Payment links (decisions.md §3): amount, currency, concepto, single-use or reusable, a slug.
// Opening /pay/{slug} (or POST /public/payment_links/{slug}/intent) creates the intent that pays
// it, with metadata.payment_link_id; a single-use link reuses its intent while unpaid and shows
// as paid once that intent succeeded.
import { randomBytes, randomUUID } from 'node:crypto';
import type { AppDeps } from '../api/deps.js';
import { ApiError } from '../api/errors.js';
import type { Principal } from '../api/route.js';
import type { CreatePaymentLinkBody } from '../schemas/checkout.js';
import type { Db, Sql } from '../ops/db.js';
import { saveIdempotent, type IdempotencyHandle } from '../api/idempotency.js';
import { hydrate, intentView } from './payment-intent-store.js';

const SLUG_ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';
function slug(): string {
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
  /** The intent that pays the link now, with its secret (absent once a single-use link is paid). */
  intent?: ReturnType<typeof intentView>;
}

/** The intent paying a link: created once per single-use link and reused while unpaid; new for reusable links. */
export async function intentForLink(deps: Pick<AppDeps, 'sql' | 'payments'>, slugValue: string): Promise<LinkCheckout> {
  const [row] = await deps.sql`select l.*, t.name as merchant from payment_links l join tenants t on t.id = l.tenant_id where l.slug = ${slugValue}`;
  if (!row) throw new ApiError('payment_link.not_found');
  const link = linkView(row);
  const merchant = row.merchant as string;
  if (!row.reusable && row.paid_at) return { link, merchant };
  if (!row.active) return { link, merchant };
  if (!row.reusable && row.current_intent_id) {
    const h = await hydrate(deps.sql, row.current_intent_id as string, row.tenant_id as string);
    // Reuse while it can still be paid; a failed/expired/canceled one is replaced.
    if (h && !['failed', 'expired', 'canceled'].includes(h.intent.status)) return { link, merchant, intent: intentView(h.intent) };
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
    if (!won.length) return intentForLink(deps, slugValue);
  }
  return { link, merchant, intent };
}

/** The intent a payer opens for a link, with its client_secret; 404 once the link cannot be paid. */
export async function payableIntent(deps: Pick<AppDeps, 'sql' | 'payments'>, slugValue: string) {
  const co = await intentForLink(deps, slugValue);
  if (!co.intent) throw new ApiError('payment_link.not_found', co.link.paid_at ? 'This payment link was already paid.' : 'This payment link is no longer active.');
  return co.intent;
}
