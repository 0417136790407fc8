// Which connector serves a method, and what it costs (the fee posted to the ledger at capture).
// Live mode never routes to a simulator (architecture invariant 9): with only `sim` configured, a
// live key has no route (payment_intent.no_route) and nothing moves.
//
// A tenant's routing table (actors/routing.ts, docs/routing.md) lists the connectors it enabled
// per mode with their fee tables; without one the deployment's default table applies (`sim`
// only). `rank` orders the eligible connectors by the fee they would charge on the total, the
// cheapest first; `next` is the cheapest one not yet tried (cross-connector retry).
import type { Acquirer, PaymentMethod } from './acquirer.js';

export interface FeeSchedule {
  /** Basis points of the charged total. */
  bps: number;
  fixedMinor: number;
}

/** A connector's fees for one method, with optional per-brand schedules (cards). */
export type MethodFees = FeeSchedule & { brands?: Record<string, FeeSchedule> };

/** connector key → method → fees. */
export type FeeTable = Record<string, Partial<Record<string, MethodFees>>>;

/** spec-free, illustrative fees of the sim connector (MXN cents). */
export const SIM_FEES: Record<PaymentMethod, FeeSchedule> = {
  card: { bps: 290, fixedMinor: 250 },
  spei: { bps: 0, fixedMinor: 500 },
  codi: { bps: 0, fixedMinor: 0 },
  oxxo: { bps: 250, fixedMinor: 1000 },
  dimo: { bps: 0, fixedMinor: 0 },
};

/** The second simulated card connector: a lower rate and a higher fixed fee (cheaper above about MXN 125). */
export const SIM_B_FEES: Partial<Record<PaymentMethod, FeeSchedule>> = {
  card: { bps: 250, fixedMinor: 300 },
};

/**
 * Days after a capture until the connector pays it to the merchant (GET /v1/balance: `available`).
 * The simulators' are ours; Conekta's and Openpay's are assumptions to confirm with each merchant's
 * contract (docs/routing.md), not published figures.
 */
export const SETTLEMENT_DAYS: Record<string, number> = { sim: 1, sim_b: 2, conekta: 2, openpay: 1 };

export const DEFAULT_TABLE: FeeTable = { sim: SIM_FEES };

export const feeFor = (s: FeeSchedule, totalMinor: number) => Math.round((totalMinor * s.bps) / 10_000) + s.fixedMinor;

/** The schedule that applies to a method and brand (the brand's when the table has one). */
export function scheduleFor(fees: MethodFees, brand?: string): FeeSchedule {
  return (brand && fees.brands?.[brand]) || fees;
}

export interface Route {
  connector: Acquirer;
  fee: FeeSchedule;
}

/** One line of a routing decision: a connector of the table, what it would charge, and why it was left out. */
export interface Candidate {
  connector_key: string;
  fee_minor: number | null;
  eligible: boolean;
  reason?: 'already_tried' | 'simulated_in_live_mode' | 'method_not_supported' | 'not_available';
}

export interface Ranked {
  /** Every connector of the table, eligible first by fee (ties: table order), then the others. */
  candidates: Candidate[];
  /** The cheapest eligible connector. */
  chosen?: { connector: Acquirer; feeMinor: number };
}

export class Router {
  constructor(private connectors: Record<string, Acquirer>, private table: FeeTable = DEFAULT_TABLE) {}

  /** The connector keys this deployment has. */
  keys(): string[] {
    return Object.keys(this.connectors);
  }

  has(key: string): boolean {
    return key in this.connectors;
  }

  /** The deployment's default table (a tenant without its own routing table uses it). */
  defaultTable(): FeeTable {
    return this.table;
  }

  /** The connector for a method, or undefined (payment_intent.no_route), e.g. for `bnpl`, or any method in live mode with only simulators. */
  route(method: string, livemode: boolean, table?: FeeTable): Route | undefined {
    return this.next(method, livemode, [], table);
  }

  /** The next eligible connector for a method, skipping those already tried (cross-connector retry): the cheapest on `totalMinor`, or the first of the table without one. */
  next(method: string, livemode: boolean, tried: readonly string[], table: FeeTable = this.table, totalMinor?: number, brand?: string): Route | undefined {
    const r = this.rank(method, livemode, totalMinor ?? 0, { table, tried, brand });
    if (!r.chosen) return undefined;
    return { connector: r.chosen.connector, fee: scheduleFor(table[r.chosen.connector.key]![method]!, brand) };
  }

  /** Ranks the table's connectors for a charge: cheapest eligible first. Pure. */
  rank(method: string, livemode: boolean, totalMinor: number, o: { table?: FeeTable; tried?: readonly string[]; brand?: string } = {}): Ranked {
    const table = o.table ?? this.table;
    const tried = o.tried ?? [];
    const eligible: Array<Candidate & { order: number }> = [];
    const others: Candidate[] = [];
    let order = 0;
    for (const [key, fees] of Object.entries(table)) {
      const m = fees[method];
      if (!m) continue;
      const c = this.connectors[key];
      const fee = feeFor(scheduleFor(m, o.brand), totalMinor);
      const reason: Candidate['reason'] = !c
        ? 'not_available'
        : livemode && c.simulated
          ? 'simulated_in_live_mode'
          : !c.supports(method as PaymentMethod)
            ? 'method_not_supported'
            : tried.includes(key)
              ? 'already_tried'
              : undefined;
      if (reason) others.push({ connector_key: key, fee_minor: fee, eligible: false, reason });
      else eligible.push({ connector_key: key, fee_minor: fee, eligible: true, order: order++ });
    }
    eligible.sort((a, b) => a.fee_minor! - b.fee_minor! || a.order - b.order);
    const candidates: Candidate[] = [...eligible.map(({ order: _o, ...c }) => c), ...others];
    const first = eligible[0];
    return { candidates, chosen: first ? { connector: this.connectors[first.connector_key]!, feeMinor: first.fee_minor! } : undefined };
  }

  /** The fee a connector charges for a method on a total (0 when it has no table for it). */
  fee(connectorKey: string, method: string, totalMinor: number, table: FeeTable = this.table, brand?: string): number {
    const s = table[connectorKey]?.[method];
    return s ? feeFor(scheduleFor(s, brand), totalMinor) : 0;
  }

  /** Whether a connector can keep a card on file in this mode. */
  canSave(key: string, livemode: boolean): boolean {
    const c = this.connectors[key];
    return !!c && c.savesMethods !== false && !(livemode && c.simulated);
  }

  connector(key: string): Acquirer {
    const c = this.connectors[key];
    if (!c) throw new Error(`unknown connector ${key}`);
    return c;
  }
}
