// Billers (global catalog, inquiry) and service payments (a utility bill paid through the biller
// aggregator) on the entity actor (kernel/entity.ts). docs/billers.md has the choices.
//
// - A service payment is an aggregator order (actors/aggregator-orders.ts, shared with recharges):
//   POST /v1/service_payments validates its key itself (spec: "validated by the endpoint itself")
//   and keeps it in the kernel's idempotency record, written with the payment; same key + same body
//   replays the payment; same key + another body is 409 service_payment.idempotency_conflict.
// - Never paid twice: the row is committed `pending` (under the entity's lock), `send_started_at`
//   before the aggregator is called with a key derived from the row id; a pending payment (a crash,
//   a lost answer) is asked about first and paid only if the aggregator never saw it.
import { accounts } from '../kernel/accounts.js';
import { randomUUID } from 'node:crypto';
import type { Capability } from '../kernel/capability.js';
import type { Sql } from '../kernel/db.js';
import { hydrateRow, type EntityActor, type EntityDef, type Hydrated, type Plan, type StepEnv } from '../kernel/entity.js';
import { ApiError } from '../kernel/errors.js';
import type { Logger } from '../kernel/log.js';
import { initialState, machineStep } from '../kernel/machine-step.js';
import type { Principal } from '../kernel/principal.js';
import { BILLERS, billerByCode, billerView, referenceProblem } from '../connectors/billers/catalog.js';
import type { BillerGateway } from '../connectors/billers/gateway.js';
import { servicePaymentMachine } from '../machines/service-payment.js';
import { AggregatorOrders, planAggregatorOrder, type AggregatorOrderCommand, type AggregatorOrderPlanKind, type AggregatorOrderRow } from './aggregator-orders.js';

export const SERVICE_PAYMENT_QUEUE = 'service-payment';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ServicePaymentRow extends AggregatorOrderRow {
  biller_code: string;
  reference: string;
  amount_minor: number;
  currency: string;
  payment_intent_id: string | null;
}
type HydratedSP = Hydrated<ServicePaymentRow>;
export type ServicePaymentCommand = AggregatorOrderCommand<'biller', 'paid'>;

const toRow = (r: Record<string, unknown>): ServicePaymentRow => ({ ...(r as unknown as ServicePaymentRow), amount_minor: Number(r.amount_minor) });

export function servicePaymentView(r: ServicePaymentRow) {
  return {
    id: r.id,
    object: 'service_payment' as const,
    biller_code: r.biller_code,
    reference: r.reference,
    amount_minor: Number(r.amount_minor),
    currency: r.currency,
    status: r.status,
    provider_ref: r.provider_ref,
    failure_reason: r.failure_reason,
    payment_intent_id: r.payment_intent_id,
    livemode: r.livemode,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

/** Ledger of a paid bill (ours, docs/billers.md): what the payer handed over is owed to the biller's aggregator. */
export const billPaidLines = (billerCode: string, currency: string, amount: number) => [
  { account: accounts.servicePaymentClearing, currency, amountMinor: amount },
  { account: accounts.billerPayable(billerCode), currency, amountMinor: -amount },
];

const PLAN_KIND: AggregatorOrderPlanKind<ServicePaymentRow, 'biller', 'paid'> = {
  machine: servicePaymentMachine,
  source: 'biller',
  toRow,
  entry: (r) => ({ tenantId: r.tenant_id, livemode: r.livemode, kind: 'service_payment.paid', refType: 'service_payment', refId: r.id, memo: `${r.biller_code} bill`, lines: billPaidLines(r.biller_code, r.currency, r.amount_minor) }),
};

/** A service payment's step: pure (the aggregator order's plan with the bill's ledger entry). */
export function planServicePayment(h: HydratedSP, cmd: ServicePaymentCommand, env: StepEnv): Plan<ServicePaymentRow> {
  return planAggregatorOrder(PLAN_KIND, h, cmd, env);
}

export interface BillersDeps {
  sql: Sql;
  actor: EntityActor;
  log: Logger;
  /** The aggregator of test mode; live mode has none (biller.livemode_unsupported). */
  gateway: BillerGateway;
}

export interface ServicePaymentBody {
  biller_code?: unknown;
  reference?: unknown;
  amount_minor?: unknown;
  payment_intent_id?: unknown;
}

export class Billers {
  readonly def: EntityDef<HydratedSP, ServicePaymentCommand>;
  private readonly orders: AggregatorOrders<ServicePaymentRow, 'biller', 'paid'>;

  constructor(private d: BillersDeps) {
    this.def = {
      kind: 'service_payment',
      table: 'service_payments',
      notFound: 'service_payment.not_found',
      // A replay that finds the payment executing: the generic answer of a key still in progress.
      busy: 'idempotency_key_in_progress',
      hydrate: hydrateRow('service_payments', toRow),
      plan: (h, cmd, env) => planServicePayment(h, cmd, env),
    };
    const order = (r: ServicePaymentRow) => ({ key: `sp_${r.id.replace(/-/g, '')}`, tenantId: r.tenant_id, billerCode: r.biller_code, reference: r.reference, amountMinor: r.amount_minor });
    this.orders = new AggregatorOrders(d, {
      def: this.def,
      source: 'biller',
      path: '/v1/service_payments',
      conflict: 'service_payment.idempotency_conflict',
      queue: SERVICE_PAYMENT_QUEUE,
      jobName: 'service_payment.resolve',
      connector: d.gateway.key,
      op: 'bill.pay',
      lookupOp: 'bill.status',
      idAttr: 'orquesta.service_payment_id',
      send: (r) => d.gateway.pay(order(r)),
      status: (r) => d.gateway.status(order(r).key),
      timeoutMessage: 'biller aggregator did not answer; the service payment stays pending',
      logFields: () => ({}),
    });
  }

  get resolveJob() {
    return this.orders.resolveJob;
  }

  // ---- catalog and inquiry -------------------------------------------------------------------------

  list(category?: string) {
    return { object: 'list' as const, data: BILLERS.filter((b) => !category || b.category === category).map(billerView) };
  }

  /** The biller and its reference checked (spec order: missing reference, unknown biller, format). */
  private checkReference(code: string, reference: unknown) {
    if (typeof reference !== 'string' || !reference.trim()) throw new ApiError('biller.missing_reference');
    const b = billerByCode(code);
    if (!b || !b.active) throw new ApiError('biller.not_found', `No biller with code ${JSON.stringify(code)}. See GET /v1/billers.`);
    const ref = reference.trim();
    const problem = referenceProblem(b, ref);
    if (problem) throw new ApiError('biller.invalid_reference', problem);
    return { biller: b, reference: ref };
  }

  private noLive(p: Principal) {
    if (p.livemode) throw new ApiError('biller.livemode_unsupported');
  }

  async inquiry(p: Principal, code: string, body: { reference?: unknown }) {
    const { biller, reference } = this.checkReference(code, body?.reference);
    this.noLive(p);
    const due = await this.d.gateway.inquire(biller.code, reference);
    if (!due) throw new ApiError('biller.reference_not_found', `${biller.name} knows no account with this reference.`);
    return {
      object: 'biller_inquiry' as const,
      biller_code: biller.code,
      biller_name: biller.name,
      reference,
      amount_due_minor: due.amountDueMinor,
      currency: due.currency,
      service_holder_name: due.holderName,
      due_date: due.dueDate,
    };
  }

  // ---- service payments ------------------------------------------------------------------------------

  /**
   * POST /v1/service_payments. Answers { status, body, replayed }. Order of checks: fields, key,
   * an earlier payment with the key (replay or conflict), biller, reference, account, amount.
   */
  async pay(p: Principal, body: ServicePaymentBody, keyHeader: string | undefined): Promise<{ body: ReturnType<typeof servicePaymentView>; replayed: boolean }> {
    const missing = (['biller_code', 'reference'] as const).filter((f) => typeof body?.[f] !== 'string' || !(body[f] as string).trim());
    if (missing.length) throw new ApiError('service_payment.missing_fields', `A service payment needs biller_code and reference; missing: ${missing.join(', ')}.`);
    if (body.amount_minor !== undefined && !(Number.isSafeInteger(body.amount_minor) && (body.amount_minor as number) > 0)) {
      throw new ApiError('service_payment.amount_mismatch', '`amount_minor`, when sent, is a positive integer of cents equal to the amount due.');
    }
    if (body.payment_intent_id !== undefined && (typeof body.payment_intent_id !== 'string' || !UUID.test(body.payment_intent_id))) {
      throw new ApiError('service_payment.missing_fields', '`payment_intent_id`, when sent, is the UUID of a payment intent (correlation only).');
    }
    const key = typeof keyHeader === 'string' ? keyHeader.trim() : '';
    if (!UUID.test(key)) throw new ApiError('idempotency_key_required', key ? 'Idempotency-Key must be a UUID.' : undefined);
    const billerCode = (body.biller_code as string).trim();
    const reference = (body.reference as string).trim();
    const idem = this.orders.handle(p, key.toLowerCase(), { biller_code: billerCode, reference, amount_minor: body.amount_minor ?? null, payment_intent_id: (body.payment_intent_id as string | undefined)?.toLowerCase() ?? null });
    const earlier = await this.orders.byKey(idem);
    if (earlier) return { body: servicePaymentView(earlier), replayed: true };

    const { biller } = this.checkReference(billerCode, reference);
    this.noLive(p);
    const due = await this.d.gateway.inquire(biller.code, reference);
    if (!due) throw new ApiError('biller.reference_not_found', `${biller.name} knows no account with this reference.`);
    if (body.amount_minor !== undefined && body.amount_minor !== due.amountDueMinor) {
      throw new ApiError('service_payment.amount_mismatch', `\`amount_minor\` ${String(body.amount_minor)} differs from the amount due, ${due.amountDueMinor}.`);
    }
    const at = new Date();
    const row: ServicePaymentRow = {
      id: randomUUID(), tenant_id: p.tenantId, livemode: p.livemode, status: initialState(servicePaymentMachine), version: 0,
      biller_code: biller.code, reference, amount_minor: due.amountDueMinor, currency: due.currency,
      payment_intent_id: (body.payment_intent_id as string | undefined)?.toLowerCase() ?? null,
      send_started_at: null, provider_ref: null, failure_reason: null, created_at: at, updated_at: at,
    };
    const done = await this.orders.create(p, row, idem, { history: { biller_code: row.biller_code, amount_minor: row.amount_minor }, view: servicePaymentView });
    return { body: servicePaymentView(done.row), replayed: done.replayed };
  }

  /** A pending payment (the caller holds the lock): ask first; pay only if the aggregator never saw it. */
  resolveLocked(id: string): Promise<ServicePaymentRow> {
    return this.orders.resolveLocked(id);
  }

  async get(p: Principal, id: string) {
    const [r] = await this.d.sql`select * from service_payments where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (!r) throw new ApiError('service_payment.not_found', `No service payment ${id} exists for this key.`);
    return servicePaymentView(toRow(r));
  }

  async listPayments(p: Principal, limit = 100) {
    const rows = await this.d.sql`
      select * from service_payments where tenant_id = ${p.tenantId} and livemode = ${p.livemode}
       order by created_at desc, id desc limit ${Math.min(Math.max(1, limit), 500)}`;
    return { object: 'list' as const, data: rows.map((r) => servicePaymentView(toRow(r))) };
  }

  capability(): Capability {
    return { name: 'billers', ...this.orders.capability() };
  }
}
