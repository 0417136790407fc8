// Which connector serves a method, and what it costs (the fee posted to the ledger at capture).
// Live mode never routes to a simulator (architecture invariant 9): with only `sim` configured, a
// live key has no route (payment_intent.no_route) and nothing moves.
import type { Acquirer, PaymentMethod } from './acquirer.js';

export interface FeeSchedule {
  /** Basis points of the charged total. */
  bps: number;
  fixedMinor: number;
}

/** spec-free, illustrative fees of the sim connector (MXN cents). */
export const SIM_FEES: Record<PaymentMethod, FeeSchedule> = {
  card: { bps: 290, fixedMinor: 250 },
  spei: { bps: 0, fixedMinor: 500 },
  codi: { bps: 0, fixedMinor: 0 },
  oxxo: { bps: 250, fixedMinor: 1000 },
  dimo: { bps: 0, fixedMinor: 0 },
};

export const feeFor = (s: FeeSchedule, totalMinor: number) => Math.round((totalMinor * s.bps) / 10_000) + s.fixedMinor;

export interface Route {
  connector: Acquirer;
  fee: FeeSchedule;
}

export class Router {
  constructor(private connectors: Record<string, Acquirer>, private table: Record<string, Record<string, FeeSchedule>> = { sim: SIM_FEES }) {}

  /** The connector for a method, or undefined (payment_intent.no_route), e.g. for `bnpl`, or any method in live mode with only simulators. */
  route(method: string, livemode: boolean): Route | undefined {
    return this.next(method, livemode, []);
  }

  /** The next eligible connector for a method, skipping those already tried (cross-connector retry). */
  next(method: string, livemode: boolean, tried: readonly string[]): Route | undefined {
    for (const [key, fees] of Object.entries(this.table)) {
      const c = this.connectors[key];
      if (!c || tried.includes(key) || (livemode && c.simulated)) continue;
      if ((method as PaymentMethod) in fees && c.supports(method as PaymentMethod)) return { connector: c, fee: fees[method] };
    }
    return undefined;
  }

  /** The fee a connector charges for a method on a total (0 when it has no table for it). */
  fee(connectorKey: string, method: string, totalMinor: number): number {
    const s = this.table[connectorKey]?.[method];
    return s ? feeFor(s, totalMinor) : 0;
  }

  /** Whether a connector can keep a card on file in this mode. */
  canSave(key: string, livemode: boolean): boolean {
    const c = this.connectors[key];
    return !!c && key in this.table && !(livemode && c.simulated);
  }

  connector(key: string): Acquirer {
    const c = this.connectors[key];
    if (!c) throw new Error(`unknown connector ${key}`);
    return c;
  }
}
