// Receivables (issue 15, docs/receivables.md): what a customer owes, with a single-use payment
// link, a status derived by the tenant's clock, a customer statement, ageing, a WhatsApp link and
// the CFDI that makes itself when it is paid. Every change goes through the entity actor:
//   create: the receivable row, its payment link, its overdue timer, its history and the
//           idempotency answer in one transaction;
//   overdue: the durable timer (kernel/timers.ts) fires by the tenant's clock → step → event;
//   paid:   a reaction to payment_intent.succeeded, inside the intent's transaction (the intent
//           actor does not know receivables), which also asks for the invoice job after commit;
//   cancel: step (link deactivated in the same transaction), then the link's open intent is canceled;
//   invoice: a job (PUE for the charge, or the REP of a PPD invoice) through the invoice actor,
//           whose own idempotency per charge makes a retried or crashed job stamp once.
import { randomUUID } from 'node:crypto';
import { eventDataOf } from '../kernel/json.js';
import { reconciler, staleRows, type Capability } from '../kernel/capability.js';
import { nowFor, tenantOffsetMsSql } from '../kernel/clock.js';
import type { Sql } from '../kernel/db.js';
import { clockOf, LockBusy, type EntityActor, type EntityRow, type EntityDef, type EntityPlan, type Hydrated, type Plan, type StepEnv } from '../kernel/entity.js';
import { ApiError } from '../kernel/errors.js';
import type { IdempotencyHandle } from '../kernel/idempotency.js';
import { defineJob, jobRequest } from '../kernel/jobs.js';
import type { Logger } from '../kernel/log.js';
import { initialState, machineStep } from '../kernel/machine-step.js';
import type { Principal } from '../kernel/principal.js';
import type { DomainEvent, ReactionContext } from '../kernel/reactions.js';
import type { TimerDef } from '../kernel/timers.js';
import { receivableMachine, type ReceivableEffect, type ReceivableStatus } from '../machines/receivable.js';
import { checkReceptor } from '../formats/cfdi/receptor.js';
import type { AgeingQuery, CreateReceivableBody, ReceivableListQuery, StatementQuery } from '../schemas/receivables.js';
import { slug as newSlug } from './payment-links.js';
import type { Invoices } from './invoices.js';
import type { PaymentIntents } from './payment-intents.js';
import { listCursor } from './list-cursor.js';

const receivableCursor = listCursor('receivables');

type Row = Record<string, any>;

export const RECEIVABLE_QUEUE = 'receivable';
export const OVERDUE_TIMER = 'receivable.overdue';

export interface ReceivableRow extends EntityRow<ReceivableStatus> {
  customer_name: string;
  customer_email: string;
  customer_phone: string | null;
  customer_rfc: string | null;
  customer_uso_cfdi: string | null;
  customer_regimen_fiscal: string | null;
  customer_cp: string | null;
  concepto: string;
  amount_minor: number;
  currency: string;
  due_date: Date;
  payment_link_id: string;
  payment_link_slug: string;
  ppd_invoice_id: string | null;
  metadata: Record<string, string> | null;
  payment_intent_id: string | null;
  paid_at: Date | null;
  canceled_at: Date | null;
  invoice_status: 'none' | 'pending' | 'stamped' | 'error';
  invoice_id: string | null;
  invoice_payment_id: string | null;
  invoice_error: string | null;
  invoice_attempts: number;
  created_at: Date;
  updated_at: Date;
}

export type HydratedReceivable = Hydrated<ReceivableRow> & {
  /** Status of the intent the link currently reuses (cancel: a payment in flight blocks it). */
  linkIntent?: { id: string; status: string } | null;
};

export type ReceivableCommand =
  | { kind: 'due' }
  | { kind: 'cancel' }
  /** Its payment intent succeeded (the reaction to payment_intent.succeeded); `invoicing`: the tenant invoices in this mode. */
  | { kind: 'paid'; paymentIntentId: string; invoicing: boolean }
  | { kind: 'invoice_result'; outcome: 'stamped' | 'error' | 'retry'; invoiceId?: string | null; invoicePaymentId?: string | null; error?: string | null };

const toRow = (r: Row): ReceivableRow => ({ ...(r as ReceivableRow), amount_minor: Number(r.amount_minor), due_date: new Date(r.due_date), created_at: new Date(r.created_at), updated_at: new Date(r.updated_at), paid_at: r.paid_at ? new Date(r.paid_at) : null, canceled_at: r.canceled_at ? new Date(r.canceled_at) : null });

/** The status a reader sees: the stored state, with `overdue` derived from the tenant's clock. */
export function derivedStatus(status: ReceivableStatus, due: Date, now: Date): ReceivableStatus {
  return status === 'open' && due.getTime() <= now.getTime() ? 'overdue' : status;
}

/** Phone numbers are never answered in full (kernel/log.ts mask): two digits, asterisks, the last four. */
export function maskPhone(p: string): string {
  // the national number (the last 10 digits): two digits, asterisks, the last four
  const d = p.replace(/\D/g, '').slice(-10);
  return d.length <= 6 ? '******' : `${d.slice(0, 2)}****${d.slice(-4)}`;
}

/** The receivable's authenticated projection (null fields are stripped by the edge). */
export function receivableView(r: ReceivableRow, now: Date) {
  return {
    id: r.id,
    object: 'receivable' as const,
    customer_name: r.customer_name,
    customer_email: r.customer_email,
    customer_phone: r.customer_phone ? maskPhone(r.customer_phone) : null,
    customer_rfc: r.customer_rfc,
    customer_uso_cfdi: r.customer_uso_cfdi,
    customer_regimen_fiscal: r.customer_regimen_fiscal,
    customer_cp: r.customer_cp,
    concepto: r.concepto,
    amount_minor: r.amount_minor,
    currency: r.currency,
    due_date: r.due_date.toISOString(),
    status: derivedStatus(r.status, r.due_date, now),
    payment_link_id: r.payment_link_id,
    payment_link_url: `/pay/${r.payment_link_slug}`,
    payment_intent_id: r.payment_intent_id,
    paid_at: r.paid_at?.toISOString() ?? null,
    canceled_at: r.canceled_at?.toISOString() ?? null,
    ppd_invoice_id: r.ppd_invoice_id,
    invoice_status: r.invoice_status,
    invoice_id: r.invoice_id,
    invoice_payment_id: r.invoice_payment_id,
    invoice_error: r.invoice_error,
    metadata: r.metadata,
    livemode: r.livemode,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}
export type ReceivableView = ReturnType<typeof receivableView>;

/** Event data: the projection without nulls (as every authenticated answer). */
const eventData = (r: ReceivableRow, now: Date) => eventDataOf(receivableView(r, now));

// ------------------------------------------------------------------------------------------
// Input rules (pure)

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** due_date: an ISO 8601 date-time with offset, or a date (end of that day in Mexico City, UTC−6). */
export function parseDueDate(s: string): Date {
  const bad = () => new ApiError('receivable.invalid_date', `\`due_date\` "${s.slice(0, 40)}" is not an ISO 8601 date-time with offset (e.g. 2026-12-31T23:59:59-06:00) nor a date YYYY-MM-DD.`);
  const v = s.trim();
  let d: Date;
  const m = DATE_ONLY.exec(v);
  if (m) d = new Date(`${v}T23:59:59.999-06:00`);
  else if (DATE_TIME.test(v)) d = new Date(v);
  else throw bad();
  if (Number.isNaN(d.getTime())) throw bad();
  // Calendar check: 2026-02-30 must not roll over into March.
  const day = m ? `${m[1]}-${m[2]}-${m[3]}` : v.slice(0, 10);
  const [y, mo, da] = day.split('-').map(Number);
  const probe = new Date(Date.UTC(y!, mo! - 1, da!));
  if (probe.getUTCFullYear() !== y || probe.getUTCMonth() !== mo! - 1 || probe.getUTCDate() !== da || y! < 1970 || y! > 2999) throw bad();
  return d;
}

/** A phone as stored: `+<digits>` in international form (10 digits alone are Mexican: +52). */
export function normalizePhone(s: string): string {
  const raw = s.trim();
  const cleaned = raw.replace(/[\s\-.()]/g, '');
  const bad = () => new ApiError('receivable.invalid_phone', '`customer_phone` must be 10 digits (Mexico) or `+` with the country code and 11 to 15 digits.');
  if (/^\d{10}$/.test(cleaned)) return `+52${cleaned}`;
  const m = /^(?:\+|00)(\d{11,15})$/.exec(cleaned);
  if (!m) throw bad();
  // The old Mexican mobile prefix "1" after 52 is no longer dialled (and WhatsApp does not want it).
  const digits = /^521\d{10}$/.test(m[1]!) ? `52${m[1]!.slice(3)}` : m[1]!;
  return `+${digits}`;
}

const FISCAL = ['customer_rfc', 'customer_uso_cfdi', 'customer_regimen_fiscal', 'customer_cp'] as const;

export interface CreateInput {
  row: ReceivableRow;
  link: Row;
}

/** The rows of a new receivable and its link (pure; throws the spec's codes). */
export function buildReceivable(scope: { tenantId: string; livemode: boolean }, body: CreateReceivableBody, env: StepEnv): CreateInput {
  const name = body.customer_name?.trim();
  const email = body.customer_email?.trim().toLowerCase();
  const concepto = body.concepto?.trim();
  const missing = [!name && 'customer_name', !email && 'customer_email', !concepto && 'concepto'].filter(Boolean);
  if (missing.length) throw new ApiError('receivable.missing_fields', `Missing: ${missing.join(', ')}.`);
  if (!Number.isSafeInteger(body.amount_minor) || body.amount_minor <= 0) throw new ApiError('receivable.invalid_amount', '`amount_minor` must be a positive integer of minor units.');
  const due = parseDueDate(body.due_date);
  const present = FISCAL.filter((k) => body[k] !== undefined && String(body[k]).trim() !== '');
  if (present.length !== 0 && present.length !== 4) {
    throw new ApiError('receivable.incomplete_fiscal_receptor', `The fiscal fields go all four together or none; missing: ${FISCAL.filter((k) => !present.includes(k)).join(', ')}.`);
  }
  let fiscal: Pick<ReceivableRow, (typeof FISCAL)[number]> = { customer_rfc: null, customer_uso_cfdi: null, customer_regimen_fiscal: null, customer_cp: null };
  if (present.length === 4) {
    const c = checkReceptor({ rfc: body.customer_rfc!, nombre: name!, uso_cfdi: body.customer_uso_cfdi!, regimen_fiscal: body.customer_regimen_fiscal!, cp: body.customer_cp! });
    if (!c.ok) throw new ApiError('receivable.invalid_fiscal_receptor', c.problem.message.replace(/receptor\.(rfc|nombre|uso_cfdi|regimen_fiscal|cp)/g, (_, f: string) => (f === 'nombre' ? 'customer_name' : `customer_${f}`)));
    fiscal = { customer_rfc: c.receptor.rfc, customer_uso_cfdi: c.receptor.uso_cfdi, customer_regimen_fiscal: c.receptor.regimen_fiscal, customer_cp: c.receptor.cp };
  }
  const phone = body.customer_phone !== undefined ? normalizePhone(body.customer_phone) : null;
  const id = env.newId();
  const linkId = env.newId();
  const slug = newSlug();
  const row: ReceivableRow = {
    id, tenant_id: scope.tenantId, livemode: scope.livemode, status: initialState(receivableMachine) as ReceivableStatus, version: 0,
    customer_name: name!, customer_email: email!, customer_phone: phone, ...fiscal, concepto: concepto!,
    amount_minor: body.amount_minor, currency: body.currency, due_date: due,
    payment_link_id: linkId, payment_link_slug: slug, ppd_invoice_id: body.ppd_invoice_id ?? null, metadata: (body.metadata as Record<string, string> | undefined) ?? null,
    payment_intent_id: null, paid_at: null, canceled_at: null, invoice_status: 'none', invoice_id: null, invoice_payment_id: null, invoice_error: null, invoice_attempts: 0,
    created_at: env.at, updated_at: env.at,
  };
  const link = {
    id: linkId, tenant_id: scope.tenantId, livemode: scope.livemode, slug, amount_minor: body.amount_minor, currency: body.currency, concepto: concepto!,
    reusable: false, active: true, metadata: { receivable_id: id }, created_at: env.at,
  };
  return { row, link };
}

/** The creation plan: receivable, link, overdue timer, history, idempotency answer. */
export function planCreate(input: CreateInput, env: StepEnv): Plan<ReceivableView> {
  const view = receivableView(input.row, env.now);
  const { tenant_id: _t, livemode: _l, version: _v, ...create } = input.row;
  return {
    create: { ...create, metadata: input.row.metadata ?? null },
    writes: [{ op: 'insert', table: 'payment_links', row: input.link }],
    timers: [{ kind: OVERDUE_TIMER, entityId: input.row.id, dueAt: input.row.due_date }],
    history: { event: 'created', data: { amount_minor: input.row.amount_minor, due_date: view.due_date, payment_link_id: input.row.payment_link_id } },
    response: { status: 201, body: view },
    result: view,
  };
}

/** A step of an existing receivable (pure). */
export function planStep(h: HydratedReceivable, cmd: ReceivableCommand, env: StepEnv): Plan<ReceivableView> {
  const r = h.row;
  const same = (): Plan<ReceivableView> => ({ result: receivableView(r, env.now) });
  if (cmd.kind === 'invoice_result') {
    // A stamped CFDI is final: the late result of a second run of the invoice job (redelivered after its
    // lock expired, or the reconciler beside it) that failed or found the charge's CFDI mid-flight changes nothing.
    if (r.invoice_status === 'stamped' && cmd.outcome !== 'stamped') return same();
    const set: Row = { updated_at: env.at, invoice_attempts: r.invoice_attempts + 1 };
    if (cmd.outcome === 'stamped') Object.assign(set, { invoice_status: 'stamped', invoice_id: cmd.invoiceId ?? r.invoice_id, invoice_payment_id: cmd.invoicePaymentId ?? r.invoice_payment_id, invoice_error: null });
    else Object.assign(set, { invoice_status: cmd.outcome === 'error' ? 'error' : 'pending', invoice_error: cmd.error ?? null, invoice_id: cmd.invoiceId ?? r.invoice_id });
    const next = { ...r, ...set } as ReceivableRow;
    // A PAC that stays down: the attempt is counted, the history keeps one row per distinct failure.
    if (cmd.outcome === 'retry' && r.invoice_status === 'pending' && r.invoice_error === (cmd.error ?? null)) return { set, result: receivableView(next, env.now) };
    return { set, history: { event: `invoice.${cmd.outcome}`, data: { invoice_id: next.invoice_id, invoice_payment_id: next.invoice_payment_id, error: cmd.error ?? undefined } }, result: receivableView(next, env.now) };
  }
  if (cmd.kind === 'paid') return planPaid(r, cmd, env);
  if (cmd.kind === 'due' && r.due_date.getTime() > env.now.getTime()) return same(); // moved or early: the timer fires again when due
  if (cmd.kind === 'cancel' && r.status === 'canceled') return same(); // idempotent
  if (cmd.kind === 'cancel' && h.linkIntent && h.linkIntent.status === 'processing' && r.status !== 'paid') {
    throw new ApiError('receivable.cancel_conflict', `A payment of this receivable's link (intent ${h.linkIntent.id}) is being processed; retry once it resolves.`);
  }
  const step = machineStep<ReceivableEffect>(receivableMachine, r.status, null, { type: cmd.kind === 'due' ? 'clock.due' : 'cancel' });
  const rejected = step.effects.find((e) => e.type === 'reject');
  if (rejected && rejected.type === 'reject') throw new ApiError(rejected.params.code as 'receivable.cancel_conflict', rejected.params.message);
  if (step.value === r.status) return same();
  const set: Row = { status: step.value, updated_at: env.at };
  const plan: Plan<ReceivableView> = { set, history: { event: cmd.kind === 'due' ? 'overdue' : 'canceled' }, writes: [], timers: [], events: [], result: undefined as never };
  for (const e of step.effects) {
    if (e.type === 'deactivateLink') {
      set.canceled_at = env.now;
      plan.writes!.push({ op: 'update', table: 'payment_links', id: r.payment_link_id, set: { active: false } });
    } else if (e.type === 'cancelOverdueTimer') plan.timers!.push({ kind: OVERDUE_TIMER, entityId: r.id, cancel: true });
  }
  const next = { ...r, ...set } as ReceivableRow;
  for (const e of step.effects) if (e.type === 'emit') plan.events!.push({ type: e.params.event, data: eventData(next, env.now) });
  plan.result = receivableView(next, env.now);
  return plan;
}

/** The receivable's payment succeeded: paid (timer cancelled, event, CFDI asked for), or kept on record after a cancel. */
function planPaid(r: ReceivableRow, cmd: { paymentIntentId: string; invoicing: boolean }, env: StepEnv): Plan<ReceivableView> {
  const step = machineStep<ReceivableEffect>(receivableMachine, r.status, null, { type: 'payment.succeeded' });
  // A payment that got through after the receivable was canceled: kept on record, status unchanged.
  if (step.value === r.status) return { history: { event: 'payment_after_cancel', data: { payment_intent_id: cmd.paymentIntentId } }, result: receivableView(r, env.now) };
  // The CFDI makes itself when the tenant invoices in this mode (a fiscal profile) and the receivable says to whom.
  const wantsInvoice = step.effects.some((x) => x.type === 'requestInvoice') && cmd.invoicing && (!!r.customer_rfc || !!r.ppd_invoice_id);
  const set: Row = { status: step.value, payment_intent_id: cmd.paymentIntentId, paid_at: env.now, updated_at: env.at, ...(wantsInvoice ? { invoice_status: 'pending' } : {}) };
  const next = { ...r, ...set } as ReceivableRow;
  const plan: Plan<ReceivableView> = { set, history: { event: 'paid', data: { payment_intent_id: cmd.paymentIntentId } }, timers: [], events: [], result: receivableView(next, env.now) };
  for (const x of step.effects) {
    if (x.type === 'cancelOverdueTimer') plan.timers!.push({ kind: OVERDUE_TIMER, entityId: r.id, cancel: true });
    if (x.type === 'emit') plan.events!.push({ type: x.params.event, data: eventData(next, env.now) });
  }
  return plan;
}

// ------------------------------------------------------------------------------------------

export interface ReceivablesDeps {
  sql: Sql;
  actor: EntityActor;
  log: Logger;
  payments: Pick<PaymentIntents, 'cancel'>;
  invoices: Pick<Invoices, 'stampPueForCharge' | 'stampRepForCharge' | 'get'>;
  /** {base_url} of decisions.md §1: the absolute payment-link URL of the WhatsApp message. */
  publicBaseUrl: string;
}

const LIST_DEFAULT = 20;
const LIST_MAX = 100;

export class Receivables {
  readonly def: EntityDef<HydratedReceivable, ReceivableCommand>;

  /** Stamps the CFDI of a paid receivable: its PUE invoice, or the REP of its PPD invoice. */
  readonly invoiceJob = defineJob<{ receivableId: string }>({
    queue: RECEIVABLE_QUEUE,
    name: 'receivable.invoice',
    shape: { receivableId: 'uuid' },
    id: (d) => `receivable-invoice-${d.receivableId}`,
    shardKey: (d) => d.receivableId,
    transient: (e) => e instanceof LockBusy || (e instanceof ApiError && /pac_(unreachable|bad_response|no_uuid)|concurrent_modification/.test(e.code)),
    run: (d) => this.stampInvoice(d.receivableId),
  });

  readonly overdueTimer: TimerDef = {
    kind: OVERDUE_TIMER,
    queue: RECEIVABLE_QUEUE,
    transient: (e) => e instanceof LockBusy,
    fire: (t) => this.d.actor.run(this.def, { tenantId: t.tenantId, livemode: t.livemode }, t.entityId, { kind: 'due' }, { waitMs: 2000, worker: true }),
  };

  constructor(private readonly d: ReceivablesDeps) {
    this.def = {
      kind: 'receivable',
      table: 'receivables',
      notFound: 'receivable.not_found',
      busy: 'receivable.concurrent_modification',
      hydrate: async (sql, id, scope, cmd) => {
        const [r] = await sql`
          select r.*, ${tenantOffsetMsSql(sql, 'r.tenant_id', 'r.livemode')} as clock_offset_ms
            ${cmd?.kind === 'cancel' ? sql`, (select json_build_object('id', pi.id, 'status', pi.status) from payment_links l join payment_intents pi on pi.id = l.current_intent_id and pi.tenant_id = l.tenant_id where l.id = r.payment_link_id and l.tenant_id = r.tenant_id) as link_intent` : sql``}
          from receivables r
          where r.id = ${id} ${scope ? sql`and r.tenant_id = ${scope.tenantId} and r.livemode = ${scope.livemode}` : sql``}`;
        if (!r) return undefined;
        const { clock_offset_ms, link_intent, ...row } = r;
        return { row: toRow(row), clockOffsetMs: clockOf({ livemode: r.livemode, clock_offset_ms }), linkIntent: (link_intent as { id: string; status: string } | undefined) ?? null };
      },
      plan: (h, cmd, env) => planStep(h, cmd, env),
    };
  }

  private get sql(): Sql {
    return this.d.sql;
  }

  // ------------------------------------------------------------------------------------------
  // Commands

  async create(p: Principal, body: CreateReceivableBody, idem?: IdempotencyHandle): Promise<ReceivableView> {
    const now = await nowFor(this.sql, p.tenantId, p.livemode);
    const at = new Date();
    const env: StepEnv = { at, now, newId: () => crypto.randomUUID() };
    const input = buildReceivable(p, body, env);
    if (input.row.ppd_invoice_id) await this.checkPpd(p, input.row);
    return this.d.actor.create<ReceivableView>(this.def, p, planCreate(input, env), { idem, now, at });
  }

  /** A PPD invoice a receivable may pay part of: stamped, same currency, balance covers the amount. */
  private async checkPpd(p: Principal, r: ReceivableRow): Promise<void> {
    const inv = await this.d.invoices.get(p, r.ppd_invoice_id!).catch((e) => {
      if (e instanceof ApiError && e.code === 'invoice.not_found') throw new ApiError('receivable.invalid_invoice', `No invoice ${r.ppd_invoice_id} for this key.`);
      throw e;
    });
    if (inv.metodo_pago !== 'PPD') throw new ApiError('receivable.invalid_invoice', `Invoice ${inv.id} is ${inv.metodo_pago}: only a PPD invoice is paid in parts.`);
    if (inv.status !== 'stamped') throw new ApiError('receivable.invalid_invoice', `Invoice ${inv.id} is "${inv.status}": it must be stamped.`);
    if (inv.currency !== r.currency) throw new ApiError('receivable.invalid_invoice', `Invoice ${inv.id} is in ${inv.currency}, the receivable in ${r.currency}.`);
    if (r.amount_minor > Number(inv.saldo_insoluto_minor)) throw new ApiError('receivable.invalid_invoice', `amount_minor (${r.amount_minor}) exceeds the invoice's remaining balance (saldo_insoluto_minor ${inv.saldo_insoluto_minor}).`);
  }

  async cancel(p: Principal, id: string, idem?: IdempotencyHandle): Promise<ReceivableView> {
    const view = await this.d.actor.run<HydratedReceivable, ReceivableCommand, void, ReceivableView>(this.def, p, id, { kind: 'cancel' }, { waitMs: 3000, idem, worker: false });
    // The link no longer opens an intent; the one it opened (a SPEI CLABE, an OXXO voucher) is canceled too.
    const [l] = await this.sql`
      select pi.id, pi.status from payment_links l join payment_intents pi on pi.id = l.current_intent_id and pi.tenant_id = l.tenant_id
       where l.id = ${view.payment_link_id} and l.tenant_id = ${p.tenantId} and pi.status in ('requires_payment_method', 'requires_confirmation', 'requires_action')`;
    if (l) await this.d.payments.cancel(p, l.id as string).catch((e) => this.d.log.warn('the canceled receivable\'s open intent could not be canceled', { receivableId: id, intentId: l.id, err: e }));
    return view;
  }

  /**
   * The reaction to payment_intent.succeeded: the receivable whose link the intent pays becomes paid.
   * It returns the receivable's step (planStep, command `paid`: machine step, history, event, timer
   * cancelled), which the entity actor commits, fenced and recorded, in the intent's transaction
   * (no hand-written UPDATE + history: issue 24.3); with fiscal fields or a PPD invoice, the step
   * asks for the invoice job after the commit.
   */
  async onIntentSucceeded(e: DomainEvent, ctx: ReactionContext): Promise<EntityPlan | undefined> {
    const data = e.data as { id: string; metadata?: Record<string, string> | null };
    const rid = data.metadata?.receivable_id;
    if (!rid || !/^[0-9a-f-]{36}$/i.test(rid)) return undefined;
    // Read under a row lock: the version it carries stays current until the commit fences on it.
    const [found] = await ctx.tx`
      select r.*, exists (select 1 from fiscal_profiles f where f.tenant_id = r.tenant_id and f.livemode = r.livemode) as has_fiscal_profile
        from receivables r where r.id = ${rid} and r.tenant_id = ${e.tenantId} and r.livemode = ${e.livemode} for update of r`;
    if (!found) return undefined;
    const { has_fiscal_profile, ...raw } = found;
    const row = toRow(raw);
    const plan = planStep({ row, clockOffsetMs: 0 }, { kind: 'paid', paymentIntentId: data.id, invoicing: !!has_fiscal_profile }, { at: ctx.at, now: ctx.now, newId: randomUUID });
    if (plan.set?.invoice_status === 'pending') plan.jobs = [jobRequest(this.invoiceJob, { receivableId: row.id })];
    return { def: this.def, row, plan };
  }

  /** The invoice job: stamps (or finds) the CFDI of the payment and records the outcome on the receivable. */
  async stampInvoice(receivableId: string): Promise<unknown> {
    const [raw] = await this.sql`select * from receivables where id = ${receivableId}`;
    if (!raw) return { skipped: 'no receivable' };
    const r = toRow(raw);
    if (r.invoice_status !== 'pending' || !r.payment_intent_id) return { skipped: `invoice ${r.invoice_status}` };
    const scope = { tenantId: r.tenant_id, livemode: r.livemode };
    const record = (cmd: ReceivableCommand) => this.d.actor.run<HydratedReceivable, ReceivableCommand, void, ReceivableView>(this.def, scope, r.id, cmd, { waitMs: 2000, worker: true });
    try {
      if (r.ppd_invoice_id) {
        const rep = await this.d.invoices.stampRepForCharge({ ...scope, invoiceId: r.ppd_invoice_id, paymentIntentId: r.payment_intent_id });
        return await record({ kind: 'invoice_result', outcome: 'stamped', invoiceId: r.ppd_invoice_id, invoicePaymentId: rep.id });
      }
      const [pi] = await this.sql`select amount_minor + tip_minor as total from payment_intents where id = ${r.payment_intent_id}`;
      const inv = await this.d.invoices.stampPueForCharge({
        ...scope, paymentIntentId: r.payment_intent_id,
        receptor: { rfc: r.customer_rfc!, nombre: r.customer_name, uso_cfdi: r.customer_uso_cfdi!, regimen_fiscal: r.customer_regimen_fiscal!, cp: r.customer_cp! },
        conceptos: [{ descripcion: r.concepto, importe_minor: Number(pi.total) }],
      });
      return await record({ kind: 'invoice_result', outcome: 'stamped', invoiceId: inv.id });
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      // A rejection (the PAC or SAT said no, or the data cannot make a CFDI) is final for this data;
      // anything else (PAC unreachable, lost answer, a busy lock) is retried by the queue and the reconciler.
      const final = !/pac_(unreachable|bad_response|no_uuid)|concurrent_modification|busy/.test(e.code);
      const invoiceId = final ? await this.failedInvoiceId(r) : null;
      await record({ kind: 'invoice_result', outcome: final ? 'error' : 'retry', error: `${e.code}: ${e.message}`, invoiceId });
      if (final) return { error: e.code };
      throw e;
    }
  }

  private async failedInvoiceId(r: ReceivableRow): Promise<string | null> {
    if (r.ppd_invoice_id) return r.ppd_invoice_id;
    const [i] = await this.sql`select id from invoices where tenant_id = ${r.tenant_id} and livemode = ${r.livemode} and payment_intent_id = ${r.payment_intent_id} order by created_at desc limit 1`;
    return (i?.id as string | undefined) ?? null;
  }

  // ------------------------------------------------------------------------------------------
  // Reads

  async get(p: Principal, id: string): Promise<ReceivableView> {
    const [r] = await this.sql`select * from receivables where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (!r) throw new ApiError('receivable.not_found');
    return receivableView(toRow(r), await nowFor(this.sql, p.tenantId, p.livemode));
  }

  /** Newest first, keyset on (created_at, id), with the report listings' signed cursor. */
  async list(p: Principal, q: ReceivableListQuery) {
    const sql = this.sql;
    const limit = Math.min(q.limit ?? LIST_DEFAULT, LIST_MAX);
    const now = await nowFor(sql, p.tenantId, p.livemode);
    const pos = q.cursor ? await receivableCursor.read(sql, p, q.cursor) : undefined;
    const common = sql`
      tenant_id = ${p.tenantId} and livemode = ${p.livemode}
      ${q.customer_email ? sql`and customer_email = ${q.customer_email.trim().toLowerCase()}` : sql``}
      ${q.due_from ? sql`and due_date >= ${new Date(q.due_from)}` : sql``}
      ${q.due_to ? sql`and due_date < ${new Date(q.due_to)}` : sql``}
      ${pos ? sql`and (created_at, id) < (${pos.c}::timestamptz, ${pos.i}::uuid)` : sql``}`;
    const page = (stored: string | undefined, extra = sql``) => sql`
      (select *, created_at::text as created_key from receivables
        where ${common} ${stored ? sql`and status = ${stored}` : sql``} ${extra}
        order by created_at desc, id desc limit ${limit + 1})`;
    // Derived status: `overdue` is the stored 'overdue' plus the 'open' ones past due whose timer has
    // not fired yet (read first through receivables_open_due: normally none), merged newest first.
    const rows =
      q.status === 'overdue'
        ? await sql`
            with lag as materialized (select id from receivables where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and status = 'open' and due_date <= ${now})
            select * from (${page('overdue')} union all ${page(undefined, sql`and id in (select id from lag)`)}) x order by created_at desc, id desc limit ${limit + 1}`
        : q.status === 'open'
          ? await page('open', sql`and due_date > ${now}`)
          : await page(q.status);
    const hasMore = rows.length > limit;
    const shown = rows.slice(0, limit);
    const last = shown[shown.length - 1];
    return {
      object: 'list' as const,
      data: shown.map((r) => receivableView(toRow(r), now)),
      has_more: hasMore,
      next_cursor: hasMore && last ? await receivableCursor.sign(sql, p, { c: last.created_key as string, i: last.id as string }) : undefined,
    };
  }

  /** The customer statement (spec: agreed-balance shapes), in one currency. */
  async statement(p: Principal, q: StatementQuery) {
    const sql = this.sql;
    const email = q.customer_email.trim().toLowerCase();
    const currency = q.currency ?? 'MXN';
    const now = await nowFor(sql, p.tenantId, p.livemode);
    const rows = await sql`
      select * from receivables where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and customer_email = ${email} and currency = ${currency}
       order by due_date, created_at, id`;
    const data = rows.map((r) => receivableView(toRow(r), now));
    const sum = (s: string) => data.filter((r) => r.status === s).reduce((a, r) => a + r.amount_minor, 0);
    const latest = rows.reduce<Row | undefined>((a, r) => (!a || r.created_at > a.created_at ? r : a), undefined);
    return {
      object: 'receivable_statement' as const,
      customer_email: email,
      customer_name: (latest?.customer_name as string | undefined) ?? null,
      currency,
      receivables: data,
      total_open_minor: sum('open'),
      total_overdue_minor: sum('overdue'),
      total_paid_minor: sum('paid'),
      as_of: now.toISOString(),
    };
  }

  /** Ageing by customer and currency: unpaid past-due amounts in 0–30, 31–60, 61–90, 90+ whole days. */
  async ageing(p: Principal, q: AgeingQuery) {
    const sql = this.sql;
    const now = await nowFor(sql, p.tenantId, p.livemode);
    const rows = await sql`
      with due as (
        select customer_email, customer_name, currency, amount_minor,
               floor(extract(epoch from (${now}::timestamptz - due_date)) / 86400)::int as days
          from receivables
         where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and status in ('open', 'overdue') and due_date <= ${now}
               ${q.customer_email ? sql`and customer_email = ${q.customer_email.trim().toLowerCase()}` : sql``}
               ${q.currency ? sql`and currency = ${q.currency}` : sql``})
      select customer_email, currency, max(customer_name) as customer_name,
             coalesce(sum(amount_minor) filter (where days <= 30), 0)::bigint as b0,
             coalesce(sum(amount_minor) filter (where days between 31 and 60), 0)::bigint as b1,
             coalesce(sum(amount_minor) filter (where days between 61 and 90), 0)::bigint as b2,
             coalesce(sum(amount_minor) filter (where days > 90), 0)::bigint as b3,
             sum(amount_minor)::bigint as total
        from due group by customer_email, currency
       order by total desc, customer_email, currency`;
    return {
      object: 'list' as const,
      data: rows.map((r) => ({
        customer_email: r.customer_email as string,
        customer_name: r.customer_name as string,
        currency: r.currency as string,
        bucket0_to30_minor: Number(r.b0),
        bucket31_to60_minor: Number(r.b1),
        bucket61_to90_minor: Number(r.b2),
        bucket90_plus_minor: Number(r.b3),
        total_minor: Number(r.total),
      })),
      as_of: now.toISOString(),
    };
  }

  /** `https://wa.me/<number>?text=…`: the Spanish message with amount, concepto, due date and the absolute link. */
  async whatsappLink(p: Principal, id: string): Promise<{ url: string }> {
    const [raw] = await this.sql`select * from receivables where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (!raw) throw new ApiError('receivable.not_found');
    const r = toRow(raw);
    if (!r.customer_phone) throw new ApiError('receivable.no_phone', 'This receivable has no `customer_phone`: the WhatsApp link needs one.');
    return { url: whatsappUrl(r, this.d.publicBaseUrl) };
  }

  capability(): Capability {
    const sql = this.sql;
    return {
      name: 'receivables',
      queues: { [RECEIVABLE_QUEUE]: 1 },
      jobs: [this.invoiceJob],
      timers: [this.overdueTimer],
      reactions: [{ on: 'payment_intent.succeeded', run: (e, ctx) => this.onIntentSucceeded(e, ctx) }],
      reconcilers: [
        reconciler(
          'paid receivables whose CFDI is not stamped yet',
          () => staleRows(sql, { table: 'receivables', statusColumn: 'invoice_status' }),
          (r) => jobRequest(this.invoiceJob, { receivableId: r.id as string }),
        ),
      ],
    };
  }
}

/** Money as a Mexican reads it: $1,234.56 MXN. */
export function formatMoney(minor: number, currency: string): string {
  const n = new Intl.NumberFormat('es-MX', { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(minor / 100);
  return `$${n} ${currency}`;
}

/** The due date as a Mexican reads it, in Mexico City time: 31/12/2026. */
export function formatDueDate(d: Date): string {
  return new Intl.DateTimeFormat('es-MX', { timeZone: 'America/Mexico_City', day: '2-digit', month: '2-digit', year: 'numeric' }).format(d);
}

export function whatsappUrl(r: Pick<ReceivableRow, 'customer_phone' | 'customer_name' | 'amount_minor' | 'currency' | 'concepto' | 'due_date' | 'payment_link_slug'>, baseUrl: string): string {
  const phone = r.customer_phone!.replace(/\D/g, '');
  const link = `${baseUrl.replace(/\/+$/, '')}/pay/${r.payment_link_slug}`;
  const text = `Hola ${r.customer_name}, te compartimos tu enlace de pago por ${formatMoney(r.amount_minor, r.currency)} por concepto de "${r.concepto}", con vencimiento el ${formatDueDate(r.due_date)}. Puedes pagar con tarjeta, SPEI, CoDi u OXXO aquí: ${link}`;
  return `https://wa.me/${phone}?text=${encodeURIComponent(text)}`;
}
