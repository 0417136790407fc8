// Test helpers for a merchant's own test key (decisions §7; Stripe's `test_helpers` are the model):
// what the payer would do outside the API, done by the merchant's integration tests, in test mode
// only. Pay a push payment (SPEI transfer, OXXO cash, CoDi QR) awaiting the payer, or approve or fail
// the card's 3-D Secure challenge. Each goes the way a real notice goes: the sim provider records
// it, the notice is written to the inbox, and the worker moves the intent with the provider's word
// (the answer comes before the move: the outcome arrives by webhook or a later GET, as the spec's
// asynchrony says). The operator's `simulate-inbound` stays (actors/inbound.ts).
import { ApiError } from '../kernel/errors.js';
import type { Principal } from '../kernel/principal.js';
import { complete3ds, simulateInbound, type InboundDeps } from './inbound.js';
import { hydrate, type AttemptRow, type HydratedIntent } from './payment-intent-store.js';

const PUSH_METHODS = new Set(['spei', 'oxxo', 'codi']);
/** The simulated connectors: only their payments can be paid or authenticated by a helper. */
const SIMULATED = new Set(['sim', 'sim_b']);

export type ThreeDsResult = 'approve' | 'fail';

function assertTestMode(p: Pick<Principal, 'livemode'>) {
  if (p.livemode) {
    throw new ApiError('test_helpers.unauthorized', 'Test helpers exist only in test mode: use an sk_test_ key. A live payment is made by the payer, never simulated.');
  }
}

/** The intent's attempt waiting on the payer, or why the helper does not apply. */
async function waitingAttempt(deps: InboundDeps, p: Pick<Principal, 'tenantId' | 'livemode'>, id: string, kind: 'push' | '3ds'): Promise<{ h: HydratedIntent; a: AttemptRow }> {
  const h = await hydrate(deps.sql, id, p.tenantId, p.livemode);
  if (!h) throw new ApiError('payment_intent.not_found', `No payment intent ${id} exists for this key (tenant and mode).`);
  const a = h.open;
  const what = kind === 'push' ? 'a push payment (spei, oxxo or codi) awaiting the payer' : 'a card awaiting its 3-D Secure challenge';
  const nextAction = h.row.next_action?.type;
  const fits =
    h.row.status === 'requires_action' &&
    a?.status === 'requires_action' &&
    !!a.provider_ref &&
    (kind === 'push' ? PUSH_METHODS.has(a.method) : a.method === 'card' && nextAction === 'redirect');
  if (!fits) {
    const hint = h.row.status === 'processing' ? ' It is still processing: the worker moves it to requires_action in a moment; read it again and retry.' : '';
    throw new ApiError('test_helpers.state_conflict', `This helper needs ${what} (status requires_action); payment intent ${id} is ${h.row.status}${a ? ` with a ${a.method} attempt ${a.status}` : ''}.${hint}`);
  }
  if (!SIMULATED.has(a!.connector_key)) {
    throw new ApiError('test_helpers.state_conflict', `The attempt runs on the ${a!.connector_key} connector's own test environment: complete it there. Helpers drive the sim connectors only.`);
  }
  return { h, a: a! };
}

const result = (action: string, h: HydratedIntent, a: AttemptRow) => ({
  object: 'test_helper_result' as const,
  action,
  payment_intent_id: h.row.id,
  attempt_id: a.id,
  livemode: false as const,
});

export class TestHelpers {
  constructor(private d: InboundDeps) {}

  /** The payer pays the SPEI transfer, OXXO voucher or CoDi QR that `next_action` shows. */
  async pay(p: Principal, intentId: string) {
    assertTestMode(p);
    const { h, a } = await waitingAttempt(this.d, p, intentId, 'push');
    await simulateInbound(this.d, p.tenantId, a.provider_ref!);
    return result('pay', h, a);
  }

  /** The cardholder passes (`approve`) or fails (`fail`) the 3-D Secure challenge of `next_action.redirect_url`. */
  async threeDSecure(p: Principal, intentId: string, outcome: ThreeDsResult) {
    assertTestMode(p);
    const { h, a } = await waitingAttempt(this.d, p, intentId, '3ds');
    await complete3ds(this.d, a.provider_ref!, outcome === 'approve');
    return result(`three_d_secure.${outcome}`, h, a);
  }
}
