// The `sim` payout rail: test-mode behaviour of decisions.md §5 ("STP payouts: succeed; a
// beneficiary_name of FAIL makes the order fail with a failure_reason"); ours besides: a
// beneficiary named SLOW is paid, its answer arrives after about 2 s (as tok_sim_slow for cards). It keeps its own book of
// orders by key (table sim_payout_orders), as a real rail would: a repeated key registers nothing
// and answers the first outcome, and `sends` counts every call so a test can prove an order was
// sent exactly once. An operator simulation turns a paid order into a devolución (returnOrder).
import { randomBytes } from 'node:crypto';
import type { Sql } from '../../kernel/db.js';
import { maskClabe } from '../../formats/clabe.js';
import { RailCallbackError, type CallbackNotice, type ConciliatedOrder, type OrderRef, type PayoutOrder, type PayoutRail, type RailState } from './rail.js';

/** The failure of a beneficiary named FAIL. */
export const SIM_FAIL = { code: 'beneficiary_rejected', reason: 'The beneficiary bank rejected the transfer (simulated: beneficiary_name FAIL).' } as const;
/** A simulated devolución. */
export const SIM_RETURN = { code: 'returned_by_beneficiary_bank', reason: 'The beneficiary bank returned the transfer (simulated devolución).' } as const;

/** The outcome a fresh order gets. Pure. */
export function simOrderState(order: Pick<PayoutOrder, 'beneficiaryName' | 'currency'>, providerRef: string): RailState {
  if (order.currency !== 'MXN') return { state: 'failed', providerRef, code: 'currency_not_supported', reason: `SPEI moves MXN only, not ${order.currency}.` };
  if (order.beneficiaryName.trim().toUpperCase() === 'FAIL') return { state: 'failed', providerRef, ...SIM_FAIL };
  return { state: 'paid', providerRef };
}

const stateOf = (row: Record<string, unknown>): RailState => {
  const providerRef = row.provider_ref as string;
  switch (row.state) {
    case 'paid':
      return { state: 'paid', providerRef };
    case 'failed':
      return { state: 'failed', providerRef, code: row.failure_code as string, reason: row.failure_reason as string };
    case 'returned':
      return { state: 'returned', providerRef, code: row.failure_code as string, reason: row.failure_reason as string };
    default:
      throw new Error(`sim_payout_orders has an unknown state ${String(row.state)}`);
  }
};

/** A beneficiary named SLOW: the order is registered at once, the answer comes after this long (a slow network). */
export const SIM_SLOW_MS = 2000;

export class SimPayoutRail implements PayoutRail {
  readonly key = 'sim';
  constructor(
    private sql: Sql,
    private sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  async send(order: PayoutOrder): Promise<RailState> {
    const providerRef = `sim_po_${randomBytes(8).toString('hex')}`;
    const fresh = simOrderState(order, providerRef);
    const failed = fresh.state === 'failed' ? fresh : undefined;
    const [row] = await this.sql`
      -- the rail's book: the first send registers the order, a repeat only counts
      insert into sim_payout_orders (key, tenant_id, livemode, tracking_key, provider_ref, amount_minor, currency, clabe_masked,
                                     beneficiary_name, state, failure_code, failure_reason)
      values (${order.key}, ${order.tenantId}, ${order.livemode}, ${order.trackingKey}, ${providerRef}, ${order.amountMinor}, ${order.currency},
              ${maskClabe(order.clabe)}, ${order.beneficiaryName}, ${fresh.state}, ${failed?.code ?? null}, ${failed?.reason ?? null})
      on conflict (key, tenant_id) do update set sends = sim_payout_orders.sends + 1, updated_at = now()
      returning *, (xmax = 0) as inserted`;
    // Registered and committed; the caller learns it only after the delay (a crash meanwhile loses the answer, not the order).
    if (row.inserted && order.beneficiaryName.trim().toUpperCase() === 'SLOW') await this.sleep(SIM_SLOW_MS);
    return stateOf(row);
  }

  async status(ref: OrderRef): Promise<RailState | null> {
    const rows = await this.sql`
      update sim_payout_orders set status_queries = status_queries + 1 where key = ${ref.key} returning *`;
    return rows.length ? stateOf(rows[0]) : null;
  }

  /** The orders of the tenant registered on an operation day (Mexico City), with their state now. */
  async conciliate(tenantId: string, livemode: boolean, operationDate: string): Promise<ConciliatedOrder[]> {
    const rows = await this.sql`
      select * from sim_payout_orders
       where tenant_id = ${tenantId} and livemode = ${livemode}
         and to_char(created_at at time zone 'America/Mexico_City', 'YYYYMMDD') = ${operationDate}
       order by created_at`;
    return rows.map((r) => ({ trackingKey: r.tracking_key as string, state: stateOf(r) }));
  }

  /** The body of a status callback the sim rail would send for an order (JSON, like STP's). */
  async callbackFor(key: string): Promise<string | null> {
    const [row] = await this.sql`select * from sim_payout_orders where key = ${key}`;
    return row ? JSON.stringify({ provider_ref: row.provider_ref, tracking_key: row.tracking_key, state: row.state }) : null;
  }

  parseCallback(raw: string): CallbackNotice {
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      throw new RailCallbackError('sim callback: body is not JSON');
    }
    const b = body as { provider_ref?: unknown; tracking_key?: unknown; state?: unknown };
    if (typeof b.provider_ref !== 'string' || typeof b.tracking_key !== 'string' || !['paid', 'failed', 'returned', 'in_flight'].includes(b.state as string)) {
      throw new RailCallbackError('sim callback: expected provider_ref, tracking_key and a state');
    }
    return { providerRef: b.provider_ref, trackingKey: b.tracking_key, claimed: b.state as RailState['state'] };
  }

  /**
   * Operator simulation of a devolución: the beneficiary's bank sends a paid order back. Answers
   * the order's key, or null when no paid order of the tenant has this reference.
   */
  async returnOrder(tenantId: string, providerRef: string): Promise<string | null> {
    const rows = await this.sql`
      update sim_payout_orders
         set state = 'returned', failure_code = ${SIM_RETURN.code}, failure_reason = ${SIM_RETURN.reason}, returned_at = now(), updated_at = now()
       where provider_ref = ${providerRef} and tenant_id = ${tenantId} and state in ('paid', 'returned')
       returning key`;
    return rows.length ? (rows[0].key as string) : null;
  }
}
