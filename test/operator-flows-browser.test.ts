// Every decision of the operator console taken in headless Chromium (issue 30 parts 2, 4 and 5),
// besides the four-eyes payout of operator-browser.test.ts: an application the verifier flagged
// (asked by one operator, approved by another), a request for information and a rejection with a
// reason; a risk review approved and the risk rules editor (add, deactivate); a refund approval;
// a Connect account suspended and reactivated; a tenant's refund threshold, a key revoked, the
// tenant suspended and its release approved by a second operator; in test mode an inbound SPEI
// payment and a payout return simulated from the screen; a payment's steps with their trace
// links and job runs. Each outcome is checked in the database or through /v1, not only on the
// screen; axe-core finds no serious or critical violation on each screen. Screenshots
// docs/operator-*.png (written when OPERATOR_SCREENSHOTS=1; looked at).
import t from 'tap';
import type { Browser, Page } from 'playwright-core';
import { tracing } from '@opentelemetry/sdk-node';
import { startTelemetry, stopTelemetry } from '../ops/telemetry.js';
import { ensureChromium, launchChromium } from './helpers/browser.js';
import { freePort, startTestApp, until, type TestApp } from './helpers/app.js';
import { axe, makeOperator, OPERATOR_PASSWORD, shot, signInOperator } from './helpers/operator-browser.js';
import { totpCode } from './helpers/portal.js';

t.setTimeout(600_000);
const found = ensureChromium();
const why = 'skip' in found ? found.skip : undefined;
const TEMPLATE = 'http://localhost:16686/trace/{trace_id}';
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const DOCS = ['ine', 'comprobante_domicilio', 'constancia_fiscal', 'caratula_estado_cuenta'].map((document_type, i) => ({ document_type, reference: `ref-${i}`, reference_hash: `${i}`.repeat(64) }));

if (why) {
  t.comment(`SKIPPING BROWSER TESTS: ${why}`);
  t.test(`operator decision flows (skipped: ${why})`, { skip: why }, () => {});
} else {
  let a: TestApp;
  let browser: Browser;
  t.before(async () => {
    startTelemetry({ spanProcessors: [new tracing.SimpleSpanProcessor(new tracing.InMemorySpanExporter())] });
    const port = await freePort();
    a = await startTestApp({ ROLE: 'all', PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, TRACE_URL_TEMPLATE: TEMPLATE, RATE_LIMIT_V1_PER_MIN: '100000', SWEEP_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500' });
    browser = await launchChromium((found as { path: string }).path);
  });
  t.teardown(async () => {
    await browser?.close();
    await a?.stop();
    await stopTelemetry();
  });

  /**
   * Opens a screen and waits until it is shown: the console renders a screen after its fetch, so until
   * then the previous one (often with its own 'Comercio' field) is still there to be filled by mistake.
   */
  const nav = async (page: Page, name: string) => {
    await page.locator('nav').getByRole('button', { name, exact: true }).click();
    await page.locator('nav button[aria-current="page"]').filter({ hasText: new RegExp(`^${name}$`) }).waitFor();
  };
  /** Confirms the open dialog, with a reason when given. */
  async function confirm(page: Page, reason?: string) {
    const dlg = page.locator('dialog[open]');
    await dlg.waitFor();
    if (reason) await dlg.locator('textarea').fill(reason);
    await dlg.getByRole('button', { name: 'Confirmar' }).click();
    await dlg.waitFor({ state: 'detached' });
  }
  const flash = (page: Page, text: RegExp) => page.locator('#flash').filter({ hasText: text }).waitFor();

  t.test('every decision in the browser: applications, risk, refunds, Connect, tenants, simulations, traces', async (t) => {
    const tag = crypto.randomUUID().slice(0, 6);
    const ten = await a.newTenant(`Plaza ${tag}`);
    const key = ten.testKey;
    const olga = await makeOperator(a, 'admin', 'Olga Admin');
    const pablo = await makeOperator(a, 'reviewer', 'Pablo Revisor');
    const O = await signInOperator(browser, a, olga, 1);
    const P = await signInOperator(browser, a, pablo, 1);
    const page = O.page;

    // ---- applications: flagged (four-eyes), request information, reject --------------------
    const application = async (name: string, clabe: string, submit: boolean) => {
      const c = await a.call('POST', '/v1/onboarding/applications', { key, body: { legal_name: name, person_type: 'moral', contact_email: 'kyc@x.mx', rfc: 'EKU9003173C9', clabe } });
      await a.call('PATCH', `/v1/onboarding/applications/${c.body.id}`, { key, body: { documents: DOCS } });
      if (submit) await a.call('POST', `/v1/onboarding/applications/${c.body.id}/submit`, { key });
      return c.body.id as string;
    };
    const appStatus = async (id: string) => (await a.app.deps.sql`select status, status_reason from onboarding_applications where id = ${id}`)[0]!;
    const flagged = await application(`Marcada ${tag} SA de CV`, '072691004495711490', true); // bad check digit: needs_info
    const infoApp = await application(`Info ${tag} SA de CV`, '072691004495711499', false);
    const rejApp = await application(`Rechazo ${tag} SA de CV`, '072691004495711499', false);
    t.equal((await appStatus(flagged)).status, 'needs_info');

    await nav(page, 'Solicitudes');
    await page.getByRole('button', { name: `Revisar Marcada ${tag} SA de CV` }).click();
    await page.getByText('El verificador la marcó').waitFor();
    t.same(await axe(page), [], 'application review: no serious or critical axe violation');
    await shot(page, 'operator-application.png');
    await page.getByRole('button', { name: 'Aprobar', exact: true }).click();
    await confirm(page, 'CLABE confirmada por teléfono');
    await flash(page, /otro operador debe aprobarlo/);
    t.equal((await appStatus(flagged)).status, 'needs_info', 'one operator only asked');
    await nav(P.page, 'Cuatro ojos');
    const flaggedRow = P.page.getByRole('row').filter({ hasText: `Marcada ${tag} SA de CV` });
    await flaggedRow.getByRole('button', { name: 'Aprobar' }).click();
    await confirm(P.page, 'visto');
    await flash(P.page, /hecho/);
    t.match(await appStatus(flagged), { status: 'approved', status_reason: 'CLABE confirmada por teléfono' }, 'approved by the second operator');

    await nav(page, 'Solicitudes');
    await page.locator('#app-status').selectOption('draft');
    await page.getByRole('button', { name: `Revisar Info ${tag} SA de CV` }).click();
    await page.getByRole('button', { name: 'Pedir información' }).click();
    await confirm(page, 'Falta la constancia vigente');
    await flash(page, /Pedir información: hecho/);
    t.match(await appStatus(infoApp), { status: 'needs_info', status_reason: 'Falta la constancia vigente' });
    await nav(page, 'Solicitudes');
    await page.locator('#app-status').selectOption('draft');
    await page.getByRole('button', { name: `Revisar Rechazo ${tag} SA de CV` }).click();
    await page.getByRole('button', { name: 'Rechazar' }).click();
    await confirm(page, 'RFC de otra empresa');
    await flash(page, /Rechazar solicitud: hecho/);
    t.match(await appStatus(rejApp), { status: 'rejected', status_reason: 'RFC de otra empresa' });

    // ---- risk: a review approved; the rules editor ------------------------------------------
    await a.admin('POST', `/admin/tenants/${ten.id}/risk_rules`, { field: 'payment_method', operator: 'eq', value: 'oxxo', action: 'review' });
    const held = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: 4321, currency: 'MXN' }, headers: idem() });
    const rv = await a.call('POST', `/v1/payment_intents/${held.body.id}/confirm`, { key, body: { payment_token: 'x', payment_method: 'oxxo' }, headers: idem() });
    t.equal(rv.body.object, 'risk_review', rv.text);
    await nav(page, 'Riesgo');
    const reviewRow = page.getByRole('row').filter({ hasText: `Plaza ${tag}` }).filter({ hasText: '$43.21' });
    await reviewRow.getByRole('button', { name: 'Aprobar' }).click();
    await confirm(page);
    await flash(page, /Aprobar revisión: hecho/);
    t.equal((await a.app.deps.sql`select status from risk_reviews where id = ${rv.body.id}`)[0]!.status, 'approved');
    await until(() => a.call('GET', `/v1/payment_intents/${held.body.id}`, { key }), (r) => r.body.status === 'requires_action');
    await page.getByLabel('Comercio').fill(ten.id);
    await page.getByRole('button', { name: 'Ver reglas' }).click();
    // exact: the pending reviews above list every tenant's (other tests share this database), and their
    // rule cells read 'payment_method eq "oxxo" → review'; this tenant's rules table reads the rule alone.
    await page.getByRole('cell', { name: 'payment_method eq "oxxo"', exact: true }).waitFor();
    await page.getByLabel('Campo').selectOption('amount_minor');
    await page.getByLabel('Operador').selectOption('gte');
    await page.getByLabel('Valor').fill('9000000');
    await page.getByLabel('Acción', { exact: true }).selectOption('block');
    await page.getByRole('button', { name: 'Agregar regla' }).click();
    await flash(page, /Regla agregada/);
    const ruleRow = page.getByRole('row').filter({ hasText: 'amount_minor gte 9000000' });
    t.same(await axe(page), [], 'risk: no serious or critical axe violation');
    await shot(page, 'operator-risk.png');
    await ruleRow.getByRole('button', { name: 'Desactivar' }).click();
    await confirm(page);
    await ruleRow.getByRole('cell', { name: 'no', exact: true }).waitFor();
    const rules = await a.app.deps.sql`select value, action, active from risk_rules where tenant_id = ${ten.id} and field = 'amount_minor'`;
    t.match(rules, [{ value: 9000000, action: 'block', active: false }], 'added from the editor, then deactivated');

    // ---- a refund above the threshold, approved ---------------------------------------------
    await a.admin('PATCH', `/admin/tenants/${ten.id}/settings`, { refund_approval_threshold_minor: 5000 });
    const pi = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: 20_000, currency: 'MXN' }, headers: idem() });
    await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key, body: { payment_token: 'tok_sim_ok', payment_method: 'card' }, headers: idem() });
    const paid = await until(() => a.call('GET', `/v1/payment_intents/${pi.body.id}?expand=attempts`, { key }), (r) => r.body.status === 'succeeded');
    const big = await a.call('POST', '/v1/refunds', { key, body: { attempt_id: paid.body.attempts[0].id, amount_minor: 8765, reason: 'cliente devolvió' }, headers: idem() });
    t.equal(big.status, 202, big.text);
    await nav(page, 'Aprobaciones');
    const refundRow = page.getByRole('row').filter({ hasText: `Plaza ${tag}` }).filter({ hasText: '$87.65' });
    await refundRow.getByRole('button', { name: 'Aprobar' }).click();
    await confirm(page);
    await flash(page, /Aprobar reembolso: hecho/);
    const [ra] = await a.app.deps.sql`select status, approver, subject_id from approvals where id = ${big.body.id}`;
    t.match(ra, { status: 'approved', approver: `operator:${olga.email}` });
    t.equal((await a.app.deps.sql`select status from refunds where id = ${ra!.subject_id}`)[0]!.status, 'succeeded', 'the refund was made');

    // ---- Connect: suspend, reactivate --------------------------------------------------------
    const subName = `Sub ${tag} SA de CV`;
    const okApp = await application(subName, '646180110400000007', true);
    t.equal((await appStatus(okApp)).status, 'approved');
    const acc = await a.call('POST', '/v1/connect/accounts', { key, body: { onboarding_application_id: okApp } });
    t.equal(acc.status, 201, acc.text);
    await nav(page, 'Connect');
    await page.getByRole('button', { name: `Suspender ${subName}` }).click();
    await confirm(page, 'Contracargos repetidos');
    await page.getByRole('button', { name: `Reactivar ${subName}` }).waitFor();
    t.equal((await a.app.deps.sql`select status from connect_accounts where id = ${acc.body.id}`)[0]!.status, 'suspended');
    t.same(await axe(page), [], 'connect: no serious or critical axe violation');
    await shot(page, 'operator-connect.png');
    await page.getByRole('button', { name: `Reactivar ${subName}` }).click();
    await confirm(page, 'Aclarado con el banco');
    await page.getByRole('button', { name: `Suspender ${subName}` }).waitFor();
    t.equal((await a.app.deps.sql`select status from connect_accounts where id = ${acc.body.id}`)[0]!.status, 'active');

    // ---- a tenant: settings, a key revoked, suspended, released by a second operator ---------
    const other = await a.newTenant(`Bodega ${tag}`);
    await nav(page, 'Comercios');
    await page.getByRole('button', { name: `Abrir Bodega ${tag}` }).click();
    await page.getByLabel('Umbral de reembolso con cuatro ojos (centavos)').fill('7000');
    await page.getByRole('button', { name: 'Guardar', exact: true }).click();
    await flash(page, /Ajustes guardados/);
    t.equal((await a.app.deps.sql`select settings->>'refund_approval_threshold_minor' as v from tenants where id = ${other.id}`)[0]!.v, '7000');
    await page.getByLabel('Umbral de transferencias con cuatro ojos (centavos)').fill('250000');
    await page.getByRole('button', { name: 'Guardar umbral' }).click();
    await flash(page, /Umbral de transferencias guardado/);
    t.equal((await a.app.deps.sql`select settings->>'payout_approval_threshold_minor' as v from tenants where id = ${other.id}`)[0]!.v, '250000');
    await page.getByRole('button', { name: `Revocar ${other.liveKeyId.slice(0, 8)}` }).click();
    await confirm(page);
    await flash(page, /Revocar llave: hecho/);
    t.equal((await a.call('GET', '/v1/customers', { key: other.liveKey })).status, 401, 'the revoked key answers 401');
    await page.getByRole('button', { name: 'Suspender' }).click();
    await confirm(page, 'Investigación de fraude');
    await flash(page, /Suspender comercio: hecho/);
    t.equal((await a.call('GET', '/v1/customers', { key: other.testKey })).status, 401, 'suspended: its key answers 401');
    t.same(await axe(page), [], 'tenant: no serious or critical axe violation');
    await shot(page, 'operator-tenant.png');
    await page.getByRole('button', { name: 'Pedir liberación' }).click();
    await confirm(page, 'Investigación cerrada');
    await flash(page, /otro operador debe aprobarlo/);
    t.equal((await a.call('GET', '/v1/customers', { key: other.testKey })).status, 401, 'still suspended on one operator\'s word');
    await nav(P.page, 'Cuatro ojos');
    await P.page.getByRole('row').filter({ hasText: `Bodega ${tag}` }).getByRole('button', { name: 'Aprobar' }).click();
    await confirm(P.page);
    await flash(P.page, /hecho/);
    t.equal((await a.call('GET', '/v1/customers', { key: other.testKey })).status, 200, 'released by the second operator');

    // ---- the audit log of that tenant: who, why, what changed; its export ---------------------
    await nav(page, 'Auditoría');
    await page.getByLabel('Comercio').fill(other.id);
    await page.getByRole('button', { name: 'Filtrar' }).click();
    const log = page.getByRole('table', { name: new RegExp(`filtro: tenant_id=${other.id}`) });
    await log.getByRole('cell', { name: 'tenant.release', exact: true }).waitFor();
    const settingsRow = log.getByRole('row').filter({ hasText: 'tenant.settings' });
    t.match(await settingsRow.innerText(), /refund_approval_threshold_minor: ∅ → 7000/, 'the change, key by key');
    t.match(await log.getByRole('row').filter({ hasText: 'tenant.suspend' }).innerText(), /Investigación de fraude[\s\S]*suspended: false → true/);
    const release = await log.getByRole('row').filter({ hasText: 'four-eyes: asked by' }).innerText();
    t.ok(release.includes('tenant.release') && release.includes(pablo.email) && release.includes(`Investigación cerrada · four-eyes: asked by ${olga.email}, approved by ${pablo.email}`), `released by Pablo, asked by Olga: ${release}`);
    const revoked = await log.getByRole('row').filter({ hasText: 'api_key.revoke' }).innerText();
    t.match(revoked, new RegExp(`api_key ${other.liveKeyId.slice(0, 8)}[\\s\\S]*revoked: false → true`), 'the key revocation, named as such, on the key');
    t.match(await log.getByRole('row').filter({ hasText: 'tenant.payout_settings' }).innerText(), /payout_approval_threshold_minor: ∅ → 250000/);
    const texts = await log.locator('tbody tr').allInnerTexts();
    t.ok(texts.every((x) => !x.includes(`Plaza ${tag}`)), 'only the filtered tenant');
    t.same(await axe(page), [], 'audit log: no serious or critical axe violation');
    await shot(page, 'operator-audit-filtered.png');
    const csvHref = await page.getByRole('link', { name: 'Exportar CSV' }).getAttribute('href');
    t.match(csvHref, `tenant_id=${other.id}`, 'the export takes the filter');
    const csv = await page.request.get(`${a.url}${csvHref}`);
    t.equal(csv.status(), 200);
    const body = await csv.text();
    t.match(body, /tenant\.suspend/);
    t.match(body, /refund_approval_threshold_minor/, 'before/after in the export');
    t.equal(body.split('\r\n').filter((l) => l && !l.includes(other.id) && !l.startsWith('seq') && !l.startsWith('id')).length, 0, 'every exported row is of that tenant');

    // ---- test mode: an inbound SPEI payment and a payout return, from the screen -------------
    const spei = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: 15_000, currency: 'MXN' }, headers: idem() });
    await a.call('POST', `/v1/payment_intents/${spei.body.id}/confirm`, { key, body: { payment_token: 'spei', payment_method: 'spei' }, headers: idem() });
    const waiting = await until(() => a.call('GET', `/v1/payment_intents/${spei.body.id}?expand=attempts`, { key }), (r) => r.body.status === 'requires_action');
    const po = await a.call('POST', '/v1/payouts', { key, body: { clabe: '072691004495711499', beneficiary_name: 'Proveedora', amount_minor: 3_000, currency: 'MXN', concepto: 'Pago prueba' }, headers: idem() });
    t.equal(po.status, 201, po.text);
    await until(() => a.call('GET', `/v1/payouts/${po.body.id}`, { key }), (r) => r.body.status === 'paid', 20_000);
    await nav(page, 'Pruebas');
    await page.locator('#s-tenant').fill(ten.id);
    await page.getByLabel('provider_ref del intento').fill(waiting.body.attempts[0].provider_ref);
    await page.getByRole('button', { name: 'Simular pago' }).click();
    await flash(page, /Pago entrante simulado/);
    await until(() => a.call('GET', `/v1/payment_intents/${spei.body.id}`, { key }), (r) => r.body.status === 'succeeded', 20_000);
    t.pass('the SPEI payment succeeded from the simulation on the screen');
    await page.locator('#p-tenant').fill(ten.id);
    await page.getByLabel('Id de la transferencia').fill(po.body.id);
    await page.getByRole('button', { name: 'Simular devolución' }).click();
    await flash(page, /Devolución simulada/);
    await until(() => a.call('GET', `/v1/payouts/${po.body.id}`, { key }), (r) => r.body.status === 'returned', 20_000);
    t.pass('the payout was returned from the simulation on the screen');
    t.same(await axe(page), [], 'testing: no serious or critical axe violation');
    await shot(page, 'operator-testing.png');

    // ---- a payment's steps with their trace links, and its job runs --------------------------
    await nav(page, 'Trazas');
    await page.getByLabel('Comercio').fill(ten.id);
    await page.getByLabel('Objeto').selectOption('payment_intents');
    await page.getByLabel('Id').fill(pi.body.id);
    await page.getByRole('button', { name: 'Ver', exact: true }).click();
    const links = page.getByRole('table', { name: 'Pasos' }).getByRole('link');
    await links.first().waitFor();
    const hrefs = await links.evaluateAll((els) => els.map((e) => e.getAttribute('href')));
    t.ok(hrefs.length >= 2, `${hrefs.length} steps with a trace link`);
    for (const h of hrefs) t.match(h, /^http:\/\/localhost:16686\/trace\/[0-9a-f]{32}$/, 'a link from TRACE_URL_TEMPLATE');
    await page.getByRole('table', { name: 'Trabajos' }).getByRole('cell', { name: 'completed' }).first().waitFor();
    t.same(await axe(page), [], 'traces: no serious or critical axe violation');
    await shot(page, 'operator-inspect.png');

    t.same([...O.errors, ...P.errors], [], 'no script error on any page');
    await O.ctx.close();
    await P.ctx.close();
  });

  t.test('rejections from the screen (risk review, refund, payout); a terminal reassigned and activated again', async (t) => {
    const tag = crypto.randomUUID().slice(0, 6);
    const ten = await a.newTenant(`Negada ${tag}`);
    const key = ten.testKey;
    await a.admin('POST', `/admin/tenants/${ten.id}/risk_rules`, { field: 'payment_method', operator: 'eq', value: 'oxxo', action: 'review' });
    await a.admin('PATCH', `/admin/tenants/${ten.id}/settings`, { refund_approval_threshold_minor: 1000 });
    await a.admin('PATCH', `/admin/tenants/${ten.id}/payout_settings`, { payout_approval_threshold_minor: 1000 });
    const held = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: 1234, currency: 'MXN' }, headers: idem() });
    const rv = await a.call('POST', `/v1/payment_intents/${held.body.id}/confirm`, { key, body: { payment_token: 'x', payment_method: 'oxxo' }, headers: idem() });
    const pi = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: 9_000, currency: 'MXN' }, headers: idem() });
    await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key, body: { payment_token: 'tok_sim_ok', payment_method: 'card' }, headers: idem() });
    const paid = await until(() => a.call('GET', `/v1/payment_intents/${pi.body.id}?expand=attempts`, { key }), (r) => r.body.status === 'succeeded');
    const rf = await a.call('POST', '/v1/refunds', { key, body: { attempt_id: paid.body.attempts[0].id, amount_minor: 5_555 }, headers: idem() });
    const po = await a.call('POST', '/v1/payouts', { key, body: { clabe: '072691004495711499', beneficiary_name: 'Proveedora', amount_minor: 6_666, currency: 'MXN', concepto: 'No va' }, headers: idem() });
    t.same([rv.body.object, rf.status, po.status], ['risk_review', 202, 202]);
    const term = await a.admin('POST', `/admin/tenants/${ten.id}/terminals`, { serial: `T-${tag}`, branch: 'Centro', livemode: false, activate: true });
    await a.admin('POST', `/admin/tenants/${ten.id}/terminals/${term.body.id}/deactivate`, { reason: 'reparación' });

    const op = await makeOperator(a, 'admin', `Sara ${tag}`);
    const S = await signInOperator(browser, a, op, 1);
    const page = S.page;
    await nav(page, 'Riesgo');
    await page.getByRole('row').filter({ hasText: `Negada ${tag}` }).getByRole('button', { name: 'Rechazar' }).click();
    await confirm(page);
    await flash(page, /Rechazar revisión: hecho/);
    await until(() => a.call('GET', `/v1/payment_intents/${held.body.id}`, { key }), (r) => r.body.status === 'failed');
    t.pass('the reviewed payment failed');
    await nav(page, 'Aprobaciones');
    await page.getByRole('row').filter({ hasText: `Negada ${tag}` }).filter({ hasText: '$55.55' }).getByRole('button', { name: 'Rechazar' }).click();
    await confirm(page);
    await flash(page, /Rechazar reembolso: hecho/);
    await page.getByRole('row').filter({ hasText: `Negada ${tag}` }).filter({ hasText: '$66.66' }).getByRole('button', { name: 'Rechazar' }).click();
    await confirm(page);
    await flash(page, /Rechazar transferencia: hecho/);
    const decided = await a.app.deps.sql`select id, status, subject_id, approver from approvals where id in (${rf.body.id}, ${po.body.id}) order by amount_minor`;
    t.match(decided, [{ status: 'rejected', subject_id: null, approver: `operator:${op.email}` }, { status: 'rejected', subject_id: null, approver: `operator:${op.email}` }], 'both rejected, nothing made');

    await nav(page, 'Terminales');
    await page.getByLabel('Comercio').fill(ten.id);
    await page.getByRole('button', { name: 'Ver terminales' }).click();
    await page.getByRole('button', { name: `Reasignar T-${tag}` }).click();
    await confirm(page, 'Norte');
    await flash(page, /Terminal reasignada/);
    await page.getByRole('button', { name: `Activar T-${tag}` }).click();
    await confirm(page);
    await flash(page, /Activar terminal: hecho/);
    t.match((await a.app.deps.sql`select branch, status from terminals where id = ${term.body.id}`)[0], { branch: 'Norte', status: 'active' });
    const charge = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: 1000, currency: 'MXN', metadata: { terminal_id: term.body.id } }, headers: idem() });
    t.equal(charge.status, 201, 'active again: its charges are taken');
    const actions = (await a.admin('GET', `/admin/audit_log?target_id=${term.body.id}`)).body.data.map((r: any) => `${r.action}:${r.actor.kind}`).reverse();
    t.same(actions, ['terminal.register:admin_key', 'terminal.activate:admin_key', 'terminal.deactivate:admin_key', 'terminal.reassign:operator', 'terminal.activate:operator']);
    t.same(S.errors, [], 'no script error');
    await S.ctx.close();
  });

  t.test('operators: the first sign-in sets up the second factor on the screen; an admin adds, re-roles and disables operators', async (t) => {
    const tag = crypto.randomUUID().slice(0, 6);
    const name = `Quique ${tag}`;
    const email = `quique+${tag}@orquesta.mx`;
    t.equal((await a.admin('POST', '/admin/operators', { email, name, role: 'reviewer', password: OPERATOR_PASSWORD })).status, 201);
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const Q = await ctx.newPage();
    const errors: string[] = [];
    Q.on('pageerror', (e) => errors.push(String(e)));
    await Q.goto(`${a.url}/portal/operator`);
    await Q.getByLabel('Correo').fill(email);
    await Q.getByLabel('Contraseña').fill(OPERATOR_PASSWORD);
    await Q.getByRole('button', { name: 'Entrar' }).click();
    await Q.getByRole('heading', { name: 'Activa tu segundo factor' }).waitFor();
    t.same(await axe(Q), [], 'second-factor setup: no serious or critical axe violation');
    await shot(Q, 'operator-totp-setup.png');
    const secret = (await Q.locator('#totp-secret').innerText()).trim();
    t.match(secret, /^[A-Z2-7]{16,}$/, 'the secret is shown (and as a QR code)');
    await Q.getByLabel('Código de 6 dígitos').fill('000000');
    await Q.getByRole('button', { name: 'Activar' }).click();
    await Q.getByText('Código incorrecto.').waitFor();
    await Q.getByLabel('Código de 6 dígitos').fill(totpCode(secret));
    await Q.getByRole('button', { name: 'Activar' }).click();
    await Q.getByRole('heading', { name: 'Lo que espera una decisión' }).waitFor();
    t.match(await Q.locator('header').innerText(), new RegExp(`${name} · reviewer`));
    const [m] = await a.app.deps.sql`select totp_enabled_at from portal_members where email = ${email}`;
    t.ok(m!.totp_enabled_at, 'the second factor is on');

    const boss = await makeOperator(a, 'admin', `Rita ${tag}`);
    const R = await signInOperator(browser, a, boss, 1);
    await nav(R.page, 'Operadores');
    const added = `nuevo+${tag}@orquesta.mx`;
    await R.page.getByLabel('Correo').fill(added);
    await R.page.getByLabel('Nombre').fill(`Nuevo ${tag}`);
    await R.page.getByLabel('Rol', { exact: true }).selectOption('viewer');
    await R.page.getByRole('button', { name: 'Agregar' }).click();
    await flash(R.page, new RegExp(`Se envió a ${added.replace(/[+.]/g, '\\$&')} un enlace`));
    const [made] = await a.app.deps.sql`select o.role, m.totp_enabled_at from operators o join portal_members m on m.id = o.member_id where m.email = ${added}`;
    t.match(made, { role: 'viewer', totp_enabled_at: null }, 'added; it sets a password from the link and its second factor at the first sign-in');

    await R.page.getByLabel(`Rol de ${name}`).selectOption('support');
    await R.page.getByRole('button', { name: `Cambiar rol de ${name}` }).click();
    await confirm(R.page, 'Pasa a soporte');
    await flash(R.page, /hecho/);
    t.equal((await a.app.deps.sql`select o.role from operators o join portal_members m on m.id = o.member_id where m.email = ${email}`)[0]!.role, 'support');
    t.same(await axe(R.page), [], 'operators: no serious or critical axe violation');
    await R.page.getByRole('row').filter({ hasText: email }).scrollIntoViewIfNeeded();
    await shot(R.page, 'operator-operators.png', { fullPage: false });
    await R.page.getByRole('button', { name: `Desactivar a ${name}` }).click();
    await confirm(R.page, 'Dejó el equipo');
    await R.page.getByRole('button', { name: `Reactivar a ${name}` }).waitFor();
    const me = await Q.request.get(`${a.url}/portal/api/operator/me`);
    t.equal(me.status(), 401, 'the disabled operator\'s session ended');
    const rows = (await a.admin('GET', `/admin/audit_log?action=operator.update`)).body.data.filter((x: any) => x.before?.email === email);
    t.match(rows.map((x: any) => [x.reason, x.after.role, x.after.status]), [['Dejó el equipo', 'support', 'disabled'], ['Pasa a soporte', 'support', 'active']], 'both changes audited with their reasons');
    t.same([...errors, ...R.errors], [], 'no script error');
    await ctx.close();
    await R.ctx.close();
  });
}
