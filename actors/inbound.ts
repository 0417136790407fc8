// Operator simulation of an incoming payment (spec: Endpoints > Operator simulation): the payer
// pays outside the API (the sim provider records it), and the worker treats the provider's word
// as evidence, exactly as a real provider notice.
import type { AppDeps } from '../api/deps.js';
import { ApiError } from '../api/errors.js';
import { PI_QUEUE } from './payment-intents.js';
import { assertTenant } from './tenants.js';

export async function simulateInbound(deps: Pick<AppDeps, 'sql' | 'sim' | 'queues'>, tenantId: string, providerRef: string) {
  await assertTenant(deps.sql, tenantId);
  const rows = await deps.sql`
    select id, payment_intent_id, connector_key from attempts where tenant_id = ${tenantId} and provider_ref = ${providerRef}`;
  if (!rows.length) throw new ApiError('attempt.not_found', `No attempt of this tenant has provider_ref ${providerRef}. Take it from attempts[0].provider_ref of the intent (GET /v1/payment_intents/{id}?expand=attempts).`);
  const a = rows[0];
  if (a.connector_key === 'sim') await deps.sim.markPaid(tenantId, providerRef);
  await deps.queues.add(PI_QUEUE, a.payment_intent_id as string, 'attempt.inbound', { intentId: a.payment_intent_id, attemptId: a.id }, { jobId: `inbound-${a.id}-${Date.now()}` });
  return { object: 'inbound_acknowledgement', received: true, provider_ref: providerRef, payment_intent_id: a.payment_intent_id as string, attempt_id: a.id as string };
}

/** The payer completes (or fails) the sim provider's 3-D Secure step; the worker takes the provider's word. */
export async function complete3ds(deps: Pick<AppDeps, 'sql' | 'sim' | 'queues'>, providerRef: string, approve: boolean) {
  const [a] = await deps.sql`select id, payment_intent_id from attempts where provider_ref = ${providerRef} and not livemode and status = 'requires_action'`;
  if (!a) throw new ApiError('attempt.not_found', 'No test-mode attempt waits for 3-D Secure with this reference.');
  await deps.sim.complete3ds(providerRef, approve);
  await deps.queues.add(PI_QUEUE, a.payment_intent_id as string, 'attempt.inbound', { intentId: a.payment_intent_id, attemptId: a.id }, { jobId: `3ds-${a.id}` });
  return { object: 'three_d_secure', result: approve ? 'approve' : 'decline' };
}
