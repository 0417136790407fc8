// Saved payment methods (card on file), on the entity actor (kernel/entity.ts): save with a
// single-use token → pending; a job exchanges the token at the connector → active with brand and
// last4; detach → detached (idempotent). Nothing of the card but brand and last4 is stored; the
// token is dropped at activation (or when the connector refuses it).
import { randomUUID } from 'node:crypto';
import { reconciler, staleRows, type Capability } from '../kernel/capability.js';
import type { Db, Sql } from '../kernel/db.js';
import { LockBusy, hydrateRow, type EntityActor, type EntityRow, type EntityDef, type Hydrated, type Plan, type StepEnv } from '../kernel/entity.js';
import { ApiError } from '../kernel/errors.js';
import type { IdempotencyHandle } from '../kernel/idempotency.js';
import { defineJob, jobRequest } from '../kernel/jobs.js';
import type { Logger } from '../kernel/log.js';
import { initialState, machineStep } from '../kernel/machine-step.js';
import type { Principal } from '../kernel/principal.js';
import { saveKeyFor, type SaveOutcome } from '../connectors/acquirer.js';
import type { Router } from '../connectors/routing.js';
import { paymentMethodMachine } from '../machines/payment-method.js';
import { OutcomeUnknown } from '../kernel/outbound.js';

export const PAYMENT_METHOD_QUEUE = 'pm';

export interface PaymentMethodsDeps {
  sql: Sql;
  actor: EntityActor;
  router: Router;
  log: Logger;
}

export interface PaymentMethodRow extends EntityRow {
  customer_id: string;
  connector: string;
  brand: string | null;
  last4: string | null;
  provider_ref: string | null;
  pending_token: string | null;
  created_at: Date;
  updated_at: Date;
}

type MethodCommand = { kind: 'activated'; outcome: SaveOutcome } | { kind: 'detach' };

export function paymentMethodView(r: PaymentMethodRow) {
  return {
    id: r.id,
    object: 'payment_method' as const,
    customer_id: r.customer_id,
    connector: r.connector,
    brand: r.brand,
    last4: r.last4,
    status: r.status,
    livemode: r.livemode,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

async function assertCustomer(db: Db, p: Pick<Principal, 'tenantId' | 'livemode'>, customerId: string) {
  const rows = await db`select 1 from customers where id = ${customerId} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
  if (!rows.length) throw new ApiError('customer.not_found');
}

/** A step of a saved method: pure (machine → row, history). */
export function planMethodStep(h: Hydrated<PaymentMethodRow>, cmd: MethodCommand, env: StepEnv): Plan<PaymentMethodRow> {
  const r = h.row;
  if (cmd.kind === 'activated' && cmd.outcome.kind !== 'saved') {
    // The connector refused the token: it is dropped (it was single-use); the method stays pending.
    if (!r.pending_token) return { result: r };
    const updated = { ...r, pending_token: null, updated_at: env.at, version: r.version + 1 };
    return { set: { pending_token: null, updated_at: env.at }, history: { event: 'activation_failed', data: { code: cmd.outcome.code } }, result: updated };
  }
  const step = machineStep(paymentMethodMachine, r.status, undefined, { type: cmd.kind });
  if (step.value === r.status && step.effects.length === 0) return { result: r };
  const out = cmd.kind === 'activated' && cmd.outcome.kind === 'saved' && step.effects.some((e) => e.type === 'setCard') ? cmd.outcome : undefined;
  const updated: PaymentMethodRow = {
    ...r,
    status: step.value,
    pending_token: null,
    brand: out ? out.brand : r.brand,
    last4: out ? out.last4 : r.last4,
    provider_ref: out ? out.providerRef : r.provider_ref,
    updated_at: env.at,
    version: r.version + 1,
  };
  return {
    set: { status: updated.status, pending_token: null, brand: updated.brand, last4: updated.last4, provider_ref: updated.provider_ref, updated_at: env.at },
    history: { event: cmd.kind, data: out ? { brand: out.brand, last4: out.last4 } : undefined },
    result: updated,
  };
}

const toMethod = (r: Record<string, unknown>) => r as unknown as PaymentMethodRow;

export class PaymentMethods {
  readonly def: EntityDef<Hydrated<PaymentMethodRow>, MethodCommand>;

  readonly activateJob = defineJob<{ paymentMethodId: string }>({
    queue: PAYMENT_METHOD_QUEUE,
    name: 'payment_method.activate',
    shape: { paymentMethodId: 'uuid' },
    id: (d) => `pm-${d.paymentMethodId}`,
    shardKey: (d) => d.paymentMethodId,
    transient: (e) => e instanceof OutcomeUnknown || e instanceof LockBusy,
    run: (d) => this.activate(d.paymentMethodId),
  });

  constructor(private d: PaymentMethodsDeps) {
    this.def = {
      kind: 'payment_method',
      table: 'payment_methods',
      notFound: 'payment_method.not_found',
      busy: 'payment_method.concurrent_modification',
      hydrate: hydrateRow('payment_methods', toMethod),
      plan: (h, cmd, env) => planMethodStep(h, cmd, env),
    };
  }

  async save(p: Principal, customerId: string, body: { payment_token: string; connector?: string }, idem?: IdempotencyHandle) {
    const connector = body.connector ?? 'sim';
    if (!this.d.router.canSave(connector, p.livemode)) throw new ApiError('payment_method.no_route', `No connector can save this payment method${body.connector ? ` (connector "${body.connector}")` : ''}${p.livemode ? ' in live mode' : ''}.`);
    await assertCustomer(this.d.sql, p, customerId);
    const at = new Date();
    const row: PaymentMethodRow = {
      id: randomUUID(), tenant_id: p.tenantId, livemode: p.livemode, status: initialState(paymentMethodMachine), version: 0, customer_id: customerId, connector,
      brand: null, last4: null, provider_ref: null, pending_token: body.payment_token, created_at: at, updated_at: at,
    };
    const view = paymentMethodView(row);
    return this.d.actor.create(this.def, p, {
      create: { ...row },
      history: { event: 'save', data: { connector } },
      jobs: [jobRequest(this.activateJob, { paymentMethodId: row.id })],
      response: { status: 201, body: view },
      result: view,
    }, { idem, at });
  }

  async list(p: Principal, customerId: string) {
    await assertCustomer(this.d.sql, p, customerId);
    const rows = await this.d.sql`select * from payment_methods where customer_id = ${customerId} and tenant_id = ${p.tenantId} and livemode = ${p.livemode} order by created_at, id`;
    return { object: 'list' as const, data: rows.map((r) => paymentMethodView(toMethod(r))) };
  }

  async detach(p: Principal, customerId: string, id: string) {
    await assertCustomer(this.d.sql, p, customerId);
    const h = await this.def.hydrate(this.d.sql, id, p, { kind: 'detach' });
    if (!h || h.row.customer_id !== customerId) throw new ApiError('payment_method.not_found');
    const row = await this.d.actor.run<Hydrated<PaymentMethodRow>, MethodCommand, void, PaymentMethodRow>(this.def, p, id, { kind: 'detach' }, { waitMs: 3000, worker: false });
    return paymentMethodView(row);
  }

  /** Detaches every method of a (deleted) customer that is not detached yet; returns how many. */
  async detachAllOf(p: Principal, customerId: string): Promise<number> {
    const rows = await this.d.sql`select id from payment_methods where customer_id = ${customerId} and tenant_id = ${p.tenantId} and livemode = ${p.livemode} and status <> 'detached'`;
    for (const r of rows) await this.d.actor.run(this.def, p, r.id as string, { kind: 'detach' }, { waitMs: 3000, worker: false });
    return rows.length;
  }

  /** Worker: exchange the single-use token at the connector, under the method's lock. */
  private activate(id: string) {
    return this.d.actor.withLock(this.def, id, 2000, async () => {
      const h = await this.def.hydrate(this.d.sql, id, undefined, { kind: 'detach' });
      if (!h || h.row.status !== 'pending' || !h.row.pending_token) return { skipped: 'nothing to activate' };
      const r = h.row;
      const outcome = await this.d.router.connector(r.connector).saveMethod({ idempotencyKey: saveKeyFor(id), token: r.pending_token!, tenantId: r.tenant_id, livemode: r.livemode });
      if (outcome.kind !== 'saved') this.d.log.warn('a payment method could not be saved at the connector', { paymentMethodId: id, code: outcome.code });
      await this.d.actor.runLocked(this.def, undefined, id, { kind: 'activated', outcome }, { waitMs: 0, known: h });
      return { activated: outcome.kind === 'saved' };
    });
  }

  /** What confirm needs to charge a saved method (one click), or the spec's error. */
  async chargeable(db: Db, tenantId: string, livemode: boolean, id: string): Promise<{ connector: string; token: string; customerId: string; brand?: string }> {
    const [pm] = await db`select * from payment_methods where id = ${id} and tenant_id = ${tenantId} and livemode = ${livemode}`;
    if (!pm) throw new ApiError('payment_method.not_found');
    const step = machineStep(paymentMethodMachine, pm.status as string, undefined, { type: 'charge' });
    const rejected = step.effects.find((a) => a.type === 'reject') as { params?: { message: string } } | undefined;
    if (rejected) throw new ApiError('payment_method.not_chargeable', `${rejected.params!.message} This one is ${String(pm.status)}.`);
    return { connector: pm.connector as string, token: pm.provider_ref as string, customerId: pm.customer_id as string, brand: (pm.brand as string | null) ?? undefined };
  }

  capability(): Capability {
    const sql = this.d.sql;
    return {
      name: 'payment_methods',
      jobs: [this.activateJob],
      reconcilers: [
        reconciler(
          'saved methods waiting for activation',
          () => staleRows(sql, { table: 'payment_methods', where: sql`pending_token is not null` }),
          (m) => jobRequest(this.activateJob, { paymentMethodId: m.id as string }),
        ),
      ],
    };
  }
}
