// Rows and projections of payment intents and attempts, and the reads that hydrate an actor.
import type { Db } from '../kernel/db.js';
import { tenantOffsetMsSql } from '../kernel/clock.js';
import { clockOf, type EntityRow, type Hydrated } from '../kernel/entity.js';
import type { NextAction } from '../connectors/acquirer.js';
import type { RiskRule } from './risk.js';

export interface IntentRow extends EntityRow {
  amount_minor: number;
  tip_minor: number;
  currency: string;
  client_secret: string;
  metadata: Record<string, string> | null;
  receipt_code: string;
  /** The customer the charge belongs to (set at creation, or by a one-click charge of a saved method). */
  customer_id: string | null;
  next_action: NextAction | null;
  last_error: { code: string; message: string; decline?: string } | null;
  created_at: Date;
  updated_at: Date;
}

export interface AttemptRow {
  id: string;
  tenant_id: string;
  livemode: boolean;
  payment_intent_id: string;
  status: string;
  connector_key: string;
  method: string;
  amount_minor: number;
  currency: string;
  payment_token: string | null;
  provider_ref: string | null;
  provider_key: string;
  failure_code: string | null;
  failure_message: string | null;
  decline: string | null;
  capture_requested_at: Date | null;
  fee_minor: number | null;
  /** A SPEI attempt's referencia numérica (the payer's 7-digit reference in its next_action; migration 0172). */
  referencia_numerica?: number | null;
  /** Where the 3-D Secure page returns the shopper (confirm's `return_url`); not in the projection. */
  return_url?: string | null;
  /** The shopper's IP for connectors that need it (Openpay): confirm's `payer_ip` or the checkout's client address. */
  payer_ip?: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface HydratedIntent extends Hydrated<IntentRow> {
  attempts: AttemptRow[];
  open?: AttemptRow;
  review?: { id: string; request: Record<string, unknown> | null };
  /** The tenant's active risk rules, when asked for (a confirm evaluates them). */
  rules?: RiskRuleRow[];
  /** The intent's customer as a buyer (name, email), when asked for (a charge sends it to connectors that want one: Conekta). */
  buyer?: { name?: string; email?: string };
}

/** A risk rule as the confirm evaluates it (actors/risk.ts). */
export type RiskRuleRow = Pick<RiskRule, 'id' | 'field' | 'operator' | 'value' | 'action'>;

const iso = (d: Date) => d.toISOString();

export function attemptView(a: AttemptRow) {
  return {
    id: a.id,
    object: 'attempt' as const,
    status: a.status,
    connector_key: a.connector_key,
    method: a.method,
    amount_minor: a.amount_minor,
    currency: a.currency,
    provider_ref: a.provider_ref,
    failure_code: a.failure_code,
    failure_message: a.failure_message,
    created_at: iso(a.created_at),
  };
}

/** The money of an intent in every projection: spec, `total_minor = amount_minor + tip_minor` is what is captured. */
const amounts = (i: Pick<IntentRow, 'amount_minor' | 'tip_minor' | 'currency'>) => ({
  amount_minor: i.amount_minor,
  tip_minor: i.tip_minor,
  total_minor: i.amount_minor + i.tip_minor,
  currency: i.currency,
});

/**
 * The authenticated projection (spec: Resources > payment_intent). Nulls are stripped at the edge.
 * `amount_refunded_minor` (ours): what succeeded refunds returned; only a captured charge can have
 * any, so every command's answer (confirm, capture, cancel) carries 0 and reads compute it.
 */
export function intentView(i: IntentRow, attempts?: AttemptRow[], refundedMinor = 0) {
  return {
    id: i.id,
    object: 'payment_intent' as const,
    ...amounts(i),
    amount_refunded_minor: refundedMinor,
    customer_id: i.customer_id,
    status: i.status,
    client_secret: i.client_secret,
    livemode: i.livemode,
    metadata: i.metadata,
    receipt_code: i.receipt_code,
    next_action: i.next_action,
    last_payment_error: i.last_error ? { code: i.last_error.code, message: i.last_error.message } : null,
    attempts: attempts?.map(attemptView),
    created_at: iso(i.created_at),
    updated_at: iso(i.updated_at),
  };
}

/** spec: Public checkout: the public projection is the authenticated one less client_secret, attempts, metadata, livemode (and receipt/errors). */
export function publicView(i: Pick<IntentRow, 'id' | 'amount_minor' | 'tip_minor' | 'currency' | 'status' | 'next_action'>) {
  return {
    id: i.id,
    object: 'payment_intent' as const,
    ...amounts(i),
    status: i.status,
    ...(i.next_action ? { next_action: i.next_action } : {}),
  };
}

/** spec: Events > data of payment_intent.* events: metadata always present (null when absent), never attempts. */
export function intentEventData(i: IntentRow) {
  return {
    id: i.id,
    object: 'payment_intent',
    status: i.status,
    ...amounts(i),
    metadata: i.metadata ?? null,
  };
}

const num = (v: unknown) => (v === null || v === undefined ? v : Number(v));

export function toIntentRow(r: Record<string, unknown>): IntentRow {
  return { ...(r as unknown as IntentRow), amount_minor: Number(r.amount_minor), tip_minor: Number(r.tip_minor) };
}
function toAttempt(r: Record<string, unknown>): AttemptRow {
  return { ...(r as unknown as AttemptRow), amount_minor: Number(r.amount_minor), fee_minor: num(r.fee_minor) as number | null };
}

/** The customer row's name and email as a buyer; absent ones (and a deleted customer, or none) are left out. */
function buyerOf(v: unknown): { name?: string; email?: string } {
  const o = (v ?? {}) as { name?: unknown; email?: unknown };
  return { ...(typeof o.name === 'string' && o.name ? { name: o.name } : {}), ...(typeof o.email === 'string' && o.email ? { email: o.email } : {}) };
}

export const OPEN = new Set(['pending', 'authorized', 'requires_action']);

/**
 * The intent with its attempts and pending review. Scoped by tenant (and mode when given):
 * another tenant's id reads as absent. Workers, which only see ids their own actors enqueued,
 * pass no tenant.
 */
export async function hydrate(db: Db, id: string, tenantId?: string, livemode?: boolean, opts: { rules?: boolean; buyer?: boolean } = {}): Promise<HydratedIntent | undefined> {
  // One round trip: the intent, its attempts and its pending review (and the tenant's risk rules; the
  // customer's name and email for a charge: a primary-key read in the same statement, no extra query).
  const rows = await db`
    select pi.*, ${tenantOffsetMsSql(db, 'pi.tenant_id', 'pi.livemode')} as clock_offset_ms,
           coalesce((select json_agg(a order by a.created_at, a.id) from attempts a where a.payment_intent_id = pi.id), '[]') as attempts_json,
           (select json_build_object('id', r.id, 'request', r.request) from risk_reviews r where r.payment_intent_id = pi.id and r.status = 'pending' limit 1) as review_json
           ${opts.rules
             ? db`, coalesce((select json_agg(json_build_object('id', k.id, 'field', k.field, 'operator', k.operator, 'value', k.value, 'action', k.action) order by k.created_at)
                         from risk_rules k where k.tenant_id = pi.tenant_id and k.active), '[]') as rules_json`
             : db``}
           ${opts.buyer
             ? db`, (select json_build_object('name', c.name, 'email', c.email) from customers c
                      where c.id = pi.customer_id and c.tenant_id = pi.tenant_id and c.deleted_at is null) as buyer_json`
             : db``}
      from payment_intents pi
     where pi.id = ${id} ${tenantId === undefined ? db`` : db`and pi.tenant_id = ${tenantId}`} ${livemode === undefined ? db`` : db`and pi.livemode = ${livemode}`}`;
  if (!rows.length) return undefined;
  const { attempts_json, review_json, rules_json, buyer_json, clock_offset_ms, ...intentRow } = rows[0] as Record<string, unknown>;
  const intent = toIntentRow(intentRow);
  const as = (attempts_json as Array<Record<string, unknown>>).map((a) =>
    toAttempt({
      ...a,
      created_at: new Date(a.created_at as string),
      updated_at: new Date(a.updated_at as string),
      capture_requested_at: a.capture_requested_at ? new Date(a.capture_requested_at as string) : null,
    }),
  );
  const review = review_json as { id: string; request: Record<string, unknown> | null } | null;
  return {
    row: intent,
    clockOffsetMs: clockOf({ livemode: intent.livemode, clock_offset_ms }),
    attempts: as,
    open: as.find((a) => OPEN.has(a.status)),
    review: review ?? undefined,
    ...(opts.rules ? { rules: rules_json as RiskRuleRow[] } : {}),
    ...(opts.buyer ? { buyer: buyerOf(buyer_json) } : {}),
  };
}
