// The invoice actor (kernel/entity.ts): PUE and PPD invoices, payment complements (REP), credit
// notes, cancellation and self-invoicing (docs/invoices.md). Every change of an invoice is
//   lock invoice → hydrate → pure plan (actors/invoice-plan.ts: machine transition, rows, history,
//   events, idempotency answer) → one fenced transaction.
// A CFDI is first reserved `pending` with its sealed XML (its folio, its place in the REP chain or
// its share of the credit), then sent to the PAC under the invoice's lock but outside any
// transaction, and the answer recorded by a second step. When the answer is lost (OutcomeUnknown) the
// CFDI stays `pending`: the next request that needs it, or the reconciler (job invoice.resolve),
// asks the PAC what became of the same sealed bytes (`status`) first, so a CFDI is never issued
// twice for one purpose.
import { randomUUID } from 'node:crypto';
import { untouchedSql, type Capability } from '../kernel/capability.js';
import { atomically, type Sql } from '../kernel/db.js';
import { LockBusy, clockOf, type EntityActor, type EntityDef, type Scope } from '../kernel/entity.js';
import { ApiError } from '../kernel/errors.js';
import type { IdempotencyHandle } from '../kernel/idempotency.js';
import { defineJob, jobRequest, type JobRequest } from '../kernel/jobs.js';
import { postEntry } from '../kernel/ledger.js';
import { accounts } from '../kernel/accounts.js';
import { refundCoverLines } from './invoice-books.js';
import type { Logger } from '../kernel/log.js';
import type { SecretBox } from '../kernel/secret-box.js';
import { tenantNow, tenantOffsetMsSql } from '../kernel/clock.js';
import type { Principal } from '../kernel/principal.js';
import { initialState } from '../kernel/machine-step.js';
import { invoiceMachine } from '../machines/invoice.js';
import { calcular, lineasParaTotal, TaxError, type ConceptoFiscal } from '../formats/cfdi/impuestos.js';
import { formaPagoDeMetodo } from '../formats/cfdi/catalogs.js';
import { construirEgreso, construirIngreso, construirPago, sellarComprobanteAsync, type Receptor } from '../formats/cfdi/comprobante.js';
import { checkReceptor, checkRfc, RFC_EXTRANJERO, RFC_PUBLICO_GENERAL, type ReceptorInput } from '../formats/cfdi/receptor.js';
import { renderPdf } from '../formats/cfdi/pdf.js';
import { attr, parseXml } from '../formats/cfdi/xml.js';
import { PAC_IS_LIVE, PacRegistry, type PacProvider } from '../connectors/pac/index.js';
import { pacErrorCode, type CancelOutcome, type CancelRequest, type CancelStatus, type Pac, type StampOutcome } from '../connectors/pac/pac.js';
import { issuerBySlug, issuerFor, type Issuer } from './fiscal-profile.js';
import { cfdiPdf, cfdiXml, listCfdiDocuments, type CfdiListQuery } from './cfdi-documents.js';
import {
  impuestosDe,
  cancellationView,
  creditNoteView,
  invoiceView,
  paymentView,
  planInvoiceStep,
  type HydratedInvoice,
  type InvoiceCommand,
  type InvoicePaymentView,
  type InvoiceRow,
  type InvoiceView,
  type PacAnswer,
} from './invoice-plan.js';
import type { AutofacturaBody, CancelBody, CreateInvoiceBody, CreatePpdBody, CreditNoteBody } from '../schemas/invoices.js';
import { OutcomeUnknown, settleLocked, type OutboundCall } from '../kernel/outbound.js';

type ConceptoBody = NonNullable<CreateInvoiceBody['conceptos']>[number];


export { invoiceView, paymentView, creditNoteView, cancellationView };
export type { InvoiceView, InvoicePaymentView };

type Row = Record<string, any>;

export const INVOICE_QUEUE = 'invoice';
/** The unique indexes on a CFDI's UUID (migrations 0021, 0120). */
const UUID_INDEXES = ['invoices_uuid', 'invoice_payments_rep_uuid', 'credit_notes_uuid'];

/** The public projection of the self-invoice flow (no ids of the tenant's objects). */
export const publicInvoiceView = (r: InvoiceRow) => ({
  object: 'invoice' as const,
  status: r.status,
  uuid_fiscal: r.uuid_fiscal ?? undefined,
  serie: r.serie ?? undefined,
  folio: r.folio ?? undefined,
  total_minor: Number(r.total_minor),
  base_minor: Number(r.base_minor),
  iva_minor: Number(r.iva_minor),
  currency: r.currency,
  receptor: r.receptor,
  livemode: r.livemode,
  created_at: r.created_at.toISOString(),
});

interface Charge {
  id: string;
  /** The intent's amount before refunds. */
  grossMinor: number;
  /** Succeeded refunds of the charge. */
  refundedMinor: number;
  /** What was sold and kept: the intent's amount net of refunds. The tip is not part of the sale (never invoiced: docs/invoices.md). */
  totalMinor: number;
  tipMinor: number;
  currency: string;
  status: string;
  method: string | null;
  /** The card's funding type when the acquirer said it (attempts.card_funding). */
  funding: string | null;
  receiptCode: string;
  succeededAt: Date;
}

interface Ctx {
  issuer: Issuer;
  pac: Pac;
  now: Date;
}

export interface InvoicesDeps {
  sql: Sql;
  /** The deployment's secrets box (the fiscal profiles' PAC passwords and CSD keys). */
  secrets: SecretBox;
  actor: EntityActor;
  log: Logger;
  pacs?: PacRegistry;
}

/** A caller's wait for an invoice held by another request (PAC calls run under the lock). */
const LOCK_WAIT_MS = 20_000;

const toRow = (r: Row): InvoiceRow => ({
  ...(r as InvoiceRow),
  total_minor: Number(r.total_minor),
  base_minor: Number(r.base_minor),
  iva_minor: Number(r.iva_minor),
  credited_minor: Number(r.credited_minor),
  saldo_insoluto_minor: r.saldo_insoluto_minor === null ? null : Number(r.saldo_insoluto_minor),
});

export class Invoices {
  readonly def: EntityDef<HydratedInvoice, InvoiceCommand>;
  readonly pacs: PacRegistry;
  private readonly chargeLock = { kind: 'invoice_charge', busy: 'invoice.concurrent_modification' as const };

  /** Settles a CFDI whose PAC answer was lost (reconciler; the next request does it too). */
  readonly resolveJob = defineJob<{ invoiceId: string }>({
    queue: INVOICE_QUEUE,
    name: 'invoice.resolve',
    shape: { invoiceId: 'uuid' },
    id: (d) => `invoice-resolve-${d.invoiceId}`,
    shardKey: (d) => d.invoiceId,
    transient: (e) => e instanceof LockBusy || (e instanceof ApiError && /pac_(unreachable|bad_response|no_uuid)/.test(e.code)),
    run: (d) => this.resolve(d.invoiceId),
  });

  /** Follows a cancellation SAT holds for the receptor's acceptance until its final answer. */
  readonly cancelFollowJob = defineJob<{ invoiceId: string }>({
    queue: INVOICE_QUEUE,
    name: 'invoice.cancel_follow',
    shape: { invoiceId: 'uuid' },
    id: (d) => `invoice-cancel-follow-${d.invoiceId}`,
    shardKey: (d) => d.invoiceId,
    transient: (e) => e instanceof LockBusy,
    run: (d) => this.followCancellation(d.invoiceId),
  });

  /**
   * Books a PUE charge's refunds that its credit notes document once (docs/reports.md "IVA in the
   * books"): state-based, so any order of refunds, credit notes and their cancellations ends right.
   * `cause`: the refund, credit note or cancellation that asked (one job each).
   */
  readonly refundCreditsJob = defineJob<{ intentId: string; tenantId: string; livemode: boolean; cause: string }>({
    queue: INVOICE_QUEUE,
    name: 'invoice.refund_credits',
    shape: { intentId: 'uuid', tenantId: 'uuid', livemode: 'boolean', cause: 'uuid' },
    id: (d) => `invoice-refund-credits-${d.cause}`,
    shardKey: (d) => d.intentId,
    transient: (e) => e instanceof LockBusy,
    run: (d) => this.settleRefundCredits(d.tenantId, d.livemode, d.intentId),
  });

  /** The job that books the refunds a charge's PUE credit notes cover (asked by a refund that succeeded, a stamped or cancelled credit note). */
  refundCredits(intentId: string, scope: { tenantId: string; livemode: boolean }, cause: string): JobRequest {
    return jobRequest(this.refundCreditsJob, { intentId, tenantId: scope.tenantId, livemode: scope.livemode, cause });
  }

  /**
   * Under the charge's lock: covered = min(Σ live credit notes of the charge's PUE invoices, Σ its
   * succeeded refunds); posts the difference with what entries `cfdi.egreso.reembolso` of the charge
   * already booked (customer_credits settled, the refunds' double reversal taken back).
   */
  async settleRefundCredits(tenantId: string, livemode: boolean, intentId: string): Promise<void> {
    await this.d.actor.withLock(this.chargeLock, intentId, 2000, async () => {
      const [r] = await this.sql`
        select
          (select coalesce(sum(n.total_minor), 0) from credit_notes n join invoices i on i.id = n.invoice_id and i.tenant_id = n.tenant_id
            where i.tenant_id = ${tenantId} and i.livemode = ${livemode} and i.payment_intent_id = ${intentId} and i.metodo_pago = 'PUE' and n.status in ('stamped', 'cancel_pending'))::bigint as credited,
          (select coalesce(sum(rf.amount_minor), 0) from refunds rf join attempts a on a.id = rf.attempt_id and a.tenant_id = rf.tenant_id
            where a.tenant_id = ${tenantId} and a.payment_intent_id = ${intentId} and rf.status = 'succeeded')::bigint as refunded,
          (select coalesce(sum(l.amount_minor), 0) from journal_entries e join journal_lines l on l.entry_id = e.id and l.tenant_id = e.tenant_id
            where e.tenant_id = ${tenantId} and e.livemode = ${livemode} and e.kind = 'cfdi.egreso.reembolso' and e.memo like ${`payment_intent ${intentId}:%`} and l.account = ${accounts.customerCredits})::bigint as posted`;
      const delta = Math.min(Number(r!.credited), Number(r!.refunded)) - Number(r!.posted);
      if (!delta) return;
      // One entry per run that changes something (journal_entries is unique per (ref_type, ref_id, kind)); the charge is named in the memo, the lock orders the runs.
      await this.sql.begin((tx) => postEntry(tx, { tenantId, livemode, kind: 'cfdi.egreso.reembolso', refType: 'refund_credit', refId: randomUUID(), memo: `payment_intent ${intentId}: refunds documented by credit notes, the customer credit paid back`, lines: refundCoverLines('MXN', delta) }));
    }, true);
  }

  /** The jobs after a credit note of `inv` is stamped or cancelled: a PUE charge's refunds it may cover. */
  private creditJobs(inv: InvoiceRow, cause: string): JobRequest[] {
    return inv.metodo_pago === 'PUE' && inv.payment_intent_id ? [this.refundCredits(inv.payment_intent_id, { tenantId: inv.tenant_id, livemode: inv.livemode }, cause)] : [];
  }

  constructor(private readonly d: InvoicesDeps) {
    this.pacs = d.pacs ?? new PacRegistry();
    this.def = {
      kind: 'invoice',
      table: 'invoices',
      notFound: 'invoice.not_found',
      busy: 'invoice.concurrent_modification',
      hydrate: async (sql, id, scope) => {
        const [r] = await sql`
          select i.*, ${tenantOffsetMsSql(sql, 'i.tenant_id', 'i.livemode')} as clock_offset_ms,
            coalesce((select json_agg(p.* order by p.parcialidad) from invoice_payments p where p.invoice_id = i.id and p.status in ('pending', 'cancel_pending')), '[]') as pending_payments,
            coalesce((select json_agg(n.*) from credit_notes n where n.invoice_id = i.id and n.status in ('pending', 'cancel_pending')), '[]') as pending_notes
          from invoices i
          where i.id = ${id} ${scope ? sql`and i.tenant_id = ${scope.tenantId} and i.livemode = ${scope.livemode}` : sql``}`;
        if (!r) return undefined;
        const { clock_offset_ms, pending_payments, pending_notes, ...row } = r;
        const dates = (x: Row): Row => ({ ...x, created_at: new Date(x.created_at), updated_at: new Date(x.updated_at) });
        // `pending`: waiting for the PAC's stamp; `cancel_pending`: its cancellation waits for the receptor.
        const payments = (pending_payments as Row[]).map(dates);
        const notes = (pending_notes as Row[]).map(dates);
        return {
          row: toRow(row),
          clockOffsetMs: clockOf({ livemode: r.livemode, clock_offset_ms }),
          pendingPayments: payments.filter((x) => x.status === 'pending'),
          pendingNotes: notes.filter((x) => x.status === 'pending'),
          cancelPendingPayments: payments.filter((x) => x.status === 'cancel_pending'),
          cancelPendingNotes: notes.filter((x) => x.status === 'cancel_pending'),
        };
      },
      plan: (h, cmd, env) => planInvoiceStep(h, cmd, env),
      lostRace: (e) => ['invoice_payments_chain', 'invoice_payments_charge'].includes((e as { constraint_name?: string }).constraint_name ?? ''),
    };
  }

  private get sql(): Sql {
    return this.d.sql;
  }

  // ------------------------------------------------------------------------------------------
  // Shared steps

  /** The fiscal profile and what stamping in this mode needs, or the spec's error. */
  private async context(tenantId: string, livemode: boolean): Promise<Ctx> {
    const found = await issuerFor(this.d, tenantId, livemode);
    if (!found) throw new ApiError('invoice.fiscal_profile_missing', 'No fiscal profile for this mode: PUT /v1/fiscal_profile first.');
    const { issuer } = found;
    const provider = issuer.pacProvider as PacProvider;
    if (PAC_IS_LIVE[provider] !== livemode) {
      throw new ApiError('invoice.livemode_mismatch', `A ${livemode ? 'live' : 'test-mode'} charge cannot be stamped by pac_provider "${provider}", a ${PAC_IS_LIVE[provider] ? 'live' : 'test-mode'} PAC: test mode stamps with "sim", live mode with a real PAC.`);
    }
    if (PAC_IS_LIVE[provider]) {
      if (!issuer.pacUser && !issuer.pacPassword) throw new ApiError('invoice.pac_credentials_missing', `The fiscal profile has no ${provider} credentials for live mode: set pac_user and pac_password.`);
      if (!issuer.pacUser || !issuer.pacPassword) throw new ApiError('invoice.pac_credentials_incomplete', `The ${provider} ${issuer.pacUser ? 'pac_password' : 'pac_user'} is missing.`);
      if (!issuer.csd) throw new ApiError('invoice.csd_missing');
    }
    return { issuer, pac: this.pacs.get(provider), now: tenantNow(found.clockOffsetMs, livemode) };
  }

  private async charge(tenantId: string, livemode: boolean, id: string): Promise<Charge> {
    const [r] = await this.sql`
      select pi.id, pi.amount_minor as total, pi.tip_minor, pi.currency,
        (select coalesce(sum(r.amount_minor), 0) from refunds r join attempts a on a.id = r.attempt_id and a.tenant_id = r.tenant_id
          where a.payment_intent_id = pi.id and a.tenant_id = pi.tenant_id and r.status = 'succeeded') as refunded, pi.status, pi.receipt_code, pi.updated_at,
        (select a.method from attempts a where a.payment_intent_id = pi.id and a.tenant_id = pi.tenant_id and a.status in ('captured', 'settled', 'partially_refunded', 'refunded')
          order by a.created_at desc limit 1) as method,
        (select a.card_funding from attempts a where a.payment_intent_id = pi.id and a.tenant_id = pi.tenant_id and a.status in ('captured', 'settled', 'partially_refunded', 'refunded')
          order by a.created_at desc limit 1) as funding
      from payment_intents pi where pi.id = ${id} and pi.tenant_id = ${tenantId} and pi.livemode = ${livemode}`;
    if (!r) throw new ApiError('invoice.intent_not_found', `No payment intent ${id} for this key.`);
    // What was sold and kept: refunds come off the amount first, then off the tip (a refund of a
    // tipped charge returns the sale before the staff's tip).
    const refunded = Number(r.refunded ?? 0);
    const tip = Number(r.tip_minor ?? 0);
    return { id: r.id, grossMinor: Number(r.total), refundedMinor: refunded, totalMinor: Math.max(0, Number(r.total) - refunded), tipMinor: Math.max(0, tip - Math.max(0, refunded - Number(r.total))), currency: r.currency, status: r.status, method: r.method, funding: r.funding ?? null, receiptCode: r.receipt_code, succeededAt: r.updated_at };
  }

  private emisor(i: Issuer) {
    return { rfc: i.rfc, nombre: i.nombre, regimenFiscal: i.regimenFiscal };
  }

  /**
   * Folios need not be consecutive for SAT; one is taken per CFDI built (a failed build leaves a gap).
   * Every CFDI of a tenant and mode takes this one row, so its transaction commits asynchronously
   * (`synchronous_commit` off for it alone): the row lock ends with the statement instead of after a
   * WAL flush, which the next CFDI's folio waited for (bench/RESULTS.md, issue 26 sixth session). No
   * folio is used twice: a folio is used only by a CFDI whose `pending` row commits (synchronously)
   * after it, and that commit flushes the WAL up to itself, this increment included; a crash before
   * that loses the increment but leaves no CFDI with the folio (the PAC is called only once the
   * `pending` row is committed), so taking it again is no duplicate. One round trip (kernel/db.ts
   * `atomically`: begin, set, update, commit in one flight). Under Citus the SET reaches the shard
   * only with citus.propagate_set_commands = local (else it commits synchronously, as before); either
   * way the argument holds there, the profile and the CFDI rows of a tenant being on one node.
   */
  private async takeFolio(i: Issuer, kind: 'F' | 'NC' | 'RP'): Promise<string> {
    const col = kind === 'F' ? 'next_folio' : kind === 'NC' ? 'next_folio_nc' : 'next_folio_rp';
    const sql = this.sql;
    // The update's answer is read after `atomically` resolves: returning its promise from the build
    // would make `atomically` wait for it before sending COMMIT, a second round trip.
    let taken!: Promise<Row[]>;
    await atomically(sql, (tx) => {
      tx`set local synchronous_commit = off`;
      taken = tx`update fiscal_profiles set ${sql(col)} = ${sql(col)} + 1 where tenant_id = ${i.tenantId} and livemode = ${i.livemode} returning ${sql(col)} - 1 as folio`;
    });
    const [r] = await taken;
    return String(r!.folio);
  }

  /**
   * One CFDI as an outbound call (kernel/outbound.ts). Its reserved `pending` row with the sealed
   * XML (folio, place in the REP chain, share of the credit) is the mark, committed before the PAC
   * is called; a CFDI that may have reached the PAC (`started`: a lost answer, a later request, the
   * reconciler) is looked up by the same sealed bytes (`status`) and never stamped again: the PAC's
   * `not_stamped` is an answer too (the CFDI becomes `error`; a new document may be issued). The
   * lookup carries the pending row's creation as `sentAt`, so a PAC that lags after a stamp
   * (Finkok's 603) says "ask later" (`invoice.pac_no_uuid`) inside its lag rather than "not stamped".
   */
  private cfdiCall<R>(ctx: Ctx, sealedXml: string, started: boolean, record: (a: PacAnswer) => Promise<R>, sentAt?: Date): OutboundCall<HydratedInvoice, PacAnswer, R> {
    const req = { xml: sealedXml, livemode: ctx.issuer.livemode, credentials: { user: ctx.issuer.pacUser, password: ctx.issuer.pacPassword }, now: ctx.now, account: `${ctx.issuer.tenantId}:${ctx.issuer.livemode}`, ...(sentAt ? { sentAt } : {}) };
    const answer = (o: StampOutcome | { kind: 'not_stamped' }): PacAnswer => (o.kind === 'stamped' ? { kind: 'stamped', uuid: o.uuid, xml: o.xml } : o);
    return {
      connector: ctx.pac.key,
      op: 'stamp',
      lookupOp: 'stamped',
      due: () => true,
      started: () => started,
      send: async () => answer(await ctx.pac.stamp(req)),
      lookup: async () => answer(await ctx.pac.status(req)),
      record: (_h, a) => record(a),
      idle: () => {
        throw new Error('a CFDI call is always due');
      },
    };
  }

  /**
   * A cancellation as an outbound call (kernel/outbound.ts). There is no mark: SAT keys a
   * cancellation by the CFDI's UUID, so a repeat after a lost answer (OutcomeUnknown: the CFDI stays
   * as it was) asks for the same one and SAT answers its state (Finkok 202 "previamente cancelado");
   * nothing can be cancelled twice. A refusal is the spec's `invoice.cancel_rejected`.
   */
  private cancelCall<R>(ctx: Ctx, p: Principal, uuid: string, xml: string | undefined, body: CancelBody, record: (out: Exclude<CancelOutcome, { kind: 'rejected' }>) => Promise<R>): OutboundCall<HydratedInvoice, CancelOutcome, R> {
    const req = {
      uuid, rfcEmisor: ctx.issuer.rfc, motivo: body.motivo as CancelRequest['motivo'], folioSustitucion: body.folio_sustitucion,
      livemode: p.livemode, credentials: { user: ctx.issuer.pacUser, password: ctx.issuer.pacPassword }, csd: ctx.issuer.csd!, now: ctx.now, xml,
    };
    return {
      connector: ctx.pac.key,
      op: 'cancel',
      due: () => true,
      started: () => false,
      send: () => ctx.pac.cancel(req),
      lookup: () => Promise.resolve(null),
      record: (_h, out) => {
        if (out.kind === 'rejected') throw new ApiError('invoice.cancel_rejected', `SAT/PAC refused the cancellation: ${out.code} ${out.message}`);
        return record(out);
      },
      idle: () => {
        throw new Error('a cancellation call is always due');
      },
    };
  }

  /**
   * Runs a PAC call under the invoice's lock the caller holds; an unknown outcome is the spec's API
   * error (`invoice.pac_unreachable|pac_bad_response|pac_no_uuid`) and the CFDI stays pending.
   */
  private async pacSettle<R>(call: OutboundCall<HydratedInvoice, any, R>, h: HydratedInvoice, unknown: (e: OutcomeUnknown) => string, onUnknown?: (e: OutcomeUnknown) => Promise<unknown>): Promise<R> {
    try {
      return (await settleLocked(call, h)).result;
    } catch (e) {
      if (!(e instanceof OutcomeUnknown)) throw e;
      await onUnknown?.(e);
      throw new ApiError(pacErrorCode(e), unknown(e));
    }
  }

  private step<R>(id: string, cmd: InvoiceCommand, idem?: IdempotencyHandle, known?: HydratedInvoice): Promise<R> {
    return this.d.actor.runLocked<HydratedInvoice, InvoiceCommand, void, R>(this.def, undefined, id, cmd, { waitMs: 0, idem, known }).catch((e) => {
      // A UUID the books already hold for another CFDI (a PAC that repeats one, two test tenants'
      // identical documents before random UUIDs): recorded as the PAC's refusal, never a 500 nor a
      // job retried forever by the reconciler.
      const clash = UUID_INDEXES.includes((e as { constraint_name?: string }).constraint_name ?? '');
      if (!clash || !('answer' in cmd) || cmd.answer.kind !== 'stamped') throw e;
      const answer: PacAnswer = { kind: 'rejected', code: 'uuid_duplicate', message: `the PAC answered UUID ${cmd.answer.uuid}, which another CFDI already holds` };
      this.d.log.warn('PAC answered a UUID already registered', { invoiceId: id, uuid: cmd.answer.uuid });
      return this.d.actor.runLocked<HydratedInvoice, InvoiceCommand, void, R>(this.def, undefined, id, { ...cmd, answer } as InvoiceCommand, { waitMs: 0, idem, known });
    });
  }

  /** Under the invoice's lock: settles every CFDI of the invoice still waiting for a lost PAC answer. */
  private async settlePending(h: HydratedInvoice, ctx: Ctx): Promise<void> {
    if (h.row.status === 'pending') {
      await this.pacSettle(this.cfdiCall(ctx, h.row.sealed_xml, true, (a) => this.step(h.row.id, { kind: 'stamp', answer: a }), new Date(h.row.created_at)), h, (e) => `${e.message} (invoice ${h.row.id} waits for the PAC's answer)`);
    }
    for (const p of h.pendingPayments) {
      await this.pacSettle(this.cfdiCall(ctx, p.sealed_xml, true, (a) => this.step(h.row.id, { kind: 'payment', paymentId: p.id, answer: a }), new Date(p.created_at)), h, (e) => `${e.message} (payment complement ${p.id} waits for the PAC's answer)`);
    }
    for (const n of h.pendingNotes) {
      await this.pacSettle(this.cfdiCall(ctx, n.sealed_xml, true, (a) => this.step(h.row.id, { kind: 'credit', noteId: n.id, answer: a, jobs: this.creditJobs(h.row, n.id) }), new Date(n.created_at)), h, (e) => `${e.message} (credit note ${n.id} waits for the PAC's answer)`);
    }
  }

  private async fresh(id: string, scope?: Scope): Promise<HydratedInvoice> {
    const h = await this.def.hydrate(this.sql, id, scope, undefined as never);
    if (!h) throw new ApiError('invoice.not_found');
    return h;
  }

  /** The job of the reconciler: settle an invoice whose PAC answer was lost. */
  async resolve(invoiceId: string): Promise<void> {
    await this.d.actor.withLock(this.def, invoiceId, 2000, async () => {
      const h = await this.fresh(invoiceId);
      if (h.row.status !== 'pending' && !h.pendingPayments.length && !h.pendingNotes.length) return;
      await this.settlePending(h, await this.context(h.row.tenant_id, h.row.livemode));
    });
  }

  // ------------------------------------------------------------------------------------------
  // Ingreso: PUE for a charge, PPD for an amount

  private checkReceptor(r: ReceptorInput): ReceptorInput {
    const c = checkReceptor(r);
    if (!c.ok) throw new ApiError(c.problem.code === 'receptor_incoherente' ? 'invoice.receptor_incoherente' : 'invoice.invalid_receptor', c.problem.message);
    return c.receptor;
  }

  /** The receptor as the CFDI carries it: a generic RFC takes the issuer's LugarExpedicion as its CP. */
  private receptorFor(r: ReceptorInput, issuer: Issuer): ReceptorInput {
    return r.rfc === RFC_PUBLICO_GENERAL || r.rfc === RFC_EXTRANJERO ? { ...r, cp: issuer.cp } : r;
  }

  private toReceptor(r: ReceptorInput): Receptor {
    return { rfc: r.rfc, nombre: r.nombre, cp: r.cp, regimenFiscal: r.regimen_fiscal, usoCfdi: r.uso_cfdi };
  }

  async createPue(p: Principal, body: CreateInvoiceBody, idem?: IdempotencyHandle, source: 'api' | 'self_invoice' | 'receivable' = 'api'): Promise<InvoiceRow> {
    const receptorIn = this.checkReceptor(body.receptor);
    const ch = await this.charge(p.tenantId, p.livemode, body.payment_intent_id);
    if (ch.status !== 'succeeded') throw new ApiError('invoice.intent_not_succeeded', `Payment intent ${ch.id} is "${ch.status}"; only a succeeded charge is invoiced.`);
    if (ch.totalMinor <= 0) throw new ApiError('invoice.intent_fully_refunded', `Payment intent ${ch.id} was refunded in full (${ch.refundedMinor} of ${ch.grossMinor} cents): there is no sale to invoice.`);
    const conceptosIn: ConceptoBody[] = body.conceptos?.length ? body.conceptos : [{ descripcion: 'Venta', importe_minor: ch.totalMinor }];
    if (ch.currency !== 'MXN') throw new ApiError('invoice.invalid_currency', `The charge is in ${ch.currency}; CFDI invoices are issued in MXN only.`);
    const ctx = await this.context(p.tenantId, p.livemode);
    const receptor = this.receptorFor(receptorIn, ctx.issuer);
    // One request per charge at a time; the unique index invoices_live_per_charge has the last word.
    return this.d.actor.withLock(this.chargeLock, ch.id, LOCK_WAIT_MS, async () => {
      // One query: is the charge a payment of a PPD invoice (a live complement: an `error` or
      // `cancelled` one frees its charge, migration 0124), or does it have a live invoice (its own
      // or a replacement)? Two index lookups: invoice_payments_charge (its predicate is this one),
      // invoices_charge (0183).
      const liveOf = async () => {
        const [r] = await this.sql`
          select (select invoice_id from invoice_payments where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and payment_intent_id = ${ch.id} and status not in ('error', 'cancelled') limit 1) as applied,
                 (select id from invoices where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and payment_intent_id = ${ch.id} and status in ('pending', 'stamped', 'cancel_pending') limit 1) as live`;
        if (r.applied) throw new ApiError('invoice.payment_already_applied', `Payment intent ${ch.id} is a payment of invoice ${r.applied} (payment complement); it is not invoiced again.`);
        return r.live ? await this.fresh(r.live) : undefined;
      };
      let live = await liveOf();
      if (live?.row.status === 'pending') {
        const id = live.row.id;
        await this.d.actor.withLock(this.def, id, LOCK_WAIT_MS, async () => this.settlePending(await this.fresh(id), ctx), false);
        live = await liveOf();
      }
      let replaces: InvoiceRow | undefined;
      if (body.replaces) {
        // Motivo 01, step 1: the replacement of the charge's live invoice, related with TipoRelacion 04.
        replaces = await this.replaceable(p, body.replaces, receptor, 'PUE');
        if (replaces.payment_intent_id !== ch.id) throw new ApiError('invoice.invalid_replacement', `Invoice ${body.replaces} is not of payment intent ${ch.id}.`);
        live = undefined;
      }
      if (live) {
        // Receivables and self-invoicing ask again for the same charge: the same invoice.
        if (source !== 'api' && live.row.status === 'stamped' && live.row.receptor.rfc === receptor.rfc) return live.row;
        throw new ApiError('invoice.already_exists', `Payment intent ${ch.id} already has invoice ${live.row.id} (${live.row.status}).`);
      }
      const formaPago = ch.method ? formaPagoDeMetodo(ch.method, ch.funding) : '99';
      const conceptos = this.conceptos(conceptosIn, ctx.issuer, receptor, receptor.rfc === RFC_PUBLICO_GENERAL ? ch.receiptCode : undefined);
      return this.issueIngreso(p, ctx, { metodoPago: 'PUE', formaPago, receptor, chargeId: ch.id, source, conceptos, expectTotal: ch.totalMinor, replaces }, idem);
    }, false);
  }

  async createPpd(p: Principal, body: CreatePpdBody, idem?: IdempotencyHandle): Promise<InvoiceRow> {
    const receptorIn = this.checkReceptor(body.receptor);
    const ctx = await this.context(p.tenantId, p.livemode);
    const receptor = this.receptorFor(receptorIn, ctx.issuer);
    const conceptos = this.conceptos(body.conceptos?.length ? body.conceptos : [{ descripcion: body.descripcion ?? 'Pago en parcialidades', importe_minor: body.total_minor }], ctx.issuer, receptor);
    const replaces = body.replaces ? await this.replaceable(p, body.replaces, receptor, 'PPD') : undefined;
    return this.issueIngreso(p, ctx, { metodoPago: 'PPD', formaPago: '99', receptor, source: 'api', conceptos, expectTotal: body.total_minor, replaces }, idem);
  }

  /**
   * The API's concept lines as the tax model's (formats/cfdi/impuestos.ts). An issuer in RESICO
   * (régimen 626, persona física) invoicing a persona moral has 1.25 % of ISR withheld on every taxed
   * line unless the line says otherwise (LISR art. 113-J; SAT's RESICO guide).
   */
  private conceptos(lines: ConceptoBody[], issuer: Issuer, receptor: ReceptorInput, noIdentificacion?: string): ConceptoFiscal[] {
    const resicoMoral = issuer.regimenFiscal === '626' && issuer.rfc.length === 13 && receptor.rfc.length === 12;
    // One line of a paid amount with IVA inside and RESICO's withholding: the lines whose Total is what was paid.
    const only = lines.length === 1 ? lines[0]! : undefined;
    const ret = (c: ConceptoBody, imp: 'isr' | 'iva') => c.retenciones?.find((r) => r.impuesto === imp)?.tasa;
    if (resicoMoral && only && only.importe_minor !== undefined && !ret(only, 'isr') && (only.objeto_imp ?? '02') === '02' && !only.valor_unitario_minor) {
      try {
        return lineasParaTotal(only.importe_minor, { descripcion: only.descripcion, iva: only.iva as ConceptoFiscal['iva'], retencionIsr: '0.012500', retencionIva: ret(only, 'iva'), claveProdServ: only.clave_prod_serv, claveUnidad: only.clave_unidad, noIdentificacion });
      } catch (e) {
        if (e instanceof TaxError) throw new ApiError('invoice.invalid_body', e.message);
        throw e;
      }
    }
    return lines.map((c) => {
      const taxed = (c.objeto_imp ?? '02') === '02';
      return {
        descripcion: c.descripcion,
        importeMinor: c.importe_minor,
        cantidad: c.cantidad,
        valorUnitarioMinor: c.valor_unitario_minor,
        descuentoMinor: c.descuento_minor,
        objetoImp: c.objeto_imp as ConceptoFiscal['objetoImp'],
        iva: c.iva as ConceptoFiscal['iva'],
        retencionIsr: ret(c, 'isr') ?? (resicoMoral && taxed ? '0.012500' : undefined),
        retencionIva: ret(c, 'iva'),
        claveProdServ: c.clave_prod_serv,
        claveUnidad: c.clave_unidad,
        noIdentificacion,
      };
    });
  }

  /** The invoice a replacement may replace (motivo 01): stamped, this account's, same method and receptor RFC, no live replacement yet. */
  private async replaceable(p: Principal, id: string, receptor: ReceptorInput, metodo: 'PUE' | 'PPD'): Promise<InvoiceRow> {
    const [r] = await this.sql`select * from invoices where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (!r) throw new ApiError('invoice.invalid_replacement', `No invoice ${id} for this key.`);
    const row = toRow(r);
    if (row.status !== 'stamped') throw new ApiError('invoice.invalid_replacement', `Invoice ${id} is "${row.status}": only a live (stamped) invoice is replaced.`);
    if (row.metodo_pago !== metodo) throw new ApiError('invoice.invalid_replacement', `Invoice ${id} is ${row.metodo_pago}; replace it with the same kind of invoice.`);
    if (row.receptor.rfc !== receptor.rfc) throw new ApiError('invoice.invalid_replacement', `Invoice ${id} is for receptor ${row.receptor.rfc}; a replacement (TipoRelacion 04) is for the same RFC (${receptor.rfc} given).`);
    const [other] = await this.sql`select id from invoices where tenant_id = ${p.tenantId} and replaces_invoice_id = ${id} and status in ('pending', 'stamped', 'cancel_pending')`;
    if (other) throw new ApiError('invoice.invalid_replacement', `Invoice ${id} already has a live replacement, ${other.id}.`);
    return row;
  }

  private async issueIngreso(
    p: Principal,
    ctx: Ctx,
    o: { metodoPago: 'PUE' | 'PPD'; formaPago: string; receptor: ReceptorInput; chargeId?: string; source: string; conceptos: ConceptoFiscal[]; expectTotal?: number; replaces?: InvoiceRow },
    idem?: IdempotencyHandle,
  ): Promise<InvoiceRow> {
    const { issuer, now } = ctx;
    let calc;
    try {
      calc = calcular(o.conceptos);
    } catch (e) {
      if (e instanceof TaxError) throw new ApiError('invoice.invalid_body', e.message);
      throw e;
    }
    if (o.expectTotal !== undefined && calc.totalMinor !== o.expectTotal) {
      throw new ApiError('invoice.conceptos_sum_mismatch', `The conceptos make a CFDI Total of ${calc.totalMinor} cents (SubTotal ${calc.subtotalMinor} − Descuento ${calc.descuentoMinor} + traslados ${calc.totalTrasladosMinor} − retenciones ${calc.totalRetencionesMinor}); ${o.chargeId ? 'the charge amount (without tip)' : 'total_minor'} is ${o.expectTotal}.`);
    }
    const folio = await this.takeFolio(issuer, 'F');
    const built = construirIngreso({ serie: issuer.serie, folio, fecha: now, lugarExpedicion: issuer.cp, emisor: this.emisor(issuer), receptor: this.toReceptor(o.receptor), metodoPago: o.metodoPago, formaPago: o.formaPago, conceptos: o.conceptos, relacionados: o.replaces ? { tipoRelacion: '04', uuids: [o.replaces.uuid_fiscal!] } : undefined });
    const sealed = await sellarComprobanteAsync(built.doc, issuer.csd!);
    const d = { totalMinor: built.totalMinor, baseMinor: built.subtotalMinor, ivaMinor: built.ivaMinor };
    const at = new Date();
    const row: InvoiceRow = {
      id: randomUUID(), tenant_id: p.tenantId, livemode: p.livemode, status: initialState(invoiceMachine) as 'pending', version: 0,
      metodo_pago: o.metodoPago, payment_intent_id: o.chargeId ?? null, source: o.source, receptor: o.receptor,
      conceptos: { impuestos: built.impuestos, lines: o.conceptos.map((c) => ({ descripcion: c.descripcion, importe_minor: c.importeMinor ?? null, cantidad: c.cantidad ?? null, valor_unitario_minor: c.valorUnitarioMinor ?? null, descuento_minor: c.descuentoMinor ?? null, objeto_imp: c.objetoImp ?? '02', iva: c.objetoImp && c.objetoImp !== '02' ? null : (c.iva ?? '16'), retencion_isr: c.retencionIsr ?? null, retencion_iva: c.retencionIva ?? null, clave_prod_serv: c.claveProdServ ?? null, clave_unidad: c.claveUnidad ?? null })) },
      forma_pago: o.metodoPago === 'PPD' ? '99' : o.formaPago, serie: issuer.serie, folio, total_minor: d.totalMinor, base_minor: d.baseMinor, iva_minor: d.ivaMinor,
      currency: 'MXN', pac: issuer.pacProvider, uuid_fiscal: null, sealed_xml: sealed.xml, xml: null, error_code: null, error_detail: null,
      saldo_insoluto_minor: o.metodoPago === 'PPD' ? d.totalMinor : null, parcialidades: 0, credited_minor: 0, replaces_invoice_id: o.replaces?.id ?? null, created_at: at, updated_at: at,
    };
    try {
      await this.d.actor.create(this.def, p, { create: { ...row, receptor: row.receptor, conceptos: row.conceptos }, history: { event: 'created', data: { metodo_pago: o.metodoPago, folio } }, result: row }, { at, now });
    } catch (e) {
      if ((e as { constraint_name?: string }).constraint_name === 'invoices_live_per_charge') {
        // Another request made the charge's CFDI between our look and this insert (its lock had expired).
        // For the API that is a duplicate; for the automatic flows (a receivable's job, self-invoicing),
        // which return the charge's own stamped CFDI when they find it, it is a reason to look again.
        if (o.source !== 'api') throw new ApiError('invoice.concurrent_modification', `Another request is issuing the CFDI of payment intent ${o.chargeId} right now; retry to get it.`);
        throw new ApiError('invoice.already_exists', `Payment intent ${o.chargeId} already has a live invoice.`);
      }
      if ((e as { constraint_name?: string }).constraint_name === 'invoices_live_replacement') throw new ApiError('invoice.invalid_replacement', `Invoice ${o.replaces?.id} already has a live replacement.`);
      throw e;
    }
    return this.d.actor.withLock(this.def, row.id, LOCK_WAIT_MS, async () => {
      // The row was just written under this lock: no need to read it again.
      const known: HydratedInvoice = { row, clockOffsetMs: p.livemode ? 0 : now.getTime() - at.getTime(), pendingPayments: [], pendingNotes: [] };
      const record = async (a: PacAnswer) => ({ a, done: await this.step<InvoiceRow>(row.id, { kind: 'stamp', answer: a, respond: 201 }, idem, known) });
      const { a, done } = await this.pacSettle(this.cfdiCall(ctx, row.sealed_xml, false, record), known, (e) => `${e.message}. Invoice ${row.id} stays pending; retry with the same Idempotency-Key.`, (e) =>
        this.sql`update invoices set error_detail = ${`${pacErrorCode(e)}: ${e.message}`} where id = ${row.id} and tenant_id = ${row.tenant_id} and status = 'pending'`);
      if (done.status === 'error') throw new ApiError('invoice.pac_error', `The CFDI of invoice ${row.id} was not recorded (now "error", not live): ${done.error_detail}`);
      if (a.kind === 'rejected') throw new ApiError('invoice.pac_error', `The PAC rejected the CFDI of invoice ${row.id} (now "error", not live): ${a.code} ${a.message}`);
      return done;
    }, false);
  }

  // ------------------------------------------------------------------------------------------
  // Reads

  async get(p: Principal, id: string): Promise<InvoiceRow> {
    const [r] = await this.sql`select * from invoices where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (!r) throw new ApiError('invoice.not_found');
    return toRow(r);
  }

  private stampedOrThrow(r: InvoiceRow): void {
    if (!['stamped', 'cancel_pending', 'cancelled'].includes(r.status)) throw new ApiError('invoice.not_stamped', `Invoice ${r.id} is "${r.status}": it has no stamped CFDI.`);
  }

  async xml(p: Principal, id: string): Promise<{ row: InvoiceRow; xml: string }> {
    const r = await this.get(p, id);
    this.stampedOrThrow(r);
    return { row: r, xml: r.xml! };
  }

  async pdf(p: Principal, id: string): Promise<{ row: InvoiceRow; pdf: Buffer }> {
    const r = await this.get(p, id);
    this.stampedOrThrow(r);
    return { row: r, pdf: await renderPdf(r.xml!, { testMode: !r.livemode }) };
  }

  /** Every stamped CFDI (invoice, global, REP, credit note), newest first (actors/cfdi-documents.ts). */
  listDocuments(p: Principal, q: CfdiListQuery) {
    return listCfdiDocuments(this.sql, p, q);
  }

  /** The stamped XML of any CFDI of the tenant by its id (invoice, REP or credit note). */
  documentXml(p: Principal, id: string) {
    return cfdiXml(this.sql, p, id);
  }

  /** The PDF of any CFDI of the tenant by its id; a cancelled one is marked. */
  documentPdf(p: Principal, id: string) {
    return cfdiPdf(this.sql, p, id);
  }

  async listPayments(p: Principal, invoiceId: string): Promise<{ object: 'list'; data: InvoicePaymentView[] }> {
    await this.get(p, invoiceId);
    const rows = await this.sql`select * from invoice_payments where invoice_id = ${invoiceId} and tenant_id = ${p.tenantId} and livemode = ${p.livemode} and status in ('stamped', 'cancel_pending') order by parcialidad`;
    return { object: 'list', data: rows.map(paymentView) };
  }

  // ------------------------------------------------------------------------------------------
  // Payment complements (REP)

  async registerPayment(p: Principal, invoiceId: string, paymentIntentId: string, idem?: IdempotencyHandle): Promise<{ row: Row; created: boolean }> {
    const inv0 = await this.get(p, invoiceId);
    if (inv0.metodo_pago !== 'PPD') throw new ApiError('invoice.not_ppd', `Invoice ${invoiceId} is PUE (paid in one exhibition): payment complements go with PPD invoices.`);
    if (inv0.status !== 'stamped') throw new ApiError('invoice.not_stamped', `Invoice ${invoiceId} is "${inv0.status}": a payment complement needs a stamped PPD invoice.`);
    const ch = await this.charge(p.tenantId, p.livemode, paymentIntentId);
    if (ch.status !== 'succeeded') throw new ApiError('invoice.intent_not_succeeded', `Payment intent ${ch.id} is "${ch.status}"; only a succeeded charge pays an invoice.`);
    if (ch.totalMinor <= 0) throw new ApiError('invoice.intent_fully_refunded', `Payment intent ${ch.id} was refunded in full: it pays nothing.`);
    if (ch.currency !== inv0.currency) throw new ApiError('invoice.payment_currency_mismatch', `The charge is in ${ch.currency}, the invoice in ${inv0.currency}.`);
    const ctx = await this.context(p.tenantId, p.livemode);
    return this.d.actor.withLock(this.def, invoiceId, LOCK_WAIT_MS, async () => {
      // Fresh state under the lock; a complement whose PAC answer was lost holds its place: settle it first.
      let h = await this.fresh(invoiceId, p);
      if (h.pendingPayments.length || h.pendingNotes.length) {
        await this.settlePending(h, ctx);
        h = await this.fresh(invoiceId, p);
      }
      // The charge's live complement, if any (an `error` or `cancelled` one frees its charge: it may pay again, migration 0124).
      const [used] = await this.sql`select * from invoice_payments where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and payment_intent_id = ${ch.id} and status not in ('error', 'cancelled')`;
      if (used) {
        if (used.invoice_id === invoiceId && (used.status === 'stamped' || used.status === 'cancel_pending')) return { row: used, created: false }; // idempotent per (invoice, charge)
        throw new ApiError('invoice.payment_already_applied', `Payment intent ${ch.id} already settles invoice ${used.invoice_id}.`);
      }
      const [invoiced] = await this.sql`select id from invoices where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and payment_intent_id = ${ch.id} and status in ('pending', 'stamped', 'cancel_pending')`;
      if (invoiced) throw new ApiError('invoice.payment_already_applied', `Payment intent ${ch.id} has its own invoice ${invoiced.id}; it cannot also pay invoice ${invoiceId}.`);
      const inv = h.row;
      if (inv.status !== 'stamped') throw new ApiError('invoice.not_stamped', `Invoice ${invoiceId} is "${inv.status}".`);
      const saldo = Number(inv.saldo_insoluto_minor);
      if (ch.totalMinor > saldo) throw new ApiError('invoice.payment_exceeds_balance', `The charge (${ch.totalMinor} cents) is larger than the invoice's remaining balance, saldo_insoluto_minor = ${saldo}.`);
      const { issuer, now } = ctx;
      const parcialidad = inv.parcialidades + 1;
      const folio = await this.takeFolio(issuer, 'RP');
      const built = construirPago({
        serie: 'RP', folio, fecha: now, lugarExpedicion: issuer.cp, emisor: this.emisor(issuer), receptor: this.toReceptor(inv.receptor),
        fechaPago: ch.succeededAt, formaDePagoP: ch.method ? formaPagoDeMetodo(ch.method, ch.funding) : '99', montoMinor: ch.totalMinor, numOperacion: ch.id,
        docto: { uuid: inv.uuid_fiscal!, serie: inv.serie ?? undefined, folio: inv.folio ?? undefined, numParcialidad: parcialidad, saldoAnteriorMinor: saldo, impuestos: impuestosDe(inv) },
      });
      const sealed = await sellarComprobanteAsync(built.doc, issuer.csd!);
      const paymentId = randomUUID();
      await this.d.actor.runLocked(this.def, p, invoiceId, { kind: 'reserve_payment', payment: { id: paymentId, paymentIntentId: ch.id, montoMinor: ch.totalMinor, parcialidad, serie: 'RP', folio, sealedXml: sealed.xml, baseMinor: built.impuestos.subtotalMinor, ivaMinor: built.ivaMinor } }, { waitMs: 0, known: h });
      const record = async (a: PacAnswer) => ({ a, done: await this.step<Row>(invoiceId, { kind: 'payment', paymentId, answer: a, respond: 201 }, idem) });
      const { a, done } = await this.pacSettle(this.cfdiCall(ctx, sealed.xml, false, record), h, (e) => `${e.message}. Payment complement ${paymentId} stays pending; retry with the same Idempotency-Key.`);
      if (done?.status === 'error' && a.kind === 'stamped') throw new ApiError('invoice.pac_error', `The payment complement was not recorded: ${done.error_detail ?? 'UUID already registered'}`);
      if (a.kind === 'rejected') throw new ApiError('invoice.pac_error', `The PAC rejected the payment complement: ${a.code} ${a.message}`);
      return { row: done, created: true };
    }, false);
  }

  // ------------------------------------------------------------------------------------------
  // Credit notes (egreso, TipoRelacion 01)

  async creditNote(p: Principal, invoiceId: string, body: CreditNoteBody, idem?: IdempotencyHandle): Promise<Row> {
    const inv0 = await this.get(p, invoiceId);
    if (inv0.status !== 'stamped') throw new ApiError('invoice.not_stamped', `Invoice ${invoiceId} is "${inv0.status}": credit notes relate a stamped invoice.`);
    const ctx = await this.context(p.tenantId, p.livemode);
    return this.d.actor.withLock(this.def, invoiceId, LOCK_WAIT_MS, async () => {
      let h = await this.fresh(invoiceId, p);
      if (h.pendingPayments.length || h.pendingNotes.length) {
        await this.settlePending(h, ctx);
        h = await this.fresh(invoiceId, p);
      }
      const inv = h.row;
      if (inv.status !== 'stamped') throw new ApiError('invoice.not_stamped', `Invoice ${invoiceId} is "${inv.status}".`);
      const left = inv.total_minor - inv.credited_minor;
      if (body.total_minor > left) throw new ApiError('invoice.credit_note_exceeds_total', `Credit notes of invoice ${invoiceId} may add up to ${left} more cents (total ${inv.total_minor}, credited ${inv.credited_minor}).`);
      const { issuer, now } = ctx;
      const folio = await this.takeFolio(issuer, 'NC');
      const formaPago = inv.metodo_pago === 'PPD' ? '15' : inv.forma_pago;
      let built;
      try {
        built = construirEgreso({ serie: 'NC', folio, fecha: now, lugarExpedicion: issuer.cp, emisor: this.emisor(issuer), receptor: this.toReceptor(inv.receptor), formaPago, relacionados: [inv.uuid_fiscal!], totalMinor: body.total_minor, descripcion: body.motivo ?? 'Bonificación', impuestos: impuestosDe(inv) });
      } catch (e) {
        if (e instanceof TaxError) throw new ApiError('invoice.invalid_body', `A credit note of ${body.total_minor} cents cannot be written with the invoice's taxes: ${e.message}`);
        throw e;
      }
      if (built.totalMinor !== body.total_minor) throw new Error(`credit note Total ${built.totalMinor} differs from the ${body.total_minor} asked for`);
      const sealed = await sellarComprobanteAsync(built.doc, issuer.csd!);
      const noteId = randomUUID();
      await this.d.actor.runLocked(this.def, p, invoiceId, { kind: 'reserve_credit', note: { id: noteId, totalMinor: built.totalMinor, baseMinor: built.subtotalMinor, ivaMinor: built.ivaMinor, motivo: body.motivo ?? null, serie: 'NC', folio, sealedXml: sealed.xml } }, { waitMs: 0, known: h });
      const record = async (a: PacAnswer) => ({ a, done: await this.step<Row>(invoiceId, { kind: 'credit', noteId, answer: a, respond: 200, jobs: this.creditJobs(h.row, noteId) }, idem) });
      const { a, done } = await this.pacSettle(this.cfdiCall(ctx, sealed.xml, false, record), h, (e) => `${e.message}. Credit note ${noteId} stays pending; retry with the same Idempotency-Key.`);
      if (done?.status === 'error' && a.kind === 'stamped') throw new ApiError('invoice.pac_error', `The credit note was not recorded: ${done.error_detail ?? 'UUID already registered'}`);
      if (a.kind === 'rejected') throw new ApiError('invoice.pac_error', `The PAC rejected the credit note: ${a.code} ${a.message}`);
      return done;
    }, false);
  }

  // ------------------------------------------------------------------------------------------
  // Cancellation

  /**
   * Cancels a CFDI as SAT orders it (docs/invoices.md "Cancellation"): `id` is an invoice's, one of
   * its payment complements' or one of its credit notes'. An invoice with live REPs or credit notes is
   * refused (SAT answers "no cancelable" while related CFDIs are live); motivo 01 needs the replacement
   * issued first (`replaces`, CfdiRelacionados 04) and its UUID as folio_sustitucion; motivo 04 is for a
   * global invoice only. SAT's "pending" (the receptor must accept) leaves the invoice `cancel_pending`,
   * followed by the reconciler's job `invoice.cancel_follow` until SAT's final answer.
   */
  async cancel(p: Principal, id: string, body: CancelBody, idem?: IdempotencyHandle): Promise<Row> {
    if (body.motivo === '01' && !body.folio_sustitucion) throw new ApiError('invoice.folio_sustitucion_required');
    if (body.motivo !== '01' && body.folio_sustitucion) throw new ApiError('invoice.invalid_body', '`folio_sustitucion` goes only with motivo 01 (SAT sends FolioSustitucion only then).');
    const [own] = await this.sql`select id from invoices where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (!own) return this.cancelDocument(p, id, body, idem);
    const invoiceId = id;
    const inv0 = await this.get(p, invoiceId);
    if (inv0.status === 'cancelled' || inv0.status === 'cancel_pending') {
      const [c] = await this.sql`select * from invoice_cancellations where invoice_id = ${invoiceId} and tenant_id = ${p.tenantId} and document_kind = 'invoice' order by created_at desc limit 1`;
      if (c) return c; // already asked: the same answer
    }
    if (inv0.status !== 'stamped') throw new ApiError('invoice.not_stamped', `Invoice ${invoiceId} is "${inv0.status}": only a stamped invoice is cancelled.`);
    const global = inv0.receptor.rfc === RFC_PUBLICO_GENERAL && inv0.receptor.nombre === 'PUBLICO EN GENERAL';
    if (body.motivo === '04' && !global) throw new ApiError('invoice.motivo_not_applicable', `Motivo 04 (operación nominativa relacionada en una factura global) cancels a global invoice; invoice ${invoiceId} is nominative (${inv0.receptor.rfc}).`);
    const ctx = await this.context(p.tenantId, p.livemode);
    return this.d.actor.withLock(this.def, invoiceId, LOCK_WAIT_MS, async () => {
      const h = await this.fresh(invoiceId, p);
      if (h.row.status !== 'stamped') throw new ApiError('invoice.not_stamped', `Invoice ${invoiceId} is "${h.row.status}".`);
      await this.refuseWithLiveRelated(h.row);
      if (body.motivo === '01') await this.checkFolioSustitucion(p, h.row, body.folio_sustitucion!);
      return this.pacSettle<Row>(this.cancelCall(ctx, p, h.row.uuid_fiscal!, h.row.xml ?? undefined, body, (out) =>
        this.d.actor.runLocked<HydratedInvoice, InvoiceCommand, void, Row>(this.def, p, invoiceId, {
          kind: 'cancel', cancellationId: randomUUID(), outcome: out.kind, motivo: body.motivo, folioSustitucion: body.folio_sustitucion, acuse: out.acuse,
        }, { waitMs: 0, known: h, idem })), h, (e) => `${e.message}. Invoice ${invoiceId} stays stamped; retry the cancellation (SAT keys it by the UUID: a repeat asks for the same one).`);
    }, false);
  }

  /** SAT refuses to cancel a CFDI while CFDIs that relate it are live: name them. */
  private async refuseWithLiveRelated(r: InvoiceRow): Promise<void> {
    const live = await this.sql`
      select 'payment' as kind, id, rep_uuid as uuid, parcialidad, status from invoice_payments where invoice_id = ${r.id} and tenant_id = ${r.tenant_id} and status in ('pending', 'stamped', 'cancel_pending')
      union all select 'credit_note', id, uuid_fiscal, null, status from credit_notes where invoice_id = ${r.id} and tenant_id = ${r.tenant_id} and status in ('pending', 'stamped', 'cancel_pending')
      order by 1, 4 desc nulls last`;
    if (!live.length) return;
    const names = live.map((x) => `${x.kind === 'payment' ? `payment complement ${x.id} (parcialidad ${x.parcialidad})` : `credit note ${x.id}`}${x.uuid ? ` ${x.uuid}` : ''}${x.status === 'cancel_pending' ? ' (its cancellation waits for the receptor\'s acceptance)' : ''}`);
    throw new ApiError('invoice.related_documents_live', `Invoice ${r.id} has live related CFDIs; SAT does not cancel it until they are cancelled (POST /v1/invoices/{their id}/cancel, motivo 02; REPs from the last parcialidad): ${names.join(', ')}.`);
  }

  /** Motivo 01: the replacement must be live, this account's, for the same receptor, and relate this invoice (04). */
  private async checkFolioSustitucion(p: Principal, r: InvoiceRow, folio: string): Promise<void> {
    const [rep] = await this.sql`
      select id, status, replaces_invoice_id, receptor from invoices
       where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and upper(uuid_fiscal) = ${folio.toUpperCase()}`;
    const bad = (why: string) => new ApiError('invoice.invalid_folio_sustitucion', `folio_sustitucion ${folio} ${why}. Issue the replacement first: POST /v1/invoices (or /ppd) with "replaces": "${r.id}", then cancel with its uuid_fiscal.`);
    if (!rep) throw bad('is not a CFDI of this account');
    if (rep.id === r.id) throw bad('is the invoice being cancelled');
    if (rep.status !== 'stamped') throw bad(`is "${rep.status}", not a live CFDI`);
    if (rep.replaces_invoice_id !== r.id) throw bad(`does not relate invoice ${r.id} with TipoRelacion 04 (sustitución)`);
    if (rep.receptor.rfc !== r.receptor.rfc) throw bad(`is for receptor ${rep.receptor.rfc}, not ${r.receptor.rfc}`);
  }

  /** Cancels a payment complement (the last of its chain) or a credit note of an invoice. */
  private async cancelDocument(p: Principal, id: string, body: CancelBody, idem?: IdempotencyHandle): Promise<Row> {
    const [pay] = await this.sql`select * from invoice_payments where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    const [note] = pay ? [undefined] : await this.sql`select * from credit_notes where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    const d = pay ?? note;
    if (!d) throw new ApiError('invoice.not_found');
    const kind: 'payment' | 'credit_note' = pay ? 'payment' : 'credit_note';
    if (d.status === 'cancelled' || d.status === 'cancel_pending') {
      const [c] = await this.sql`select * from invoice_cancellations where document_id = ${id} and tenant_id = ${p.tenantId} order by created_at desc limit 1`;
      if (c) return c; // already asked: the same answer
    }
    if (d.status !== 'stamped') throw new ApiError('invoice.not_stamped', `CFDI ${id} is "${d.status}": only a stamped CFDI is cancelled.`);
    if (body.motivo === '01' || body.motivo === '04') throw new ApiError('invoice.motivo_not_applicable', `A ${kind === 'payment' ? 'payment complement' : 'credit note'} is cancelled with motivo 02 (errores sin relación) or 03 (no se llevó a cabo); Orquesta issues no replacement REP or credit note.`);
    const ctx = await this.context(p.tenantId, p.livemode);
    return this.d.actor.withLock(this.def, d.invoice_id, LOCK_WAIT_MS, async () => {
      const h = await this.fresh(d.invoice_id, p);
      const [cur] = kind === 'payment' ? await this.sql`select * from invoice_payments where id = ${id} and tenant_id = ${p.tenantId}` : await this.sql`select * from credit_notes where id = ${id} and tenant_id = ${p.tenantId}`;
      if (kind === 'payment' && Number(cur!.parcialidad) !== h.row.parcialidades) {
        throw new ApiError('invoice.related_documents_live', `Payment complement ${id} is parcialidad ${cur!.parcialidad} of ${h.row.parcialidades}: cancel the later ones first.`);
      }
      const uuid = kind === 'payment' ? cur!.rep_uuid : cur!.uuid_fiscal;
      const what = kind === 'payment' ? 'payment complement' : 'credit note';
      // SAT's "pending" (the receptor must accept: a REP is never cancelled without acceptance for its
      // amount alone, RMF rule 2.7.1.35 fr. I) leaves it `cancel_pending`, followed by invoice.cancel_follow.
      return this.pacSettle<Row>(this.cancelCall(ctx, p, uuid, cur!.xml ?? undefined, { motivo: body.motivo }, (out) =>
        this.d.actor.runLocked<HydratedInvoice, InvoiceCommand, void, Row>(this.def, p, d.invoice_id, {
          kind: 'cancel_document', document: kind, documentId: id, cancellationId: randomUUID(), outcome: out.kind, motivo: body.motivo, acuse: out.acuse, jobs: this.creditJobs(h.row, randomUUID()),
        }, { waitMs: 0, known: { ...h, document: cur } as HydratedInvoice, idem })), h, (e) => `${e.message}. The ${what} ${id} stays stamped; retry the cancellation.`);
    }, false);
  }

  /**
   * SAT's final answer to a cancellation waiting for the receptor (job invoice.cancel_follow): the
   * invoice's own, and each of its payment complements' and credit notes' that is `cancel_pending`.
   * The outbound protocol's lookup of a call already made (the `cancel_pending` state is its mark);
   * the cancellation is never sent again from here. An unknown outcome leaves it for the next sweep.
   */
  async followCancellation(invoiceId: string): Promise<void> {
    await this.d.actor.withLock(this.def, invoiceId, 2000, async () => {
      const h0 = await this.fresh(invoiceId);
      const docs = [...(h0.cancelPendingPayments ?? []).map((d) => ({ kind: 'payment' as const, id: d.id as string })), ...(h0.cancelPendingNotes ?? []).map((d) => ({ kind: 'credit_note' as const, id: d.id as string }))];
      if (h0.row.status !== 'cancel_pending' && !docs.length) return;
      const ctx = await this.context(h0.row.tenant_id, h0.row.livemode);
      if (!ctx.pac.cancelStatus) return; // a PAC without the query: the next cancellation request asks again
      if (h0.row.status === 'cancel_pending') await this.followOne(ctx, h0, 'invoice', invoiceId);
      for (const doc of docs) await this.followOne(ctx, await this.fresh(invoiceId), doc.kind, doc.id);
    });
  }

  /** One CFDI's pending cancellation, asked of the PAC (`cancelStatus`) and stepped on SAT's final answer. */
  private async followOne(ctx: Ctx, h: HydratedInvoice, kind: 'invoice' | 'payment' | 'credit_note', id: string): Promise<void> {
    const pac = ctx.pac;
    const doc = kind === 'payment' ? h.cancelPendingPayments?.find((x) => x.id === id) : kind === 'credit_note' ? h.cancelPendingNotes?.find((x) => x.id === id) : undefined;
    if (kind !== 'invoice' && !doc) return; // settled meanwhile
    const uuid: string = kind === 'invoice' ? h.row.uuid_fiscal! : kind === 'payment' ? doc!.rep_uuid : doc!.uuid_fiscal;
    const xml: string = kind === 'invoice' ? h.row.xml! : doc!.xml;
    // SAT's consulta compares the CFDI's Total as written in it (a REP's is 0).
    const total = attr(parseXml(xml), 'Total') ?? (Number(kind === 'invoice' ? h.row.total_minor : kind === 'payment' ? 0 : doc!.total_minor) / 100).toFixed(2);
    const req = { uuid, rfcEmisor: ctx.issuer.rfc, rfcReceptor: h.row.receptor.rfc, total, livemode: h.row.livemode, credentials: { user: ctx.issuer.pacUser, password: ctx.issuer.pacPassword }, xml };
    const call: OutboundCall<HydratedInvoice, CancelStatus, void> = {
      connector: pac.key,
      op: 'cancel',
      lookupOp: 'cancel_status',
      due: (x) => (kind === 'invoice' ? x.row.status === 'cancel_pending' : true),
      started: () => true,
      send: () => {
        throw new Error('a pending cancellation is only looked up');
      },
      lookup: () => pac.cancelStatus!(req),
      resend: () => false,
      record: async (x, out) => {
        // SAT's final answers: Cancelado, or Vigente with the request refused. "En proceso", a
        // Vigente without the request yet and "No Encontrado" (SAT's lag) wait for the next sweep.
        if (out.kind !== 'cancelled' && out.kind !== 'rejected') return;
        const [c] = await this.sql`select id from invoice_cancellations where invoice_id = ${x.row.id} and tenant_id = ${x.row.tenant_id} and document_kind = ${kind} and (document_id = ${id} or document_id is null) and status = 'pending' order by created_at desc limit 1`;
        const cmd: InvoiceCommand = kind === 'invoice'
          ? { kind: 'cancel_outcome', cancellationId: c?.id, outcome: out.kind, acuse: undefined }
          : { kind: 'cancel_document_outcome', document: kind, documentId: id, cancellationId: c?.id, outcome: out.kind, jobs: this.creditJobs(x.row, randomUUID()) };
        await this.d.actor.runLocked<HydratedInvoice, InvoiceCommand, void, void>(this.def, undefined, x.row.id, cmd, { waitMs: 0, known: kind === 'invoice' ? x : { ...x, document: doc } });
      },
      idle: () => undefined,
    };
    try {
      await settleLocked(call, h);
    } catch (e) {
      if (e instanceof OutcomeUnknown) return; // asked again by the next sweep
      throw e;
    }
  }

  // ------------------------------------------------------------------------------------------
  // Self-invoicing (no credentials: receipt_code + rfc)

  async selfInvoice(slug: string, body: AutofacturaBody): Promise<InvoiceRow> {
    const rfc = checkRfc(body.rfc);
    if (!rfc.ok) throw new ApiError('autofactura.invalid_rfc', `"${body.rfc}" is not an RFC in SAT's format: ${rfc.reason}.`);
    const issuer = await issuerBySlug(this.d, slug);
    if (!issuer) throw new ApiError('autofactura.not_available');
    const intent = await this.receipt(issuer, body.receipt_code);
    if (!intent) throw new ApiError('autofactura.receipt_not_found');
    const [existing] = await this.sql`select * from invoices where tenant_id = ${issuer.tenantId} and livemode = ${issuer.livemode} and payment_intent_id = ${intent.id} and status in ('stamped', 'cancel_pending')`;
    if (existing) {
      if (existing.receptor.rfc !== rfc.rfc) throw new ApiError('autofactura.receipt_not_found'); // another RFC's invoice: the same answer as an unknown code
      return toRow(existing);
    }
    const p: Principal = { tenantId: issuer.tenantId, livemode: issuer.livemode, keyId: 'self-invoice', scopes: [] };
    const row = await this.createPue(p, { payment_intent_id: intent.id, receptor: { rfc: rfc.rfc, nombre: body.nombre, uso_cfdi: body.uso_cfdi, regimen_fiscal: body.regimen_fiscal, cp: body.cp } }, undefined, 'self_invoice').catch((e) => {
      // Invoiced meanwhile for another RFC: the same answer as an unknown code.
      if (e instanceof ApiError && e.code === 'invoice.already_exists') throw new ApiError('autofactura.receipt_not_found');
      throw e;
    });
    if (row.receptor.rfc !== rfc.rfc) throw new ApiError('autofactura.receipt_not_found');
    return row;
  }

  /** A succeeded receipt of this portal's tenant and mode, or null (unknown, other tenant, unpaid: the same). */
  private async receipt(issuer: Issuer, code: string): Promise<{ id: string } | null> {
    const [r] = await this.sql`select id, status from payment_intents where tenant_id = ${issuer.tenantId} and livemode = ${issuer.livemode} and receipt_code = ${code.trim().toUpperCase()}`;
    return r && r.status === 'succeeded' ? { id: r.id } : null;
  }

  async selfInvoiceDocument(slug: string, receiptCode: string, rfcIn: string, format: 'xml' | 'pdf'): Promise<{ xml?: string; pdf?: Buffer; name: string }> {
    const issuer = await issuerBySlug(this.d, slug);
    if (!issuer) throw new ApiError('autofactura.not_available');
    const intent = await this.receipt(issuer, receiptCode);
    if (!intent) throw new ApiError('autofactura.receipt_not_found');
    const rfc = rfcIn.trim().toUpperCase();
    const [r] = await this.sql`select * from invoices where tenant_id = ${issuer.tenantId} and livemode = ${issuer.livemode} and payment_intent_id = ${intent.id} and status in ('stamped', 'cancel_pending', 'cancelled') order by created_at desc limit 1`;
    if (!r || r.receptor.rfc !== rfc) throw new ApiError('autofactura.receipt_not_found');
    const name = `${r.serie ?? 'F'}-${r.folio}-${r.uuid_fiscal}`;
    return format === 'xml' ? { xml: r.xml, name } : { pdf: await renderPdf(r.xml, { testMode: !r.livemode }), name };
  }

  // ------------------------------------------------------------------------------------------
  // Internal API for other capabilities (receivables): idempotent, no HTTP.

  /** Stamps (or returns) the PUE invoice of a succeeded charge; idempotent per charge (same receptor RFC). */
  async stampPueForCharge(o: { tenantId: string; livemode: boolean; paymentIntentId: string; receptor: ReceptorInput; conceptos?: { descripcion: string; importe_minor: number; clave_prod_serv?: string; clave_unidad?: string }[] }): Promise<InvoiceView> {
    const p: Principal = { tenantId: o.tenantId, livemode: o.livemode, keyId: 'internal', scopes: ['*'] };
    return invoiceView(await this.createPue(p, { payment_intent_id: o.paymentIntentId, receptor: o.receptor, conceptos: o.conceptos }, undefined, 'receivable'));
  }

  /** Stamps (or returns) the REP of a charge that pays a PPD invoice; idempotent per (invoice, charge). */
  async stampRepForCharge(o: { tenantId: string; livemode: boolean; invoiceId: string; paymentIntentId: string }): Promise<InvoicePaymentView> {
    const p: Principal = { tenantId: o.tenantId, livemode: o.livemode, keyId: 'internal', scopes: ['*'] };
    return paymentView((await this.registerPayment(p, o.invoiceId, o.paymentIntentId)).row);
  }

  capability(): Capability {
    const sql = this.sql;
    // The invoices with a document (the invoice itself, a REP or a credit note) in `status` that no
    // job has touched lately: the PAC's answer to ask for again.
    // The status is written into the SQL, not bound, so the tables' partial indexes on it are used.
    const invoicesWith = async (status: 'pending' | 'cancel_pending') => {
      const s = sql.unsafe(`'${status}'`);
      const rows = await sql`
        select id from invoices where status = ${s} and ${untouchedSql(sql)}
        union select invoice_id from invoice_payments where status = ${s} and ${untouchedSql(sql)}
        union select invoice_id from credit_notes where status = ${s} and ${untouchedSql(sql)}
        limit 1000`;
      return rows.map((r) => r.id as string);
    };
    return {
      name: 'invoices',
      queues: { [INVOICE_QUEUE]: 1 },
      jobs: [this.resolveJob, this.cancelFollowJob, this.refundCreditsJob],
      reconcilers: [
        {
          name: 'invoices waiting for a lost PAC answer',
          run: async () => (await invoicesWith('pending')).map((invoiceId) => jobRequest(this.resolveJob, { invoiceId })),
        },
        {
          name: 'cancellations waiting for the receptor (SAT "en proceso")',
          run: async () => (await invoicesWith('cancel_pending')).map((invoiceId) => jobRequest(this.cancelFollowJob, { invoiceId })),
        },
      ],
    };
  }
}
