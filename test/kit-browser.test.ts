// The browser kit on a merchant's own page (issue 25), in headless Chromium: the merchant page is
// served from another origin (another host and port) with the README's snippet, and the kit takes
// the service from its own <script src>, calls /public cross-origin (CORS) and pays by card, 3-D
// Secure (coming back to the merchant page), SPEI and OXXO (paid with the merchant's test helpers),
// and shows a decline. Then the reusable link: a shopper back from 3-D Secure, or reloading while a
// slow card is processed, sees that payment and its receipt code, never a fresh form. And the CoDi
// QR centered, and no tip chooser on a receivable's page. No console error on any page (a CORS
// failure is one). Screenshots: dist/screenshots/kit-*.png (copies in docs/).
import { createServer, type Server } from 'node:http';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { Browser, Page } from 'playwright-core';
import { ensureChromium, launchChromium } from './helpers/browser.js';
import { projectRoot } from '../ops/paths.js';
import { freePort, startTestApp, until, type TestApp } from './helpers/app.js';

const found = ensureChromium();
const why = 'skip' in found ? found.skip : undefined;
const SHOTS = join(projectRoot, 'dist', 'screenshots');
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

if (why) {
  t.comment(`SKIPPING BROWSER TESTS: ${why}`);
  t.test(`kit on a merchant page (skipped: ${why})`, { skip: why }, () => {});
} else {
  let a: TestApp;
  let browser: Browser;
  let ten: Awaited<ReturnType<TestApp['newTenant']>>;
  let shop: Server;
  let shopUrl: string;
  /** What the merchant's page asked of the service (every request the browser made to it). */
  const crossOrigin: string[] = [];

  t.before(async () => {
    const port = await freePort();
    a = await startTestApp({
      ROLE: 'all',
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      RATE_LIMIT_PUBLIC_PER_MIN: '100000',
      RATE_LIMIT_V1_PER_MIN: '100000',
      SWEEP_INTERVAL_MS: '200',
    });
    ten = await a.newTenant('Ferretería La Tuerca');
    // The merchant's own site: another origin (localhost, its own port). Its checkout page is the
    // README's snippet, with an intent its server made with the secret key.
    const shopPort = await freePort();
    shopUrl = `http://localhost:${shopPort}`;
    shop = createServer((req, res) => {
      const u = new URL(req.url ?? '/', shopUrl);
      if (u.pathname !== '/checkout') {
        res.writeHead(404).end();
        return;
      }
      const esc = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, '');
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><html lang="es"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Ferretería La Tuerca · Pagar pedido</title><link rel="icon" href="data:,"></head>
<body style="margin:0;font-family:system-ui,sans-serif;background:#fafaf7">
<header style="background:#1f3d2b;color:#fff;padding:14px 18px;font-weight:700">Ferretería La Tuerca · tu pedido</header>
<main style="max-width:440px;margin:16px auto;padding:0 12px">
<div data-orquesta-checkout data-payment-intent="${esc(u.searchParams.get('pi') ?? '')}" data-client-secret="${esc(u.searchParams.get('secret') ?? '')}"></div>
</main>
<script src="${a.url}/js/checkout.js"></script>
</body></html>`);
    });
    await new Promise<void>((r) => shop.listen(shopPort, '127.0.0.1', r));
    browser = await launchChromium((found as { path: string }).path);
    mkdirSync(SHOTS, { recursive: true });
  });
  t.teardown(async () => {
    await browser?.close();
    await new Promise((r) => shop?.close(r));
    await a?.stop();
  });

  const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
  async function newIntent(amount = 34_850) {
    const r = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: amount, currency: 'MXN' }, headers: idem() });
    return r.body as { id: string; client_secret: string };
  }
  const statusOf = async (id: string) => (await a.call('GET', `/v1/payment_intents/${id}`, { key: ten.testKey })).body.status as string;

  /** A phone-sized page that records console errors (CORS failures among them) and calls to the service. */
  async function open(t: { teardown(fn: () => unknown): void }) {
    const ctx = await browser.newContext({ ...PHONE, locale: 'es-MX', timezoneId: 'America/Mexico_City' });
    const page = await ctx.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(String(e)));
    page.on('request', (r) => {
      if (r.url().startsWith(a.url) && page.url().startsWith(shopUrl)) crossOrigin.push(`${r.method()} ${new URL(r.url()).pathname}`);
    });
    t.teardown(() => ctx.close());
    return { page, problems };
  }
  const onShop = async (page: Page, pi: { id: string; client_secret: string }) => {
    await page.goto(`${shopUrl}/checkout?pi=${pi.id}&secret=${pi.client_secret}`);
    await page.getByTestId('pay').waitFor({ timeout: 15_000 });
  };
  const result = (page: Page, status: string) => page.locator(`[data-testid="result"][data-status="${status}"]`).waitFor({ timeout: 30_000 });
  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `kit-${name}.png`), fullPage: true });

  t.test('card on the merchant page: the kit found the service from its <script src> and paid cross-origin', async (t) => {
    const { page, problems } = await open(t);
    const pi = await newIntent();
    await onShop(page, pi);
    t.equal(await page.getByTestId('amount').textContent(), '$348.50', 'the amount came from the service (not "NaN undefined")');
    t.equal(await page.getByTestId('merchant').textContent(), 'Ferretería La Tuerca');
    t.equal(await page.locator('link[data-orquesta-styles]').getAttribute('href'), `${a.url}/js/checkout.css`, 'the kit added its stylesheet from the service');
    await shot(page, 'merchant-form');
    await page.getByTestId('token-select').selectOption('tok_sim_ok');
    await page.getByTestId('pay').click();
    await result(page, 'succeeded');
    t.match(await page.getByTestId('receipt-code').textContent(), /^W-[0-9A-Z]{5}$/);
    await shot(page, 'card');
    t.equal(await statusOf(pi.id), 'succeeded');
    t.ok(crossOrigin.some((x) => x === `POST /public/payment_intents/${pi.id}/confirm`), 'the confirm went to the service, cross-origin');
    t.same(problems, [], 'no console error (a blocked CORS request would be one)');
  });

  t.test('3-D Secure from the merchant page: approve at the bank, back on the merchant page, paid', async (t) => {
    const { page, problems } = await open(t);
    const pi = await newIntent();
    await onShop(page, pi);
    await page.getByTestId('token-select').selectOption('tok_sim_3ds');
    await page.getByTestId('pay').click();
    await page.getByTestId('redirect').click({ timeout: 30_000 });
    await page.getByTestId('3ds-approve').waitFor();
    t.ok(page.url().startsWith(`${a.url}/sim/3ds/`), "the bank's page");
    await page.getByTestId('3ds-approve').click();
    await page.waitForURL((u) => u.toString().startsWith(`${shopUrl}/checkout`), { timeout: 15_000 });
    t.pass('the 3-D Secure page returned to the return_url: the merchant page');
    await result(page, 'succeeded');
    await shot(page, '3ds-return');
    t.same(problems, []);
  });

  t.test('SPEI on the merchant page, paid with the test helper: the page turns paid by itself', async (t) => {
    const { page, problems } = await open(t);
    const pi = await newIntent();
    await onShop(page, pi);
    await page.getByTestId('method-spei').click();
    await page.getByTestId('pay').click();
    await page.getByTestId('clabe').waitFor({ timeout: 30_000 });
    t.match(await page.getByTestId('clabe').textContent(), /^\d{18}$/);
    await shot(page, 'spei');
    const paid = await a.call('POST', `/v1/test_helpers/payment_intents/${pi.id}/pay`, { key: ten.testKey });
    t.equal(paid.status, 200, "the merchant's test key pays it (no operator key)");
    await result(page, 'succeeded');
    t.same(problems, []);
  });

  t.test('OXXO on the merchant page: the voucher with its barcode, then paid', async (t) => {
    const { page, problems } = await open(t);
    const pi = await newIntent();
    await onShop(page, pi);
    await page.getByTestId('method-oxxo').click();
    await page.getByTestId('pay').click();
    await page.getByTestId('barcode').waitFor({ timeout: 30_000 });
    await page.waitForFunction("document.querySelector('[data-testid=\"barcode\"]').naturalWidth > 0");
    t.pass('the barcode image loaded from the service');
    await shot(page, 'oxxo');
    await a.call('POST', `/v1/test_helpers/payment_intents/${pi.id}/pay`, { key: ten.testKey });
    await result(page, 'succeeded');
    t.same(problems, []);
  });

  t.test('a decline on the merchant page says why, in Spanish', async (t) => {
    const { page, problems } = await open(t);
    const pi = await newIntent();
    await onShop(page, pi);
    await page.getByTestId('token-select').selectOption('tok_sim_insufficient');
    await page.getByTestId('pay').click();
    await result(page, 'failed');
    t.match(await page.getByTestId('decline-reason').textContent(), /fondos suficientes/);
    await shot(page, 'declined');
    t.same(problems, []);
  });

  t.test('CoDi: the QR is centered in the instructions', async (t) => {
    const { page, problems } = await open(t);
    const pi = await newIntent();
    await onShop(page, pi);
    await page.getByTestId('method-codi').click();
    await page.getByTestId('pay').click();
    await page.getByTestId('qr').waitFor({ timeout: 30_000 });
    const qr = (await page.getByTestId('qr').boundingBox())!;
    const box = (await page.getByTestId('codi').boundingBox())!;
    t.ok(Math.abs(qr.x + qr.width / 2 - (box.x + box.width / 2)) <= 2, `the QR's center ${qr.x + qr.width / 2} is the box's ${box.x + box.width / 2}`);
    await shot(page, 'codi');
    t.same(problems, []);
  });

  const newLink = async (concepto: string, reusable: boolean, amount = 25_000) =>
    (await a.call('POST', '/v1/payment_links', { key: ten.testKey, body: { amount_minor: amount, currency: 'MXN', concepto, reusable } })).body as { url: string };
  const intentOf = async (page: Page) => (await page.locator('[data-payment-intent]').getAttribute('data-payment-intent'))!;

  t.test('a reusable link back from 3-D Secure shows the success and the receipt code, not a new form', async (t) => {
    const { page, problems } = await open(t);
    const link = await newLink('Donativo', true);
    await page.goto(a.url + link.url);
    const paid = await intentOf(page);
    await page.getByTestId('token-select').selectOption('tok_sim_3ds');
    await page.getByTestId('pay').click();
    await page.getByTestId('redirect').click({ timeout: 30_000 });
    await page.getByTestId('3ds-approve').click();
    await page.waitForURL(new RegExp(`${link.url}$`));
    await result(page, 'succeeded');
    t.equal(await page.getByTestId('pay').count(), 0, 'no payment form');
    t.equal(await page.getByTestId('notice').count(), 0, 'no "a new payment was made" notice');
    t.equal(await intentOf(page), paid, 'the page shows the payment that was made');
    const code = (await a.call('GET', `/v1/payment_intents/${paid}`, { key: ten.testKey })).body.receipt_code;
    t.equal(await page.getByTestId('receipt-code').textContent(), code, 'with its receipt code');
    await shot(page, 'reusable-3ds');
    await page.getByTestId('another-payment').click();
    await page.getByTestId('pay').waitFor();
    t.not(await intentOf(page), paid, '"Hacer otro pago" opens the new intent of the visit');
    t.same(problems, []);
  });

  t.test('a reusable link reloaded while a slow card is processed shows that payment, then its success', async (t) => {
    const { page, problems } = await open(t);
    const link = await newLink('Cooperación', true, 12_000);
    await page.goto(a.url + link.url);
    const paying = await intentOf(page);
    await page.getByTestId('token-select').selectOption('tok_sim_slow');
    await page.getByTestId('pay').click();
    await page.locator('[data-testid="result"][data-status="processing"]').waitFor({ timeout: 15_000 });
    await page.reload();
    await page.locator('[data-testid="result"]').waitFor({ timeout: 15_000 });
    t.equal(await page.getByTestId('pay').count(), 0, 'the reload shows no fresh form');
    t.equal(await intentOf(page), paying, 'but the payment under way');
    await result(page, 'succeeded');
    t.match(await page.getByTestId('receipt-code').textContent(), /^W-/);
    await until(() => statusOf(paying), (s) => s === 'succeeded');
    t.same(problems, []);
  });

  t.test('/docs/api: the reference rendered from the OpenAPI, every file from this service (no CDN, no network)', async (t) => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    t.teardown(() => ctx.close());
    const page = await ctx.newPage();
    const problems: string[] = [];
    const outside: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('request', (r) => {
      if (!r.url().startsWith(a.url) && !r.url().startsWith('data:')) outside.push(r.url());
    });
    await page.goto(`${a.url}/docs`);
    await page.locator('a[href="/docs/api"]').click();
    await page.locator('.opblock-tag').first().waitFor({ timeout: 60_000 });
    t.match(await page.locator('.info .title').textContent(), /Orquesta API/, 'the description rendered');
    // The tag filter finds the new operations (swagger-ui renders a large document tag by tag).
    await page.locator('.operation-filter-input').fill('Test helpers');
    await page.locator('[id$="-postV1TestHelpersPaymentIntentsByIdPay"]').first().waitFor({ timeout: 60_000 });
    t.pass('the new operations are in the reference');
    await page.screenshot({ path: join(SHOTS, 'kit-api-reference.png') });
    t.same(outside, [], 'no request leaves the service');
    t.same(problems, [], 'no console error (CSP included)');
  });

  t.test("a receivable's page offers no tip", async (t) => {
    const { page, problems } = await open(t);
    const rec = await a.call('POST', '/v1/receivables', {
      key: ten.testKey,
      headers: idem(),
      body: { customer_name: 'Constructora del Norte', customer_email: 'pagos@norte.mx', concepto: 'Factura A-1043', amount_minor: 1_250_000, currency: 'MXN', due_date: new Date(Date.now() + 15 * 864e5).toISOString() },
    });
    await page.goto(a.url + rec.body.payment_link_url);
    await page.getByTestId('pay').waitFor();
    t.equal(await page.getByTestId('tips').count(), 0, 'no tip chooser (B2B)');
    t.equal(await page.getByTestId('pay').textContent(), 'Pagar $12,500.00');
    await shot(page, 'receivable');
    const link = await newLink('Tacos', false);
    await page.goto(a.url + link.url);
    await page.getByTestId('tips').waitFor();
    t.pass('a plain link still offers one');
    t.same(problems, []);
  });
}
