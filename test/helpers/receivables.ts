// Helpers of the receivables tests: a valid body, paying a receivable's link with SPEI (operator
// simulation) or a sim card, as a payer does through /pay/{slug}.
import { until, type TestApp } from './app.js';

const DAY_MS = 86_400_000;

export const base = (extra: object = {}) => ({
  customer_name: 'Ferretería Don Pepe',
  customer_email: 'Pagos@DonPepe.mx',
  concepto: 'Factura de tornillería noviembre',
  amount_minor: 125_050,
  currency: 'MXN',
  due_date: new Date(Date.now() + 7 * DAY_MS).toISOString(),
  ...extra,
});

/** Opens the link's intent (as the /pay page does) and pays it with SPEI through the operator simulation. */
export async function payWithSpei(app: TestApp, tenantId: string, key: string, url: string) {
  const slug = url.split('/').pop()!;
  const opened = await app.call('POST', `/public/payment_links/${slug}/intent`, {});
  if (opened.status !== 200) throw new Error(`open: ${opened.status} ${opened.text}`);
  const c = await app.call('POST', `/public/payment_intents/${opened.body.id}/confirm`, { body: { client_secret: opened.body.client_secret, payment_token: 'spei', payment_method: 'spei' } });
  if (c.status !== 200) throw new Error(`confirm: ${c.status} ${c.text}`);
  const ra = (await until(() => app.call('GET', `/v1/payment_intents/${opened.body.id}?expand=attempts`, { key }), (r) => r.body.status === 'requires_action')).body;
  const s = await app.admin('POST', `/admin/tenants/${tenantId}/simulate-inbound`, { provider_ref: ra.attempts[0].provider_ref });
  if (s.status !== 200) throw new Error(`simulate-inbound: ${s.status} ${s.text}`);
  return opened.body.id as string;
}

/** Pays the link with a sim card (immediate capture). */
export async function payWithCard(app: TestApp, url: string, token = 'tok_sim_ok') {
  const slug = url.split('/').pop()!;
  const opened = await app.call('POST', `/public/payment_links/${slug}/intent`, {});
  if (opened.status !== 200) throw new Error(`open: ${opened.status} ${opened.text}`);
  const c = await app.call('POST', `/public/payment_intents/${opened.body.id}/confirm`, { body: { client_secret: opened.body.client_secret, payment_token: token, payment_method: 'card' } });
  if (c.status !== 200) throw new Error(`confirm: ${c.status} ${c.text}`);
  return opened.body.id as string;
}
