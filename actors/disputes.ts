// Disputes (decisions.md §4): opened when the provider reports one for a charge (the sim does for
// tok_sim_dispute); the disputed amount moves to `disputed_funds` in the ledger.
import { accounts } from '../kernel/accounts.js';
import { randomUUID } from 'node:crypto';
import type { Principal } from '../kernel/principal.js';
import type { Db, Sql } from '../kernel/db.js';
import { tenantNow, tenantOffsetMsSql } from '../kernel/clock.js';
import { postEntry } from '../kernel/ledger.js';

const EVIDENCE_WINDOW_MS = 7 * 86400_000;

export function disputeView(r: Record<string, unknown>) {
  return {
    id: r.id as string,
    object: 'dispute' as const,
    payment_intent_id: r.payment_intent_id as string,
    attempt_id: r.attempt_id as string,
    amount_minor: Number(r.amount_minor),
    currency: r.currency as string,
    reason: r.reason as string,
    status: r.status as string,
    evidence_due_by: (r.evidence_due_by as Date).toISOString(),
    livemode: r.livemode as boolean,
    created_at: (r.created_at as Date).toISOString(),
  };
}

/**
 * Opens the dispute of an attempt once (a repeated report changes nothing), inside the caller's
 * transaction: the actor commits it with the capture that the provider reported it with.
 */
export async function openDispute(tx: Db, attemptId: string, reason: string): Promise<void> {
  {
    const [a] = await tx`
      select a.*, ${tenantOffsetMsSql(tx, 'a.tenant_id', 'a.livemode')} as offset_ms from attempts a
       where a.id = ${attemptId}`;
    if (!a) return;
    const now = tenantNow(Number(a.offset_ms), a.livemode as boolean);
    const id = randomUUID();
    const rows = await tx`
      insert into disputes (id, tenant_id, livemode, payment_intent_id, attempt_id, amount_minor, currency, reason, status, evidence_due_by)
      values (${id}, ${a.tenant_id}, ${a.livemode}, ${a.payment_intent_id}, ${a.id}, ${a.amount_minor}, ${a.currency}, ${reason}, 'needs_response', ${new Date(now.getTime() + EVIDENCE_WINDOW_MS)})
      on conflict (attempt_id, tenant_id) do nothing returning id`;
    if (!rows.length) return;
    await postEntry(tx, {
      tenantId: a.tenant_id as string,
      livemode: a.livemode as boolean,
      kind: 'dispute.opened',
      refType: 'dispute',
      refId: id,
      memo: `dispute of attempt ${attemptId}`,
      lines: [
        { account: accounts.disputedFunds, currency: a.currency as string, amountMinor: Number(a.amount_minor) },
        { account: accounts.connectorReceivable(String(a.connector_key)), currency: a.currency as string, amountMinor: -Number(a.amount_minor) },
      ],
    });
  }
}

export async function listDisputes(sql: Sql, p: Principal) {
  const rows = await sql`select * from disputes where tenant_id = ${p.tenantId} and livemode = ${p.livemode} order by created_at desc, id`;
  return { object: 'list' as const, data: rows.map(disputeView) };
}
