// The payment intent actor, on the generic entity actor (kernel/entity.ts): its declaration
// (hydrate, prepare, the pure plan of payment-intent-plan.ts), the caller's commands (run in the
// API process: confirm, capture, cancel), and what workers run for it: attempt execution against
// the connector, provider notices from the inbox, the expiry timer (which asks the provider before
// expiring), and the attempt's refund status. docs/architecture.md says why commands run in the
// API process, with the measurement.
import { randomBytes, randomUUID } from 'node:crypto';
import { untouchedSql, type Capability } from '../kernel/capability.js';
import type { Sql } from '../kernel/db.js';
import { LockBusy, type EntityActor, type EntityDef, type Scope } from '../kernel/entity.js';
import { ApiError } from '../kernel/errors.js';
import type { IdempotencyHandle } from '../kernel/idempotency.js';
import { defineJob, jobRequest, type JobInfo, type JobRequest } from '../kernel/jobs.js';
import { initialState } from '../kernel/machine-step.js';
import type { Logger } from '../kernel/log.js';
import type { Principal } from '../kernel/principal.js';
import type { DueTimer } from '../kernel/timers.js';
import { ATTR, inSpan, SpanKind } from '../kernel/tracing.js';
import { settleLocked, type OutboundCall } from '../kernel/outbound.js';
import { type PaymentMethod, type ProviderOutcome } from '../connectors/acquirer.js';
import type { Candidate, FeeTable, Router } from '../connectors/routing.js';
import { paymentIntentMachine } from '../machines/payment-intent.js';
import type { ConfirmBody, CreatePaymentIntentBody, ListIntentsQuery } from '../schemas/payment-intents.js';
import { DUNNING_TIMER, EXPIRE_TIMER, planIntentStep, type IntentCommand, type IntentJobs, type IntentPrep, type IntentResult, type RouteChoice } from './payment-intent-plan.js';
import { hydrate, intentView, toIntentRow, type AttemptRow, type HydratedIntent, type IntentRow } from './payment-intent-store.js';
import { evaluate, loadRules } from './risk.js';
import { OutcomeUnknown } from '../kernel/outbound.js';

export const PI_QUEUE = 'pi';
/** Dunning waits: 1 day after the first soft decline, then 2 and 2 more (days 1, 3 and 5), by the tenant's clock. */
export const DUNNING_GAPS_DAYS = [1, 2, 2] as const;
export { EXPIRE_TIMER };
export { LockBusy };

/** What the payment intent actor needs (narrow: wiring in ops/ passes it). */
export interface PaymentsDeps {
  sql: Sql;
  /** Lag-tolerant reads (lists): the replica when one is configured. */
  readSql: Sql;
  actor: EntityActor;
  router: Router;
  log: Logger;
  /** Enqueues a declared job now (a notice received, a refund settled). */
  enqueue(job: JobRequest): Promise<void>;
  /** Resolves a saved payment method for a one-click confirm (connector and reusable token), or throws the spec's error. */
  savedMethod?: (tenantId: string, livemode: boolean, id: string) => Promise<{ connector: string; token: string; customerId: string; brand?: string }>;
  /** The tenant's routing table for a mode (actors/routing.ts); the router's default table without it. */
  routingTable?: (tenantId: string, livemode: boolean) => Promise<{ table: FeeTable; defaultKey?: string }>;
  /** Whether an id names an active terminal of the tenant and mode (actors/terminals.ts; decisions.md §7). */
  terminalActive?: (tenantId: string, livemode: boolean, id: string) => Promise<boolean>;
}

const RECEIPT_ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';
function receiptCode(): string {
  let s = 'W-';
  for (const x of randomBytes(5)) s += RECEIPT_ALPHABET[x % RECEIPT_ALPHABET.length];
  return s;
}
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
function clientSecret(): string {
  let s = 'pi_secret_';
  for (const x of randomBytes(24)) s += BASE62[x % 62];
  return s;
}

/** One open attempt per intent, one pending review: a violation means another writer won the race. */
const lostRace = (e: unknown) => {
  const err = e as { code?: string; constraint_name?: string };
  return err.code === '23505' && (err.constraint_name === 'attempts_one_open' || err.constraint_name === 'risk_reviews_one_pending');
};

const isTransient = (e: unknown) => e instanceof OutcomeUnknown || e instanceof LockBusy;

/** What a real adapter needs besides the key: the tenant (its credentials) and the amount (Conekta's capture). */
const ctxOf = (a: AttemptRow) => ({ tenantId: a.tenant_id, livemode: a.livemode, amountMinor: a.amount_minor, currency: a.currency });

// tenantId and livemode: the worker reads the intent scoped (one shard under Citus, docs/scaling.md);
// a job queued before they were added has neither and is read by id.
type AttemptJob = { intentId: string; attemptId: string; settle?: boolean; tenantId?: string; livemode?: boolean };
type Scoped = { tenantId?: string; livemode?: boolean };
const scopeOf = (d: Scoped) => (d.tenantId && d.livemode !== undefined ? { tenantId: d.tenantId, livemode: d.livemode } : undefined);
const refScope = (r: { tenant_id: string; livemode: boolean }) => ({ tenantId: r.tenant_id, livemode: r.livemode });
type AttemptRun = { outcome: string } | { skipped: string };

/** The n-th referencia numérica (n in 0..8,999,999): 1,000,000 + n × 7,654,321 mod 9,000,000, a bijection onto the 7-digit numbers. */
export const referenciaNumerica = (n: number) => 1_000_000 + ((n % 9_000_000) * 7_654_321) % 9_000_000;

export class PaymentIntents {
  readonly def: EntityDef<HydratedIntent, IntentCommand, IntentPrep>;

  // ---- jobs, declared once: the plan, the reconciler and the inbox ask for them by these ----------
  readonly executeJob = defineJob<AttemptJob>({
    queue: PI_QUEUE,
    name: 'attempt.execute',
    shape: { intentId: 'uuid', attemptId: 'uuid', settle: 'boolean?', tenantId: 'uuid?', livemode: 'boolean?' },
    id: (d) => `exec-${d.attemptId}`,
    shardKey: (d) => d.intentId,
    transient: isTransient,
    run: (d, info) => this.executeAttempt(d, info),
  });
  readonly captureJob = defineJob<AttemptJob>({
    queue: PI_QUEUE,
    name: 'attempt.capture',
    shape: { intentId: 'uuid', attemptId: 'uuid', settle: 'boolean?', tenantId: 'uuid?', livemode: 'boolean?' },
    id: (d) => `capture-${d.attemptId}`,
    shardKey: (d) => d.intentId,
    transient: isTransient,
    run: (d, info) => this.captureAttempt(d, info),
  });
  readonly voidJob = defineJob<AttemptJob>({
    queue: PI_QUEUE,
    name: 'attempt.void',
    shape: { intentId: 'uuid', attemptId: 'uuid', tenantId: 'uuid?', livemode: 'boolean?' },
    id: (d) => `void-${d.attemptId}`,
    shardKey: (d) => d.intentId,
    transient: isTransient,
    run: (d) => this.voidAttempt(d),
  });
  readonly noticeJob = defineJob<{ inboxId: string; intentId: string } & Scoped>({
    queue: PI_QUEUE,
    name: 'attempt.notice',
    shape: { inboxId: 'uuid', intentId: 'uuid', tenantId: 'uuid?', livemode: 'boolean?' },
    id: (d) => `notice-${d.inboxId}`,
    shardKey: (d) => d.intentId,
    transient: isTransient,
    run: (d) => this.processNotice(d.inboxId, scopeOf(d)),
  });
  readonly refundSettledJob = defineJob<{ intentId: string; attemptId: string } & Scoped>({
    queue: PI_QUEUE,
    name: 'attempt.refund_settled',
    shape: { intentId: 'uuid', attemptId: 'uuid', tenantId: 'uuid?', livemode: 'boolean?' },
    id: (d) => `refunded-${d.attemptId}`,
    shardKey: (d) => d.intentId,
    transient: isTransient,
    run: async (d) => this.d.actor.run(this.def, scopeOf(d), d.intentId, { kind: 'refund_settled', attemptId: d.attemptId }, { waitMs: 2000, worker: true }),
  });

  private readonly planJobs: IntentJobs = {
    execute: (i, attemptId) => jobRequest(this.executeJob, { intentId: i.id, attemptId, tenantId: i.tenant_id, livemode: i.livemode }),
    capture: (i, attemptId) => jobRequest(this.captureJob, { intentId: i.id, attemptId, tenantId: i.tenant_id, livemode: i.livemode }),
    void: (i, attemptId) => jobRequest(this.voidJob, { intentId: i.id, attemptId, tenantId: i.tenant_id, livemode: i.livemode }),
  };

  constructor(private d: PaymentsDeps) {
    const self = this;
    this.def = {
      kind: 'payment_intent',
      table: 'payment_intents',
      history: { table: 'payment_intent_history', key: 'payment_intent_id' },
      notFound: 'payment_intent.not_found',
      busy: 'payment_intent.concurrent_modification',
      hydrate: (sql, id, scope, cmd) => hydrate(sql, id, scope?.tenantId, scope?.livemode, { rules: cmd?.kind === 'confirm' }),
      prepare: (h, cmd) => self.prepare(h, cmd),
      plan: (h, cmd, env, prep) => planIntentStep(h, cmd, env, prep, self.planJobs),
      lostRace,
    };
  }

  // ---- reads and creation ------------------------------------------------------------------

  async create(p: Pick<Principal, 'tenantId' | 'livemode'>, body: CreatePaymentIntentBody, idem?: IdempotencyHandle) {
    const initial = initialState(paymentIntentMachine);
    // The customer must be the caller's (another tenant's id answers like an unknown one).
    if (body.customer_id) await this.assertCustomer(p, body.customer_id);
    if (body.metadata?.terminal_id !== undefined) await this.assertTerminal(p, body.metadata.terminal_id);
    // receipt_code is unique per tenant: draw again on the rare collision.
    for (let round = 0; ; round++) {
      const now = new Date();
      const row: IntentRow = {
        id: randomUUID(),
        tenant_id: p.tenantId,
        livemode: p.livemode,
        amount_minor: body.amount_minor,
        tip_minor: body.tip_minor ?? 0,
        currency: body.currency,
        status: initial,
        client_secret: clientSecret(),
        metadata: body.metadata ?? null,
        receipt_code: receiptCode(),
        customer_id: body.customer_id ?? null,
        next_action: null,
        last_error: null,
        version: 0,
        created_at: now,
        updated_at: now,
      };
      const view = intentView(row);
      const { next_action: _n, last_error: _l, ...create } = row;
      try {
        // spec: creation is recorded in the history (with payment_method_types) and is not dispatched as a webhook.
        return await this.d.actor.create(this.def, p, {
          create,
          history: { event: 'create', data: { payment_method_types: body.payment_method_types ?? null } },
          response: { status: 201, body: view },
          result: view,
        }, { idem, at: now });
      } catch (e) {
        const receiptTaken = (e as { code?: string; constraint_name?: string }).code === '23505' && /receipt/.test((e as { constraint_name?: string }).constraint_name ?? '');
        if (!receiptTaken || round >= 4) throw receiptTaken ? new Error('could not draw a unique receipt code') : e;
      }
    }
  }

  async get(p: Principal, id: string, expand: boolean) {
    const h = await hydrate(this.d.sql, id, p.tenantId, p.livemode);
    if (!h) throw new ApiError('payment_intent.not_found');
    const [r] = await this.d.sql`select coalesce(sum(amount_minor), 0)::bigint as n from refunds where tenant_id = ${p.tenantId} and payment_intent_id = ${id} and status = 'succeeded'`;
    return intentView(h.row, expand ? h.attempts : undefined, Number(r.n));
  }

  /**
   * The tenant's intents, newest first, a page at a time (Stripe's list: `limit` default 10 clamped
   * to 100, `starting_after` the last id of the previous page, `has_more`), with filters.
   */
  async list(p: Principal, q: ListIntentsQuery) {
    const sql = this.d.readSql;
    const limit = Math.min(q.limit ?? 10, 100);
    let after = sql``;
    if (q.starting_after) {
      const [c] = await sql`select created_at, id from payment_intents where id = ${q.starting_after} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
      if (!c) throw new ApiError('payment_intent.not_found', `starting_after ${q.starting_after} is not a payment intent of this key: use the last id of the previous page.`);
      after = sql`and (pi.created_at, pi.id) < (${c.created_at as Date}, ${c.id as string})`;
    }
    // The customers of an email first (their index), then their intents by payment_intents_customer:
    // one subquery in the page's statement made the planner walk the whole tenant (bench/portal: 2.6 s at 10^6).
    let customers: string[] | undefined;
    if (q.customer_email) {
      customers = (await sql`select id from customers where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and lower(email) = ${q.customer_email.toLowerCase()} and deleted_at is null`).map((r) => r.id as string);
      if (!customers.length) return { object: 'list' as const, data: [], has_more: false };
    }
    const rows = await sql`
      -- a page of the tenant's intents, newest first, with what succeeded refunds returned
      select pi.*, coalesce((select sum(r.amount_minor) from refunds r where r.payment_intent_id = pi.id and r.status = 'succeeded'), 0)::bigint as refunded
        from payment_intents pi
       where pi.tenant_id = ${p.tenantId} and pi.livemode = ${p.livemode}
             ${q.status ? sql`and pi.status = ${q.status}` : sql``}
             ${q.customer ? sql`and pi.customer_id = ${q.customer}` : sql``}
             ${q['created[gte]'] ? sql`and pi.created_at >= ${q['created[gte]']}` : sql``}
             ${q['created[gt]'] ? sql`and pi.created_at > ${q['created[gt]']}` : sql``}
             ${q['created[lte]'] ? sql`and pi.created_at <= ${q['created[lte]']}` : sql``}
             ${q['created[lt]'] ? sql`and pi.created_at < ${q['created[lt]']}` : sql``}
             ${q['metadata[branch]'] ? sql`and pi.metadata->>'branch' = ${q['metadata[branch]']}` : sql``}
             ${q.receipt_code ? sql`and pi.receipt_code = ${q.receipt_code.toUpperCase()}` : sql``}
             ${q.amount_minor !== undefined ? sql`and pi.amount_minor = ${q.amount_minor}` : sql``}
             ${q.method ? sql`and exists (select 1 from attempts a where a.payment_intent_id = pi.id and a.method = ${q.method})` : sql``}
             ${customers ? sql`and pi.customer_id = any(${customers}::uuid[])` : sql``}
             ${after}
       order by pi.created_at desc, pi.id desc limit ${limit + 1}`;
    const page = rows.slice(0, limit).map((r) => {
      const { refunded, ...row } = r;
      return intentView(toIntentRow(row), undefined, Number(refunded));
    });
    return { object: 'list' as const, data: page, has_more: rows.length > limit };
  }

  private async assertCustomer(p: Pick<Principal, 'tenantId' | 'livemode'>, customerId: string) {
    const [c] = await this.d.sql`select 1 from customers where id = ${customerId} and tenant_id = ${p.tenantId} and livemode = ${p.livemode} and deleted_at is null`;
    if (!c) throw new ApiError('customer.not_found', `No customer ${customerId} exists for this key (customer_id).`);
  }

  /**
   * decisions.md §7: a charge naming no active terminal of the tenant is refused, one answer for an
   * unknown, inactive or another tenant's terminal. A repeat of a create that succeeded (its terminal
   * deactivated since) is answered with the stored 201 by the edge: the create route looks its
   * Idempotency-Key up at commit, and a refusal of such a route is answered with the key's stored
   * response when there is one (api/edge/idempotency.ts).
   */
  private async assertTerminal(p: Pick<Principal, 'tenantId' | 'livemode'>, terminalId: string) {
    if (this.d.terminalActive && (await this.d.terminalActive(p.tenantId, p.livemode, terminalId))) return;
    throw new ApiError('payment_intent.terminal_not_active');
  }

  // ---- caller commands (run in the API process) ----------------------------------------------

  async confirm(p: Scope, id: string, body: ConfirmBody, idem?: IdempotencyHandle) {
    const r = await this.command(p, id, { kind: 'confirm', body }, idem);
    return r.review ?? intentView(r.intent, r.attempts);
  }

  async capture(p: Scope, id: string, idem?: IdempotencyHandle) {
    const r = await this.command(p, id, { kind: 'capture' }, idem);
    return intentView(r.intent, r.attempts);
  }

  async cancel(p: Scope, id: string, idem?: IdempotencyHandle) {
    const r = await this.command(p, id, { kind: 'cancel' }, idem);
    return intentView(r.intent);
  }

  /** Operator decision on a risk review (decisions.md §2). */
  async decideReview(tenantId: string, reviewId: string, decision: 'approve' | 'reject') {
    const rows = await this.d.sql`select payment_intent_id, livemode, status from risk_reviews where id = ${reviewId} and tenant_id = ${tenantId}`;
    if (!rows.length) throw new ApiError('risk_review.not_found');
    if (rows[0].status !== 'pending') throw new ApiError('risk_review.resolution_conflict', `This review was already ${rows[0].status}.`);
    await this.command({ tenantId, livemode: rows[0].livemode as boolean }, rows[0].payment_intent_id as string, { kind: 'review', reviewId, decision });
    return reviewView(this.d.sql, tenantId, reviewId);
  }

  private command(scope: Scope, id: string, cmd: IntentCommand, idem?: IdempotencyHandle): Promise<IntentResult> {
    return this.d.actor.run<HydratedIntent, IntentCommand, IntentPrep, IntentResult>(this.def, scope, id, cmd, { waitMs: 3000, idem, worker: false });
  }

  /** What the plan needs from outside the transaction: the saved method, the route, the risk verdict, the fee. */
  private async prepare(h: HydratedIntent, cmd: IntentCommand): Promise<IntentPrep> {
    const intent = h.row;
    switch (cmd.kind) {
      case 'confirm': {
        // The terminal may have been deactivated since the intent was created (decisions.md §7).
        // Only where confirm could charge: an intent past it answers payment_intent.not_confirmable as before.
        const terminalId = intent.metadata?.terminal_id;
        if (terminalId !== undefined && (intent.status === 'requires_payment_method' || intent.status === 'requires_confirmation')) {
          await this.assertTerminal({ tenantId: intent.tenant_id, livemode: intent.livemode }, terminalId);
        }
        let method = cmd.body.payment_method!;
        let token = cmd.body.payment_token;
        let customerId: string | undefined;
        let saved: { connector: string; brand?: string } | undefined;
        if (cmd.body.payment_method_id) {
          if (!this.d.savedMethod) throw new ApiError('payment_method.not_found');
          const s = await this.d.savedMethod(intent.tenant_id, intent.livemode, cmd.body.payment_method_id);
          method = 'card';
          token = s.token;
          customerId = s.customerId;
          saved = s;
        }
        // A token made by a connector's browser tokenizer (web/tokenize.js) is `<connector>:<token>`: it can only be charged there.
        const bound = !saved && token ? /^(conekta|openpay):(.+)$/.exec(token) : null;
        if (bound) {
          token = bound[2];
          saved = { connector: bound[1]! };
        }
        const tip = cmd.body.tip_minor ?? intent.tip_minor; // spec: sent replaces, omitted keeps
        const route = await this.choose(intent, method, intent.amount_minor + tip, [], saved ? 'saved' : 'cheapest', saved);
        if (route?.decision && cmd.body.payment_method_id) {
          route.decision.payment_method_id = cmd.body.payment_method_id;
          route.decision.off_session = cmd.body.off_session === true;
        }
        const risk = route
          ? evaluate(h.rules ?? (await loadRules(this.d.sql, intent.tenant_id)), {
              amount_minor: intent.amount_minor,
              tip_minor: tip,
              total_minor: intent.amount_minor + tip,
              currency: intent.currency,
              payment_method: method,
              metadata: intent.metadata,
            })
          : { verdict: 'allow' as const };
        return { charge: { method, token, tip, route, risk: risk.verdict, ruleId: risk.ruleId, customerId } };
      }
      case 'review': {
        const req = h.review?.request ?? {};
        const method = String(req.payment_method);
        const tip = typeof req.tip_minor === 'number' ? req.tip_minor : intent.tip_minor;
        const route = await this.choose(intent, method, intent.amount_minor + tip, [], 'cheapest');
        return { charge: { method, token: req.payment_token as string | undefined, tip, route, risk: 'allow' } };
      }
      case 'evidence': {
        const open = h.open;
        if (!open || open.id !== cmd.attemptId) return {};
        if (cmd.outcome.kind === 'soft_decline') {
          // Cross-connector retry: the cheapest eligible connector not tried yet for this intent.
          const tried = h.attempts.map((a) => a.connector_key);
          // A saved card's reference (or a browser tokenizer's token) belongs to its connector: never retried on another one.
          const d = await this.dunningState(intent);
          if (!d.paymentMethodId && !d.bound) {
            const retry = await this.choose(intent, open.method, open.amount_minor, tried, 'retry');
            if (retry) return { retry };
          }
          return this.dunningAfter(h, d);
        }
        if (cmd.outcome.kind === 'captured') {
          const t = await this.tableOf(intent);
          return { feeMinor: this.d.router.fee(open.connector_key, open.method, open.amount_minor, t.table[open.connector_key] ? t.table : undefined) };
        }
        return {};
      }
      case 'dunning': {
        // Under the intent's lock: only the timer as still set fires (two copies of its job may both have passed the due check).
        const [current] = await this.d.sql`
          select 1 from timers where tenant_id = ${intent.tenant_id} and kind = ${DUNNING_TIMER} and entity_id = ${intent.id} and due_at = ${cmd.dueAt} and fired_at is null`;
        if (!current) return {};
        const d = await this.dunningState(intent);
        if (!d.offSession || !d.paymentMethodId || !this.d.savedMethod) return {};
        const last = h.attempts[h.attempts.length - 1];
        if (!last) return {};
        const s = await this.d.savedMethod(intent.tenant_id, intent.livemode, d.paymentMethodId).catch(() => undefined);
        if (!s) return {};
        const route = await this.choose(intent, last.method, last.amount_minor, [], 'saved', s);
        if (route?.decision) Object.assign(route.decision, { reason: 'dunning', off_session: true, payment_method_id: d.paymentMethodId });
        return route ? { retry: route, retryToken: s.token } : {};
      }
      case 'refund_settled': {
        const [r] = await this.d.sql`select coalesce(sum(amount_minor), 0)::bigint as total from refunds where tenant_id = ${intent.tenant_id} and attempt_id = ${cmd.attemptId} and status = 'succeeded'`;
        return { refundedMinor: Number(r.total) };
      }
      default:
        return {};
    }
  }

  /** Whether the intent is an off-session charge of a saved card, and how many dunning retries it had. */
  private async dunningState(intent: { id: string; tenant_id: string }) {
    const [r] = await this.d.sql`
      select bool_or(off_session) as off_session, (array_agg(payment_method_id order by created_at) filter (where payment_method_id is not null))[1] as pm,
             count(*) filter (where reason = 'dunning')::int as retries,
             -- a saved card or a tokenizer's token: routed without a choice (no default to compare with)
             bool_or(reason = 'cheapest' and default_connector is null) as bound
        from routing_decisions where tenant_id = ${intent.tenant_id} and payment_intent_id = ${intent.id}`;
    return { offSession: r?.off_session === true, paymentMethodId: (r?.pm as string | null) ?? null, retries: (r?.retries as number) ?? 0, bound: r?.bound === true };
  }

  /** After an off-session soft decline with no other connector: the next dunning day (1, 3, 5 days after the first decline), or none left. */
  private async dunningAfter(h: HydratedIntent, d: { offSession: boolean; retries: number }): Promise<IntentPrep> {
    if (!d.offSession || d.retries >= DUNNING_GAPS_DAYS.length) return {};
    const now = Date.now() + h.clockOffsetMs;
    return { dunningDueAt: new Date(now + DUNNING_GAPS_DAYS[d.retries]! * 86400_000) };
  }

  private tableOf(intent: IntentRow) {
    return this.d.routingTable ? this.d.routingTable(intent.tenant_id, intent.livemode) : Promise.resolve({ table: this.d.router.defaultTable(), defaultKey: undefined });
  }

  /**
   * The connector a new attempt goes to, with the decision recorded beside it: the cheapest
   * eligible connector of the tenant's table on this total (`saved`: a saved card stays on the
   * connector that keeps it; `retry`: skipping the connectors this intent already tried).
   */
  private async choose(intent: IntentRow, method: string, totalMinor: number, tried: string[], why: 'cheapest' | 'retry' | 'saved', saved?: { connector: string; brand?: string }): Promise<RouteChoice | undefined> {
    const t = await this.tableOf(intent);
    let table = t.table;
    if (saved) table = { [saved.connector]: t.table[saved.connector] ?? this.d.router.defaultTable()[saved.connector] ?? {} };
    const ranked = this.d.router.rank(method, intent.livemode, totalMinor, { table, tried, brand: saved?.brand });
    if (!ranked.chosen) return undefined;
    const chosen = ranked.chosen.connector.key;
    const defaultKey = t.defaultKey ?? Object.keys(t.table)[0];
    const defaultFees = defaultKey ? t.table[defaultKey]?.[method] : undefined;
    const defaultFee = defaultFees ? this.d.router.fee(defaultKey!, method, totalMinor, t.table, saved?.brand) : null;
    return {
      connector: chosen,
      decision: {
        method,
        brand: saved?.brand ?? null,
        amount_minor: totalMinor,
        currency: intent.currency,
        candidates: ranked.candidates as Candidate[],
        chosen,
        reason: why === 'retry' ? 'retry' : 'cheapest',
        // Savings are counted only where routing had a choice: a saved card has none.
        default_connector: why === 'saved' ? null : defaultKey ?? null,
        default_fee_minor: why === 'saved' ? null : defaultFee,
        chosen_fee_minor: ranked.chosen.feeMinor,
      },
    };
  }

  // ---- worker side ---------------------------------------------------------------------------

  private connectorCall<T>(attempt: AttemptRow, op: string, fn: () => Promise<T>): Promise<T> {
    return inSpan(`connector ${attempt.connector_key}.${op}`, { [ATTR.connector]: attempt.connector_key, [ATTR.attemptId]: attempt.id }, fn, { kind: SpanKind.CLIENT });
  }

  /** Runs the provider call and the evidence step under the intent's lock (nothing changes in between). */
  private underLock(intentId: string, scope: Scope | undefined, fn: (h: HydratedIntent) => Promise<unknown>, opts: { buyer?: boolean } = {}) {
    return this.d.actor.withLock(this.def, intentId, 2000, async () => {
      const h = await hydrate(this.d.sql, intentId, scope?.tenantId, scope?.livemode, opts);
      if (!h) return { skipped: 'unknown intent' };
      return fn(h);
    });
  }

  private async evidence(h: HydratedIntent, attempt: AttemptRow, outcome: ProviderOutcome, source: 'connector' | 'inbound', inboxId?: string) {
    outcome = await this.withReferenciaNumerica(h, attempt, outcome);
    return this.d.actor.runLocked(this.def, refScope(h.row), h.row.id, { kind: 'evidence', attemptId: attempt.id, outcome, source, inboxId }, { waitMs: 0, known: h });
  }

  /**
   * A SPEI instruction (next_action `bank_transfer`) carries Orquesta's referencia numérica, the
   * payer's 7-digit reference (SPEI's referenciaNumerica, 1..9,999,999: ../shared/formats/stp.md §2
   * field 28), so a bank line that shows only that number matches the charge (docs/bank-statements.md).
   * The attempt keeps the one it was given; a new one is drawn from the sequence spei_referencia_seq
   * (9,000,000 values) spread by a fixed bijection (× 7,654,321 mod 9,000,000, coprime) into
   * 1,000,000..9,999,999: no two SPEI instructions of the deployment (so of a tenant) share a number
   * until 9,000,000 more have been issued — far more than are open at once (an instruction expires
   * after PUSH_EXPIRY_MS.spei). Not a secret: it only names the payment.
   */
  private async withReferenciaNumerica(h: HydratedIntent, attempt: AttemptRow, outcome: ProviderOutcome): Promise<ProviderOutcome> {
    if (outcome.kind !== 'action_required' || outcome.nextAction.type !== 'bank_transfer' || outcome.nextAction.referencia_numerica !== undefined) return outcome;
    let ref = h.attempts.find((x) => x.id === attempt.id)?.referencia_numerica ?? attempt.referencia_numerica ?? null;
    if (!ref) {
      const [r] = await this.d.sql`select nextval('spei_referencia_seq')::int as n`;
      ref = referenciaNumerica(Number(r!.n));
    }
    return { ...outcome, nextAction: { ...outcome.nextAction, referencia_numerica: ref } };
  }

  /**
   * An attempt's charge as an outbound call (kernel/outbound.ts). The attempt's row, committed
   * `pending` by the confirm's step, is the mark; a run that may follow an earlier one (a retried
   * or stalled job, one the reconciler re-enqueued) asks the provider first and charges only if it
   * never saw the key; a first run charges directly, with the same key.
   */
  private chargeCall(attempt: AttemptRow, started: boolean): OutboundCall<HydratedIntent, ProviderOutcome, AttemptRun> {
    const connector = this.d.router.connector(attempt.connector_key);
    return {
      connector: attempt.connector_key,
      op: 'charge',
      lookupOp: 'retrieve',
      attrs: { [ATTR.attemptId]: attempt.id },
      due: (h) => h.attempts.find((a) => a.id === attempt.id)?.status === 'pending',
      started: () => started,
      send: (h) =>
        connector.charge({
          idempotencyKey: attempt.provider_key,
          attemptId: attempt.id,
          tenantId: attempt.tenant_id,
          livemode: attempt.livemode,
          method: attempt.method as PaymentMethod,
          amountMinor: attempt.amount_minor,
          currency: attempt.currency,
          paymentToken: attempt.payment_token ?? undefined,
          payerIp: attempt.payer_ip ?? undefined,
          buyer: h.buyer,
          now: new Date(Date.now() + h.clockOffsetMs),
        }),
      lookup: () => connector.retrieve(attempt.provider_key, ctxOf(attempt)),
      record: async (h, outcome) => {
        await this.evidence(h, attempt, outcome, 'connector');
        return { outcome: outcome.kind };
      },
      idle: () => ({ skipped: `attempt is ${attempt.status}` }),
    };
  }

  /**
   * A requested capture as an outbound call: the capture command's step (capture_requested_at) is
   * the mark; a run that may follow an earlier one asks first, and captures only while the provider
   * still shows the charge authorized.
   */
  private captureCall(attempt: AttemptRow, started: boolean): OutboundCall<HydratedIntent, ProviderOutcome, AttemptRun> {
    const connector = this.d.router.connector(attempt.connector_key);
    return {
      connector: attempt.connector_key,
      op: 'capture',
      lookupOp: 'retrieve',
      attrs: { [ATTR.attemptId]: attempt.id },
      due: (h) => h.attempts.find((a) => a.id === attempt.id)?.status === 'authorized',
      started: () => started,
      send: () => connector.capture(attempt.provider_key, ctxOf(attempt)),
      lookup: async () => {
        const o = await connector.retrieve(attempt.provider_key, ctxOf(attempt));
        return o && o.kind !== 'authorized' ? o : null;
      },
      record: async (h, outcome) => {
        await this.evidence(h, attempt, outcome, 'connector');
        return { outcome: outcome.kind };
      },
      idle: () => ({ skipped: `attempt is ${attempt.status}` }),
    };
  }

  private executeAttempt(d: AttemptJob, info: JobInfo) {
    return this.underLock(d.intentId, scopeOf(d), async (h) => {
      const attempt = h.attempts.find((a) => a.id === d.attemptId);
      if (!attempt) return { skipped: 'unknown attempt' };
      const mayHaveCalled = info.attemptsMade > 0 || info.stalled || d.settle === true;
      return (await settleLocked(this.chargeCall(attempt, mayHaveCalled), h)).result;
    }, { buyer: true });
  }

  private captureAttempt(d: AttemptJob, info: JobInfo) {
    return this.underLock(d.intentId, scopeOf(d), async (h) => {
      const attempt = h.attempts.find((a) => a.id === d.attemptId);
      if (!attempt) return { skipped: 'unknown attempt' };
      const mayHaveCalled = info.attemptsMade > 0 || info.stalled || d.settle === true;
      return (await settleLocked(this.captureCall(attempt, mayHaveCalled), h)).result;
    });
  }

  private async voidAttempt(d: AttemptJob) {
    const h = await hydrate(this.d.sql, d.intentId, d.tenantId, d.livemode);
    const attempt = h?.attempts.find((a) => a.id === d.attemptId);
    if (attempt) await this.connectorCall(attempt, 'void', () => this.d.router.connector(attempt.connector_key).void(attempt.provider_key, ctxOf(attempt)));
    return { voided: !!attempt };
  }

  /**
   * Receives a provider notice about an attempt (an operator's simulation, a 3-D Secure result, a
   * provider webhook): written to the inbox before it is acknowledged, then processed by a job; the
   * reconciler replays it if the job is lost.
   */
  async receiveNotice(n: { tenantId: string; livemode: boolean; attemptId: string; intentId: string; source: string; dedupeKey?: string; payload?: unknown }) {
    const [row] = await this.d.sql`
      -- the notice is evidence: stored before it is acknowledged (a repeat of a provider's id is one row)
      insert into inbox (id, tenant_id, livemode, kind, source, subject_id, dedupe_key, payload)
      values (${randomUUID()}, ${n.tenantId}, ${n.livemode}, 'attempt.notice', ${n.source}, ${n.attemptId}, ${n.dedupeKey ?? null},
              ${n.payload === undefined ? null : this.d.sql.json(n.payload as never)})
      on conflict (dedupe_key, tenant_id) do update set dedupe_key = excluded.dedupe_key
      returning id`;
    const inboxId = row.id as string;
    await this.d.enqueue(jobRequest(this.noticeJob, { inboxId, intentId: n.intentId, tenantId: n.tenantId, livemode: n.livemode })).catch((e) => this.d.log.warn('enqueue of a notice failed; the reconciler will replay it', { inboxId, err: e }));
    return inboxId;
  }

  /**
   * The provider's word on an attempt a notice concerns, as evidence (the outbound protocol's
   * lookup, never a send); the notice is marked processed in the same transaction.
   */
  private async processNotice(inboxId: string, scope?: Scope) {
    const [n] = await this.d.sql`
      select i.id, i.processed_at, i.tenant_id, i.livemode, a.id as attempt_id, a.payment_intent_id from inbox i join attempts a on a.id = i.subject_id and a.tenant_id = i.tenant_id
       where i.id = ${inboxId} ${scope ? this.d.sql`and i.tenant_id = ${scope.tenantId}` : this.d.sql``}`;
    if (!n) return { skipped: 'unknown notice' };
    if (n.processed_at) return { skipped: 'processed' };
    return this.underLock(n.payment_intent_id as string, refScope(n as unknown as { tenant_id: string; livemode: boolean }), async (h) => {
      const attempt = h.attempts.find((a) => a.id === n.attempt_id);
      const done = async () => {
        // The provider does not know the attempt: nothing to apply; the notice is done with.
        await this.d.sql`update inbox set processed_at = now() where id = ${inboxId} and tenant_id = ${n.tenant_id as string} and processed_at is null`;
        return { skipped: 'provider does not know the attempt' };
      };
      if (!attempt) return done();
      const connector = this.d.router.connector(attempt.connector_key);
      const s = await settleLocked<HydratedIntent, ProviderOutcome, AttemptRun>({
        connector: attempt.connector_key,
        op: 'notice',
        lookupOp: 'retrieve',
        attrs: { [ATTR.attemptId]: attempt.id },
        due: () => true,
        started: () => true,
        send: () => Promise.reject(new Error('a notice never sends')),
        lookup: () => connector.retrieve(attempt.provider_key, ctxOf(attempt)),
        resend: () => false,
        record: async (hh, outcome) => {
          await this.evidence(hh, attempt, outcome, 'inbound', inboxId);
          return { outcome: outcome.kind };
        },
        idle: done,
      }, h);
      return s.result;
    });
  }

  /**
   * The pending action's timer: before expiring, ask the provider (a push payment must never expire
   * while the provider holds a capture for it: the same "settle before acting" rule as card attempts).
   */
  private expire(t: DueTimer) {
    return this.underLock(t.entityId, { tenantId: t.tenantId, livemode: t.livemode }, async (h) => {
      const open = h.open;
      if (open && open.status === 'requires_action') {
        const outcome = await this.connectorCall(open, 'retrieve', () => this.d.router.connector(open.connector_key).retrieve(open.provider_key, ctxOf(open)));
        if (outcome && outcome.kind !== 'action_required') {
          await this.evidence(h, open, outcome, 'inbound');
          return { settled: outcome.kind };
        }
      }
      await this.d.actor.runLocked(this.def, refScope(h.row), h.row.id, { kind: 'expire' }, { waitMs: 0, known: h });
      return { fired: true };
    });
  }

  /** A refund of the attempt succeeded: the attempt's status is this actor's to change (a job, after the refund's commit). */
  refundSettled(intentId: string, attemptId: string, scope?: Scope): JobRequest {
    return jobRequest(this.refundSettledJob, { intentId, attemptId, ...scope });
  }

  /** Jobs, the expiry timer, and what the reconciler rebuilds from Postgres. */
  capability(): Capability {
    const sql = this.d.sql;
    return {
      name: 'payment_intents',
      queues: { [PI_QUEUE]: 'default' },
      jobs: [this.executeJob, this.captureJob, this.voidJob, this.noticeJob, this.refundSettledJob],
      timers: [
        { kind: EXPIRE_TIMER, queue: PI_QUEUE, fire: (t) => this.expire(t), transient: isTransient },
        { kind: DUNNING_TIMER, queue: PI_QUEUE, fire: (t) => this.d.actor.run(this.def, { tenantId: t.tenantId, livemode: t.livemode }, t.entityId, { kind: 'dunning', dueAt: t.dueAt }, { waitMs: 2000, worker: true }), transient: isTransient },
      ],
      reconcilers: [
        {
          name: 'attempts waiting on the provider',
          run: async () => {
            const rows = await sql`
              -- attempts waiting on the provider, untouched for a while
              select id, payment_intent_id, status, tenant_id, livemode from attempts
               where (status = 'pending' or (status = 'authorized' and capture_requested_at is not null))
                 and ${untouchedSql(sql)}
               order by updated_at limit 1000`;
            // settle: this attempt may have reached the provider before its job was lost (ask first).
            return rows.map((a) =>
              jobRequest(a.status === 'pending' ? this.executeJob : this.captureJob, {
                intentId: a.payment_intent_id as string, attemptId: a.id as string, settle: true, tenantId: a.tenant_id as string, livemode: a.livemode as boolean,
              }),
            );
          },
        },
        {
          name: 'provider notices not yet processed',
          run: async () => {
            const rows = await sql`
              -- acknowledged notices whose processing was lost (a flushed Redis, a dead worker)
              select i.id, a.payment_intent_id, i.tenant_id, i.livemode from inbox i join attempts a on a.id = i.subject_id and a.tenant_id = i.tenant_id
               where i.kind = 'attempt.notice' and i.processed_at is null and ${untouchedSql(sql, 'i.received_at')}
               order by i.received_at limit 1000`;
            return rows.map((r) => jobRequest(this.noticeJob, { inboxId: r.id as string, intentId: r.payment_intent_id as string, tenantId: r.tenant_id as string, livemode: r.livemode as boolean }));
          },
        },
        {
          name: 'attempts whose refunds are not reflected',
          run: async () => {
            const rows = await sql`
              -- an attempt whose succeeded refunds came after its last change: its status may lag
              select a.id, a.payment_intent_id, a.tenant_id, a.livemode from attempts a
               where a.status in ('captured', 'settled', 'partially_refunded')
                 and exists (select 1 from refunds r where r.attempt_id = a.id and r.tenant_id = a.tenant_id and r.status = 'succeeded' and r.updated_at > a.updated_at
                                and ${untouchedSql(sql, 'r.updated_at')})
               limit 1000`;
            return rows.map((r) => this.refundSettled(r.payment_intent_id as string, r.id as string, refScope(r as unknown as { tenant_id: string; livemode: boolean })));
          },
        },
      ],
    };
  }
}

/** A risk review of the tenant (and of the mode, when given: an API key sees only its mode's). */
export async function reviewView(db: Sql, tenantId: string, id: string, livemode?: boolean) {
  const rows = await db`
    select * from risk_reviews where id = ${id} and tenant_id = ${tenantId} ${livemode === undefined ? db`` : db`and livemode = ${livemode}`}`;
  if (!rows.length) throw new ApiError('risk_review.not_found');
  const r = rows[0];
  return {
    id: r.id,
    object: 'risk_review',
    status: r.status,
    payment_intent_id: r.payment_intent_id,
    rule_id: r.rule_id,
    livemode: r.livemode,
    created_at: (r.created_at as Date).toISOString(),
    resolved_at: r.resolved_at ? (r.resolved_at as Date).toISOString() : null,
  };
}
