// The checkout a Mexican shopper trusts (issue 21 item 4), in headless Chromium at phone (390 px)
// and desktop widths: every state of /pay/{slug} (form, card paid with the receipt code and the
// self-invoice link, OXXO with its barcode and cashier steps, SPEI with bank/CLABE/copy/reference,
// a hard decline in Spanish with another method, the reload that made a new intent, an
// authorization awaiting capture), /demo reading amounts as Mexicans write them, and the sim 3-D
// Secure page, each with no console error and no Content-Security-Policy violation.
// Screenshots of each state go to dist/screenshots/checkout-<state>-<phone|desktop>.png (the
// README shows copies under docs/).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ensureChromium, launchChromium } from './helpers/browser.js';
import { projectRoot } from '../ops/paths.js';
import { demoPage, PAGE_CSP } from '../api/pages.js';
import { freePort, startTestApp, until, type TestApp } from './helpers/app.js';

const found = ensureChromium();
const why = 'skip' in found ? found.skip : undefined;
const SHOTS = join(projectRoot, 'dist', 'screenshots');
// A tiny SVG logo as a data: image (the page's CSP allows data: images; no network needed).
const LOGO = `data:image/svg+xml;base64,${Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 40"><rect width="40" height="40" rx="9" fill="#c2410c"/><text x="20" y="27" font-size="18" font-family="sans-serif" font-weight="700" text-anchor="middle" fill="#fff">EG</text></svg>',
).toString('base64')}`;

const VIEWPORTS = {
  phone: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true },
  desktop: { viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 },
} as const;
type Width = keyof typeof VIEWPORTS;

if (why) {
  t.comment(`SKIPPING BROWSER TESTS: ${why}`);
  t.test(`checkout states in a browser (skipped: ${why})`, { skip: why }, () => {});
} else {
  let a: TestApp;
  let browser: Browser;
  let ten: Awaited<ReturnType<TestApp['newTenant']>>;
  const factura = `eg-${Math.random().toString(36).slice(2, 8)}`;

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
    ten = await a.newTenant('Taquería El Güero');
    const fp = await a.call('PUT', '/v1/fiscal_profile', {
      key: ten.testKey,
      body: { rfc: 'AAA010101AAA', nombre: 'TAQUERIA EL GUERO', regimen_fiscal: '601', cp: '06600', pac_provider: 'sim', self_invoice_enabled: true, self_invoice_slug: factura },
    });
    if (fp.status !== 200) throw new Error(fp.text);
    const cs = await a.call('PUT', '/v1/checkout_settings', {
      key: ten.testKey,
      body: { logo_url: LOGO, privacy_url: 'https://taqueria.example.mx/aviso-de-privacidad', terms_url: 'https://taqueria.example.mx/terminos' },
    });
    if (cs.status !== 200) throw new Error(cs.text);
    browser = await launchChromium((found as { path: string }).path);
    mkdirSync(SHOTS, { recursive: true });
  });
  t.teardown(async () => {
    await browser?.close();
    await a?.stop();
  });

  const newLink = async (concepto: string, amount = 15000, reusable = false) =>
    (await a.call('POST', '/v1/payment_links', { key: ten.testKey, body: { amount_minor: amount, currency: 'MXN', concepto, reusable } })).body as { id: string; url: string; slug: string };

  /** A page at a width that records every console error, uncaught exception and CSP violation. */
  async function open(t: { teardown(fn: () => unknown): void }, width: Width): Promise<{ page: Page; ctx: BrowserContext; problems: string[] }> {
    const ctx = await browser.newContext({ ...VIEWPORTS[width], locale: 'es-MX', timezoneId: 'America/Mexico_City' });
    await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: a.url });
    await ctx.addInitScript({ content: "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));" });
    const page = await ctx.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    t.teardown(() => ctx.close());
    return { page, ctx, problems };
  }
  const shot = (page: Page, name: string, width: Width) => page.screenshot({ path: join(SHOTS, `checkout-${name}-${width}.png`), fullPage: true });
  const cardWidth = async (page: Page) => (await page.locator('.orq-card').first().boundingBox())!.width;
  const intentOf = async (page: Page) => (await page.locator('[data-payment-intent]').getAttribute('data-payment-intent'))!;
  const api = (path: string) => a.call('GET', path, { key: ten.testKey });

  for (const width of Object.keys(VIEWPORTS) as Width[]) {
    t.test(`${width}: card paid: receipt code, "¿Necesitas factura?" with the code filled in, merchant area, stable width`, async (t) => {
      const { page, problems } = await open(t, width);
      const link = await newLink('Orden 7 · tacos al pastor', 23200);
      await page.goto(a.url + link.url);
      await page.getByTestId('pay').waitFor();
      t.equal(await page.getByTestId('merchant').textContent(), 'Taquería El Güero');
      t.equal(await page.getByTestId('logo').getAttribute('src'), LOGO, 'the merchant logo');
      t.match(await page.getByTestId('processed-by').textContent(), /procesado por Orquesta/);
      t.equal(await page.getByTestId('privacy').getAttribute('href'), 'https://taqueria.example.mx/aviso-de-privacidad');
      t.equal(await page.getByTestId('terms').getAttribute('href'), 'https://taqueria.example.mx/terminos');
      const before = await cardWidth(page);
      await shot(page, 'form', width);
      await page.getByTestId('token-select').selectOption('tok_sim_ok');
      await page.getByTestId('pay').click();
      await page.locator('[data-testid="result"][data-status="succeeded"]').waitFor({ timeout: 30_000 });
      const pi = (await api(`/v1/payment_intents/${await intentOf(page)}`)).body;
      t.equal(await page.getByTestId('receipt-code').textContent(), pi.receipt_code, 'the receipt code W-XXXXX');
      t.match(pi.receipt_code, /^W-[0-9A-Z]{5}$/);
      const href = (await page.getByTestId('invoice-link').getAttribute('href'))!;
      t.equal(await page.getByTestId('invoice-link').textContent(), '¿Necesitas factura?');
      t.equal(href, `/factura/${factura}?receipt_code=${pi.receipt_code}`);
      t.equal(await cardWidth(page), before, 'the card keeps its width after success');
      if (width === 'phone') t.equal(before, 390 - 24, 'the card fills the phone less the page margin');
      await shot(page, 'paid', width);
      await page.getByTestId('invoice-link').click();
      await page.waitForURL(/\/factura\//);
      t.equal(await page.inputValue('#f-receipt'), pi.receipt_code, 'the self-invoice page has the code filled in');
      await page.goto(a.url + link.url);
      await page.getByTestId('link-paid').waitFor();
      t.match(await page.getByTestId('link-paid').textContent(), /ya fue pagado/, 'the paid link, in Spanish');
      t.same(problems, [], 'no console errors, no CSP violations');
    });

    t.test(`${width}: OXXO: amount, scannable barcode of the reference, cashier steps, expiry`, async (t) => {
      const { page, problems } = await open(t, width);
      const link = await newLink('Orden 8 · pedido para llevar', 48950);
      await page.goto(a.url + link.url);
      await page.getByTestId('method-oxxo').click();
      await page.getByTestId('pay').click();
      await page.getByTestId('oxxo').waitFor({ timeout: 30_000 });
      t.equal(await page.getByTestId('oxxo-amount').textContent(), '$489.50');
      const ref = (await page.getByTestId('reference').textContent())!;
      t.match(ref, /^\d{14}$/);
      const img = page.getByTestId('barcode');
      t.equal(await img.getAttribute('src'), `/public/barcode.svg?data=${ref}`);
      await until(() => img.evaluate((i: any) => (i.complete ? (i.naturalWidth as number) : 0)), (w) => w > 0);
      const box = (await img.boundingBox())!;
      t.ok(box.width >= 250, `the barcode is wide enough to scan (${box.width} px)`);
      const svg = await a.call('GET', `/public/barcode.svg?data=${ref}`);
      t.equal(svg.headers.get('content-type')?.split(';')[0], 'image/svg+xml');
      t.match(svg.text, /^<svg viewBox="0 0 \d+ \d+"/);
      t.same(code128Modules(svg.text).slice(0, 6), [2, 1, 1, 2, 3, 2], 'Code 128 start C (digits two by two)');
      t.same(code128Modules(svg.text).slice(-7), [2, 3, 3, 1, 1, 1, 2], 'Code 128 stop');
      t.equal((await a.call('GET', '/public/barcode.svg?data=12ab')).status, 400, 'digits only');
      t.match(await page.getByTestId('cashier-steps').textContent(), /cajero.*OXXO Pay.*código de barras.*\$489\.50 en efectivo/s);
      t.match(await page.getByTestId('expires').textContent(), /\d{1,2} de [a-z]+ de 20\d\d/, 'the expiry, written in Spanish');
      await shot(page, 'oxxo', width);
      const pi = (await api(`/v1/payment_intents/${await intentOf(page)}?expand=attempts`)).body;
      await a.admin('POST', `/admin/tenants/${ten.id}/simulate-inbound`, { provider_ref: pi.attempts[0].provider_ref });
      await page.locator('[data-testid="result"][data-status="succeeded"]').waitFor({ timeout: 30_000 });
      t.equal(await page.getByTestId('receipt-code').textContent(), pi.receipt_code, 'paid in cash: the receipt code too');
      t.same(problems, []);
    });

    t.test(`${width}: SPEI: bank, beneficiary, amount, CLABE with a copy button, reference, referencia numérica, expiry`, async (t) => {
      const { page, problems } = await open(t, width);
      const link = await newLink('Orden 9 · transferencia', 150000);
      await page.goto(a.url + link.url);
      await page.getByTestId('method-spei').click();
      await page.getByTestId('pay').click();
      await page.getByTestId('spei').waitFor({ timeout: 30_000 });
      const pi = (await api(`/v1/payment_intents/${await intentOf(page)}`)).body;
      t.equal(await page.getByTestId('bank').textContent(), 'STP');
      t.ok(await page.getByTestId('beneficiary').textContent());
      t.equal(await page.getByTestId('spei-amount').textContent(), '$1,500.00');
      const clabe = (await page.getByTestId('clabe').textContent())!;
      t.equal(clabe, pi.next_action.clabe);
      t.equal(await page.getByTestId('spei-reference').textContent(), pi.receipt_code, 'the reference reconciliation matches');
      t.equal(await page.getByTestId('spei-referencia-numerica').textContent(), String(pi.next_action.referencia_numerica), 'the referencia numérica the bank line will carry');
      t.match(await page.getByTestId('expires').textContent(), / de 20\d\d/);
      await page.getByTestId('copy-clabe').click();
      await page.locator('[data-testid="copy-clabe"][data-copied="true"]').waitFor();
      t.equal(await page.evaluate('navigator.clipboard.readText()'), clabe, 'the CLABE is on the clipboard');
      await shot(page, 'spei', width);
      t.same(problems, []);
    });

    t.test(`${width}: a hard decline says why in Spanish and offers another method; the reload says it made a new intent`, async (t) => {
      const { page, problems } = await open(t, width);
      const link = await newLink('Orden 10', 9900);
      await page.goto(a.url + link.url);
      const first = await intentOf(page);
      await page.getByTestId('token-select').selectOption('tok_sim_insufficient');
      await page.getByTestId('pay').click();
      await page.locator('[data-testid="result"][data-status="failed"]').waitFor({ timeout: 30_000 });
      t.match(await page.getByTestId('decline-reason').textContent(), /no tiene fondos suficientes/);
      t.notMatch(await page.locator('.orq-card').textContent(), /insufficient|card has/i, 'not the provider\'s English');
      await shot(page, 'declined', width);
      await page.getByTestId('other-method').click();
      await page.getByTestId('notice').waitFor();
      t.match(await page.getByTestId('notice').textContent(), /rechazado.*intento de pago nuevo/);
      t.not(await intentOf(page), first, 'a new intent');
      await page.getByTestId('method-spei').waitFor();
      t.ok(await page.getByTestId('pay').isVisible(), 'the form again, every method offered');
      await shot(page, 'new-intent', width);
      t.same(problems, []);
    });
  }

  t.test('a soft decline (no retry left) says why; another try pays on the new intent', async (t) => {
    const { page, problems } = await open(t, 'phone');
    const link = await newLink('Orden 14');
    await page.goto(a.url + link.url);
    const first = await intentOf(page);
    await page.getByTestId('token-select').selectOption('tok_sim_issuer_down');
    await page.getByTestId('pay').click();
    await page.getByTestId('decline-reason').waitFor({ timeout: 30_000 });
    t.match(await page.getByTestId('decline-reason').textContent(), /Tu banco no respondió/);
    await page.getByTestId('other-method').click();
    await page.getByTestId('notice').waitFor();
    t.not(await intentOf(page), first, 'a new intent');
    await page.getByTestId('token-select').selectOption('tok_sim_ok');
    await page.getByTestId('pay').click();
    await page.locator('[data-testid="result"][data-status="succeeded"]').waitFor({ timeout: 30_000 });
    t.ok((await api(`/v1/payment_links/${link.id}`)).body.paid_at, 'the link is paid by its new intent');
    t.same(problems, []);
  });

  t.test('checkout settings: only https links (they become hrefs), images as https or data:image', async (t) => {
    const put = (body: object) => a.call('PUT', '/v1/checkout_settings', { key: ten.testKey, body });
    for (const bad of [{ privacy_url: 'javascript:alert(1)' }, { terms_url: 'http://example.mx/t' }, { logo_url: 'data:text/html;base64,PHNjcmlwdD4=' }]) {
      t.equal((await put(bad)).status, 400, JSON.stringify(bad));
    }
    const other = await a.newTenant('Otra');
    const r = await a.call('PUT', '/v1/checkout_settings', { key: other.testKey, body: { logo_url: 'https://cdn.example.mx/logo.png' } });
    // (tips_enabled, issue 25, is a boolean with a default: always shown)
    t.same(r.body, { object: 'checkout_settings', logo_url: 'https://cdn.example.mx/logo.png', tips_enabled: true }, 'the others are not set (nulls are omitted)');
    const link = (await a.call('POST', '/v1/payment_links', { key: other.testKey, body: { amount_minor: 100, currency: 'MXN', concepto: 'x' } })).body;
    const page = await a.call('GET', link.url);
    t.match(page.headers.get('content-security-policy'), /img-src 'self' data: https:\/\/cdn\.example\.mx;/, "the page's CSP lets the logo's origin in, and only it");
    const mine = await a.call('GET', '/v1/checkout_settings', { key: ten.testKey });
    t.equal(mine.body.privacy_url, 'https://taqueria.example.mx/aviso-de-privacidad', "another tenant's settings are its own");
    const fact = await a.call('GET', `/factura/${factura}?receipt_code=%22%3E%3Cscript%3E`);
    t.notMatch(fact.text, /<script>/, 'a receipt code that is not one is not echoed');
  });

  t.test('an unknown link: a page in Spanish', async (t) => {
    const { page, problems } = await open(t, 'phone');
    const res = await page.goto(`${a.url}/pay/no-such-link`);
    t.equal(res?.status(), 404);
    t.equal(await page.getByTestId('link-not-found').textContent(), 'Este enlace de pago no existe.');
    t.same(problems.filter((p) => !/status of 404/.test(p)), [], 'nothing but the 404 of the page itself');
  });

  t.test("the kit on a merchant's English page speaks English, and asks the page for a new intent", async (t) => {
    const { page, problems } = await open(t, 'desktop');
    const pi = (await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 15000, currency: 'MXN' }, headers: { 'idempotency-key': crypto.randomUUID() } })).body;
    const shop = `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><link rel="stylesheet" href="/js/checkout.css"></head>
<body><h1>My shop</h1><div data-orquesta-checkout data-payment-intent="${pi.id}" data-client-secret="${pi.client_secret}"></div><script src="/js/checkout.js"></script></body></html>`;
    await page.route(`${a.url}/shop`, (r) => r.fulfill({ status: 200, contentType: 'text/html', body: shop }));
    await page.goto(`${a.url}/shop`);
    await page.getByTestId('pay').waitFor();
    t.match(await page.getByTestId('pay').textContent(), /^Pay MX\$150\.00$/);
    t.match(await page.getByTestId('processed-by').textContent(), /Secure payment processed by Orquesta/);
    await page.getByTestId('token-select').selectOption('tok_sim_insufficient');
    await page.getByTestId('pay').click();
    await page.getByTestId('decline-reason').waitFor({ timeout: 30_000 });
    t.equal(await page.getByTestId('decline-reason').textContent(), 'Your card has insufficient funds. You were not charged.');
    t.notMatch(await page.locator('.orq-card').textContent(), /Pagar|Propina|rechaz|Tarjeta|cargo/, 'no Spanish on an English page');
    await page.evaluate("document.addEventListener('orquesta:retry', (e) => { document.body.setAttribute('data-retry', e.detail.paymentIntent); })");
    await page.getByTestId('other-method').click();
    t.equal(await page.getAttribute('body', 'data-retry'), pi.id, 'the page hears orquesta:retry with the declined intent');
    t.same(problems, []);
  });

  t.test('a reusable link reloaded mid-payment says it made a new intent', async (t) => {
    const { page, problems } = await open(t, 'phone');
    const link = await newLink('Donativo', 5000, true);
    await page.goto(a.url + link.url);
    await page.getByTestId('pay').waitFor();
    t.equal(await page.getByTestId('notice').count(), 0, 'no notice on the first visit');
    const first = await intentOf(page);
    await page.reload();
    await page.getByTestId('notice').waitFor();
    t.not(await intentOf(page), first);
    t.match(await page.getByTestId('notice').textContent(), /se creó un pago nuevo/);
    t.same(problems, []);
  });

  t.test('API errors are said in Spanish (a second tab pays an intent already paid)', async (t) => {
    const { page, ctx, problems } = await open(t, 'desktop');
    const link = await newLink('Orden 11');
    await page.goto(a.url + link.url);
    const other = await ctx.newPage();
    await other.goto(a.url + link.url);
    await other.getByTestId('token-select').selectOption('tok_sim_ok');
    await other.getByTestId('pay').click();
    await other.locator('[data-testid="result"][data-status="succeeded"]').waitFor({ timeout: 30_000 });
    await page.getByTestId('token-select').selectOption('tok_sim_ok');
    await page.getByTestId('pay').click();
    await page.getByTestId('error').filter({ hasText: /\S/ }).waitFor();
    t.equal(await page.getByTestId('error').textContent(), 'Este pago ya no se puede completar. Recarga la página.');
    // the 409 of the confirm is the only console line (the browser logs failed requests)
    t.same(problems.filter((p) => !/status of 409/.test(p)), []);
  });

  t.test('an authorization awaiting capture is said, not spun on', async (t) => {
    const { page, problems } = await open(t, 'phone');
    const link = await newLink('Orden 12');
    await page.goto(a.url + link.url);
    await page.getByTestId('token-select').selectOption('tok_sim_auth');
    await page.getByTestId('pay').click();
    await page.getByTestId('result').filter({ hasText: 'Pago autorizado' }).waitFor({ timeout: 30_000 });
    t.equal(await page.getByTestId('result').getAttribute('data-status'), 'processing');
    t.match(await page.getByTestId('awaiting-capture').textContent(), /El comercio confirmará el cobro/);
    await shot(page, 'authorized', 'phone');
    t.same(problems, []);
  });

  for (const width of Object.keys(VIEWPORTS) as Width[]) {
    t.test(`${width}: /demo reads 1,500.00 as one thousand five hundred pesos`, async (t) => {
      const { page, problems } = await open(t, width);
      // The demo tenant is global to a database (tests run in parallel and another asserts there is
      // none): the page is the one /demo serves with a demo tenant, and its POST /demo/links goes to
      // this test's tenant as the same link creation.
      const created: Array<{ amount_minor: number }> = [];
      await page.route(`${a.url}/demo`, (r) => r.fulfill({ status: 200, contentType: 'text/html', headers: { 'content-security-policy': PAGE_CSP }, body: demoPage(true) }));
      await page.route(`${a.url}/demo/links`, async (r) => {
        const body = r.request().postDataJSON();
        created.push(body);
        const res = await a.call('POST', '/v1/payment_links', { key: ten.testKey, body });
        await r.fulfill({ status: res.status, contentType: 'application/json', body: res.text });
      });
      await page.goto(`${a.url}/demo`);
      t.same(await page.evaluate(() => ['1500', '$1,500.5', '1,234,567.89', '0.99', '1.500,00', '15,00'].map((s) => (globalThis as any).OrquestaDemo.centavos(s) as number | null)), [150000, 150050, 123456789, 99, null, null]);
      await page.fill('#demo-amount', '150,50');
      await page.getByTestId('demo-create').click();
      t.match(await page.getByTestId('error').textContent(), /coma para los miles y punto para los centavos/, 'an ambiguous comma is refused, in Spanish');
      await page.fill('#demo-amount', '1,500.00');
      await shot(page, 'demo', width);
      await page.getByTestId('demo-create').click();
      await page.waitForURL(/\/pay\//);
      await page.getByTestId('amount').waitFor();
      t.equal(await page.getByTestId('amount').textContent(), '$1,500.00');
      t.same(created.map((c) => c.amount_minor), [150000], 'one link, of 150000 centavos');
      t.equal((await api(`/v1/payment_intents/${await intentOf(page)}`)).body.amount_minor, 150000);
      t.same(problems, []);
    });

    t.test(`${width}: the sim 3-D Secure page keeps its CSP; a decline comes back explained`, async (t) => {
      const { page, problems } = await open(t, width);
      const link = await newLink('Orden 13');
      await page.goto(a.url + link.url);
      await page.getByTestId('token-select').selectOption('tok_sim_3ds');
      await page.getByTestId('pay').click();
      await page.getByTestId('redirect').click({ timeout: 30_000 });
      await page.getByTestId('3ds-decline').waitFor();
      t.equal(await page.getByTestId('3ds-decline').getAttribute('style'), null, 'no inline style');
      await shot(page, '3ds', width);
      await page.getByTestId('3ds-decline').click();
      await page.waitForURL(new RegExp(`${link.url}$`));
      // Back on the link: the intent failed (the reason under the result), or it had already failed
      // before the page loaded and the link made a new one (the reason in the notice).
      const why = page.locator('[data-testid="decline-reason"], [data-testid="notice"]').filter({ hasText: 'No se completó la verificación de tu banco' });
      await why.waitFor({ timeout: 30_000 });
      t.pass('the decline is explained');
      t.same(problems, []);
    });
  }
}

/** The bar/space widths of a bwip-js Code 128 SVG, in modules (its paths draw bars by stroke width). */
function code128Modules(svg: string): number[] {
  const bars: Array<[number, number]> = [];
  for (const m of svg.matchAll(/stroke-width="(\d+)" d="([^"]+)"/g)) {
    const w = Number(m[1]);
    for (const x of m[2].matchAll(/M(\d+(?:\.\d+)?) /g)) bars.push([Number(x[1]) - w / 2, w]);
  }
  bars.sort((p, q) => p[0] - q[0]);
  const unit = Math.min(...bars.map((b) => b[1]));
  const out: number[] = [];
  bars.forEach(([x, w], i) => {
    if (i > 0) {
      const gap = x - (bars[i - 1][0] + bars[i - 1][1]);
      if (gap > 0) out.push(Math.round(gap / unit));
    }
    out.push(Math.round(w / unit));
  });
  return out;
}
