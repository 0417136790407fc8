// Live-mode checkout tokenizes the card with the connector's browser tokenizer (web/tokenize.js), in
// a real browser against fakes: the Conekta.js script is served by a fake (page.route) and Conekta's
// API by the local fake server. No card number ever reaches Orquesta; the token is charged on the
// connector that made it.
import t from 'tap';
import type { Browser, Request } from 'playwright-core';
import { ensureChromium, launchChromium } from './helpers/browser.js';
import { freePort, startTestApp, type TestApp } from './helpers/app.js';
import { FakeConekta } from './fakes/conekta.js';
import { until } from './helpers/activity.js';

const CARD = '4242424242424242';
/** A stand-in for Conekta.js: the documented surface (setPublicKey, Token.create), answering the fake's tokens. */
const FAKE_CONEKTA_JS = `window.Conekta = { key: null,
  setPublicKey: function (k) { this.key = k; },
  Token: { create: function (data, ok, err) {
    if (window.Conekta.key !== 'key_pub_fake') return err({ message_to_purchaser: 'Llave pública inválida' });
    if (data.card.number === '4000000000000002') return err({ message_to_purchaser: 'Tarjeta declinada por el emisor', type: 'card_error' });
    setTimeout(function () { ok({ id: 'tok_test_visa_4242', object: 'token', used: false, livemode: true }); }, 10);
  } } };`;

const found = ensureChromium();
const why = 'skip' in found ? found.skip : undefined;
if (why) {
  t.test(`live tokenization in the browser (skipped: ${why})`, { skip: why }, () => {});
} else {
  let a: TestApp;
  let browser: Browser;
  let conekta: FakeConekta;
  t.before(async () => {
    conekta = await new FakeConekta().start();
    const port = await freePort();
    a = await startTestApp({ ROLE: 'all', PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, RATE_LIMIT_PUBLIC_PER_MIN: '100000', RATE_LIMIT_V1_PER_MIN: '100000', CONEKTA_API_URL: conekta.url });
    browser = await launchChromium((found as { path: string }).path);
  });
  t.teardown(async () => {
    await browser?.close();
    await a?.stop();
    await conekta?.stop();
  });

  t.test('a live shopper pays with card fields tokenized by Conekta.js; Orquesta never sees the number', async (t) => {
    const ten = await a.newTenant('Live tokenization');
    const put = await a.call('PUT', '/v1/routing/connectors/conekta', { key: ten.liveKey, body: { fees: { card: { bps: 290, fixed_minor: 250 } }, credentials: { private_key: conekta.privateKey, public_key: 'key_pub_fake' } } });
    t.equal(put.status, 200, put.text);
    const link = (await a.call('POST', '/v1/payment_links', { key: ten.liveKey, body: { amount_minor: 25000, currency: 'MXN', concepto: 'Orden 7' } })).body;
    const page = await browser.newPage();
    t.teardown(() => page.close());
    const toOrquesta: string[] = [];
    page.on('request', (r: Request) => {
      if (r.url().startsWith(a.url)) toOrquesta.push(`${r.url()} ${r.postData() ?? ''}`);
    });
    await page.route('https://cdn.conekta.io/**', (route) => route.fulfill({ status: 200, contentType: 'application/javascript', body: FAKE_CONEKTA_JS }));
    await page.goto(a.url + link.url);
    await page.getByTestId('orq-card-number').waitFor();
    t.equal(await page.getByTestId('token-input').count(), 0, 'no free-text token field in live mode');
    await page.getByTestId('orq-card-name').fill('Ana López');
    await page.getByTestId('orq-card-number').fill('4000 0000 0000 0002');
    await page.getByTestId('orq-card-month').fill('12');
    await page.getByTestId('orq-card-year').fill('2030');
    await page.getByTestId('orq-card-cvc').fill('123');
    await page.getByTestId('pay').click();
    await page.locator('[data-testid="error"]', { hasText: 'declinada' }).waitFor();
    await page.getByTestId('orq-card-number').fill(CARD);
    await page.getByTestId('orq-card-cvc').fill('123');
    await page.getByTestId('pay').click();
    await page.locator('[data-testid="result"][data-status="succeeded"]').waitFor({ timeout: 15_000 });
    t.notOk(toOrquesta.some((x) => x.includes(CARD) || x.includes('4242 4242')), 'no request to Orquesta carried the card number');
    t.ok(toOrquesta.some((x) => x.includes('conekta:tok_test_visa_4242')), 'the confirm carried the connector-bound token');
    const intentId = (await page.locator('[data-payment-intent]').getAttribute('data-payment-intent'))!;
    const pi = await until(() => a.call('GET', `/v1/payment_intents/${intentId}?expand=attempts`, { key: ten.liveKey }), (r) => r.body.status === 'succeeded');
    t.match(pi.body.attempts, [{ connector_key: 'conekta', status: 'captured' }]);
    t.equal(conekta.paidFor(`orq_att_${pi.body.attempts[0].id}`), 1, 'charged at Conekta with the token');
  });
}
