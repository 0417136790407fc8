// Billers (global catalog, inquiry) and service payments (a utility bill paid through the biller
// aggregator) on the entity actor (kernel/entity.ts). docs/billers.md has the choices.
//
// - Idempotency of POST /v1/service_payments is the endpoint's own (spec: "validated by the
//   endpoint itself"): the key is a column of the row (unique per tenant and mode); same key + same
//   body replays the payment; same key + another body is 409 service_payment.idempotency_conflict.
// - Never paid twice: the row is committed `pending` (under the entity's lock) before the
//   aggregator is called with a key derived from the row id; a pending payment (a crash, a lost
//   answer) is asked about first and paid only if the aggregator never saw it.
import { accounts } from '../kernel/accounts.js';
import { createHash, randomUUID } from 'node:crypto';
import { reconciler, staleRows, type Capability } from '../kernel/capability.js';
import type { Sql } from '../kernel/db.js';
import { clockOf, hydrateRow, LockBusy, type EntityActor, type EntityRow, type EntityDef, type Hydrated, type Plan, type StepEnv } from '../kernel/entity.js';
import { ApiError } from '../kernel/errors.js';
import { defineJob, jobRequest } from '../kernel/jobs.js';
import { canonicalJson } from '../kernel/json.js';
import type { Logger } from '../kernel/log.js';
import { initialState, machineStep } from '../kernel/machine-step.js';
import type { Principal } from '../kernel/principal.js';
import { BILLERS, billerByCode, billerView, referenceProblem } from '../connectors/billers/catalog.js';
import { type BillerGateway, type BillState } from '../connectors/billers/gateway.js';
import { servicePaymentMachine } from '../machines/service-payment.js';
import { OutcomeUnknown } from '../kernel/outbound.js';

export const SERVICE_PAYMENT_QUEUE = 'service-payment';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ServicePaymentRow extends EntityRow {
  biller_code: string;
  reference: string;
  amount_minor: number;
  currency: string;
  payment_intent_id: string | null;
  idempotency_key: string;
  request_hash: string;
  provider_ref: string | null;
  failure_reason: string | null;
  created_at: Date;
  updated_at: Date;
}
type HydratedSP = Hydrated<ServicePaymentRow>;
export type ServicePaymentCommand = { kind: 'biller'; state: BillState };

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

/** A service payment's step: pure. */
export function planServicePayment(h: HydratedSP, cmd: ServicePaymentCommand, env: StepEnv): Plan<ServicePaymentRow> {
  const r = h.row;
  if (r.status !== 'pending') return { result: r };
  const s = cmd.state;
  const step = machineStep(servicePaymentMachine, r.status, undefined, { type: s.state === 'paid' ? 'biller.paid' : 'biller.failed' });
  const set: Record<string, unknown> = { status: step.value, updated_at: env.at };
  const plan: Plan<ServicePaymentRow> = { ledger: [], result: r };
  for (const e of step.effects) {
    if (e.type === 'recordProvider') set.provider_ref = s.providerRef;
    else if (e.type === 'recordFailure' && s.state === 'failed') set.failure_reason = s.reason;
    else if (e.type === 'postPaid') {
      plan.ledger!.push({ tenantId: r.tenant_id, livemode: r.livemode, kind: 'service_payment.paid', refType: 'service_payment', refId: r.id, memo: `${r.biller_code} bill`, lines: billPaidLines(r.biller_code, r.currency, r.amount_minor) });
    }
  }
  plan.set = set;
  plan.history = { event: `biller.${s.state}`, data: { provider_ref: s.providerRef } };
  plan.result = toRow({ ...r, ...set, version: r.version + 1 });
  return plan;
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

  readonly resolveJob = defineJob<{ servicePaymentId: string }>({
    queue: SERVICE_PAYMENT_QUEUE,
    name: 'service_payment.resolve',
    shape: { servicePaymentId: 'uuid' },
    id: (d) => `service-payment-${d.servicePaymentId}`,
    shardKey: (d) => d.servicePaymentId,
    transient: (e) => e instanceof OutcomeUnknown || e instanceof LockBusy,
    run: async (d) => {
      await this.d.actor.withLock(this.def, d.servicePaymentId, 2000, () => this.resolveLocked(d.servicePaymentId), true);
    },
  });

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
    const idemKey = key.toLowerCase();
    const billerCode = (body.biller_code as string).trim();
    const reference = (body.reference as string).trim();
    const requestHash = createHash('sha256')
      .update(canonicalJson({ biller_code: billerCode, reference, amount_minor: body.amount_minor ?? null, payment_intent_id: (body.payment_intent_id as string | undefined)?.toLowerCase() ?? null }))
      .digest('hex');
    const earlier = await this.byKey(p, idemKey, requestHash);
    if (earlier) return { body: earlier, replayed: true };

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
      payment_intent_id: (body.payment_intent_id as string | undefined)?.toLowerCase() ?? null, idempotency_key: idemKey, request_hash: requestHash,
      provider_ref: null, failure_reason: null, created_at: at, updated_at: at,
    };
    try {
      // The lock is taken before the row exists, so a replay that finds the row waits for this execution.
      const done = await this.d.actor.withLock(this.def, row.id, 0, async () => {
        await this.d.actor.create(this.def, p, { create: { ...row }, history: { event: 'create', data: { biller_code: row.biller_code, amount_minor: row.amount_minor } }, result: row }, { at });
        return this.executeLocked(row);
      }, false);
      return { body: servicePaymentView(done), replayed: false };
    } catch (e) {
      const err = e as { code?: string; constraint_name?: string };
      if (err.code === '23505' && err.constraint_name === 'service_payments_tenant_id_livemode_idempotency_key_key') {
        // A twin with the same key committed first.
        const twin = await this.byKey(p, idemKey, requestHash);
        if (twin) return { body: twin, replayed: true };
      }
      throw e;
    }
  }

  /** The payment of an earlier request with this key: a conflict, or the payment (a pending one resolved first). */
  private async byKey(p: Principal, key: string, requestHash: string) {
    const [r] = await this.d.sql`select * from service_payments where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and idempotency_key = ${key}`;
    if (!r) return undefined;
    if (r.request_hash !== requestHash) throw new ApiError('service_payment.idempotency_conflict');
    let row = toRow(r);
    if (row.status === 'pending') row = await this.d.actor.withLock(this.def, row.id, 0, () => this.resolveLocked(row.id), false);
    return servicePaymentView(row);
  }

  private order(r: ServicePaymentRow) {
    return { key: `sp_${r.id.replace(/-/g, '')}`, tenantId: r.tenant_id, billerCode: r.biller_code, reference: r.reference, amountMinor: r.amount_minor };
  }

  /** A step under the lock the caller holds; `r` is the row it just read or wrote (the fence catches a stale one). */
  private async step(r: ServicePaymentRow, state: BillState): Promise<ServicePaymentRow> {
    return this.d.actor.runLocked<HydratedSP, ServicePaymentCommand, void, ServicePaymentRow>(this.def, undefined, r.id, { kind: 'biller', state }, { waitMs: 0, known: { row: r, clockOffsetMs: 0 } });
  }

  /** First execution (the caller holds the lock): pay, record. A lost answer leaves it pending for the reconciler. */
  private async executeLocked(r: ServicePaymentRow): Promise<ServicePaymentRow> {
    let state: BillState;
    try {
      state = await this.d.gateway.pay(this.order(r));
    } catch (e) {
      if (!(e instanceof OutcomeUnknown)) throw e;
      this.d.log.warn('biller aggregator did not answer; the service payment stays pending', { service_payment_id: r.id });
      return r;
    }
    return this.step(r, state);
  }

  /** A pending payment (the caller holds the lock): ask first; pay only if the aggregator never saw it. */
  async resolveLocked(id: string): Promise<ServicePaymentRow> {
    const h = await this.def.hydrate(this.d.sql, id, undefined);
    if (!h) throw new ApiError('service_payment.not_found');
    if (h.row.status !== 'pending') return h.row;
    const known = await this.d.gateway.status(this.order(h.row).key);
    if (known) return this.step(h.row, known);
    return this.executeLocked(h.row);
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
    const sql = this.d.sql;
    return {
      name: 'billers',
      jobs: [this.resolveJob],
      reconcilers: [
        reconciler(
          'service payments left pending (a crash or a lost answer)',
          () => staleRows(sql, { table: 'service_payments' }),
          (r) => jobRequest(this.resolveJob, { servicePaymentId: r.id as string }),
        ),
      ],
    };
  }
}
