// The `sim` acquirer: test-mode behaviour of service-spec.md "Test mode" and decisions.md §5.
// It keeps its own book of calls by idempotency key (table sim_provider_calls), as a real
// provider would: a repeated key returns the first outcome and never moves money twice.
import { createHash, randomBytes } from 'node:crypto';
import type { Sql } from '../kernel/db.js';
import { type Acquirer, type ChargeRequest, type NextAction, type PaymentMethod, type ProviderOutcome, type RefundLookup, type RefundOutcome, type RefundRequest, type SaveOutcome } from './acquirer.js';
import { makeClabe } from './clabe.js';
import { OutcomeUnknown } from '../kernel/outbound.js';

const HOURS = 3600_000;
/** decisions.md §5: expiry 72 h (oxxo), 24 h (spei), 30 min (codi). */
export const PUSH_EXPIRY_MS: Record<'spei' | 'codi' | 'oxxo', number> = { spei: 24 * HOURS, codi: 30 * 60_000, oxxo: 72 * HOURS };
/** tok_sim_slow answers after about this long. */
export const SLOW_MS = 2000;

type Stored = ProviderOutcome & { firstCallFails?: boolean };

const digits = (seed: string, n: number) => {
  const h = createHash('sha256').update(seed).digest();
  let s = '';
  for (let i = 0; s.length < n; i++) s += String(h[i % h.length] % 10);
  return s;
};

/** The two simulated card connectors: `sim` (every method) and `sim_b` (cards only, its own fees and issuer path). */
export type SimKey = 'sim' | 'sim_b';

/**
 * Tokens that behave differently on `sim_b` (docs/routing.md): its issuer path is another bank, so
 * `tok_sim_issuer_down` and `tok_sim_provider_500` succeed there, while `tok_simb_issuer_down` and
 * `tok_simb_provider_500` fail on `sim_b` only (on `sim` they are "any other value": success).
 * A cross-connector retry is therefore testable offline in both directions.
 */
function tokenFor(key: SimKey, token: string | undefined): string | undefined {
  if (key === 'sim_b') {
    if (token === 'tok_sim_issuer_down' || token === 'tok_sim_provider_500') return 'tok_sim_ok';
    if (token === 'tok_simb_issuer_down') return 'tok_sim_issuer_down';
    if (token === 'tok_simb_provider_500') return 'tok_sim_provider_500';
  }
  return token;
}

/** The outcome a fresh call gets, from the token, the amount and the method. Pure. */
export function simOutcome(req: ChargeRequest, providerRef: string, baseUrl: string, key: SimKey = 'sim'): Stored {
  req = { ...req, paymentToken: tokenFor(key, req.paymentToken) };
  const decline = (kind: 'hard_decline' | 'soft_decline', code: string, message: string): Stored => ({ kind, providerRef, code, message });
  if (req.currency !== 'MXN') return decline('hard_decline', 'currency_not_supported', `The sim connector charges MXN only, not ${req.currency}.`);
  // spec: an amount whose cents are 99 is always a hard decline with code do_not_retry.
  if (req.amountMinor % 100 === 99) return decline('hard_decline', 'do_not_retry', 'The issuer declined the charge: do not retry.');
  const m: PaymentMethod = req.method;
  if (m === 'spei' || m === 'codi' || m === 'oxxo') {
    const expiresAt = new Date(req.now.getTime() + PUSH_EXPIRY_MS[m]).toISOString();
    let nextAction: NextAction;
    if (m === 'spei') nextAction = { type: 'bank_transfer', clabe: makeClabe('646', '180', digits(providerRef, 11)), beneficiary: 'Orquesta SIM SPEI', expires_at: expiresAt };
    else if (m === 'codi') nextAction = { type: 'codi_qr', qr_payload: `codi://sim/pay?ref=${providerRef}&amount=${req.amountMinor}&currency=${req.currency}`, expires_at: expiresAt };
    else nextAction = { type: 'oxxo_voucher', reference: `9300${digits(providerRef, 10)}`, expires_at: expiresAt };
    return { kind: 'action_required', providerRef, nextAction, expiresAt };
  }
  if (m === 'dimo') return decline('hard_decline', 'method_unavailable', 'DiMo payments are not available at present.');
  switch (req.paymentToken) {
    case 'tok_sim_auth':
      return { kind: 'authorized', providerRef };
    case 'tok_sim_3ds':
      return { kind: 'action_required', providerRef, nextAction: { type: 'redirect', redirect_url: `${baseUrl}/sim/3ds/${providerRef}` } };
    case 'tok_sim_insufficient':
      return decline('hard_decline', 'insufficient_funds', 'The card has insufficient funds.');
    case 'tok_sim_fraud':
      return decline('hard_decline', 'suspected_fraud', 'The issuer suspects fraud.');
    case 'tok_sim_issuer_down':
      return decline('soft_decline', 'issuer_unavailable', 'The issuer is unavailable; another attempt may succeed.');
    case 'tok_sim_provider_500':
      // The provider answers 500: the caller cannot know the outcome until it asks (retrieve).
      return { ...decline('soft_decline', 'provider_error', 'The provider failed with a generic error.'), firstCallFails: true };
    case 'tok_sim_badcreds':
      return decline('hard_decline', 'invalid_credentials', 'The connector credentials were refused by the provider (configuration error).');
    case 'tok_sim_dispute':
      // Captured, then the cardholder disputes it: the provider reports the dispute with the charge.
      return { kind: 'captured', providerRef, dispute: { reason: 'fraudulent' } };
    default:
      // tok_sim_ok, tok_sim_slow and any other value: success, immediate capture.
      return { kind: 'captured', providerRef };
  }
}

const strip = (o: Stored): ProviderOutcome => {
  const { firstCallFails: _f, ...rest } = o;
  return rest as ProviderOutcome;
};

export class SimAcquirer implements Acquirer {
  readonly simulated = true;
  constructor(
    private sql: Sql,
    private baseUrl: string,
    private sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
    readonly key: SimKey = 'sim',
  ) {}

  supports(method: PaymentMethod): boolean {
    return this.key === 'sim_b' ? method === 'card' : ['card', 'spei', 'codi', 'oxxo', 'dimo'].includes(method);
  }

  async charge(req: ChargeRequest): Promise<ProviderOutcome> {
    if (req.paymentToken?.startsWith('sim_pm_')) {
      // A saved method behaves as the token it was saved from.
      const saved = await this.sql`select token from sim_provider_calls where provider_ref = ${req.paymentToken} and kind = 'save'`;
      if (!saved.length) return { kind: 'hard_decline', code: 'invalid_payment_method', message: 'The provider does not know this saved method.' };
      req = { ...req, paymentToken: (saved[0].token as string | null) ?? undefined };
    }
    const providerRef = `${this.key}_${req.method === 'card' ? 'ch' : req.method}_${randomBytes(10).toString('hex')}`;
    const fresh = simOutcome(req, providerRef, this.baseUrl, this.key);
    const moved = fresh.kind === 'captured' ? 1 : 0;
    const [row] = await this.sql`
      -- the provider's book: first call records the outcome, repeats only count
      insert into sim_provider_calls (idempotency_key, kind, provider_ref, tenant_id, livemode, method, amount_minor, currency, token, outcome, charges)
      values (${req.idempotencyKey}, 'charge', ${providerRef}, ${req.tenantId}, ${req.livemode}, ${req.method}, ${req.amountMinor},
              ${req.currency}, ${req.paymentToken ?? null}, ${this.sql.json(fresh as never)}, ${moved})
      on conflict (idempotency_key, tenant_id) do update set calls = sim_provider_calls.calls + 1, updated_at = now()
      returning outcome, (xmax = 0) as inserted`;
    const stored = row.outcome as Stored;
    if (row.inserted && tokenFor(this.key, req.paymentToken) === 'tok_sim_slow') await this.sleep(SLOW_MS);
    if (row.inserted && stored.firstCallFails) throw new OutcomeUnknown('provider_error', 'sim provider answered HTTP 500 (outcome unknown until retrieved)');
    return strip(stored);
  }

  async retrieve(idempotencyKey: string): Promise<ProviderOutcome | null> {
    const rows = await this.sql`
      update sim_provider_calls set retrievals = retrievals + 1 where idempotency_key = ${idempotencyKey} returning outcome`;
    return rows.length ? strip(rows[0].outcome as Stored) : null;
  }

  async capture(idempotencyKey: string): Promise<ProviderOutcome> {
    const rows = await this.sql`
      -- capture an authorization once; a repeat finds it captured and moves nothing
      update sim_provider_calls
         set outcome = jsonb_build_object('kind', 'captured', 'providerRef', provider_ref),
             charges = charges + case when outcome->>'kind' = 'authorized' then 1 else 0 end,
             calls = calls + 1, updated_at = now()
       where idempotency_key = ${idempotencyKey} and outcome->>'kind' in ('authorized', 'captured')
       returning outcome`;
    if (!rows.length) {
      const known = await this.retrieve(idempotencyKey);
      if (!known) throw new OutcomeUnknown('unreachable', `sim: no charge with key ${idempotencyKey} to capture`);
      return known;
    }
    return rows[0].outcome as ProviderOutcome;
  }

  async void(idempotencyKey: string): Promise<ProviderOutcome> {
    const rows = await this.sql`
      update sim_provider_calls
         set outcome = jsonb_build_object('kind', 'voided', 'providerRef', provider_ref), calls = calls + 1, updated_at = now()
       where idempotency_key = ${idempotencyKey} and outcome->>'kind' in ('authorized', 'action_required', 'voided')
       returning outcome`;
    const known = rows.length ? (rows[0].outcome as ProviderOutcome) : await this.retrieve(idempotencyKey);
    if (!known) throw new OutcomeUnknown('unreachable', `sim: no charge with key ${idempotencyKey} to void`);
    return known;
  }

  async refund(req: RefundRequest): Promise<RefundOutcome> {
    const providerRef = `sim_re_${randomBytes(10).toString('hex')}`;
    // Test-mode rule (ours): a refund whose cents are 98 is declined by the provider.
    const outcome: RefundOutcome =
      req.amountMinor % 100 === 98 ? { kind: 'failed', code: 'refund_declined', message: 'The provider declined the refund.' } : { kind: 'succeeded', providerRef };
    const [row] = await this.sql`
      insert into sim_provider_calls (idempotency_key, kind, provider_ref, tenant_id, livemode, method, amount_minor, currency, token, outcome, charges)
      values (${req.idempotencyKey}, 'refund', ${providerRef}, ${req.tenantId}, ${req.livemode}, 'card', ${req.amountMinor}, ${req.currency}, ${req.chargeKey},
              ${this.sql.json(outcome as never)}, 0)
      on conflict (idempotency_key, tenant_id) do update set calls = sim_provider_calls.calls + 1, updated_at = now()
      returning outcome`;
    return row.outcome as RefundOutcome;
  }

  /** The sim's book has every refund under its key: the outcome it gave, or null when it never saw the key. */
  async lookupRefund(req: RefundLookup): Promise<RefundOutcome | null> {
    const rows = await this.sql`
      update sim_provider_calls set retrievals = retrievals + 1 where idempotency_key = ${req.idempotencyKey} and kind = 'refund' returning outcome`;
    return rows.length ? (rows[0].outcome as RefundOutcome) : null;
  }

  async saveMethod(req: { idempotencyKey: string; token: string; tenantId: string; livemode: boolean }): Promise<SaveOutcome> {
    const providerRef = `sim_pm_${randomBytes(10).toString('hex')}`;
    const [brand, last4] =
      req.token.includes('mastercard') ? ['mastercard', '4444'] : req.token.includes('amex') ? ['amex', '0005'] : ['visa', req.token === 'tok_sim_ok' ? '4242' : digits(req.token, 4)];
    const outcome: SaveOutcome = { kind: 'saved', providerRef, brand, last4 };
    const [row] = await this.sql`
      insert into sim_provider_calls (idempotency_key, kind, provider_ref, tenant_id, livemode, method, amount_minor, currency, token, outcome, charges)
      values (${req.idempotencyKey}, 'save', ${providerRef}, ${req.tenantId}, ${req.livemode}, 'card', 0, 'MXN', ${req.token}, ${this.sql.json(outcome as never)}, 0)
      on conflict (idempotency_key, tenant_id) do update set calls = sim_provider_calls.calls + 1, updated_at = now()
      returning outcome`;
    return row.outcome as SaveOutcome;
  }

  /** The cardholder passes or fails the 3-D Secure step of a charge. */
  async complete3ds(providerRef: string, approve: boolean): Promise<void> {
    const outcome = approve
      ? this.sql`jsonb_build_object('kind', 'captured', 'providerRef', provider_ref)`
      : this.sql`jsonb_build_object('kind', 'hard_decline', 'providerRef', provider_ref, 'code', 'authentication_failed', 'message', 'The cardholder failed 3-D Secure authentication.')`;
    await this.sql`
      update sim_provider_calls set outcome = ${outcome}, charges = ${approve ? 1 : 0}, updated_at = now()
       where provider_ref = ${providerRef} and outcome->>'kind' = 'action_required'`;
  }

  /**
   * The outside world pays a push payment (or completes a 3-D Secure redirect): operator
   * simulation of an incoming payment. Returns the key the provider knows it by, or null.
   */
  async markPaid(tenantId: string, providerRef: string): Promise<string | null> {
    const rows = await this.sql`
      update sim_provider_calls
         set outcome = jsonb_build_object('kind', 'captured', 'providerRef', provider_ref), charges = 1, paid_at = now(), updated_at = now()
       where provider_ref = ${providerRef} and tenant_id = ${tenantId} and outcome->>'kind' in ('action_required', 'captured')
       returning idempotency_key`;
    return rows.length ? (rows[0].idempotency_key as string) : null;
  }
}
