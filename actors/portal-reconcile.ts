// Reconciliation by hand (issue 29: the portal's review of a bank statement): an accountant matches a
// credit line the automatic rules left open to a succeeded charge, or undoes a match. The manual side
// of actors/bank-statements.ts, with its rules: under the book's reconciliation lock (the same lock
// order as an import), one matched line per charge, and the ledger kept true with the import's entry
// (issue 27, defect 8): a match posts the bank deposit entry — suspense debited when the import
// already posted the open line to bank and suspense (else the bank), the charge's receivable credited
// net of the connector's fee and the fee owed to the connector, so the receivable ends at zero — and
// an undo posts its reversal (the original entry stays: the books are append-only) with the bank's
// side back in suspense, where an unidentified line of such a statement waits.
import { ApiError } from '../kernel/errors.js';
import type { Db, Sql } from '../kernel/db.js';
import { postEntry } from '../kernel/ledger.js';
import { accounts, type Account } from '../kernel/accounts.js';
import { bankAccount, depositLines, lineView, lockBook } from './bank-statements.js';

interface Scope { tenantId: string; livemode: boolean }

async function lockedLine(tx: Db, p: Scope, statementId: string, lineId: string) {
  if (!/^[0-9]{1,18}$/.test(lineId)) throw new ApiError('bank_statement.line_not_found');
  const [l] = await tx`
    select l.*, s.bank, s.suspense_posted from bank_statement_lines l join bank_statements s on s.id = l.statement_id and s.tenant_id = l.tenant_id
     where l.id = ${lineId} and l.statement_id = ${statementId} and l.tenant_id = ${p.tenantId} and l.livemode = ${p.livemode}
       for update of l`;
  if (!l) throw new ApiError('bank_statement.line_not_found');
  return l;
}

export class ManualReconciliation {
  constructor(private d: { sql: Sql }) {}

  /** POST /v1/bank_statements/{id}/lines/{line}/match {payment_intent_id | receipt_code} */
  async match(p: Scope, statementId: string, lineId: string, body: { payment_intent_id?: string; receipt_code?: string }) {
    if (!body.payment_intent_id === !body.receipt_code) throw new ApiError('bank_statement.invalid_manual_match', 'Send one of `payment_intent_id` or `receipt_code`.');
    return this.d.sql.begin(async (tx) => {
      await lockBook(tx, p);
      const l = await lockedLine(tx, p, statementId, lineId);
      if (l.match_status === 'matched') throw new ApiError('bank_statement.line_match_conflict', 'This line is already matched: undo the match first.');
      if (l.match_status === 'duplicate') throw new ApiError('bank_statement.line_match_conflict', 'This line repeats a movement already imported (another export of the same statement): match that one.');
      const [c] = await tx`
        select a.id, a.payment_intent_id, a.connector_key, coalesce(a.fee_minor, 0) as fee_minor,
               exists (select 1 from bank_statement_lines m where m.attempt_id = a.id and m.tenant_id = a.tenant_id and m.match_status = 'matched') as taken
          from payment_intents pi
          join attempts a on a.payment_intent_id = pi.id and a.tenant_id = pi.tenant_id and a.status in ('captured', 'settled', 'refunded', 'partially_refunded')
          join cash_facts cf on cf.kind = 'charge' and cf.source_id = a.id and cf.tenant_id = a.tenant_id
         where pi.tenant_id = ${p.tenantId} and pi.livemode = ${p.livemode}
               ${body.payment_intent_id ? tx`and pi.id = ${body.payment_intent_id}` : tx`and pi.receipt_code = ${String(body.receipt_code).toUpperCase()}`}
         order by a.created_at desc limit 1`;
      if (!c) throw new ApiError('bank_statement.charge_not_found');
      if (c.taken) throw new ApiError('bank_statement.line_match_conflict', 'That charge is already matched to another line: undo that match first.');
      const entryId = await postEntry(tx, {
        tenantId: p.tenantId,
        livemode: p.livemode,
        kind: 'bank.deposit',
        refType: 'payment_intent',
        refId: c.payment_intent_id as string,
        memo: `bank statement line ${String(l.id)} (matched by hand)`,
        lines: depositLines({ bank: l.bank as string, inSuspense: l.suspense_posted as boolean, currency: l.currency as string, amountMinor: Number(l.credit_minor) }, String(c.connector_key), Number(c.fee_minor)),
      });
      const [u] = await tx`
        update bank_statement_lines set match_status = 'matched', attempt_id = ${c.id as string}, payment_intent_id = ${c.payment_intent_id as string},
               matched_at = now(), matched_by = 'manual', deposit_entry_id = ${entryId}
         where id = ${l.id as number} returning *`;
      return lineView(u);
    });
  }

  /** POST /v1/bank_statements/{id}/lines/{line}/unmatch: the line is open again; a deposit it posted is reversed. */
  async unmatch(p: Scope, statementId: string, lineId: string) {
    return this.d.sql.begin(async (tx) => {
      await lockBook(tx, p);
      const l = await lockedLine(tx, p, statementId, lineId);
      if (l.match_status === 'unmatched') throw new ApiError('bank_statement.line_match_conflict', 'This line is not matched.');
      if (l.deposit_entry_id) {
        const lines = await tx`select account, currency, amount_minor from journal_lines where entry_id = ${l.deposit_entry_id as string}`;
        await postEntry(tx, {
          tenantId: p.tenantId,
          livemode: p.livemode,
          kind: 'bank.deposit_reversal',
          refType: 'payment_intent',
          refId: l.payment_intent_id as string,
          memo: `bank statement line ${String(l.id)}: match undone`,
          // the bank's side goes back to suspense where the import posted the open line there
          lines: lines.map((x) => ({ account: (l.suspense_posted && x.account === bankAccount(l.bank as string) ? accounts.bankSuspense : x.account) as Account, currency: x.currency as string, amountMinor: -Number(x.amount_minor) })),
        });
      }
      const [u] = await tx`
        update bank_statement_lines set match_status = 'unmatched', attempt_id = null, payment_intent_id = null, matched_at = null, matched_by = null, deposit_entry_id = null
         where id = ${l.id as number} returning *`;
      return lineView(u);
    });
  }
}
