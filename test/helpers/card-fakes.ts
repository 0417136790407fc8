// A test app wired to the local Conekta and Openpay fakes (real adapters, fake providers), and a card
// charge that waits for the intent's outcome: shared by the real-connector tests.
import { startTestApp, type TestApp } from './app.js';
import { idem, until } from './activity.js';
import { FakeConekta } from '../fakes/conekta.js';
import { FakeOpenpay } from '../fakes/openpay.js';

export interface CardFakes {
  a: TestApp;
  conekta: FakeConekta;
  openpay: FakeOpenpay;
  stop(): Promise<void>;
}

/** `cardTimeoutMs`: the adapters' deadline (CARD_TIMEOUT_MS). */
export async function startWithCardFakes(cardTimeoutMs: number): Promise<CardFakes> {
  const conekta = await new FakeConekta().start();
  const openpay = await new FakeOpenpay().start();
  const a = await startTestApp({ ROLE: 'all', RECONCILE_INTERVAL_MS: '500', RATE_LIMIT_V1_PER_MIN: '100000', CONEKTA_API_URL: conekta.url, OPENPAY_SANDBOX_URL: openpay.url, CARD_TIMEOUT_MS: String(cardTimeoutMs) });
  return {
    a,
    conekta,
    openpay,
    async stop() {
      await a.stop();
      await conekta.stop();
      await openpay.stop();
    },
  };
}

/** Creates and confirms a card intent with `token`; resolves to the intent (with attempts) once succeeded or failed. */
export async function chargeCard(a: TestApp, key: string, amount: number, token: string) {
  const pi = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: amount, currency: 'MXN' }, headers: idem() });
  // Openpay's tokens carry the device session id (`<token>#<device_session_id>`) and the confirm the shopper's IP.
  const packed = token.startsWith('tok_') && !token.startsWith('tok_test_') && !token.includes('#') ? `${token}#dsess_rc` : token;
  await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key, body: { payment_token: packed, payment_method: 'card', payer_ip: '203.0.113.50' }, headers: idem() });
  return (await until(() => a.call('GET', `/v1/payment_intents/${pi.body.id}?expand=attempts`, { key }), (r) => ['succeeded', 'failed'].includes(r.body.status))).body;
}
