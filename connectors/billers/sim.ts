// The `sim` biller aggregator (decisions.md §5): the amount due is derived from the reference
// deterministically; a reference of all zeros is unknown; one ending in 0000 is paid as failed. It
// keeps its own book of payments by key (sim_biller_payments), so a repeated key pays nothing
// again and tests can count calls.
import { createHash, randomBytes } from 'node:crypto';
import type { Sql } from '../../kernel/db.js';
import type { BillerGateway, BillInquiry, BillOrder, BillState } from './gateway.js';

const HOLDERS = ['María Guadalupe Hernández', 'José Luis García', 'Juana Martínez López', 'Francisco Pérez Ruiz', 'Rosa Elena Sánchez'];
export const SIM_BILL_FAILURE = 'The biller rejected the payment (simulated: reference ending in 0000).';

/** The sim's answer for a reference. Pure. */
export function simInquiry(billerCode: string, reference: string, today = new Date()): BillInquiry | null {
  if (/^0+$/.test(reference)) return null;
  const h = createHash('sha256').update(`${billerCode}:${reference}`).digest();
  const amountDueMinor = 10_000 + (h.readUInt32BE(0) % 240_000); // 100.00 to 2,499.99 MXN
  const due = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + 1, 1 + (h[4] % 28)));
  return { amountDueMinor, currency: 'MXN', holderName: HOLDERS[h[5] % HOLDERS.length], dueDate: due.toISOString().slice(0, 10) };
}

const stateOf = (r: Record<string, unknown>): BillState =>
  r.state === 'paid' ? { state: 'paid', providerRef: r.provider_ref as string } : { state: 'failed', providerRef: r.provider_ref as string, reason: r.failure_reason as string };

export class SimBillerGateway implements BillerGateway {
  readonly key = 'sim';
  constructor(private sql: Sql) {}

  async inquire(billerCode: string, reference: string) {
    return simInquiry(billerCode, reference);
  }

  async pay(o: BillOrder): Promise<BillState> {
    const failed = o.reference.endsWith('0000');
    const [r] = await this.sql`
      insert into sim_biller_payments (key, tenant_id, biller_code, reference, amount_minor, state, provider_ref, failure_reason)
      values (${o.key}, ${o.tenantId}, ${o.billerCode}, ${o.reference}, ${o.amountMinor}, ${failed ? 'failed' : 'paid'},
              ${`sim_bp_${randomBytes(8).toString('hex')}`}, ${failed ? SIM_BILL_FAILURE : null})
      on conflict (key, tenant_id) do update set pays = sim_biller_payments.pays + 1
      returning *`;
    return stateOf(r);
  }

  async status(key: string): Promise<BillState | null> {
    const rows = await this.sql`update sim_biller_payments set status_queries = status_queries + 1 where key = ${key} returning *`;
    return rows.length ? stateOf(rows[0]) : null;
  }
}
