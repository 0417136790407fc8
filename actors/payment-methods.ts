// Saved payment methods (card on file): save with a single-use token → pending; a worker exchanges
// the token at the connector → active with brand and last4; detach → detached (idempotent).
// Nothing of the card but brand and last4 is stored; the token is dropped at activation.
import { randomUUID } from 'node:crypto';
import { transition } from 'xstate';
import { ApiError } from '../api/errors.js';
import { saveIdempotent, type IdempotencyHandle } from '../api/idempotency.js';
import type { Principal } from '../api/route.js';
import { saveKeyFor } from '../connectors/acquirer.js';
import type { Router } from '../connectors/routing.js';
import { paymentMethodMachine } from '../machines/payment-method.js';
import type { Db, Sql } from '../ops/db.js';
import type { Logger } from '../ops/log.js';
import { PI_QUEUE } from './payment-intents.js';
import type { Queues } from './queues.js';

export interface PaymentMethodsDeps {
  sql: Sql;
  queues: Queues;
  router: Router;
  log: Logger;
}

export function paymentMethodView(r: Record<string, unknown>) {
  return {
    id: r.id as string,
    object: 'payment_method' as const,
    customer_id: r.customer_id as string,
    connector: r.connector as string,
    brand: (r.brand as string | null) ?? null,
    last4: (r.last4 as string | null) ?? null,
    status: r.status as string,
    livemode: r.livemode as boolean,
    created_at: (r.created_at as Date).toISOString(),
    updated_at: (r.updated_at as Date).toISOString(),
  };
}

async function assertCustomer(db: Db, p: Principal, customerId: string) {
  const rows = await db`select 1 from customers where id = ${customerId} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
  if (!rows.length) throw new ApiError('customer.not_found');
}

export class PaymentMethods {
  constructor(private d: PaymentMethodsDeps) {}

  async save(p: Principal, customerId: string, body: { payment_token: string; connector?: string }, idem?: IdempotencyHandle) {
    const connector = body.connector ?? 'sim';
    if (!this.d.router.canSave(connector)) throw new ApiError('payment_method.no_route', `No connector can save this payment method${body.connector ? ` (connector "${body.connector}")` : ''}.`);
    const view = await this.d.sql.begin(async (tx) => {
      await assertCustomer(tx, p, customerId);
      const initial = paymentMethodMachine.getInitialSnapshot({} as never).value as string;
      const [row] = await tx`
        insert into payment_methods (id, tenant_id, livemode, customer_id, connector, status, pending_token)
        values (${randomUUID()}, ${p.tenantId}, ${p.livemode}, ${customerId}, ${connector}, ${initial}, ${body.payment_token})
        returning *`;
      const v = paymentMethodView(row);
      await saveIdempotent(tx, idem, 201, v);
      return v;
    });
    await this.d.queues
      .add(PI_QUEUE, view.id, 'payment_method.activate', { paymentMethodId: view.id }, { jobId: `pm-${view.id}` })
      .catch((e) => this.d.log.warn('enqueue of an activation failed; the reconciler will retry', { err: e }));
    return view;
  }

  async list(p: Principal, customerId: string) {
    await assertCustomer(this.d.sql, p, customerId);
    const rows = await this.d.sql`select * from payment_methods where customer_id = ${customerId} and tenant_id = ${p.tenantId} and livemode = ${p.livemode} order by created_at, id`;
    return { object: 'list' as const, data: rows.map(paymentMethodView) };
  }

  async detach(p: Principal, customerId: string, id: string) {
    return this.d.sql.begin(async (tx) => {
      await assertCustomer(tx, p, customerId);
      const [row] = await tx`select * from payment_methods where id = ${id} and customer_id = ${customerId} and tenant_id = ${p.tenantId} and livemode = ${p.livemode} for update`;
      if (!row) throw new ApiError('payment_method.not_found');
      const [next] = transition(paymentMethodMachine, paymentMethodMachine.resolveState({ value: row.status as string, context: undefined as never }), { type: 'detach' });
      if (next.value === row.status) return paymentMethodView(row); // detaching a detached method does not fail
      const [upd] = await tx`update payment_methods set status = ${next.value as string}, pending_token = null, updated_at = now() where id = ${id} returning *`;
      return paymentMethodView(upd);
    });
  }

  /** Worker: exchange the single-use token at the connector. */
  async activate(id: string) {
    const [pm] = await this.d.sql`select * from payment_methods where id = ${id}`;
    if (!pm || pm.status !== 'pending' || !pm.pending_token) return;
    const out = await this.d.router.connector(pm.connector as string).saveMethod({ idempotencyKey: saveKeyFor(id), token: pm.pending_token as string, tenantId: pm.tenant_id as string, livemode: pm.livemode as boolean });
    await this.d.sql.begin(async (tx) => {
      const [cur] = await tx`select * from payment_methods where id = ${id} for update`;
      if (out.kind !== 'saved') {
        this.d.log.warn('a payment method could not be saved at the connector', { paymentMethodId: id, code: out.code });
        return;
      }
      const [next, actions] = transition(paymentMethodMachine, paymentMethodMachine.resolveState({ value: cur.status as string, context: undefined as never }), { type: 'activated' });
      const setCard = (actions as unknown as Array<{ type: string }>).some((a) => a.type === 'setCard');
      await tx`
        update payment_methods set status = ${next.value as string}, pending_token = null, updated_at = now(),
               brand = ${setCard ? out.brand : cur.brand}, last4 = ${setCard ? out.last4 : cur.last4}, provider_ref = ${setCard ? out.providerRef : cur.provider_ref}
         where id = ${id}`;
    });
  }

  /** What confirm needs to charge a saved method (one click), or the spec's error. */
  async chargeable(db: Db, tenantId: string, livemode: boolean, id: string): Promise<{ connector: string; token: string }> {
    const [pm] = await db`select * from payment_methods where id = ${id} and tenant_id = ${tenantId} and livemode = ${livemode}`;
    if (!pm) throw new ApiError('payment_method.not_found');
    const [, actions] = transition(paymentMethodMachine, paymentMethodMachine.resolveState({ value: pm.status as string, context: undefined as never }), { type: 'charge' });
    const rejected = (actions as unknown as Array<{ type: string; params?: { code: string; message: string } }>).find((a) => a.type === 'reject');
    if (rejected) throw new ApiError('payment_method.not_chargeable', `${rejected.params!.message} This one is ${String(pm.status)}.`);
    return { connector: pm.connector as string, token: pm.provider_ref as string };
  }
}
