// Activity made through the API for report tests: card charges (tips, branches, registers via
// metadata), SPEI charges paid through simulate-inbound, refunds; each call waits for the worker.
import type { TestApp } from './app.js';

export const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  let v = await fn();
  while (!ok(v) && Date.now() < end) {
    await sleep(80);
    v = await fn();
  }
  if (!ok(v)) throw new Error(`condition not met: ${JSON.stringify(v)}`);
  return v;
}

export interface Charge {
  intent: any;
  attempt: any;
}

export function activity(a: TestApp, key: string) {
  const getIntent = (id: string) => a.call('GET', `/v1/payment_intents/${id}?expand=attempts`, { key });
  return {
    getIntent,
    /** A card charge that ends succeeded or failed (per the token). */
    async card(amount: number, opts: { tip?: number; token?: string; metadata?: Record<string, string> } = {}): Promise<Charge> {
      const pi = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: amount, currency: 'MXN', ...(opts.tip ? { tip_minor: opts.tip } : {}), ...(opts.metadata ? { metadata: opts.metadata } : {}) }, headers: idem() });
      if (pi.status !== 201) throw new Error(`create: ${pi.status} ${pi.text}`);
      const c = await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key, body: { payment_token: opts.token ?? 'tok_sim_ok', payment_method: 'card' }, headers: idem() });
      if (c.status !== 200) throw new Error(`confirm: ${c.status} ${c.text}`);
      const done = await until(() => getIntent(pi.body.id), (r) => ['succeeded', 'failed'].includes(r.body.status));
      return { intent: done.body, attempt: done.body.attempts[done.body.attempts.length - 1] };
    },
    /** A card authorized without capture: the intent stays processing. */
    async authorizedOnly(amount: number): Promise<Charge> {
      const pi = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: amount, currency: 'MXN' }, headers: idem() });
      await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key, body: { payment_token: 'tok_sim_auth', payment_method: 'card' }, headers: idem() });
      const done = await until(() => getIntent(pi.body.id), (r) => r.body.attempts?.[0]?.status === 'authorized');
      return { intent: done.body, attempt: done.body.attempts[0] };
    },
    /** A SPEI charge: confirm (requires_action), then the payer pays (operator simulation). */
    async spei(tenantId: string, amount: number, metadata?: Record<string, string>): Promise<Charge> {
      const pi = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: amount, currency: 'MXN', ...(metadata ? { metadata } : {}) }, headers: idem() });
      await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key, body: { payment_token: 'spei', payment_method: 'spei' }, headers: idem() });
      const waiting = await until(() => getIntent(pi.body.id), (r) => r.body.status === 'requires_action');
      const sim = await a.admin('POST', `/admin/tenants/${tenantId}/simulate-inbound`, { provider_ref: waiting.body.attempts[0].provider_ref });
      if (sim.status !== 200) throw new Error(`simulate-inbound: ${sim.status} ${sim.text}`);
      const done = await until(() => getIntent(pi.body.id), (r) => r.body.status === 'succeeded');
      return { intent: done.body, attempt: done.body.attempts[0] };
    },
    /** A refund that the worker executed (succeeded). */
    async refund(attemptId: string, amount?: number) {
      const r = await a.call('POST', '/v1/refunds', { key, body: { attempt_id: attemptId, ...(amount ? { amount_minor: amount } : {}) }, headers: idem() });
      if (r.status !== 201) throw new Error(`refund: ${r.status} ${r.text}`);
      return (await until(() => a.call('GET', `/v1/refunds/${r.body.id}`, { key }), (x) => x.body.status !== 'requested')).body;
    },
  };
}

/** Runs fns with at most n in flight. */
export async function inBatches<T>(n: number, fns: Array<() => Promise<T>>): Promise<T[]> {
  const out: T[] = new Array(fns.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < fns.length) {
        const i = next++;
        out[i] = await fns[i]();
      }
    }),
  );
  return out;
}
