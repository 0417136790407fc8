// Which connector serves a method, and what it costs (the fee posted to the ledger at capture).
// No real acquirer is wired yet, so `sim` serves both modes; a real connector takes its place
// here for live keys, behind the same Acquirer interface.
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

  /** The connector for a method, or undefined (payment_intent.no_route), e.g. for `bnpl`. */
  route(method: string, _livemode: boolean): Route | undefined {
    for (const [key, fees] of Object.entries(this.table)) {
      const c = this.connectors[key];
      if (c && (method as PaymentMethod) in fees && c.supports(method as PaymentMethod)) return { connector: c, fee: fees[method] };
    }
    return undefined;
  }

  /** Whether a connector can keep a card on file. */
  canSave(key: string): boolean {
    return !!this.connectors[key] && key in this.table;
  }

  connector(key: string): Acquirer {
    const c = this.connectors[key];
    if (!c) throw new Error(`unknown connector ${key}`);
    return c;
  }
}
