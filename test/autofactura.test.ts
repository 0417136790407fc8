// Self-invoicing against the running service: the page /factura/{slug} on a phone in headless
// Chromium (Debian's chromium, playwright-core), POST /public/factura/{slug} with every
// autofactura.* code and its same-answer rules, the same receipt twice giving the same invoice,
// downloads by receipt_code + rfc, and the /public rate limit.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { Browser } from 'playwright-core';
import { projectRoot } from '../ops/paths.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ensureChromium, launchChromium } from './helpers/browser.js';
import { xsdValidate } from './helpers/sat.js';

const browserFound = ensureChromium();
let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
const slug = `tacos-${Math.random().toString(36).slice(2, 8)}`;
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function paidReceipt(amount = 23200, key = ten.testKey): Promise<{ id: string; receipt_code: string }> {
  const pi = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: amount, currency: 'MXN' }, headers: idem() });
  await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key, body: { payment_token: 'tok_sim_ok', payment_method: 'card' }, headers: idem() });
  for (let i = 0; i < 200; i++) {
    const r = await a.call('GET', `/v1/payment_intents/${pi.body.id}`, { key });
    if (r.body.status === 'succeeded') return r.body;
    await sleep(50);
  }
  throw new Error('charge did not succeed');
}
const fiscal = { rfc: 'EKU9003173C9', nombre: 'Escuela Kemper Urgate', uso_cfdi: 'G03', regimen_fiscal: '601', cp: '26015' };
const pub = (body: object, s = slug) => a.call('POST', `/public/factura/${s}`, { body });

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', RATE_LIMIT_PUBLIC_PER_MIN: '100000', RATE_LIMIT_V1_PER_MIN: '100000', SWEEP_INTERVAL_MS: '200' });
  ten = await a.newTenant('Taquería El Güero');
  const r = await a.call('PUT', '/v1/fiscal_profile', {
    key: ten.testKey,
    body: { rfc: 'AAA010101AAA', nombre: 'Taqueria El Guero', regimen_fiscal: '601', cp: '06600', pac_provider: 'sim', self_invoice_enabled: true, self_invoice_slug: slug },
  });
  if (r.status !== 200) throw new Error(r.text);
});
t.teardown(() => a.stop());

t.test('self-invoice a receipt; the same receipt twice gives the same invoice; downloads', async (t) => {
  const pi = await paidReceipt();
  const r = await pub({ receipt_code: pi.receipt_code, ...fiscal, email: 'cliente@example.com' });
  t.equal(r.status, 200, r.text);
  t.match(r.body, { object: 'invoice', status: 'stamped', total_minor: 23200, base_minor: 20000, iva_minor: 3200, currency: 'MXN', livemode: false });
  t.match(r.body.uuid_fiscal, /^[0-9A-F-]{36}$/);
  t.equal(r.body.id, undefined, 'no internal ids in the public answer');
  t.equal(r.body.payment_intent_id, undefined);
  const again = await pub({ receipt_code: pi.receipt_code.toLowerCase(), ...fiscal, rfc: fiscal.rfc.toLowerCase() });
  t.equal(again.status, 200);
  t.equal(again.body.uuid_fiscal, r.body.uuid_fiscal, 'the same invoice');
  const [n] = await a.app.deps.sql`select count(*)::int as n from invoices where payment_intent_id = ${pi.id}`;
  t.equal(n.n, 1, 'stamped once');
  const xml = await a.call('GET', `/public/factura/${slug}/cfdi?receipt_code=${pi.receipt_code}&rfc=${fiscal.rfc}&format=xml`);
  t.equal(xml.status, 200);
  t.ok(xsdValidate(xml.text).ok, 'the XML is a valid CFDI');
  t.match(xml.text, new RegExp(`UUID="${r.body.uuid_fiscal}"`));
  const pdf = await a.call('GET', `/public/factura/${slug}/cfdi?receipt_code=${pi.receipt_code}&rfc=${fiscal.rfc}`);
  t.equal(pdf.headers.get('content-type'), 'application/pdf', 'pdf by default');
  t.equal(pdf.text.slice(0, 5), '%PDF-');
  const viaApi = await a.call('GET', `/v1/invoices/${(await a.app.deps.sql`select id from invoices where payment_intent_id = ${pi.id}`)[0].id}`, { key: ten.testKey });
  t.equal(viaApi.body.uuid_fiscal, r.body.uuid_fiscal, 'the tenant sees it through the API');
});

t.test('autofactura codes and their same-answer rules', async (t) => {
  const pi = await paidReceipt(5800);
  const r1 = await pub({ receipt_code: pi.receipt_code, ...fiscal });
  t.equal(r1.status, 200);
  const code = (r: { body: any }) => r.body.error?.code;
  t.equal(code(await pub({ receipt_code: pi.receipt_code, rfc: fiscal.rfc })), 'autofactura.invalid_body', 'fiscal fields missing');
  t.equal(code(await pub({ ...fiscal })), 'autofactura.invalid_body', 'receipt_code missing');
  const badRfc = await pub({ receipt_code: pi.receipt_code, ...fiscal, rfc: 'NOTANRFC' });
  t.equal(badRfc.status, 400);
  t.equal(code(badRfc), 'autofactura.invalid_rfc');
  // not available: unknown slug = disabled portal
  const unknown = await pub({ receipt_code: pi.receipt_code, ...fiscal }, 'no-such-portal');
  const other = await a.newTenant('other');
  await a.call('PUT', '/v1/fiscal_profile', { key: other.testKey, body: { rfc: 'AAA010101AAA', nombre: 'Otro', regimen_fiscal: '601', cp: '06600', pac_provider: 'sim', self_invoice_enabled: false, self_invoice_slug: `off-${slug}` } });
  const disabled = await pub({ receipt_code: pi.receipt_code, ...fiscal }, `off-${slug}`);
  t.equal(unknown.status, 404);
  t.same([code(unknown), code(disabled)], ['autofactura.not_available', 'autofactura.not_available']);
  t.equal(unknown.body.error.message, disabled.body.error.message, 'unknown slug and disabled portal: the same answer');
  // receipt not found: unknown code = other tenant's code = RFC mismatch (= unpaid)
  await a.call('PUT', '/v1/fiscal_profile', { key: other.testKey, body: { rfc: 'AAA010101AAA', nombre: 'Otro', regimen_fiscal: '601', cp: '06600', pac_provider: 'sim' } });
  const theirs = await paidReceipt(1000, other.testKey);
  const unpaid = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 100, currency: 'MXN' }, headers: idem() });
  const answers = [
    await pub({ receipt_code: 'W-00000', ...fiscal }),
    await pub({ receipt_code: theirs.receipt_code, ...fiscal }),
    await pub({ receipt_code: pi.receipt_code, ...fiscal, rfc: 'CACX7605101P8', nombre: 'Xochitl Casas', regimen_fiscal: '612' }),
    await pub({ receipt_code: unpaid.body.receipt_code, ...fiscal }),
  ];
  t.same(answers.map((x) => x.status), [404, 404, 404, 404]);
  t.same(answers.map(code), Array(4).fill('autofactura.receipt_not_found'));
  t.equal(new Set(answers.map((x) => x.body.error.message)).size, 1, 'one message for all four');
  // downloads follow the same rule
  const dl = (q: string) => a.call('GET', `/public/factura/${slug}/cfdi?${q}`);
  t.equal(code(await dl(`receipt_code=${pi.receipt_code}&rfc=CACX7605101P8`)), 'autofactura.receipt_not_found', 'download with another RFC');
  t.equal(code(await dl(`receipt_code=W-00000&rfc=${fiscal.rfc}`)), 'autofactura.receipt_not_found');
  t.equal(code(await a.call('GET', `/public/factura/no-such-portal/cfdi?receipt_code=${pi.receipt_code}&rfc=${fiscal.rfc}`)), 'autofactura.not_available');
  t.equal(code(await dl(`rfc=${fiscal.rfc}`)), 'autofactura.invalid_body');
  // receptor and PAC errors pass through unchanged
  const pi2 = await paidReceipt(1160);
  t.equal(code(await pub({ receipt_code: pi2.receipt_code, rfc: 'XAXX010101000', nombre: 'Juan', uso_cfdi: 'G03', regimen_fiscal: '601', cp: '06600' })), 'invoice.receptor_incoherente');
  t.equal(code(await pub({ receipt_code: pi2.receipt_code, ...fiscal, nombre: 'PAC ERROR' })), 'invoice.pac_error');
  const ok = await pub({ receipt_code: pi2.receipt_code, rfc: 'XAXX010101000', nombre: 'publico en general', uso_cfdi: 'S01', regimen_fiscal: '616', cp: '06600' });
  t.equal(ok.status, 200, 'público en general after the corrections');
});

t.test('rate-limited like /public', async (t) => {
  const b = await startTestApp({ RATE_LIMIT_PUBLIC_PER_MIN: '3' });
  t.teardown(() => b.stop());
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) statuses.push((await b.call('POST', `/public/factura/${slug}`, { body: { receipt_code: 'W-00000', ...fiscal } })).status);
  t.same(statuses.slice(3), [429, 429], 'past the per-IP limit');
  const last = await b.call('POST', `/public/factura/${slug}`, { body: {} });
  t.equal(last.body.error.code, 'rate_limit_exceeded');
  t.ok(Number(last.headers.get('retry-after')) > 0, 'Retry-After: seconds until the window ends');
});

t.test('the page, on a phone, in headless Chromium', { skip: 'skip' in browserFound ? browserFound.skip : false }, async (t) => {
  const pi = await paidReceipt(34800);
  const browser: Browser = await launchChromium((browserFound as { path: string }).path);
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, locale: 'es-MX' });
  const missing = await browser.newPage();
  const res404 = await missing.goto(`${a.url}/factura/no-such-portal`);
  t.equal(res404?.status(), 404);
  t.match(await missing.getByTestId('factura-no-disponible').textContent(), /no está disponible/);
  await missing.close();
  const res = await page.goto(`${a.url}/factura/${slug}`);
  t.equal(res?.status(), 200);
  t.equal(await page.getAttribute('html', 'lang'), 'es');
  t.match(await page.getByTestId('comercio').textContent(), /TAQUERIA EL GUERO/);
  t.ok(await page.getByTestId('modo-prueba').isVisible(), 'test mode is said');
  // an empty submit: every missing field marked, one message in Spanish
  await page.getByTestId('factura-submit').click();
  t.match(await page.getByTestId('error').textContent(), /Completa los campos obligatorios/);
  t.equal(await page.getAttribute('#f-receipt', 'aria-invalid'), 'true');
  // a wrong code: the server's answer in Spanish
  await page.fill('#f-receipt', 'W-ZZZZZ');
  await page.fill('#f-rfc', 'EKU9003173C9');
  await page.fill('#f-nombre', 'Escuela Kemper Urgate');
  await page.fill('#f-cp', '26015');
  await page.selectOption('#f-regimen', '601');
  await page.selectOption('#f-uso', 'G03');
  await page.getByTestId('factura-submit').click();
  await page.getByTestId('error').filter({ hasText: 'No encontramos un ticket' }).waitFor({ timeout: 15_000 });
  t.pass('an unknown receipt is explained in Spanish');
  await page.fill('#f-receipt', pi.receipt_code.toLowerCase());
  t.equal(await page.getAttribute('#f-receipt', 'aria-invalid'), null, 'a corrected field is no longer marked');
  mkdirSync(join(projectRoot, 'dist', 'screenshots'), { recursive: true });
  await page.getByTestId('error').evaluate((e) => (e.textContent = ''));
  await page.screenshot({ path: join(projectRoot, 'dist', 'screenshots', 'autofactura.png'), fullPage: true });
  await page.getByTestId('factura-submit').click();
  await page.getByTestId('factura-ok').waitFor({ timeout: 15_000 });
  const uuid = (await page.getByTestId('uuid').textContent())!;
  t.match(uuid, /^[0-9A-F-]{36}$/, 'the folio fiscal is shown');
  await page.screenshot({ path: join(projectRoot, 'dist', 'screenshots', 'autofactura-ok.png'), fullPage: true });
  const href = (await page.getByTestId('download-pdf').getAttribute('href'))!;
  const pdf = await a.call('GET', href);
  t.equal(pdf.text.slice(0, 5), '%PDF-', 'the download link serves the PDF');
  const [row] = await a.app.deps.sql`select uuid_fiscal from invoices where payment_intent_id = ${pi.id}`;
  t.equal(row.uuid_fiscal, uuid);
});
