// End to end in a real browser: the headless Chromium on the machine (test/helpers/browser.ts), driven
// by playwright-core (no browser download). A customer opens /pay/{slug} and pays.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { Browser } from 'playwright-core';
import { ensureChromium, launchChromium } from './helpers/browser.js';
import { projectRoot } from '../ops/paths.js';
import { freePort, startTestApp, type TestApp } from './helpers/app.js';

const found = ensureChromium();
const why = 'skip' in found ? found.skip : undefined;
if (why) {
  t.comment(`SKIPPING BROWSER TESTS: ${why}`);
  t.test(`browser tests (skipped: ${why})`, { skip: why }, () => {});
} else {
  let a: TestApp;
  let browser: Browser;
  let ten: Awaited<ReturnType<TestApp['newTenant']>>;

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
    browser = await launchChromium((found as { path: string }).path);
  });
  t.teardown(async () => {
    await browser?.close();
    await a?.stop();
  });

  const newLink = async (concepto: string, amount = 15000) =>
    (await a.call('POST', '/v1/payment_links', { key: ten.testKey, body: { amount_minor: amount, currency: 'MXN', concepto } })).body as { id: string; url: string };

  t.test('card tok_sim_ok: success', async (t) => {
    const link = await newLink('Orden 1 · tacos al pastor');
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    t.teardown(() => page.close());
    await page.goto(a.url + link.url);
    await page.getByTestId('pay').waitFor();
    const intentId = await page.locator('[data-payment-intent]').getAttribute('data-payment-intent');
    t.match(intentId, /^[0-9a-f-]{36}$/, 'the page carries the intent id');
    await page.getByTestId('tip-10').click();
    await page.getByTestId('token-select').selectOption('tok_sim_ok');
    // Screenshots go to dist/screenshots (the README shows those of test/checkout-states.test.ts, copied to docs/).
    mkdirSync(join(projectRoot, 'dist', 'screenshots'), { recursive: true });
    await page.screenshot({ path: join(projectRoot, 'dist', 'screenshots', 'checkout.png') });
    await page.getByTestId('pay').click();
    await page.locator('[data-testid="result"][data-status="succeeded"]').waitFor({ timeout: 15_000 });
    t.match(await page.getByTestId('result').textContent(), /exitoso/);
    const pi = await a.call('GET', `/v1/payment_intents/${intentId}`, { key: ten.testKey });
    t.equal(pi.body.status, 'succeeded');
    t.equal(pi.body.tip_minor, 1500, 'the tip chosen on the page');
    await page.goto(a.url + link.url);
    await page.getByTestId('link-paid').waitFor();
    t.pass('the paid link shows as paid');
  });

  t.test('card tok_sim_insufficient: the decline is shown', async (t) => {
    const link = await newLink('Orden 2');
    const page = await browser.newPage();
    t.teardown(() => page.close());
    await page.goto(a.url + link.url);
    await page.getByTestId('token-select').selectOption('tok_sim_insufficient');
    await page.getByTestId('pay').click();
    await page.locator('[data-testid="result"][data-status="failed"]').waitFor({ timeout: 15_000 });
    t.match(await page.getByTestId('result').textContent(), /rechazado/);
  });

  t.test('SPEI: the CLABE is shown; the operator simulation turns the page paid on its own', async (t) => {
    const link = await newLink('Orden 3 · transferencia');
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    t.teardown(() => page.close());
    await page.goto(a.url + link.url);
    const intentId = (await page.locator('[data-payment-intent]').getAttribute('data-payment-intent'))!;
    await page.getByTestId('method-spei').click();
    await page.getByTestId('pay').click();
    const clabe = page.getByTestId('clabe');
    await clabe.waitFor({ timeout: 15_000 });
    t.match(await clabe.textContent(), /^\d{18}$/);
    t.ok(await page.getByTestId('beneficiary').textContent());
    await page.screenshot({ path: join(projectRoot, 'dist', 'screenshots', 'checkout-spei.png') });
    const pi = await a.call('GET', `/v1/payment_intents/${intentId}?expand=attempts`, { key: ten.testKey });
    const sim = await a.admin('POST', `/admin/tenants/${ten.id}/simulate-inbound`, { provider_ref: pi.body.attempts[0].provider_ref });
    t.equal(sim.status, 200);
    // No click: the kit polls every 2 s and turns the page paid by itself.
    await page.locator('[data-testid="result"][data-status="succeeded"]').waitFor({ timeout: 15_000 });
    t.pass('paid');
  });

  t.test('3-D Secure redirect: authenticate at the sim bank and come back paid', async (t) => {
    const link = await newLink('Orden 4');
    const page = await browser.newPage();
    t.teardown(() => page.close());
    await page.goto(a.url + link.url);
    await page.getByTestId('token-select').selectOption('tok_sim_3ds');
    await page.getByTestId('pay').click();
    await page.getByTestId('redirect').click({ timeout: 15_000 });
    await page.getByTestId('3ds-approve').click();
    await page.waitForURL(new RegExp(`${link.url}$`));
    await page.locator('[data-testid="result"][data-status="succeeded"]').waitFor({ timeout: 15_000 });
    t.pass('back on the checkout, paid');
  });
}
