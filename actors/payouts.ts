// Payouts (outgoing SPEI transfers from the merchant's own account) on the entity actor
// (kernel/entity.ts), with four-eyes approval above a tenant threshold.
//
// - Create: validations of the spec, then one transaction (row `processing`, history, idempotency
//   record); the worker's job `payout.execute` runs after the commit. Above the tenant's
//   threshold the answer is 202 with a pending payout_approval; an operator other than the
//   requesting key approves it and the payout is created then.
// - Never sent twice (architecture invariant 4): the rail key and clave de rastreo derive from
//   the payout id; before its first call to the rail the worker commits `send_started_at`; a
//   payout that has it set may have reached the rail (a crash between send and record), so it is
//   asked about (status) before anything is sent again, and sent only if the rail never saw it.
// - The rail's evidence (its answer, a status query, a callback confirmed by a status query) is a
//   step of the payout machine: row, history, ledger entry, webhook event, in one transaction.
//   An order the rail accepted but has not settled is polled by a durable timer.
import { eventDataOf } from '../kernel/json.js';
import { Approvals, type ApprovalRow } from './approvals.js';
import { randomUUID } from 'node:crypto';
import { reconciler, staleRows, type Capability } from '../kernel/capability.js';
import type { Sql } from '../kernel/db.js';
import { LockBusy, hydrateRow, isGuardFailure, type EntityActor, type EntityRow, type EntityDef, type Hydrated, type Plan, type StepEnv, type Write } from '../kernel/entity.js';
import { ApiError } from '../kernel/errors.js';
import { sealedInRecord, type IdempotencyHandle } from '../kernel/idempotency.js';
import { defineJob, jobRequest, type JobRequest } from '../kernel/jobs.js';
import type { Logger } from '../kernel/log.js';
import { initialState, machineStep } from '../kernel/machine-step.js';
import type { Principal } from '../kernel/principal.js';
import type { TimerDef } from '../kernel/timers.js';
import { checkClabe, maskClabe } from '../formats/clabe.js';
import { checkRfc } from '../formats/rfc.js';
import { numericReferenceFor, operationDateOf, payoutKeyFor, RailConfigurationError, trackingKeyFor, type PayoutOrder, type PayoutRail, type RailState } from '../connectors/payout/rail.js';
import type { SimPayoutRail } from '../connectors/payout/sim.js';
import { payoutMachine, type PayoutEvent } from '../machines/payout.js';
import type { SecretBox } from '../kernel/secret-box.js';
import { payoutReturnedLines, payoutSentLines } from './connect-ledger.js';
import { OutcomeUnknown, settle, type OutboundCall } from '../kernel/outbound.js';

export const PAYOUT_QUEUE = 'payout';
/** The label of a create's four-eyes guard (orq_expect_rows). */
const THRESHOLD_GUARD = 'payout approval threshold';
/** Polls of an accepted, unsettled order: every minute in its first hour, then every 15 minutes. */
export const POLL_EARLY_MS = 60_000;
export const POLL_LATE_MS = 15 * 60_000;
/** How often the day's conciliation runs (each run covers today and yesterday, Mexico City). */
export const CONCILIATE_EVERY_MS = 60 * 60_000;

export interface PayoutRow extends EntityRow {
  clabe_sealed: string;
  clabe_masked: string;
  beneficiary_name: string;
  beneficiary_rfc: string | null;
  amount_minor: number;
  currency: string;
  concepto: string;
  reference: string;
  connector_key: string;
  rail_key: string;
  order_key: string;
  tracking_key: string;
  send_started_at: Date | null;
  operation_date: string | null;
  sent_at: Date | null;
  provider_ref: string | null;
  failure_code: string | null;
  failure_reason: string | null;
  requested_by: string;
  approval_id: string | null;
  connect_account_id: string | null;
  paid_at: Date | null;
  returned_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

type HydratedPayout = Hydrated<PayoutRow>;

export type PayoutCommand =
  | { kind: 'send_started'; operationDate: string }
  | { kind: 'rail'; state: RailState; inboxId?: string }
  /**
   * The rail's gateway refused a status query (RailConfigurationError: STP 401/403 or its HTML page).
   * The order may have reached the rail before, so the payout stays `processing` (never failed, never
   * sent again) with the configuration error visible, and is asked again at the next poll.
   */
  | { kind: 'rail_refused'; reason: string }
  /** A notice that turned out to change nothing: only marks it processed. */
  | { kind: 'notice_done'; inboxId: string };

export interface CreatePayout {
  clabe?: string;
  beneficiary_name?: string;
  beneficiary_rfc?: string;
  amount_minor: number;
  currency: string;
  concepto?: string;
  reference?: string;
  connector_key?: 'stp' | 'sim';
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const toPayout = (r: Record<string, unknown>): PayoutRow => ({ ...(r as unknown as PayoutRow), amount_minor: Number(r.amount_minor) });
export const clabeContext = (payoutId: string) => `payout:${payoutId}:clabe`;

/**
 * The payout as the API shows it (spec: payout): the full `clabe`, which the caller opens from its
 * sealed column (it is never stored in the clear); rail fields once the worker executed the order.
 */
export function payoutView(r: PayoutRow, clabe: string) {
  return {
    id: r.id,
    object: 'payout' as const,
    clabe,
    beneficiary_name: r.beneficiary_name,
    beneficiary_rfc: r.beneficiary_rfc,
    amount_minor: Number(r.amount_minor),
    currency: r.currency,
    concepto: r.concepto,
    reference: r.reference,
    status: r.status,
    connector_key: r.connector_key,
    livemode: r.livemode,
    created_at: r.created_at.toISOString(),
    provider_ref: r.provider_ref,
    tracking_key: r.sent_at ? r.tracking_key : null,
    failure_reason: r.failure_reason,
  };
}

/**
 * The data of payout.* events: the projection without absent fields, the CLABE only masked
 * (`clabe_masked`): a full CLABE never enters an event, a delivery or the event stream.
 */
export function payoutEventData(r: PayoutRow) {
  const { clabe: _full, ...view } = payoutView(r, '');
  return { ...eventDataOf(view, ['livemode']), clabe_masked: r.clabe_masked };
}

/** The sealing context of a payout approval's CLABE. */
export const approvalClabeContext = (approvalId: string) => `payout_approval:${approvalId}:clabe`;

/**
 * The spec's payout_approval: an approval (actors/approvals.ts) of a payout. Like the payout it
 * asks for, it answers the merchant's `clabe` in full (spec: a payout carries `clabe`), and
 * `clabe_masked`; the row and the idempotency record keep it sealed.
 */
export function approvalView(r: ApprovalRow, clabe: string | { $sealed: string; context: string }) {
  const req = r.request as { beneficiary_name: string; concepto: string };
  return {
    id: r.id,
    object: 'payout_approval' as const,
    status: r.status,
    amount_minor: r.amount_minor,
    currency: r.currency,
    clabe,
    clabe_masked: r.secret_masked,
    beneficiary_name: req.beneficiary_name,
    concepto: req.concepto,
    approver: r.approver,
    payout_id: r.subject_id,
    livemode: r.livemode,
    created_at: r.created_at.toISOString(),
    resolved_at: r.resolved_at ? r.resolved_at.toISOString() : null,
  };
}

/** The spec's validations of a payout body (what the schema alone cannot say). Pure. */
export function validatePayout(body: CreatePayout): { clabe: string; beneficiary_name: string; concepto: string; beneficiary_rfc: string | null } {
  const missing = (['clabe', 'beneficiary_name', 'concepto'] as const).filter((f) => typeof body[f] !== 'string' || !body[f]!.trim());
  if (missing.length) throw new ApiError('payout.missing_fields', `A payout needs clabe, beneficiary_name and concepto; missing: ${missing.join(', ')}.`);
  // spec: only MXN (the schema already refused a value that is not an ISO 4217 code).
  if (body.currency !== 'MXN') throw new ApiError('payout.unsupported_currency', `Payouts are SPEI transfers, in MXN only (got ${body.currency}).`);
  const c = checkClabe(body.clabe!.trim());
  if (!c.ok) throw new ApiError('payout.invalid_clabe', c.message);
  let rfc: string | null = null;
  if (body.beneficiary_rfc !== undefined) {
    const r = checkRfc(body.beneficiary_rfc);
    if (!r.ok) throw new ApiError('payout.invalid_beneficiary_rfc', r.message);
    rfc = r.rfc;
  }
  return { clabe: c.clabe, beneficiary_name: body.beneficiary_name!.trim(), concepto: body.concepto!.trim(), beneficiary_rfc: rfc };
}

/** When to poll an accepted order again. */
export const nextPollAt = (now: Date, createdAt: Date) => new Date(now.getTime() + (now.getTime() - createdAt.getTime() < 3_600_000 ? POLL_EARLY_MS : POLL_LATE_MS));

const RAIL_EVENT: Record<RailState['state'], PayoutEvent['type']> = { in_flight: 'rail.in_flight', paid: 'rail.paid', failed: 'rail.failed', returned: 'rail.returned' };

/** failure_code of a payout whose rail refused the connection (the registration path fails with it; a status query leaves it on a processing payout). */
export const RAIL_CONFIGURATION_ERROR = 'rail_configuration_error';

/** The failure_reason of a processing payout whose status query the rail refused: the rail's reason, and why it is not failed. */
export const refusedLookupReason = (reason: string) =>
  `${reason} The order may have reached the rail before this query, so the payout stays processing (it is neither failed nor sent again) and the rail is asked again every ${POLL_LATE_MS / 60_000} minutes until it answers.`;

/** A payout's step: pure (payout machine → row, history, ledger entries, event, timer). */
export function planPayoutStep(h: HydratedPayout, cmd: PayoutCommand, env: StepEnv): Plan<PayoutRow> {
  const r = h.row;
  const done: Write[] = 'inboxId' in cmd && cmd.inboxId ? [{ op: 'update', table: 'inbox', id: cmd.inboxId, set: { processed_at: env.at } }] : [];
  if (cmd.kind === 'notice_done') return { writes: done, result: r };
  if (cmd.kind === 'rail_refused') {
    // Only a payout still waiting on the rail shows it (a paid payout's notice is asked again by the reconciler).
    if (r.status !== 'processing') return { writes: [], result: r };
    const reason = refusedLookupReason(cmd.reason);
    const set: Record<string, unknown> = { failure_code: RAIL_CONFIGURATION_ERROR, failure_reason: reason, updated_at: env.at };
    const first = r.failure_code !== RAIL_CONFIGURATION_ERROR;
    return {
      writes: [],
      set,
      // The history says it once per spell (a refused poll every 15 minutes adds nothing new).
      ...(first ? { history: { event: 'rail.configuration_error', data: { code: RAIL_CONFIGURATION_ERROR } } } : {}),
      timers: [{ kind: 'payout.poll', entityId: r.id, dueAt: new Date(env.now.getTime() + POLL_LATE_MS) }],
      result: toPayout({ ...r, ...set, version: r.version + 1 }),
    };
  }
  // The rail answered again: a configuration error shown while it refused is cleared (or replaced by the rail's own failure).
  const clear: Record<string, unknown> = cmd.kind === 'rail' && r.failure_code === RAIL_CONFIGURATION_ERROR && r.status === 'processing' ? { failure_code: null, failure_reason: null } : {};
  const event: PayoutEvent = cmd.kind === 'send_started' ? { type: 'send_started' } : { type: RAIL_EVENT[cmd.state.state] };
  // Evidence that changes nothing (a repeated answer, a state the payout is past) is only acknowledged.
  if (!payoutMachine.resolveState({ value: r.status, context: undefined as never }).can(event)) return { writes: done, result: r };
  // An accepted order still in flight after a poll: only the next poll moves.
  if (cmd.kind === 'rail' && cmd.state.state === 'in_flight' && r.provider_ref === cmd.state.providerRef) {
    const timers = [{ kind: 'payout.poll', entityId: r.id, dueAt: nextPollAt(env.now, r.created_at) }];
    if (!Object.keys(clear).length) return { writes: done, timers, result: r };
    const set = { ...clear, updated_at: env.at };
    return { writes: done, set, history: { event: 'rail.in_flight', data: { provider_ref: r.provider_ref } }, timers, result: toPayout({ ...r, ...set, version: r.version + 1 }) };
  }
  const step = machineStep(payoutMachine, r.status, undefined, event);
  const set: Record<string, unknown> = { ...clear, updated_at: env.at };
  const plan: Plan<PayoutRow> = { writes: done, events: [], ledger: [], timers: [], result: r };
  const s = cmd.kind === 'rail' ? cmd.state : undefined;
  for (const e of step.effects) {
    if (e.type === 'markSending') {
      set.send_started_at = env.at;
      set.operation_date = (cmd as { operationDate: string }).operationDate;
    } else if (e.type === 'recordRail' && s) {
      if ('providerRef' in s && s.providerRef) set.provider_ref = s.providerRef;
      if (!r.sent_at) set.sent_at = env.at;
      if (s.state === 'in_flight') plan.timers!.push({ kind: 'payout.poll', entityId: r.id, dueAt: nextPollAt(env.now, r.created_at) });
    } else if (e.type === 'recordFailure' && s && (s.state === 'failed' || s.state === 'returned')) {
      set.failure_code = s.code;
      set.failure_reason = s.reason;
    } else if (e.type === 'postSent') {
      plan.ledger!.push({ tenantId: r.tenant_id, livemode: r.livemode, kind: 'payout.sent', refType: 'payout', refId: r.id, memo: `payout to ${r.clabe_masked}`, lines: payoutSentLines(r.connector_key, r.currency, r.amount_minor, r.connect_account_id) });
    } else if (e.type === 'postReturned') {
      plan.ledger!.push({ tenantId: r.tenant_id, livemode: r.livemode, kind: 'payout.returned', refType: 'payout', refId: r.id, memo: `devolución of the payout to ${r.clabe_masked}`, lines: payoutReturnedLines(r.connector_key, r.currency, r.amount_minor, r.connect_account_id) });
    }
  }
  if (step.value !== r.status) {
    set.status = step.value;
    if (step.value === 'paid') set.paid_at = env.at;
    if (step.value === 'returned') set.returned_at = env.at;
    if (r.status === 'processing') plan.timers!.push({ kind: 'payout.poll', entityId: r.id, cancel: true });
  }
  const updated = toPayout({ ...r, ...set, version: r.version + 1 });
  for (const e of step.effects) if (e.type === 'emit') plan.events!.push({ type: (e.params as { event: string }).event, data: payoutEventData(updated) });
  plan.set = set;
  plan.history = {
    event: event.type,
    data: s ? { provider_ref: 'providerRef' in s ? s.providerRef ?? null : null, ...(s.state === 'failed' || s.state === 'returned' ? { code: s.code } : {}) } : undefined,
  };
  plan.result = updated;
  return plan;
}

export interface PayoutsDeps {
  sql: Sql;
  actor: EntityActor;
  secrets: SecretBox;
  log: Logger;
  /** The rails: `sim` (test mode, every connector key) and `stp` (live). */
  rails: { sim: SimPayoutRail; stp: PayoutRail };
  /** Enqueues a declared job outside a step (runtime.jobs.enqueue). */
  enqueue(j: JobRequest): Promise<void>;
  /** Whether the tenant stored credentials for a live rail. */
  hasCredentials(tenantId: string, livemode: boolean, connectorKey: string): Promise<boolean>;
  /** The company code (empresa) the tenant's live STP credentials name, to check callbacks. */
  stpEmpresa(tenantId: string): Promise<string | undefined>;
}

export class Payouts {
  readonly def: EntityDef<HydratedPayout, PayoutCommand>;
  /** Four-eyes approvals of payouts above the tenant's threshold (actors/approvals.ts). */
  readonly approvals: Approvals<{ row: PayoutRow; clabe: string }>;

  readonly executeJob = defineJob<{ payoutId: string; inboxId?: string }>({
    queue: PAYOUT_QUEUE,
    name: 'payout.execute',
    shape: { payoutId: 'uuid', inboxId: 'uuid?' },
    id: (d) => `payout-${d.payoutId}${d.inboxId ? `-notice-${d.inboxId}` : ''}`,
    shardKey: (d) => d.payoutId,
    transient: (e) => e instanceof OutcomeUnknown || e instanceof LockBusy,
    run: (d) => this.execute(d.payoutId, d.inboxId),
  });

  /** The rails' day conciliation (STP consOrdenesFech): finds orders whose callback never came. */
  readonly conciliateJob = defineJob<Record<string, never>>({
    queue: PAYOUT_QUEUE,
    name: 'payout.conciliate',
    shape: {},
    id: () => 'payout-conciliate',
    shardKey: () => 'payout-conciliate',
    transient: (e) => e instanceof LockBusy,
    run: () => this.conciliate(),
  });

  readonly pollTimer: TimerDef = {
    kind: 'payout.poll',
    queue: PAYOUT_QUEUE,
    fire: (t) => this.execute(t.entityId),
    transient: (e) => e instanceof OutcomeUnknown || e instanceof LockBusy,
  };

  constructor(private d: PayoutsDeps) {
    const openClabe = (ap: ApprovalRow) => this.d.secrets.open(ap.secret_sealed!, approvalClabeContext(ap.id));
    this.approvals = new Approvals<{ row: PayoutRow; clabe: string }>(d, {
      kind: 'payout',
      codes: { notFound: 'payout_approval.not_found', resolutionConflict: 'payout_approval.resolution_conflict', approverConflict: 'payout_approval.approver_conflict' },
      view: (ap) => approvalView(ap, openClabe(ap)),
      // The idempotency record keeps the CLABE sealed (as the row does); a replay opens it.
      recordView: (ap) => approvalView(ap, sealedInRecord(ap.secret_sealed!, approvalClabeContext(ap.id))),
      prepareCreation: async (ap, approver, at) => {
        const req = ap.request as { beneficiary_name: string; beneficiary_rfc: string | null; concepto: string; reference: string | null; connector_key: string };
        const scope = { tenantId: ap.tenant_id, livemode: ap.livemode };
        const railKey = await this.railKeyFor(scope.tenantId, scope.livemode, req.connector_key);
        const clabe = openClabe(ap);
        const row = this.newRow(scope, { clabe, beneficiary_name: req.beneficiary_name, beneficiary_rfc: req.beneficiary_rfc, concepto: req.concepto }, {
          amountMinor: ap.amount_minor!, reference: req.reference ?? undefined, connectorKey: req.connector_key, railKey, requestedBy: ap.requested_by, approvalId: ap.id, at,
        });
        const plan = {
          create: { ...row },
          history: { event: 'create', data: { amount_minor: row.amount_minor, rail: railKey, approval_id: ap.id, approver } },
          jobs: [this.executeRequest(row.id)],
        };
        return { id: row.id, step: { def: this.def, row, plan }, result: { row, clabe } };
      },
    });
    this.def = {
      kind: 'payout',
      table: 'payouts',
      notFound: 'payout.not_found',
      busy: 'payout.concurrent_modification',
      hydrate: hydrateRow('payouts', toPayout),
      plan: (h, cmd, env) => planPayoutStep(h, cmd, env),
    };
  }

  /** The rail that executes a payout of this mode and connector key, or payout.no_route. */
  async railKeyFor(tenantId: string, livemode: boolean, connectorKey: string): Promise<'sim' | 'stp'> {
    // decisions.md §6: in test mode `stp` is simulated; live never reaches a simulator (§5).
    if (!livemode) return 'sim';
    if (connectorKey !== 'stp') throw new ApiError('payout.no_route', `Connector ${connectorKey} is a test-mode simulator; live payouts go through stp.`);
    if (!(await this.d.hasCredentials(tenantId, livemode, 'stp'))) {
      throw new ApiError('payout.no_route', 'This account has no STP credentials for live mode: store them with PUT /v1/connectors/stp/credentials. Nothing was sent.');
    }
    return 'stp';
  }

  /** A new payout row (processing) with its CLABE sealed; the caller writes it. */
  newRow(p: { tenantId: string; livemode: boolean }, v: { clabe: string; beneficiary_name: string; beneficiary_rfc: string | null; concepto: string }, o: { amountMinor: number; reference?: string; connectorKey: string; railKey: string; requestedBy: string; approvalId?: string | null; connectAccountId?: string | null; at: Date; id?: string }): PayoutRow {
    const id = o.id ?? randomUUID();
    return {
      id, tenant_id: p.tenantId, livemode: p.livemode, status: initialState(payoutMachine), version: 0,
      clabe_sealed: this.d.secrets.seal(v.clabe, clabeContext(id)), clabe_masked: maskClabe(v.clabe),
      beneficiary_name: v.beneficiary_name, beneficiary_rfc: v.beneficiary_rfc, amount_minor: o.amountMinor, currency: 'MXN', concepto: v.concepto,
      reference: o.reference ?? String(numericReferenceFor(id)), connector_key: o.connectorKey, rail_key: o.railKey,
      order_key: payoutKeyFor(id), tracking_key: trackingKeyFor(id), send_started_at: null, operation_date: null, sent_at: null, provider_ref: null,
      failure_code: null, failure_reason: null, requested_by: o.requestedBy, approval_id: o.approvalId ?? null, connect_account_id: o.connectAccountId ?? null,
      paid_at: null, returned_at: null, created_at: o.at, updated_at: o.at,
    };
  }

  /** The job that executes a new payout (after its commit). */
  executeRequest = (payoutId: string): JobRequest => jobRequest(this.executeJob, { payoutId });

  /**
   * A payout (201) or, above the tenant's four-eyes threshold, a pending approval (202). The create
   * carries the threshold check in its own statement (a guard on the tenant's settings as stored
   * when it runs): a payout under the threshold costs one round trip. A payout the guard holds back
   * reads the settings and decides as before (the approval, or the create if the threshold changed
   * in between); a repeat of the Idempotency-Key meets its record either way.
   */
  async create(p: Principal, body: CreatePayout, idem?: IdempotencyHandle): Promise<{ status: 201 | 202; body: Record<string, unknown> }> {
    const v = validatePayout(body);
    const connectorKey = body.connector_key ?? 'stp';
    const railKey = await this.railKeyFor(p.tenantId, p.livemode, connectorKey);
    try {
      return await this.createPayout(p, body, v, connectorKey, railKey, idem, this.underThreshold(p.tenantId, body.amount_minor));
    } catch (e) {
      if (!isGuardFailure(e, THRESHOLD_GUARD)) throw e;
    }
    const [t] = await this.d.sql`select settings from tenants where id = ${p.tenantId}`;
    const threshold = (t?.settings as { payout_approval_threshold_minor?: number | null } | undefined)?.payout_approval_threshold_minor;
    if (this.approvals.needed(body.amount_minor, threshold)) {
      const request = { beneficiary_name: v.beneficiary_name, beneficiary_rfc: v.beneficiary_rfc, concepto: v.concepto, reference: body.reference ?? null, connector_key: connectorKey };
      const view = await this.approvals.request(p, {
        amountMinor: body.amount_minor, currency: 'MXN', request,
        secret: (id) => ({ sealed: this.d.secrets.seal(v.clabe, approvalClabeContext(id)), masked: maskClabe(v.clabe) }),
      }, idem);
      return { status: 202, body: view };
    }
    return this.createPayout(p, body, v, connectorKey, railKey, idem);
  }

  /**
   * The guard of a create under the four-eyes threshold: the tenant's stored threshold does not hold
   * this amount (machines/approval.ts needsApproval in SQL: a number threshold below the amount).
   */
  private underThreshold(tenantId: string, amountMinor: number) {
    return this.d.sql`select orq_expect_rows(count(*), ${THRESHOLD_GUARD}) from tenants
      where id = ${tenantId} and not coalesce(jsonb_typeof(settings->'payout_approval_threshold_minor') = 'number'
        and ${amountMinor}::numeric > (settings->>'payout_approval_threshold_minor')::numeric, false)`;
  }

  private async createPayout(p: Principal, body: CreatePayout, v: ReturnType<typeof validatePayout>, connectorKey: string, railKey: 'sim' | 'stp', idem: IdempotencyHandle | undefined, guard?: ReturnType<Payouts['underThreshold']>) {
    const at = new Date();
    const row = this.newRow(p, v, { amountMinor: body.amount_minor, reference: body.reference, connectorKey, railKey, requestedBy: p.keyId, at });
    const view = payoutView(row, v.clabe);
    await this.d.actor.create(this.def, p, {
      create: { ...row },
      history: { event: 'create', data: { amount_minor: row.amount_minor, rail: railKey } },
      jobs: [this.executeRequest(row.id)],
      // The idempotency record keeps the CLABE sealed (as the row does); a replay opens it.
      response: { status: 201, body: { ...view, clabe: sealedInRecord(row.clabe_sealed, clabeContext(row.id)) } },
      result: row,
    }, { idem, at, guard });
    return { status: 201 as const, body: view };
  }

  async get(p: Principal, id: string) {
    const [r] = await this.d.sql`select * from payouts where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (!r) throw new ApiError('payout.not_found', `No payout ${id} exists for this key.`);
    return this.view(toPayout(r));
  }

  async list(p: Principal, limit = 100) {
    const rows = await this.d.sql`
      select * from payouts where tenant_id = ${p.tenantId} and livemode = ${p.livemode}
       order by created_at desc, id desc limit ${Math.min(Math.max(1, limit), 500)}`;
    return { object: 'list' as const, data: rows.map((r) => this.view(toPayout(r))) };
  }

  /**
   * The API's view of a stored payout, its CLABE opened from the sealed column. A Connect split's
   * payout goes to the sub-merchant's settlement account, whose full CLABE is never exposed (spec:
   * connect_account `settlement_clabe_masked`): that payout shows it masked.
   */
  private view(r: PayoutRow) {
    return payoutView(r, r.connect_account_id ? r.clabe_masked : this.d.secrets.open(r.clabe_sealed, clabeContext(r.id)));
  }

  private railOf(row: PayoutRow): PayoutRail {
    return row.rail_key === 'sim' ? this.d.rails.sim : this.d.rails.stp;
  }

  private orderOf(row: PayoutRow, operationDate: string): PayoutOrder {
    return {
      key: row.order_key,
      trackingKey: row.tracking_key,
      operationDate,
      tenantId: row.tenant_id,
      livemode: row.livemode,
      amountMinor: row.amount_minor,
      currency: row.currency,
      clabe: this.d.secrets.open(row.clabe_sealed, clabeContext(row.id)),
      beneficiaryName: row.beneficiary_name,
      beneficiaryRfc: row.beneficiary_rfc ?? undefined,
      concepto: row.concepto,
      numericReference: Number(row.reference),
    };
  }

  /**
   * The payout's order as an outbound call (kernel/outbound.ts): `send_started_at` (with the
   * operation date) is the mark; a payout that has it may have reached the rail, so the rail is
   * asked (status) first and the order is sent only while the payout is `processing` and the rail
   * never saw it. A notice or a poll is the same call with nothing left to send.
   */
  private orderCall(h0: HydratedPayout, inboxId: string | undefined): OutboundCall<HydratedPayout, RailState, unknown> {
    const railImpl = this.railOf(h0.row);
    const run = (cmd: PayoutCommand, known: HydratedPayout) => this.d.actor.runLocked<HydratedPayout, PayoutCommand, void, PayoutRow>(this.def, undefined, h0.row.id, cmd, { waitMs: 0, known });
    const orderOf = (row: PayoutRow) => this.orderOf(row, row.operation_date ?? operationDateOf(row.created_at));
    return {
      // The rail calls as client spans (no CLABE, name or amount in attributes: the connector and the payout id only).
      connector: railImpl.key,
      op: 'send',
      lookupOp: 'status',
      attrs: { 'orquesta.payout_id': h0.row.id },
      due: (h) => h.row.status === 'processing' || (h.row.status === 'paid' && !!inboxId),
      started: (h) => !!h.row.send_started_at,
      // Recorded before the call: from here on, a crash means "ask first".
      mark: async (h) => ({ ...h, row: await run({ kind: 'send_started', operationDate: operationDateOf(new Date()) }, h) }),
      send: async (h) => {
        try {
          return await railImpl.send(orderOf(h.row));
        } catch (e) {
          // The rail's gateway refused the connection (STP: 403 HTML without VPN or from an unregistered IP):
          // nothing reached it, and retrying cannot help. The payout fails with the reason, visibly (issue 28.6).
          if (!(e instanceof RailConfigurationError)) throw e;
          return { state: 'failed', code: RAIL_CONFIGURATION_ERROR, reason: e.message };
        }
      },
      lookup: async (h) => {
        try {
          return await railImpl.status(orderOf(h.row));
        } catch (e) {
          // The gateway refused the query (STP: 403 HTML, no VPN or an unregistered IP). The order may have
          // reached the rail before (this is the ask-first half), so nothing is failed or sent: the payout
          // shows the configuration error, stays processing and is asked again at its next poll (issue 28.6).
          if (!(e instanceof RailConfigurationError)) throw e;
          await run({ kind: 'rail_refused', reason: e.message }, h);
          this.d.log.warn('payout: the rail refused the status query (configuration); the payout stays processing and is asked again', { payoutId: h.row.id, rail: railImpl.key });
          throw e;
        }
      },
      // The rail never saw it (the earlier call did not reach it): sending now, with the same key, is safe.
      resend: (h) => h.row.status === 'processing',
      record: async (h, state) => ({ status: (await run({ kind: 'rail', state, inboxId }, h)).status }),
      idle: async (h, why) => {
        if (inboxId) await run({ kind: 'notice_done', inboxId }, h);
        return why === 'unseen' ? { skipped: 'the rail does not know the order' } : { skipped: `payout is ${h.row.status}` };
      },
    };
  }

  /**
   * Sends, asks or re-asks the rail, under the payout's lock (worker: the job, a poll timer, a
   * notice). Idempotent: a payout that may have been sent is asked about before anything is sent.
   */
  async execute(payoutId: string, inboxId?: string): Promise<unknown> {
    let s;
    try {
      s = await settle(this.d.actor, this.def, payoutId, (h) => this.orderCall(h, inboxId));
    } catch (e) {
      // Only a status query raises it (a send turns it into a failed payout): recorded on the payout, which
      // waits for its next poll. The job itself is done (no retry storm, no error log per poll).
      if (e instanceof RailConfigurationError) return { waiting: RAIL_CONFIGURATION_ERROR };
      throw e;
    }
    return s ? s.result : { skipped: 'unknown payout' };
  }

  // ---- evidence from outside ---------------------------------------------------------------------

  /**
   * The day's conciliation (issue 28.6): for every tenant, mode and live rail with payouts sent today
   * or yesterday (operation day, Mexico City) not all final, the rail lists that day's orders (STP: consOrdenesFech)
   * and each payout whose recorded state the list contradicts gets a notice, like a callback: the
   * worker then asks the rail (the payout's outbound call, status) before anything changes. So an
   * order settled or returned (devolución) whose callback never came is found within the hour,
   * including a paid payout returned later, which no poll follows. A rail that cannot be asked
   * (outage, refused connection, credentials that do not open) is skipped until the next run. The
   * `sim` rail is not conciliated: it answers every order at once, and its only later change (an
   * operator's simulated devolución) comes with its notice.
   */
  async conciliate(now: Date = new Date(), only?: { tenantId: string }): Promise<{ days: number; notices: number; skipped: number }> {
    const sql = this.d.sql;
    const days = [operationDateOf(new Date(now.getTime() - 86_400_000)), operationDateOf(now)];
    const groups = await sql`
      select tenant_id, livemode, rail_key, operation_date from payouts
       where operation_date in ${sql(days)} and rail_key <> 'sim' ${only ? sql`and tenant_id = ${only.tenantId}` : sql``}
       group by 1, 2, 3, 4 having bool_or(status in ('processing', 'paid'))`;
    let notices = 0;
    let skipped = 0;
    for (const g of groups) {
      const rail = g.rail_key === 'sim' ? this.d.rails.sim : this.d.rails.stp;
      let listed;
      try {
        listed = await rail.conciliate(g.tenant_id as string, g.livemode as boolean, g.operation_date as string);
      } catch (e) {
        // One tenant's rail that cannot be asked (an outage, a refused connection, credentials that
        // do not open) never stops the others' conciliation: it is asked again at the next run.
        skipped++;
        const level = e instanceof OutcomeUnknown || e instanceof RailConfigurationError ? 'warn' : 'error';
        this.d.log[level]('payout conciliation: the rail could not be asked; the next run asks again', { tenantId: g.tenant_id, rail: g.rail_key, operationDate: g.operation_date, err: (e as Error).message });
        continue;
      }
      if (!listed.length) continue;
      const claimed = new Map(listed.map((o) => [o.trackingKey, o.state]));
      const rows = await sql`
        select id, tracking_key, status from payouts
         where tenant_id = ${g.tenant_id} and livemode = ${g.livemode} and rail_key = ${g.rail_key}
           and operation_date = ${g.operation_date} and tracking_key in ${sql([...claimed.keys()])}`;
      for (const r of rows) {
        const state = claimed.get(r.tracking_key as string)!;
        const recorded = r.status === 'processing' ? 'in_flight' : (r.status as string);
        if (state.state === recorded) continue;
        await this.notice(g.tenant_id as string, r.id as string, `conciliation:${g.rail_key as string}`, { tracking_key: r.tracking_key, claimed: state.state, operation_date: g.operation_date });
        notices++;
      }
    }
    return { days: groups.length, notices, skipped };
  }

  /**
   * A status notice about a payout (an STP callback, an operator's simulation): written to the
   * inbox before it is acknowledged, then the worker asks the rail (the notice itself is a claim).
   */
  async notice(tenantId: string, payoutId: string, source: string, payload: unknown): Promise<void> {
    const id = randomUUID();
    await this.d.sql`
      insert into inbox (id, tenant_id, livemode, kind, source, subject_id, payload)
      select ${id}, tenant_id, livemode, 'payout.notice', ${source}, id, ${this.d.sql.json(payload as never)} from payouts where id = ${payoutId}`;
    await this.d.enqueue(jobRequest(this.executeJob, { payoutId, inboxId: id })).catch((e) => this.d.log.warn('enqueue of a payout notice failed; the reconciler will replay it', { err: e }));
  }

  /** Operator simulation (test mode): the beneficiary's bank returns a paid payout (devolución). */
  async simulateReturn(tenantId: string, payoutId: string) {
    const [r] = await this.d.sql`select * from payouts where id = ${payoutId} and tenant_id = ${tenantId}`;
    if (!r) throw new ApiError('payout.not_found', `No payout ${payoutId} for tenant ${tenantId}.`);
    const row = toPayout(r);
    if (row.livemode || row.rail_key !== 'sim' || row.status !== 'paid' || !row.provider_ref) {
      throw new ApiError('payout.not_returnable', `Payout ${payoutId} is ${row.status}${row.livemode ? ' (live mode)' : ''}: only a paid test-mode payout can be returned.`);
    }
    await this.d.rails.sim.returnOrder(tenantId, row.provider_ref);
    await this.notice(tenantId, payoutId, 'simulate-return', { provider_ref: row.provider_ref });
    return { object: 'payout_return_simulation' as const, payout_id: payoutId, received: true };
  }

  /**
   * A status callback of STP (POST /webhooks/in/stp/{tenantId}). STP signs nothing in its callbacks
   * and restricts them by network (shared/formats/stp.md §6): the body is read only as a claim. It
   * must name the tenant's company; the payout it names gets a notice, and the worker then asks STP
   * (a signed query over TLS) before anything changes. Answers STP's acknowledgement.
   */
  async stpCallback(tenantId: string, raw: string) {
    const [t] = await this.d.sql`select 1 from tenants where id = ${tenantId}`;
    if (!t) throw new ApiError('tenant.not_found', `No tenant ${tenantId}.`);
    let n;
    try {
      n = this.d.rails.stp.parseCallback(raw);
    } catch (e) {
      throw new ApiError('stp_callback.invalid', (e as Error).message);
    }
    const empresa = await this.d.stpEmpresa(tenantId);
    if (!empresa) throw new ApiError('stp_callback.invalid', 'This tenant has no live STP credentials: no STP callback is expected for it.');
    if (n.account !== undefined && n.account !== empresa) throw new ApiError('stp_callback.invalid', `The callback names company ${n.account}, not this tenant's.`);
    const payoutId = await this.byRailRef(tenantId, 'stp', n.providerRef, n.trackingKey);
    if (payoutId) await this.notice(tenantId, payoutId, 'webhook:stp', { provider_ref: n.providerRef ?? null, tracking_key: n.trackingKey ?? null, claimed: n.claimed });
    return { mensaje: 'recibido' as const };
  }

  /** Finds the payout an STP callback is about (by the rail's order id, else the clave de rastreo). */
  async byRailRef(tenantId: string, railKey: string, providerRef: string | undefined, trackingKey: string | undefined): Promise<string | undefined> {
    const [r] = await this.d.sql`
      select id from payouts
       where tenant_id = ${tenantId} and rail_key = ${railKey}
         and (${providerRef ?? null}::text is not null and provider_ref = ${providerRef ?? null}
              or ${trackingKey ?? null}::text is not null and tracking_key = ${trackingKey ?? null})
       limit 1`;
    return r?.id as string | undefined;
  }

  // ---- four-eyes ---------------------------------------------------------------------------------

  getApproval(p: Principal, id: string) {
    return this.approvals.get(p, id);
  }

  /** An operator other than the requesting key approves: the payout is created (processing) in the approval's step and the worker sends it. */
  async approve(tenantId: string, approvalId: string, approver: string) {
    const { row, clabe } = await this.approvals.approve(tenantId, approvalId, approver);
    return payoutView(row, clabe);
  }

  reject(tenantId: string, approvalId: string, approver: string) {
    return this.approvals.reject(tenantId, approvalId, approver);
  }

  /** Operator settings: the four-eyes threshold of payouts (null removes it). */
  async updateSettings(tenantId: string, body: { payout_approval_threshold_minor?: number; payout_approval_disabled?: true }) {
    const patch = { payout_approval_threshold_minor: body.payout_approval_disabled ? null : body.payout_approval_threshold_minor ?? null };
    const rows = await this.d.sql`update tenants set settings = settings || ${this.d.sql.json(patch as never)} where id = ${tenantId} returning settings`;
    if (!rows.length) throw new ApiError('tenant.not_found', `No tenant ${tenantId}.`);
    return { object: 'payout_settings' as const, tenant_id: tenantId, payout_approval_threshold_minor: (rows[0].settings as { payout_approval_threshold_minor?: number | null }).payout_approval_threshold_minor ?? null };
  }

  capability(): Capability {
    const sql = this.d.sql;
    return {
      name: 'payouts',
      jobs: [this.executeJob, this.conciliateJob],
      timers: [this.pollTimer],
      schedules: [{ name: 'payout-conciliation', everyMs: CONCILIATE_EVERY_MS, job: jobRequest(this.conciliateJob, {}) }],
      reconcilers: [
        // Accepted orders (provider_ref set) are polled by their timer; these never got an answer recorded.
        reconciler(
          'payouts not yet sent or not yet recorded',
          () => staleRows(sql, { table: 'payouts', status: 'processing', where: sql`provider_ref is null` }),
          (r) => this.executeRequest(r.id as string),
        ),
        reconciler(
          'payout notices not yet processed',
          () => staleRows(sql, { table: 'inbox', status: null, where: sql`kind = 'payout.notice' and processed_at is null`, columns: ['id', 'subject_id'], touched: 'received_at' }),
          (r) => jobRequest(this.executeJob, { payoutId: r.subject_id as string, inboxId: r.id as string }),
        ),
      ],
    };
  }
}
