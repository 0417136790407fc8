// Sanctions and blocked-taxpayer lists that onboarding screens an RFC against (SAT's article 69-B
// list of EFOS, companies that invoice simulated operations; and the like). One interface, a `sim`
// list for test mode, and the live list read from a table the operator loads (SAT publishes 69-B
// as a file; nothing here downloads it).
import type { Db } from '../kernel/db.js';

export interface ListMatch {
  list: string;
  reason: string;
}

export interface TaxpayerScreen {
  readonly key: string;
  /** The list entry of a normalized RFC, or null. */
  match(rfc: string): Promise<ListMatch | null>;
}

/** Test mode: simulated EFOS, documented in docs/connect.md (valid RFCs, check digit included). */
export const SIM_BLOCKED_RFCS: Readonly<Record<string, string>> = {
  EFO130101JK6: 'simulated EFOS (persona moral), definitive status under article 69-B CFF',
  EFS010203AB0: 'simulated EFOS (persona moral), presumed status under article 69-B CFF',
  EFOS850505LM3: 'simulated EFOS (persona física), definitive status under article 69-B CFF',
};

export class SimTaxpayerScreen implements TaxpayerScreen {
  readonly key = 'sim';
  async match(rfc: string): Promise<ListMatch | null> {
    const reason = SIM_BLOCKED_RFCS[rfc];
    return reason ? { list: 'SAT 69-B (simulated)', reason } : null;
  }
}

/** Live mode: the `blocked_taxpayers` table (operator-loaded lists). */
export class TableTaxpayerScreen implements TaxpayerScreen {
  readonly key = 'table';
  constructor(private db: Db) {}
  async match(rfc: string): Promise<ListMatch | null> {
    const [row] = await this.db`
      -- the first list that names this RFC
      select list, reason from blocked_taxpayers where rfc = ${rfc} order by list limit 1`;
    return row ? { list: row.list as string, reason: row.reason as string } : null;
  }
}
