// Connect: accounts of sub-merchants (from approved onboarding applications) and transfers that
// split a captured charge between them, on the entity actor (kernel/entity.ts).
// spec: Resources > connect_account and connect_transfer; Endpoints > Connect; Errors > Connect.
//
// - One account per application: the unique index says so even when two requests race
//   (connect.account_conflict). The settlement CLABE is re-sealed for the account and shown masked.
// - A transfer is one transaction: the transfer, one payout (processing) per split to the
//   sub-merchant's CLABE, the splits that point at them, the ledger entry (the capture's credits
//   for the charge taken back, the fee net of IVA plus its IVA, one payable per split:
//   actors/connect-ledger.ts), and the payouts' jobs after the commit. `application_fee_minor + Σ splits =
//   charge_amount_minor` is checked first (connect.split_mismatch); that the charge is never split
//   for more than it captured is checked by the database (trigger connect_transfers_within_captured,
//   migration 0061), which serializes concurrent transfers of one charge.
import { randomUUID } from 'node:crypto';
import type { Account } from '../kernel/accounts.js';
import type { Sql } from '../kernel/db.js';
import { hydrateRow, type EntityActor, type EntityRow, type EntityDef, type EntityPlan, type Hydrated, type Write } from '../kernel/entity.js';
import { ApiError } from '../kernel/errors.js';
import type { IdempotencyHandle } from '../kernel/idempotency.js';
import { initialState, machineStep } from '../kernel/machine-step.js';
import type { Principal } from '../kernel/principal.js';
import { checkClabe, maskClabe } from '../formats/clabe.js';
import { connectAccountMachine } from '../machines/connect-account.js';
import type { SecretBox } from '../kernel/secret-box.js';
import { transferLines } from './connect-ledger.js';
import type { Onboarding } from './onboarding.js';
import type { Payouts } from './payouts.js';

export interface AccountRow extends EntityRow {
  onboarding_application_id: string;
  sub_merchant_name: string;
  rfc: string | null;
  settlement_clabe_sealed: string;
  settlement_clabe_masked: string;
  connector_key: string;
  created_at: Date;
  updated_at: Date;
}

export const accountClabeContext = (accountId: string) => `connect_account:${accountId}:clabe`;

export function accountView(r: AccountRow) {
  return {
    id: r.id,
    object: 'connect_account' as const,
    onboarding_application_id: r.onboarding_application_id,
    settlement_clabe_masked: r.settlement_clabe_masked,
    sub_merchant_name: r.sub_merchant_name,
    status: r.status,
    connector_key: r.connector_key,
    livemode: r.livemode,
    created_at: r.created_at.toISOString(),
  };
}

type SplitJoin = { id: string; connect_account_id: string; amount_minor: number; payout_id: string; payout_status: string };

export function transferView(t: Record<string, unknown>, splits: SplitJoin[]) {
  return {
    id: t.id as string,
    object: 'connect_transfer' as const,
    payment_intent_id: t.payment_intent_id as string,
    charge_amount_minor: Number(t.charge_amount_minor),
    application_fee_minor: Number(t.application_fee_minor),
    currency: t.currency as string,
    status: t.status as string,
    livemode: t.livemode as boolean,
    created_at: (t.created_at as Date).toISOString(),
    // A split is `dispersing` while its payout is processing, then the payout's outcome.
    splits: splits.map((s) => ({ id: s.id, connect_account_id: s.connect_account_id, amount_minor: Number(s.amount_minor), status: s.payout_status === 'processing' ? 'dispersing' : s.payout_status, payout_id: s.payout_id })),
  };
}

export interface ConnectDeps {
  sql: Sql;
  actor: EntityActor;
  secrets: SecretBox;
  onboarding: Onboarding;
  payouts: Payouts;
}

type HydratedAccount = Hydrated<AccountRow>;
type AccountCommand = { action: 'suspend' | 'reactivate' };

export interface CreateTransfer {
  payment_intent_id: string;
  charge_amount_minor: number;
  application_fee_minor: number;
  currency: string;
  splits: ReadonlyArray<{ connect_account_id: string; amount_minor: number }>;
}

export class Connect {
  readonly accountDef: EntityDef<HydratedAccount, AccountCommand>;
  readonly transferDef = { kind: 'connect_transfer', table: 'connect_transfers' } as const;

  constructor(private d: ConnectDeps) {
    this.accountDef = {
      kind: 'connect_account',
      table: 'connect_accounts',
      notFound: 'connect.account_not_found',
      busy: 'connect.concurrent_modification',
      hydrate: hydrateRow('connect_accounts', (r) => r as unknown as AccountRow),
      plan: (h, cmd, env) => {
        const event = { type: cmd.action === 'suspend' ? 'operator.suspend' : 'operator.reactivate' } as const;
        const step = machineStep(connectAccountMachine, h.row.status, undefined, event);
        // Suspending a suspended account (or reactivating an active one) is a no-op.
        if (step.value === h.row.status) return { result: h.row };
        return { set: { status: step.value, updated_at: env.at }, history: { event: event.type }, result: { ...h.row, status: step.value, updated_at: env.at, version: h.row.version + 1 } };
      },
    };
  }

  // ---- accounts ----------------------------------------------------------------------------------

  async createAccount(p: Principal, body: { onboarding_application_id: string; connector_key?: 'stp' | 'sim' }, idem?: IdempotencyHandle) {
    const [app] = await this.d.sql`
      select * from onboarding_applications where id = ${body.onboarding_application_id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (!app) throw new ApiError('connect.application_not_found', `No onboarding application ${body.onboarding_application_id} exists for this key.`);
    if (app.status !== 'approved') throw new ApiError('connect.application_not_approved', `Onboarding application ${String(app.id)} is ${String(app.status)}; an account needs an approved application.`);
    const clabe = this.d.onboarding.openClabe({ id: app.id as string, clabe_sealed: app.clabe_sealed as string | null });
    const check = clabe ? checkClabe(clabe) : undefined;
    if (!check?.ok) throw new ApiError('connect.application_not_approved', `Onboarding application ${String(app.id)} has no valid settlement CLABE${check && !check.ok ? ` (${check.message})` : ''}.`);
    const connectorKey = body.connector_key ?? 'stp';
    if (p.livemode && connectorKey !== 'stp') throw new ApiError('payout.invalid_connector', `Connector ${connectorKey} is a test-mode simulator; live accounts pay out through stp.`);
    const [dup] = await this.d.sql`select id from connect_accounts where onboarding_application_id = ${app.id as string}`;
    if (dup) throw new ApiError('connect.account_conflict', `Onboarding application ${String(app.id)} is already linked to connect account ${String(dup.id)}.`);
    const at = new Date();
    const id = randomUUID();
    const row: AccountRow = {
      id, tenant_id: p.tenantId, livemode: p.livemode, status: initialState(connectAccountMachine), version: 0,
      onboarding_application_id: app.id as string, sub_merchant_name: app.legal_name as string, rfc: (app.rfc as string | null) ?? null,
      settlement_clabe_sealed: this.d.secrets.seal(check.clabe, accountClabeContext(id)), settlement_clabe_masked: maskClabe(check.clabe),
      connector_key: connectorKey, created_at: at, updated_at: at,
    };
    const view = accountView(row);
    try {
      await this.d.actor.create(this.accountDef, p, { create: { ...row }, history: { event: 'create', data: { onboarding_application_id: row.onboarding_application_id } }, response: { status: 201, body: view }, result: row }, { idem, at });
    } catch (e) {
      const err = e as { code?: string; constraint_name?: string };
      if (err.code === '23505' && err.constraint_name === 'connect_accounts_onboarding_application_id_key') {
        throw new ApiError('connect.account_conflict', `Onboarding application ${String(app.id)} is already linked to a connect account.`);
      }
      throw e;
    }
    return view;
  }

  async getAccount(p: Principal, id: string) {
    const [r] = await this.d.sql`select * from connect_accounts where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (!r) throw new ApiError('connect.account_not_found', `No connect account ${id} exists for this key.`);
    return accountView(r as unknown as AccountRow);
  }

  async listAccounts(p: Principal, limit = 100) {
    const rows = await this.d.sql`
      select * from connect_accounts where tenant_id = ${p.tenantId} and livemode = ${p.livemode}
       order by created_at desc, id desc limit ${Math.min(Math.max(1, limit), 500)}`;
    return { object: 'list' as const, data: rows.map((r) => accountView(r as unknown as AccountRow)) };
  }

  /** Operator: suspend (transfers refused) or reactivate an account. Idempotent. */
  async setAccountStatus(tenantId: string, id: string, action: 'suspend' | 'reactivate') {
    const [a] = await this.d.sql`select livemode from connect_accounts where id = ${id} and tenant_id = ${tenantId}`;
    if (!a) throw new ApiError('connect.account_not_found', `No connect account ${id} for tenant ${tenantId}.`);
    const row = await this.d.actor.run<HydratedAccount, AccountCommand, void, AccountRow>(this.accountDef, { tenantId, livemode: a.livemode as boolean }, id, { action }, { waitMs: 2000 });
    return accountView(row);
  }

  // ---- transfers ---------------------------------------------------------------------------------

  async createTransfer(p: Principal, body: CreateTransfer, idem?: IdempotencyHandle) {
    const sql = this.d.sql;
    const [pi] = await sql`
      select id, status, currency from payment_intents where id = ${body.payment_intent_id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (!pi) throw new ApiError('connect.invalid_payment_intent', `No payment intent ${body.payment_intent_id} exists for this key.`);
    if (pi.status !== 'succeeded') throw new ApiError('connect.invalid_payment_intent', `Payment intent ${String(pi.id)} is ${String(pi.status)}; only a succeeded charge can be split.`);
    if (body.currency !== pi.currency) throw new ApiError('connect.invalid_currency', `The charge is in ${String(pi.currency)}; the transfer must be too (got ${body.currency}).`);
    if (body.application_fee_minor > body.charge_amount_minor) throw new ApiError('connect.invalid_charge', `application_fee_minor ${body.application_fee_minor} is larger than charge_amount_minor ${body.charge_amount_minor}.`);
    const sum = body.splits.reduce((s, x) => s + x.amount_minor, 0);
    if (body.application_fee_minor + sum !== body.charge_amount_minor) {
      throw new ApiError('connect.split_mismatch', `application_fee_minor ${body.application_fee_minor} + splits ${sum} = ${body.application_fee_minor + sum}, but charge_amount_minor is ${body.charge_amount_minor}; they must be equal.`);
    }
    const ids = [...new Set(body.splits.map((s) => s.connect_account_id))];
    const accounts = await sql`select * from connect_accounts where id in ${sql(ids)} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    const byId = new Map(accounts.map((a) => [a.id as string, a as unknown as AccountRow]));
    for (const id of ids) {
      const a = byId.get(id);
      if (!a) throw new ApiError('connect.account_not_found', `No connect account ${id} exists for this key.`);
      if (a.status !== 'active') throw new ApiError('connect.account_suspended', `Connect account ${id} is ${a.status}; it takes no transfers.`);
    }
    // What the charge's capture credited (sales, IVA trasladado, tip): the transfer takes back its
    // share of exactly that (actors/connect-ledger.ts). Capture entries never change, so they are
    // read before the transaction.
    const credits = await sql`
      select l.account, l.currency, sum(l.amount_minor)::bigint as amount_minor
        from journal_entries e join journal_lines l on l.entry_id = e.id and l.tenant_id = e.tenant_id
       where e.tenant_id = ${p.tenantId} and e.livemode = ${p.livemode} and e.kind = 'charge.captured' and e.ref_type = 'attempt'
         and e.ref_id in (select id from attempts where tenant_id = ${p.tenantId} and payment_intent_id = ${body.payment_intent_id})
         and l.amount_minor < 0 and l.account not like 'connector_receivable:%'
       group by l.account, l.currency`;
    const captureCredits = credits.map((c) => ({ account: c.account as Account, currency: c.currency as string, amountMinor: Number(c.amount_minor) }));
    const captured = captureCredits.filter((c) => c.currency === body.currency).reduce((s, c) => s - c.amountMinor, 0);
    if (body.charge_amount_minor > captured) {
      throw new ApiError('connect.invalid_charge', `charge_amount_minor ${body.charge_amount_minor} exceeds the ${captured} captured for payment intent ${body.payment_intent_id}.`);
    }
    const at = new Date();
    const transferId = randomUUID();
    const writes: Write[] = [];
    const also: EntityPlan[] = [];
    const splits: SplitJoin[] = [];
    const jobs = [];
    for (const [i, s] of body.splits.entries()) {
      const a = byId.get(s.connect_account_id)!;
      const railKey = await this.d.payouts.railKeyFor(p.tenantId, p.livemode, a.connector_key);
      const clabe = this.d.secrets.open(a.settlement_clabe_sealed, accountClabeContext(a.id));
      const payout = this.d.payouts.newRow(p, { clabe, beneficiary_name: a.sub_merchant_name, beneficiary_rfc: a.rfc, concepto: `Dispersion ${transferId.slice(0, 8)}` }, {
        amountMinor: s.amount_minor, connectorKey: a.connector_key, railKey, requestedBy: p.keyId, connectAccountId: a.id, at,
      });
      const splitId = randomUUID();
      // Each split's payout is a payout entity's creation, committed by the entity actor with the transfer.
      also.push({ def: this.d.payouts.def, row: payout, plan: { create: { ...payout }, history: { event: 'create', data: { amount_minor: payout.amount_minor, rail: railKey, transfer_id: transferId, split_id: splitId } } } });
      writes.push({ op: 'insert', table: 'connect_splits', row: { id: splitId, tenant_id: p.tenantId, livemode: p.livemode, transfer_id: transferId, position: i, connect_account_id: a.id, amount_minor: s.amount_minor, payout_id: payout.id, created_at: at } });
      splits.push({ id: splitId, connect_account_id: a.id, amount_minor: s.amount_minor, payout_id: payout.id, payout_status: payout.status });
      jobs.push(this.d.payouts.executeRequest(payout.id));
    }
    const row = {
      id: transferId, status: 'split', payment_intent_id: body.payment_intent_id, charge_amount_minor: body.charge_amount_minor,
      application_fee_minor: body.application_fee_minor, currency: body.currency, requested_by: p.keyId, created_at: at, updated_at: at,
    };
    const view = transferView({ ...row, livemode: p.livemode }, splits);
    try {
      await this.d.actor.create(this.transferDef, p, {
        create: row,
        also,
        writes,
        history: { event: 'create', data: { charge_amount_minor: body.charge_amount_minor, application_fee_minor: body.application_fee_minor, splits: splits.length } },
        ledger: [{
          tenantId: p.tenantId, livemode: p.livemode, kind: 'connect_transfer.split', refType: 'connect_transfer', refId: transferId,
          memo: `split of payment intent ${body.payment_intent_id}`,
          lines: transferLines(body.currency, body.charge_amount_minor, body.application_fee_minor, body.splits.map((s) => ({ connectAccountId: s.connect_account_id, amountMinor: s.amount_minor })), captureCredits),
        }],
        jobs,
        response: { status: 201, body: view },
        result: view,
      }, { idem, at });
    } catch (e) {
      // The database refused (OQ461): other transfers of this charge committed first. If the charge
      // no longer fits, say what is left; otherwise it was something else.
      const code = (e as { code?: string }).code;
      if (code !== 'OQ461') throw e;
      const [left] = await sql`
        select (select coalesce(sum(amount_minor), 0) from attempts where tenant_id = ${p.tenantId} and payment_intent_id = ${body.payment_intent_id} and status in ('captured', 'settled', 'partially_refunded', 'refunded'))
             - (select coalesce(sum(r.amount_minor), 0) from refunds r join attempts a on a.id = r.attempt_id and a.tenant_id = r.tenant_id where a.tenant_id = ${p.tenantId} and a.payment_intent_id = ${body.payment_intent_id} and r.status in ('requested', 'succeeded'))
             - (select coalesce(sum(charge_amount_minor), 0) from connect_transfers where tenant_id = ${p.tenantId} and payment_intent_id = ${body.payment_intent_id}) as n`;
      if (body.charge_amount_minor <= Number(left.n)) throw e;
      throw new ApiError('connect.invalid_charge', `charge_amount_minor ${body.charge_amount_minor} exceeds the ${Math.max(0, Number(left.n))} of payment intent ${body.payment_intent_id} not yet split (captured less refunds and earlier transfers).`);
    }
    return view;
  }

  private async splitsOf(transferIds: string[]): Promise<Map<string, SplitJoin[]>> {
    const out = new Map<string, SplitJoin[]>();
    if (!transferIds.length) return out;
    const rows = await this.d.sql`
      select s.transfer_id, s.id, s.connect_account_id, s.amount_minor, s.payout_id, p.status as payout_status
        from connect_splits s join payouts p on p.id = s.payout_id and p.tenant_id = s.tenant_id
       where s.transfer_id in ${this.d.sql(transferIds)} order by s.transfer_id, s.position`;
    for (const r of rows) {
      const list = out.get(r.transfer_id as string) ?? [];
      list.push(r as unknown as SplitJoin);
      out.set(r.transfer_id as string, list);
    }
    return out;
  }

  async getTransfer(p: Principal, id: string) {
    const [t] = await this.d.sql`select * from connect_transfers where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (!t) throw new ApiError('connect.transfer_not_found', `No connect transfer ${id} exists for this key.`);
    return transferView(t, (await this.splitsOf([id])).get(id) ?? []);
  }

  async listTransfers(p: Principal, limit = 100) {
    const rows = await this.d.sql`
      select * from connect_transfers where tenant_id = ${p.tenantId} and livemode = ${p.livemode}
       order by created_at desc, id desc limit ${Math.min(Math.max(1, limit), 500)}`;
    const splits = await this.splitsOf(rows.map((r) => r.id as string));
    return { object: 'list' as const, data: rows.map((t) => transferView(t, splits.get(t.id as string) ?? [])) };
  }
}
