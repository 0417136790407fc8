// The payment intent actor: lock → hydrate → machine.transition(event) → one Postgres
// transaction (row with version + 1, history, outbox, ledger, timers, idempotency record) →
// effects after commit (connector jobs, delayed timer jobs). The same code runs in the API process
// for the caller's commands (confirm, capture, cancel) and in workers for provider evidence,
// timers and operator decisions (docs/architecture.md says why, with the measurement).
import { randomBytes, randomUUID } from 'node:crypto';
import { transition } from 'xstate';
import type { Redis } from 'ioredis';
import { ApiError } from '../api/errors.js';
import { idempotencyCte, saveIdempotent, type IdempotencyHandle } from '../api/idempotency.js';
import type { ErrorCode } from '../api/error-catalog.js';
import type { Principal } from '../api/route.js';
import { providerKeyFor, type ProviderOutcome } from '../connectors/acquirer.js';
import { feeFor, type Router } from '../connectors/routing.js';
import { attemptMachine } from '../machines/attempt.js';
import { paymentIntentMachine, type PaymentIntentEvent, type PaymentIntentEffect } from '../machines/payment-intent.js';
import type { Config } from '../ops/config.js';
import { atomically, type Db, type Sql } from '../ops/db.js';
import type { Logger } from '../ops/log.js';
import type { CreatePaymentIntentBody, ConfirmBody } from '../schemas/payment-intents.js';
import { tenantNow } from './clock.js';
import { captureLines, postEntry } from './ledger.js';
import { openDispute } from './disputes.js';
import { EntityLocks } from './lock.js';
import { hydrate, intentEventData, intentView, type AttemptRow, type Hydrated, type IntentRow } from './payment-intent-store.js';
import { Queues } from './queues.js';
import { ATTR, inSpan, SpanKind } from '../ops/tracing.js';
import { appendEvent } from './outbox.js';
import { evaluate, loadRules } from './risk.js';

export const PI_QUEUE = 'pi';
export const EXPIRE_TIMER = 'payment_intent.expire';

export interface PaymentsDeps {
  config: Config;
  sql: Sql;
  redis: Redis;
  log: Logger;
  locks: EntityLocks;
  queues: Queues;
  router: Router;
  /** Resolves a saved payment method for a one-click confirm (connector and reusable token), or throws the spec's error. */
  savedMethod?: (tenantId: string, livemode: boolean, id: string) => Promise<{ connector: string; token: string }>;
}

/** A writer whose lock expired lost the race: its commit is refused by the version fence. */
class Fenced extends Error {}
export class LockBusy extends Error {
  override name = 'LockBusy';
}

type Command =
  | { kind: 'confirm'; body: ConfirmBody; idem?: IdempotencyHandle }
  | { kind: 'capture'; idem?: IdempotencyHandle }
  | { kind: 'cancel'; idem?: IdempotencyHandle }
  | { kind: 'evidence'; attemptId: string; outcome: ProviderOutcome; source: 'connector' | 'inbound' }
  | { kind: 'expire'; timerId: string }
  | { kind: 'review'; reviewId: string; decision: 'approve' | 'reject' };

interface Outcome {
  intent: IntentRow;
  attempts: AttemptRow[];
  review?: Record<string, unknown>;
  changed: boolean;
}

const RECEIPT_ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';
function receiptCode(): string {
  const b = randomBytes(5);
  let s = 'W-';
  for (const x of b) s += RECEIPT_ALPHABET[x % RECEIPT_ALPHABET.length];
  return s;
}
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
function clientSecret(): string {
  let s = 'pi_secret_';
  for (const x of randomBytes(24)) s += BASE62[x % 62];
  return s;
}

export class PaymentIntents {
  constructor(private d: PaymentsDeps) {}

  // ---- reads and creation ------------------------------------------------------------------

  async create(p: Principal, body: CreatePaymentIntentBody, idem?: IdempotencyHandle) {
    const initial = paymentIntentMachine.getInitialSnapshot({} as never).value as string;
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
        next_action: null,
        last_error: null,
        version: 0,
        created_at: now,
        updated_at: now,
        clock_offset_ms: 0,
      };
      const view = intentView(row);
      try {
        // One statement, so one implicit transaction and one round trip: the row, its history
        // record (spec: creation is recorded with payment_method_types and is not dispatched as a
        // webhook) and the idempotency record. A failure of any part writes none of them.
        const sql = this.d.sql;
        await sql`
          with intent as (
            insert into payment_intents (id, tenant_id, livemode, amount_minor, tip_minor, currency, status, client_secret, metadata, receipt_code, version, created_at, updated_at)
            values (${row.id}, ${row.tenant_id}, ${row.livemode}, ${row.amount_minor}, ${row.tip_minor}, ${row.currency}, ${row.status},
                    ${row.client_secret}, ${row.metadata ? sql.json(row.metadata) : null}, ${row.receipt_code}, ${row.version}, ${now}, ${now})),
          history as (
            insert into payment_intent_history (payment_intent_id, tenant_id, livemode, event, from_status, to_status, data)
            values (${row.id}, ${row.tenant_id}, ${row.livemode}, 'create', null, ${initial}, ${sql.json({ payment_method_types: body.payment_method_types ?? null } as never)}))
          ${idempotencyCte(sql, idem, 201, view)}
          select 1`;
        return view;
      } catch (e) {
        const receiptTaken = (e as { code?: string; constraint_name?: string }).code === '23505' && /receipt/.test((e as { constraint_name?: string }).constraint_name ?? '');
        if (!receiptTaken || round >= 4) throw receiptTaken ? new Error('could not draw a unique receipt code') : e;
      }
    }
  }

  async get(p: Principal, id: string, expand: boolean) {
    const h = await hydrate(this.d.sql, id, p.tenantId, p.livemode);
    if (!h) throw new ApiError('payment_intent.not_found');
    return intentView(h.intent, expand ? h.attempts : undefined);
  }

  // ---- caller commands (run in the API process) ----------------------------------------------

  async confirm(p: Principal, id: string, body: ConfirmBody, idem?: IdempotencyHandle) {
    const o = await this.command(p.tenantId, p.livemode, id, { kind: 'confirm', body, idem }, 3000);
    return o.review ?? intentView(o.intent, o.attempts);
  }

  async capture(p: Principal, id: string, idem?: IdempotencyHandle) {
    const o = await this.command(p.tenantId, p.livemode, id, { kind: 'capture', idem }, 3000);
    return intentView(o.intent, o.attempts);
  }

  async cancel(p: Principal, id: string, idem?: IdempotencyHandle) {
    const o = await this.command(p.tenantId, p.livemode, id, { kind: 'cancel', idem }, 3000);
    return intentView(o.intent);
  }

  /** Operator decision on a risk review (decisions.md §2). */
  async decideReview(tenantId: string, reviewId: string, decision: 'approve' | 'reject') {
    const rows = await this.d.sql`select payment_intent_id, livemode, status from risk_reviews where id = ${reviewId} and tenant_id = ${tenantId}`;
    if (!rows.length) throw new ApiError('risk_review.not_found');
    if (rows[0].status !== 'pending') throw new ApiError('risk_review.resolution_conflict', `This review was already ${rows[0].status}.`);
    await this.command(tenantId, rows[0].livemode as boolean, rows[0].payment_intent_id as string, { kind: 'review', reviewId, decision }, 3000);
    return reviewView(this.d.sql, tenantId, reviewId);
  }

  // ---- the actor step -------------------------------------------------------------------------

  /** Lock, then run the step (retrying from fresh state when fenced). */
  async command(tenantId: string, livemode: boolean | undefined, id: string, cmd: Command, waitMs: number): Promise<Outcome> {
    const token = await this.d.locks.acquire(`pi:${id}`, this.d.config.entityLockMs, waitMs);
    if (!token) {
      if (cmd.kind === 'evidence' || cmd.kind === 'expire') throw new LockBusy(`payment intent ${id} is locked`);
      throw new ApiError('payment_intent.concurrent_modification', 'Another request is changing this payment intent right now; read it again and retry.');
    }
    try {
      return await this.stepLocked(tenantId, livemode, id, cmd);
    } finally {
      await this.d.locks.release(`pi:${id}`, token).catch(() => {});
    }
  }

  /** Runs fn holding the intent's lock (workers: provider call + step under one lock). */
  async withLock<T>(id: string, waitMs: number, fn: () => Promise<T>): Promise<T> {
    const token = await this.d.locks.acquire(`pi:${id}`, this.d.config.entityLockMs, waitMs);
    if (!token) throw new LockBusy(`payment intent ${id} is locked`);
    try {
      return await fn();
    } finally {
      await this.d.locks.release(`pi:${id}`, token).catch(() => {});
    }
  }

  /** The step, for a caller that already holds the entity lock. */
  async stepLocked(tenantId: string, livemode: boolean | undefined, id: string, cmd: Command, known?: Hydrated): Promise<Outcome> {
    for (let round = 0; round < 3; round++) {
      const h = round === 0 && known ? known : await hydrate(this.d.sql, id, tenantId, livemode, { rules: cmd.kind === 'confirm' });
      if (!h) throw new ApiError('payment_intent.not_found');
      try {
        return await inSpan(
          'payment_intent.transition',
          { [ATTR.intentId]: id, [ATTR.tenantId]: h.intent.tenant_id, [ATTR.livemode]: h.intent.livemode, [ATTR.event]: cmd.kind, [ATTR.fromStatus]: h.intent.status },
          async (span) => {
            const out = await this.step(h, cmd);
            span.setAttribute(ATTR.toStatus, out.intent.status);
            return out;
          },
        );
      } catch (e) {
        if (!(e instanceof Fenced)) throw e;
      }
    }
    throw new ApiError('payment_intent.concurrent_modification', 'The payment intent kept changing while this request ran; read it again and retry.');
  }

  private async step(h: Hydrated, cmd: Command): Promise<Outcome> {
    const { intent } = h;
    const now = tenantNow(intent.clock_offset_ms, intent.livemode);
    let event: PaymentIntentEvent;
    let tip = intent.tip_minor;
    let confirm: { method: string; token?: string } | undefined;
    let evidence: ProviderOutcome | undefined;
    let ruleId: string | undefined;

    switch (cmd.kind) {
      case 'confirm': {
        tip = cmd.body.tip_minor ?? intent.tip_minor; // spec: sent replaces, omitted keeps
        let method = cmd.body.payment_method!;
        confirm = { method, token: cmd.body.payment_token };
        if (cmd.body.payment_method_id) {
          if (!this.d.savedMethod) throw new ApiError('payment_method.not_found');
          const saved = await this.d.savedMethod(intent.tenant_id, intent.livemode, cmd.body.payment_method_id);
          method = 'card';
          confirm = { method, token: saved.token };
        }
        const routed = !!this.d.router.route(method, intent.livemode);
        const risk = routed
          ? evaluate(h.rules ?? (await loadRules(this.d.sql, intent.tenant_id)), {
              amount_minor: intent.amount_minor,
              tip_minor: tip,
              total_minor: intent.amount_minor + tip,
              currency: intent.currency,
              payment_method: method,
              metadata: intent.metadata,
            })
          : { verdict: 'allow' as const };
        ruleId = risk.ruleId;
        event = { type: 'confirm', routed, risk: risk.verdict };
        break;
      }
      case 'capture':
        event = { type: 'capture' };
        break;
      case 'cancel':
        event = { type: 'cancel' };
        break;
      case 'evidence': {
        // Evidence about an attempt that is no longer open changes nothing (duplicate delivery).
        if (!h.open || h.open.id !== cmd.attemptId) return { intent, attempts: h.attempts, changed: false };
        evidence = cmd.outcome;
        event = evidenceEvent(cmd.outcome, cmd.source, intent.status);
        if (!event) return { intent, attempts: h.attempts, changed: false };
        break;
      }
      case 'expire':
        event = { type: 'time.expire' };
        break;
      case 'review': {
        if (!h.review || h.review.id !== cmd.reviewId) throw new ApiError('risk_review.resolution_conflict', 'This review is no longer pending.');
        event = { type: cmd.decision === 'approve' ? 'review.approve' : 'review.reject' };
        const req = h.review.request ?? {};
        confirm = { method: String(req.payment_method), token: req.payment_token as string | undefined };
        tip = typeof req.tip_minor === 'number' ? req.tip_minor : intent.tip_minor;
        break;
      }
    }

    const step = machineStep(intent.status, { openAttempt: (h.open?.status as 'pending' | 'authorized' | 'requires_action' | undefined) ?? null, attempts: h.attempts.length, reviewPending: !!h.review }, event);
    const effects = step.effects;
    const rejected = effects.find((a) => a.type === 'reject') as Extract<PaymentIntentEffect, { type: 'reject' }> | undefined;
    if (rejected) throw new ApiError(rejected.params.code as ErrorCode, rejected.params.message);

    const toStatus = step.value;
    const capturing = effects.some((a) => a.type === 'postCapture');
    const idem = 'idem' in cmd ? cmd.idem : undefined;
    if (toStatus === intent.status && effects.length === 0 && tip === intent.tip_minor) {
      // A no-op (cancel of a canceled intent, a timer after the intent moved on): nothing to write
      // but the timer's firing and the idempotency record.
      if (cmd.kind === 'expire' || idem) {
        await atomically(this.d.sql, (tx) => {
          if (cmd.kind === 'expire') tx`update timers set fired_at = now() where id = ${cmd.timerId} and fired_at is null`;
          void saveIdempotent(tx, idem, 200, this.responseFor(cmd, intent, h.attempts));
        });
      }
      return { intent, attempts: h.attempts, changed: false };
    }

    const after: Array<() => Promise<void>> = [];
    const at = new Date(); // created_at / updated_at of rows this step writes (no read-back needed)
    const updated: IntentRow = { ...intent, status: toStatus, tip_minor: tip, updated_at: at, version: intent.version + 1 };
    let attempts = [...h.attempts];
    let open = h.open;
    let review: Record<string, unknown> | undefined;
    const emits: string[] = [];
    let scheduleExpiry: string | undefined;
    let timerRow: Promise<Array<Record<string, unknown>>> | undefined;

    // One transaction, its statements pipelined with BEGIN and COMMIT (ops/db.ts atomically): the
    // rows this step writes are known here, so nothing is read back before COMMIT except by the
    // rare dispute path. A manual span covers it (postgres.js has no instrumentation).
    const result = await inSpan('postgres transaction', { [ATTR.dbSystem]: 'postgresql', [ATTR.dbOperation]: 'transition' }, () => atomically(this.d.sql, async (tx) => {
      const pending: Array<Promise<unknown>> = [];
      for (const a of effects) {
        switch (a.type) {
          case 'openAttempt': {
            const route = this.d.router.route(confirm!.method, intent.livemode);
            if (!route) throw new ApiError('payment_intent.no_route');
            const attemptId = randomUUID();
            open = {
              id: attemptId,
              tenant_id: intent.tenant_id,
              livemode: intent.livemode,
              payment_intent_id: intent.id,
              status: 'pending',
              connector_key: route.connector.key,
              method: confirm!.method,
              amount_minor: intent.amount_minor + tip,
              currency: intent.currency,
              payment_token: confirm!.token ?? null,
              provider_ref: null,
              provider_key: providerKeyFor(attemptId),
              failure_code: null,
              failure_message: null,
              decline: null,
              capture_requested_at: null,
              fee_minor: null,
              created_at: at,
              updated_at: at,
            };
            tx`
              insert into attempts (id, tenant_id, livemode, payment_intent_id, status, connector_key, method, amount_minor, currency, payment_token, provider_key, created_at, updated_at)
              values (${attemptId}, ${open.tenant_id}, ${open.livemode}, ${open.payment_intent_id}, 'pending', ${open.connector_key}, ${open.method},
                      ${open.amount_minor}, ${open.currency}, ${open.payment_token}, ${open.provider_key}, ${at}, ${at})`;
            attempts.push(open);
            updated.last_error = null;
            updated.next_action = null;
            after.push(() => this.d.queues.add(PI_QUEUE, intent.id, 'attempt.execute', { intentId: intent.id, attemptId }, { jobId: `exec-${attemptId}` }));
            break;
          }
          case 'openReview': {
            const reviewId = randomUUID();
            tx`
              insert into risk_reviews (id, tenant_id, livemode, payment_intent_id, rule_id, status, request, created_at)
              values (${reviewId}, ${intent.tenant_id}, ${intent.livemode}, ${intent.id}, ${ruleId!}, 'pending',
                      ${tx.json({ payment_method: confirm!.method, payment_token: confirm!.token ?? null, tip_minor: cmd.kind === 'confirm' ? cmd.body.tip_minor ?? null : null } as never)}, ${at})`;
            review = { id: reviewId, object: 'risk_review', status: 'pending', payment_intent_id: intent.id, rule_id: ruleId, livemode: intent.livemode, created_at: at.toISOString() };
            updated.tip_minor = intent.tip_minor; // the tip applies when the review is approved
            break;
          }
          case 'resolveReview':
            tx`update risk_reviews set status = ${a.params.decision}, resolved_at = now(), request = null where id = ${h.review!.id}`;
            break;
          case 'attempt': {
            if (!open) break;
            const { value: attemptStatus, effects: aActs } = attemptStep(open.status, a.params.event);
            const patch: Partial<AttemptRow> = { status: attemptStatus, updated_at: at };
            if (evidence && 'providerRef' in evidence && evidence.providerRef) patch.provider_ref = evidence.providerRef;
            if (evidence && (evidence.kind === 'hard_decline' || evidence.kind === 'soft_decline')) {
              patch.failure_code = evidence.code;
              patch.failure_message = evidence.message;
              patch.decline = evidence.kind === 'hard_decline' ? 'hard' : 'soft';
            }
            if (a.params.event === 'capture_requested') patch.capture_requested_at = at;
            if (capturing) {
              // The connector's fee (routing table) is written with the capture, in the same update.
              const route = this.d.router.route(open.method, intent.livemode);
              patch.fee_minor = route ? feeFor(route.fee, open.amount_minor) : 0;
            }
            const merged = { ...open, ...patch };
            if (merged.status !== 'pending' && merged.status !== 'authorized') merged.payment_token = null;
            tx`
              update attempts set status = ${merged.status}, provider_ref = ${merged.provider_ref}, failure_code = ${merged.failure_code},
                     failure_message = ${merged.failure_message}, decline = ${merged.decline}, capture_requested_at = ${merged.capture_requested_at}, fee_minor = ${merged.fee_minor},
                     payment_token = case when ${merged.status} in ('pending', 'authorized') then payment_token else null end,
                     updated_at = ${at}
               where id = ${open.id}`;
            const openId = open.id;
            attempts = attempts.map((x) => (x.id === openId ? merged : x));
            open = merged;
            for (const act of aActs) {
              if (act.type === 'requestCapture') after.push(() => this.d.queues.add(PI_QUEUE, intent.id, 'attempt.capture', { intentId: intent.id, attemptId: openId }, { jobId: `capture-${openId}` }));
              if (act.type === 'requestVoid') after.push(() => this.d.queues.add(PI_QUEUE, intent.id, 'attempt.void', { intentId: intent.id, attemptId: openId }, { jobId: `void-${openId}` }));
            }
            break;
          }
          case 'emit':
            emits.push(a.params.event);
            break;
          case 'postCapture':
            break; // after the loop: the ledger entry needs the attempt's fee, written by 'attempt'
          case 'scheduleExpiry':
            if (evidence?.kind === 'action_required' && evidence.expiresAt) scheduleExpiry = evidence.expiresAt;
            break;
          case 'cancelExpiry':
            tx`update timers set fired_at = now() where kind = ${EXPIRE_TIMER} and entity_id = ${intent.id} and fired_at is null`;
            break;
          case 'setNextAction':
            if (evidence?.kind === 'action_required') updated.next_action = evidence.nextAction;
            break;
          case 'clearNextAction':
            updated.next_action = null;
            break;
          case 'recordError':
            if (evidence && (evidence.kind === 'hard_decline' || evidence.kind === 'soft_decline')) {
              updated.last_error = { code: evidence.code, message: evidence.message, decline: evidence.kind };
            }
            break;
          case 'reject':
            break;
        }
      }

      // The fenced write: only the holder of the version we read may commit. It fails inside
      // Postgres when no row matched (another writer moved the intent), which aborts the transaction.
      tx`
        with u as (
          update payment_intents
             set status = ${updated.status}, tip_minor = ${updated.tip_minor}, next_action = ${updated.next_action ? tx.json(updated.next_action as never) : null},
                 last_error = ${updated.last_error ? tx.json(updated.last_error as never) : null}, version = ${updated.version}, updated_at = ${at}
           where id = ${intent.id} and version = ${intent.version}
           returning 1)
        select orq_expect_rows(count(*), ${`payment intent ${intent.id}`}) as n from u`;

      if (cmd.kind === 'expire') tx`update timers set fired_at = now() where id = ${cmd.timerId} and fired_at is null`;
      if (scheduleExpiry) {
        timerRow = tx`
          insert into timers (id, tenant_id, livemode, kind, entity_id, due_at) values (${randomUUID()}, ${intent.tenant_id}, ${intent.livemode}, ${EXPIRE_TIMER}, ${intent.id}, ${scheduleExpiry})
          on conflict (kind, entity_id) do update set due_at = excluded.due_at, fired_at = null
          returning id`;
      }
      if (capturing && open) {
        const fee = open.fee_minor ?? 0;
        pending.push(postEntry(tx, {
          tenantId: intent.tenant_id,
          livemode: intent.livemode,
          kind: 'charge.captured',
          refType: 'attempt',
          refId: open.id,
          memo: `capture of payment intent ${intent.id}`,
          lines: captureLines(open.connector_key, intent.currency, intent.amount_minor, updated.tip_minor, fee),
        }));
        // A dispute the provider reports with the charge is opened in the same transaction.
        if (evidence?.kind === 'captured' && evidence.dispute) pending.push(openDispute(tx, open.id, evidence.dispute.reason));
      }
      tx`
        insert into payment_intent_history (payment_intent_id, tenant_id, livemode, event, from_status, to_status, data)
        values (${intent.id}, ${intent.tenant_id}, ${intent.livemode}, ${event.type}, ${intent.status}, ${updated.status},
                ${tx.json({ attempt_id: open?.id ?? null, outcome: evidence ?? null, rule_id: ruleId ?? null, source: cmd.kind === 'evidence' ? cmd.source : null } as never)})`;
      // A single-use payment link is paid once its intent succeeded (same transaction).
      if (emits.includes('payment_intent.succeeded') && intent.metadata?.payment_link_id) {
        tx`
          update payment_links set paid_at = coalesce(paid_at, now()), active = reusable
           where id::text = ${intent.metadata.payment_link_id} and tenant_id = ${intent.tenant_id} and not reusable`;
      }
      for (const type of emits) appendEvent(tx, { tenantId: intent.tenant_id, livemode: intent.livemode, type, entityId: intent.id, data: intentEventData(updated) });
      void saveIdempotent(tx, idem, 200, this.responseFor(cmd, updated, attempts, review));
      await Promise.all(pending);
      const out: Outcome = { intent: updated, attempts, review, changed: true };
      return out;
    }).catch((e: unknown) => {
      // The fence, or the one-open-attempt / one-pending-review index, refused a writer that lost
      // the race: it retries from fresh state.
      const err = e as { code?: string; constraint_name?: string };
      const lostRace = err.code === 'OQ409' || (err.code === '23505' && (err.constraint_name === 'attempts_one_open' || err.constraint_name === 'risk_reviews_one_pending'));
      throw lostRace ? new Fenced() : e;
    }), { kind: SpanKind.CLIENT });

    if (scheduleExpiry && timerRow) {
      const [t] = await timerRow;
      const due = scheduleExpiry;
      const delay = Math.max(0, new Date(due).getTime() - now.getTime());
      after.push(() => this.d.queues.add(PI_QUEUE, intent.id, 'timer.fire', { timerId: t.id }, { jobId: `timer-${t.id}-${Date.parse(due)}`, delay }));
    }
    for (const fn of after) {
      // Redis may be unreachable: the commit stands and the reconciler enqueues from Postgres.
      await fn().catch((e) => this.d.log.warn('enqueue after commit failed; the reconciler will retry', { intentId: intent.id, err: e }));
    }
    return result;
  }

  private responseFor(cmd: Command, intent: IntentRow, attempts: AttemptRow[], review?: Record<string, unknown>) {
    if (review) return review;
    if (cmd.kind === 'cancel') return intentView(intent);
    return intentView(intent, attempts);
  }
}

// The machines are pure: one (state, context, event) always gives the same next state and
// effects, so a step is computed once and remembered (xstate's transition() was 5-9% of the
// worker's CPU in bench/confirm's profile). Only the value and the effects' type and params are kept.
type Step<E> = { value: string; effects: E[] };
const PI_STEPS = new Map<string, Step<PaymentIntentEffect>>();
const ATTEMPT_STEPS = new Map<string, Step<{ type: string }>>();
const STEP_CACHE_MAX = 4096;
const plain = <E>(actions: unknown): E[] => (actions as Array<{ type: string; params?: unknown }>).map((a) => ({ type: a.type, ...(a.params === undefined ? {} : { params: a.params }) }) as E);

function machineStep(value: string, context: { openAttempt: 'pending' | 'authorized' | 'requires_action' | null; attempts: number; reviewPending: boolean }, event: PaymentIntentEvent): Step<PaymentIntentEffect> {
  const key = JSON.stringify([value, context, event]);
  let s = PI_STEPS.get(key);
  if (!s) {
    const [next, actions] = transition(paymentIntentMachine, paymentIntentMachine.resolveState({ value, context }), event);
    s = { value: next.value as string, effects: plain<PaymentIntentEffect>(actions) };
    if (PI_STEPS.size < STEP_CACHE_MAX) PI_STEPS.set(key, s);
  }
  return s;
}

function attemptStep(value: string, event: string): Step<{ type: string }> {
  const key = `${value}\u0000${event}`;
  let s = ATTEMPT_STEPS.get(key);
  if (!s) {
    const [next, actions] = transition(attemptMachine, attemptMachine.resolveState({ value, context: undefined as never }), { type: event } as never);
    s = { value: next.value as string, effects: plain<{ type: string }>(actions) };
    if (ATTEMPT_STEPS.size < STEP_CACHE_MAX) ATTEMPT_STEPS.set(key, s);
  }
  return s;
}

/** Provider evidence → machine event. */
function evidenceEvent(o: ProviderOutcome, source: 'connector' | 'inbound', status: string): PaymentIntentEvent {
  switch (o.kind) {
    case 'captured':
      return source === 'inbound' && status === 'requires_action' ? { type: 'evidence.incoming_payment' } : { type: 'evidence.captured' };
    case 'authorized':
      return { type: 'evidence.authorized' };
    case 'action_required':
      return { type: 'evidence.action_required', expires: !!o.expiresAt };
    case 'hard_decline':
      return { type: 'evidence.hard_decline' };
    case 'soft_decline':
      return { type: 'evidence.soft_decline' };
    case 'voided':
      return { type: 'evidence.hard_decline' };
  }
}

/** A risk review of the tenant (and of the mode, when given: an API key sees only its mode's). */
export async function reviewView(db: Db, tenantId: string, id: string, livemode?: boolean) {
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
