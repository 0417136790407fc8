// Mobile recharges (airtime and data) on the entity actor (kernel/entity.ts), the carriers a tenant
// enables, the product catalog, and the reader of the recharge bag's movements. docs/billers.md
// has the choices.
//
// - POST /v1/recharges checks in the spec's order (live key first: nothing stored or booked).
//   A recharge is an aggregator order (actors/aggregator-orders.ts, shared with service payments):
//   the endpoint validates its key itself and keeps it in the kernel's idempotency record, written
//   with the recharge; same key + same product, phone and payment intent replays; other data is
//   409 recharge.idempotency_conflict; a replay while an execution holds the recharge's lock is 409
//   recharge.retry_conflict.
// - Never delivered twice: the row is committed `pending` under the entity's lock, then
//   `send_started_at` is committed before the aggregator is called with a key derived from the
//   id. A timeout leaves it `pending`; a replay (or the reconciler) asks the aggregator first and
//   resolves with its evidence; it sends only when the aggregator never saw the order.
// - `delivered` books the spec's entry with the amounts frozen at sale time; `failed` books nothing.
// - Phones are stored sealed (SecretBox, bound to the row); answers, events, logs and spans carry
//   only `phone_masked` (2 digits, asterisks, last 4).
// - Bag reader: a job scheduler (every 15 minutes, one run at a time) reads the report of today and
//   yesterday per account; each movement is stored once; a credit movement stored for the first
//   time writes `recharge.deposit.detected` in the same transaction, its event id derived from the
//   movement (a re-read or a second reader makes no second event).
import { accounts } from '../kernel/accounts.js';
import { createHash, randomUUID } from 'node:crypto';
import type { Capability } from '../kernel/capability.js';
import type { Sql } from '../kernel/db.js';
import { hydrateRow, type EntityActor, type EntityDef, type Hydrated, type Plan, type StepEnv } from '../kernel/entity.js';
import { ApiError } from '../kernel/errors.js';
import { defineJob, jobRequest } from '../kernel/jobs.js';
import type { Logger } from '../kernel/log.js';
import { initialState } from '../kernel/machine-step.js';
import { appendEvent } from '../kernel/outbox.js';
import type { Principal } from '../kernel/principal.js';
import type { SecretBox } from '../kernel/secret-box.js';
import { reportDay, type BagAccount, type BagMovement, type ProductInfo, type RechargeAggregator } from '../connectors/recharge/aggregator.js';
import { rechargeMachine } from '../machines/recharge.js';
import { AggregatorOrders, planAggregatorOrder, type AggregatorOrderCommand, type AggregatorOrderPlanKind, type AggregatorOrderRow } from './aggregator-orders.js';

export const RECHARGE_QUEUE = 'recharge';
export const BAG_READ_EVERY_MS = 15 * 60_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface RechargeRow extends AggregatorOrderRow {
  carrier_code: string;
  product_code: string;
  phone_sealed: string;
  phone_masked: string;
  face_amount_minor: number;
  merchant_commission_minor: number;
  currency: string;
  payment_intent_id: string | null;
  order_key: string;
}
type HydratedRecharge = Hydrated<RechargeRow>;
export type RechargeCommand = AggregatorOrderCommand<'aggregator', 'delivered'>;

const toRow = (r: Record<string, unknown>): RechargeRow => ({
  ...(r as unknown as RechargeRow),
  face_amount_minor: Number(r.face_amount_minor),
  merchant_commission_minor: Number(r.merchant_commission_minor),
});

/** spec: first two digits, asterisks, last four; the full number is never returned. */
export const maskPhone = (phone: string) => `${phone.slice(0, 2)}****${phone.slice(-4)}`;
export const phoneContext = (rechargeId: string) => `recharge:${rechargeId}:phone`;
export const orderKeyFor = (id: string) => `rc_${id.replace(/-/g, '')}`;

export function rechargeView(r: RechargeRow) {
  return {
    id: r.id,
    object: 'recharge' as const,
    carrier_code: r.carrier_code,
    product_code: r.product_code,
    phone_masked: r.phone_masked,
    face_amount_minor: Number(r.face_amount_minor),
    merchant_commission_minor: Number(r.merchant_commission_minor),
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

export const productView = (p: ProductInfo) => ({ object: 'recharge_product' as const, ...p });

/** spec: the recharge entry on confirmed delivery (sum zero; the service fee never enters it). */
export const rechargeDeliveredLines = (carrier: string, currency: string, face: number, commission: number) => [
  { account: accounts.rechargeClearing, currency, amountMinor: face },
  { account: accounts.rechargePayable(carrier), currency, amountMinor: -(face - commission) },
  { account: accounts.merchantRechargeIncome, currency, amountMinor: -commission },
];

const PLAN_KIND: AggregatorOrderPlanKind<RechargeRow, 'aggregator', 'delivered'> = {
  machine: rechargeMachine,
  source: 'aggregator',
  toRow,
  entry: (r) => ({
    tenantId: r.tenant_id, livemode: r.livemode, kind: 'recharge.delivered', refType: 'recharge', refId: r.id, memo: `${r.product_code} to ${r.phone_masked}`,
    lines: rechargeDeliveredLines(r.carrier_code, r.currency, r.face_amount_minor, r.merchant_commission_minor),
  }),
};

/** A recharge's step: pure (the aggregator order's plan with the spec's recharge entry). */
export function planRecharge(h: HydratedRecharge, cmd: RechargeCommand, env: StepEnv): Plan<RechargeRow> {
  return planAggregatorOrder(PLAN_KIND, h, cmd, env);
}

/** The event id of a movement's deposit event: derived from the movement (a UUID of its name). */
export function depositEventId(a: BagAccount, providerKey: string, movementId: string): string {
  const h = createHash('sha256').update(`recharge.deposit.detected:${a.tenantId}:${a.livemode}:${providerKey}:${movementId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16], 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export function movementView(r: Record<string, unknown>) {
  return {
    object: 'recharge_bag_movement' as const,
    account_id: r.tenant_id as string,
    provider_key: r.provider_key as string,
    source_id: r.source_id as string,
    movement_id: r.movement_id as string,
    registered_at: (r.registered_at as Date).toISOString(),
    observed_at: (r.observed_at as Date).toISOString(),
    pouch_id: r.pouch_id as string,
    pouch_name: r.pouch_name as string,
    movement_type: r.movement_type as string,
    is_deposit: r.is_deposit as boolean,
    amount_minor: Number(r.amount_minor),
    currency: r.currency as string,
    raw_amount: r.raw_amount as string,
    units: r.units === null || r.units === undefined ? null : Number(r.units),
    additional_folio: (r.additional_folio as string | null) ?? null,
    status: r.status as string,
    via: r.via as string,
  };
}

export interface RechargesDeps {
  sql: Sql;
  actor: EntityActor;
  log: Logger;
  secrets: SecretBox;
  /** The aggregator of test mode; live mode has none (spec: recharge.livemode_unsupported). */
  aggregator: RechargeAggregator;
  /** Wakes the webhook relay after a commit that wrote events. */
  onEvents?: () => void;
  clock?: () => Date;
}

export interface RechargeBody {
  product_code?: unknown;
  phone_number?: unknown;
  payment_intent_id?: unknown;
}

export class Recharges {
  readonly def: EntityDef<HydratedRecharge, RechargeCommand>;
  private readonly orders: AggregatorOrders<RechargeRow, 'aggregator', 'delivered'>;

  readonly bagJob = defineJob<Record<string, never>>({
    queue: RECHARGE_QUEUE,
    name: 'recharge.bag.read',
    shape: {},
    id: () => 'recharge-bag-read',
    shardKey: () => 'recharge-bag',
    run: () => this.readBags(),
  });

  constructor(private d: RechargesDeps) {
    this.def = {
      kind: 'recharge',
      table: 'recharges',
      notFound: 'recharge.not_found',
      busy: 'recharge.retry_conflict',
      hydrate: hydrateRow('recharges', toRow),
      plan: (h, cmd, env) => planRecharge(h, cmd, env),
    };
    const aggregator = d.aggregator;
    this.orders = new AggregatorOrders(d, {
      def: this.def,
      source: 'aggregator',
      path: '/v1/recharges',
      conflict: 'recharge.idempotency_conflict',
      queue: RECHARGE_QUEUE,
      jobName: 'recharge.resolve',
      // The aggregator calls as client spans: the connector and the recharge id only (never the phone).
      connector: aggregator.key,
      op: 'recharge.send',
      lookupOp: 'recharge.status',
      idAttr: 'orquesta.recharge_id',
      send: (r) =>
        aggregator.send({
          key: r.order_key, tenantId: r.tenant_id, livemode: r.livemode, carrierCode: r.carrier_code, productCode: r.product_code,
          phone: d.secrets.open(r.phone_sealed, phoneContext(r.id)), amountMinor: r.face_amount_minor,
        }),
      status: (r) => aggregator.status(r.order_key),
      timeoutMessage: 'recharge aggregator timed out; the recharge stays pending',
      logFields: (r) => ({ phone_masked: r.phone_masked }),
    });
  }

  get resolveJob() {
    return this.orders.resolveJob;
  }

  private now = () => (this.d.clock ? this.d.clock() : new Date());

  // ---- carriers and products -----------------------------------------------------------------------

  carriers() {
    return { object: 'list' as const, data: this.d.aggregator.carriers().map((c) => ({ object: 'recharge_carrier' as const, code: c.code, name: c.name, active: c.active })) };
  }

  /** Enables (or with `active: false` disables) a carrier for the tenant; answers the carrier with the tenant's state as `active`. */
  async enable(p: Principal, code: string | undefined, body: { active?: boolean } | undefined) {
    const c = (code ?? '').trim();
    if (!c) throw new ApiError('recharge.invalid_carrier');
    const carrier = this.d.aggregator.carriers().find((x) => x.code === c);
    if (!carrier || !carrier.active) throw new ApiError('recharge.carrier_not_found', `No active carrier ${JSON.stringify(c)}. See GET /v1/recharge-carriers.`);
    const enabled = body?.active ?? true;
    await this.d.sql`
      insert into recharge_carrier_settings (tenant_id, livemode, carrier_code, enabled) values (${p.tenantId}, ${p.livemode}, ${c}, ${enabled})
      on conflict (tenant_id, livemode, carrier_code) do update set enabled = excluded.enabled, updated_at = now()`;
    return { object: 'recharge_carrier' as const, code: carrier.code, name: carrier.name, active: enabled };
  }

  private async enabledCarriers(p: Principal): Promise<Set<string>> {
    const rows = await this.d.sql`select carrier_code from recharge_carrier_settings where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and enabled`;
    return new Set(rows.map((r) => r.carrier_code as string));
  }

  async products(p: Principal) {
    const on = await this.enabledCarriers(p);
    const active = new Set(this.d.aggregator.carriers().filter((c) => c.active).map((c) => c.code));
    return { object: 'list' as const, data: this.d.aggregator.products().filter((x) => on.has(x.carrier_code) && active.has(x.carrier_code)).map(productView) };
  }

  // ---- recharges -------------------------------------------------------------------------------------

  /** POST /v1/recharges: every check in the order of the spec's table, then replay or a new recharge. */
  async create(p: Principal, body: RechargeBody, keyHeader: string | undefined): Promise<{ body: ReturnType<typeof rechargeView>; replayed: boolean }> {
    if (p.livemode) throw new ApiError('recharge.livemode_unsupported');
    const missing = [
      ...(typeof body?.product_code !== 'string' || !body.product_code.trim() ? ['product_code'] : []),
      ...(body?.phone_number === undefined || body.phone_number === '' ? ['phone_number'] : []),
    ];
    if (missing.length) throw new ApiError('recharge.missing_fields', `A recharge needs product_code and phone_number; missing: ${missing.join(', ')}.`);
    const key = typeof keyHeader === 'string' ? keyHeader.trim() : '';
    if (!UUID.test(key)) throw new ApiError('idempotency_key_required', key ? 'Idempotency-Key must be a UUID.' : undefined);
    const productCode = (body.product_code as string).trim();
    const product = this.d.aggregator.products().find((x) => x.code === productCode);
    if (!product || !product.active) throw new ApiError('recharge.product_not_found', `No active product ${JSON.stringify(productCode)}. See GET /v1/recharge-products.`);
    const phone = body.phone_number;
    if (typeof phone !== 'string' || !/^\d{10}$/.test(phone)) throw new ApiError('recharge.invalid_phone');
    if (!(await this.enabledCarriers(p)).has(product.carrier_code)) {
      throw new ApiError('recharge.carrier_not_enabled', `Carrier ${product.carrier_code} is not enabled for this account: POST /v1/recharge-carriers/${product.carrier_code}/enable.`);
    }
    let piId: string | null = null;
    if (body.payment_intent_id !== undefined) {
      const id = body.payment_intent_id;
      if (typeof id !== 'string' || !UUID.test(id)) throw new ApiError('recharge.payment_intent_not_found');
      const [pi] = await this.d.sql`select status, amount_minor from payment_intents where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
      if (!pi) throw new ApiError('recharge.payment_intent_not_found');
      if (pi.status !== 'succeeded') throw new ApiError('recharge.payment_intent_not_succeeded', `The payment intent is ${String(pi.status)}, not succeeded.`);
      if (Number(pi.amount_minor) !== product.face_amount_minor) {
        throw new ApiError('recharge.payment_intent_amount_mismatch', `The payment intent's amount ${Number(pi.amount_minor)} differs from the product's face amount ${product.face_amount_minor}.`);
      }
      piId = id.toLowerCase();
    }
    const idem = this.orders.handle(p, key.toLowerCase(), { product_code: productCode, phone_number: phone, payment_intent_id: piId });
    const earlier = await this.orders.byKey(idem);
    if (earlier) return { body: rechargeView(earlier), replayed: true };

    const at = new Date();
    const id = randomUUID();
    const row: RechargeRow = {
      id, tenant_id: p.tenantId, livemode: p.livemode, status: initialState(rechargeMachine), version: 0,
      carrier_code: product.carrier_code, product_code: product.code, phone_sealed: this.d.secrets.seal(phone, phoneContext(id)), phone_masked: maskPhone(phone),
      face_amount_minor: product.face_amount_minor, merchant_commission_minor: product.merchant_commission_minor, currency: product.currency,
      payment_intent_id: piId, order_key: orderKeyFor(id), send_started_at: null, provider_ref: null, failure_reason: null,
      created_at: at, updated_at: at,
    };
    const done = await this.orders.create(p, row, idem, { history: { product_code: row.product_code, face_amount_minor: row.face_amount_minor }, view: rechargeView });
    return { body: rechargeView(done.row), replayed: done.replayed };
  }

  /** A pending recharge (the caller holds the lock): ask the aggregator; send only if it never saw the order. */
  resolveLocked(id: string): Promise<RechargeRow> {
    return this.orders.resolveLocked(id);
  }

  async get(p: Principal, id: string) {
    const [r] = await this.d.sql`select * from recharges where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (!r) throw new ApiError('recharge.not_found', `No recharge ${id} exists for this key.`);
    return rechargeView(toRow(r));
  }

  async list(p: Principal, limit = 100) {
    const rows = await this.d.sql`
      select * from recharges where tenant_id = ${p.tenantId} and livemode = ${p.livemode}
       order by created_at desc, id desc limit ${Math.min(Math.max(1, limit), 500)}`;
    return { object: 'list' as const, data: rows.map((r) => rechargeView(toRow(r))) };
  }

  // ---- the bag -----------------------------------------------------------------------------------------

  /** Accounts that own a bag at an aggregator this deployment can read: test-mode accounts that enabled a carrier. */
  private async bagAccounts(): Promise<BagAccount[]> {
    const rows = await this.d.sql`select distinct tenant_id, livemode from recharge_carrier_settings where enabled and not livemode order by tenant_id`;
    return rows.map((r) => ({ tenantId: r.tenant_id as string, livemode: r.livemode as boolean }));
  }

  /** One run of the reader: today's and yesterday's reports of every account. */
  async readBags(accounts?: BagAccount[]): Promise<{ accounts: number; stored: number; deposits: number }> {
    const now = this.now();
    const days = [reportDay(new Date(now.getTime() - 86_400_000)), reportDay(now)];
    let stored = 0;
    let deposits = 0;
    const list = accounts ?? (await this.bagAccounts());
    for (const a of list) {
      for (const day of days) {
        const r = await this.storeMovements(a, await this.d.aggregator.movements(a, day));
        stored += r.stored;
        deposits += r.deposits;
      }
    }
    if (deposits) this.d.onEvents?.();
    return { accounts: list.length, stored, deposits };
  }

  /** Stores each movement once; a deposit stored now gets its event in the same transaction. */
  async storeMovements(a: BagAccount, movements: BagMovement[]): Promise<{ stored: number; deposits: number }> {
    if (!movements.length) return { stored: 0, deposits: 0 };
    const provider = this.d.aggregator.key;
    return this.d.sql.begin(async (tx) => {
      let stored = 0;
      let deposits = 0;
      for (const m of movements) {
        const eventId = m.isDeposit ? depositEventId(a, provider, m.movementId) : null;
        const rows = await tx`
          insert into recharge_bag_movements (id, tenant_id, livemode, provider_key, source_id, movement_id, registered_at, pouch_id, pouch_name, movement_type,
                                              is_deposit, amount_minor, currency, raw_amount, units, additional_folio, status, via, event_id)
          values (${randomUUID()}, ${a.tenantId}, ${a.livemode}, ${provider}, ${m.sourceId}, ${m.movementId}, ${m.registeredAt}, ${m.pouchId}, ${m.pouchName}, ${m.movementType},
                  ${m.isDeposit}, ${m.amountMinor}, ${m.currency}, ${m.rawAmount}, ${m.units}, ${m.additionalFolio}, ${m.status}, ${m.via}, ${eventId})
          on conflict (tenant_id, livemode, provider_key, movement_id) do nothing
          returning *`;
        if (!rows.length) continue;
        stored++;
        if (eventId) {
          deposits++;
          await appendEvent(tx, { tenantId: a.tenantId, livemode: a.livemode, type: 'recharge.deposit.detected', entityId: rows[0].id as string, data: movementView(rows[0]), eventId });
        }
      }
      return { stored, deposits };
    });
  }

  async movements(p: Principal, limit = 100) {
    const rows = await this.d.sql`
      select * from recharge_bag_movements where tenant_id = ${p.tenantId} and livemode = ${p.livemode}
       order by registered_at desc, id desc limit ${Math.min(Math.max(1, limit), 500)}`;
    return { object: 'list' as const, data: rows.map(movementView) };
  }

  /** Asks the aggregator for the bag's balance now (the confirmation of deposits a report omits). */
  async refreshBalance(p: Principal) {
    if (p.livemode) throw new ApiError('recharge.livemode_unsupported');
    const b = await this.d.aggregator.balance({ tenantId: p.tenantId, livemode: p.livemode });
    const at = new Date();
    await this.d.sql`
      insert into recharge_bag_balances (tenant_id, livemode, provider_key, balance_minor, currency, refreshed_at)
      values (${p.tenantId}, ${p.livemode}, ${this.d.aggregator.key}, ${b.balanceMinor}, ${b.currency}, ${at})
      on conflict (tenant_id, livemode, provider_key) do update set balance_minor = excluded.balance_minor, currency = excluded.currency, refreshed_at = excluded.refreshed_at`;
    return { object: 'recharge_balance' as const, account_id: p.tenantId, provider_key: this.d.aggregator.key, balance_minor: b.balanceMinor, currency: b.currency, refreshed_at: at.toISOString(), livemode: p.livemode };
  }

  capability(): Capability {
    const sql = this.d.sql;
    const orders = this.orders.capability();
    return {
      name: 'recharges',
      jobs: [...orders.jobs!, this.bagJob],
      schedules: [{ name: 'recharge-bag-reader', everyMs: BAG_READ_EVERY_MS, job: jobRequest(this.bagJob, {}) }],
      reconcilers: orders.reconcilers,
    };
  }
}
