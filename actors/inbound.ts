// Operator simulation of an incoming payment (spec: Endpoints > Operator simulation), and the sim
// provider's 3-D Secure result: the payer pays outside the API (the sim provider records it), and
// the notice is evidence — written to the inbox before it is acknowledged (issue: a paid transfer
// must never be lost), then applied by the payment intent actor with the provider's word.
import type { Sql } from '../kernel/db.js';
import { ApiError } from '../kernel/errors.js';
import type { SimAcquirer } from '../connectors/sim.js';
import type { PaymentIntents } from './payment-intents.js';
import { assertTenant } from './tenants.js';

export interface InboundDeps {
  sql: Sql;
  sim: Pick<SimAcquirer, 'markPaid' | 'complete3ds'>;
  payments: Pick<PaymentIntents, 'receiveNotice'>;
}

export async function simulateInbound(deps: InboundDeps, tenantId: string, providerRef: string) {
  await assertTenant(deps.sql, tenantId);
  const rows = await deps.sql`
    select id, payment_intent_id, connector_key, livemode from attempts where tenant_id = ${tenantId} and provider_ref = ${providerRef}`;
  if (!rows.length) throw new ApiError('attempt.not_found', `No attempt of this tenant has provider_ref ${providerRef}. Take it from attempts[0].provider_ref of the intent (GET /v1/payment_intents/{id}?expand=attempts).`);
  const a = rows[0];
  if (a.connector_key === 'sim') await deps.sim.markPaid(tenantId, providerRef);
  const inboxId = await deps.payments.receiveNotice({
    tenantId,
    livemode: a.livemode as boolean,
    attemptId: a.id as string,
    intentId: a.payment_intent_id as string,
    source: 'simulate-inbound',
    payload: { provider_ref: providerRef },
  });
  return { object: 'inbound_acknowledgement', received: true, provider_ref: providerRef, payment_intent_id: a.payment_intent_id as string, attempt_id: a.id as string, notice_id: inboxId };
}

/** The payer completes (or fails) the sim provider's 3-D Secure step; the worker takes the provider's word. */
export async function complete3ds(deps: InboundDeps, providerRef: string, approve: boolean) {
  const [a] = await deps.sql`select id, tenant_id, livemode, payment_intent_id from attempts where provider_ref = ${providerRef} and not livemode and status = 'requires_action'`;
  if (!a) throw new ApiError('attempt.not_found', 'No test-mode attempt waits for 3-D Secure with this reference.');
  await deps.sim.complete3ds(providerRef, approve);
  await deps.payments.receiveNotice({
    tenantId: a.tenant_id as string,
    livemode: a.livemode as boolean,
    attemptId: a.id as string,
    intentId: a.payment_intent_id as string,
    source: '3ds',
    payload: { provider_ref: providerRef, result: approve ? 'approve' : 'decline' },
  });
  return { object: 'three_d_secure', result: approve ? 'approve' : 'decline' };
}
