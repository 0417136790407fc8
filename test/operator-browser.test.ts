// The operator console in headless Chromium (issue 30 part 5): an operator signs in with password
// and TOTP code, asks for an above-threshold payout's approval, is refused approving it herself, and
// a second operator in another browser approves it (four-eyes); a terminal is registered and
// deactivated from the screen; a tenant's key is refused while suspended. axe-core finds no
// serious or critical accessibility violation on the screens. Screenshots: docs/operator-*.png and
// docs/terminal-*.png (looked at; written when OPERATOR_SCREENSHOTS=1).
import t from 'tap';
import type { Browser } from 'playwright-core';
import { ensureChromium, launchChromium } from './helpers/browser.js';
import { freePort, startTestApp, type TestApp } from './helpers/app.js';
import { axe, makeOperator, shot, signInOperator, type TestOperator } from './helpers/operator-browser.js';

// Two browsers, two sign-ins and several screens on a shared machine: a budget above tap's 30 s default.
t.setTimeout(300_000);
const found = ensureChromium();
const why = 'skip' in found ? found.skip : undefined;
if (why) {
  t.comment(`SKIPPING BROWSER TESTS: ${why}`);
  t.test(`operator console (skipped: ${why})`, { skip: why }, () => {});
} else {
  let a: TestApp;
  let browser: Browser;
  t.before(async () => {
    const port = await freePort();
    a = await startTestApp({ ROLE: 'all', PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, RATE_LIMIT_V1_PER_MIN: '100000', SWEEP_INTERVAL_MS: '200' });
    browser = await launchChromium((found as { path: string }).path);
  });
  t.teardown(async () => {
    await browser?.close();
    await a?.stop();
  });

  const operator = (role: string, name: string) => makeOperator(a, role, name);
  const signIn = (op: TestOperator, offsetSteps: number) => signInOperator(browser, a, op, offsetSteps);

  t.test('sign-in with TOTP, a four-eyes payout by two operators, a refused self-approval, terminals, axe', async (t) => {
    const ten = await a.newTenant('Ferretería La Tuerca');
    await a.admin('PATCH', `/admin/tenants/${ten.id}/payout_settings`, { payout_approval_threshold_minor: 100_000 });
    // The database is shared with other runs and files: this run's rows are found by their amount and reason.
    const amount = 1_850_000 + Math.floor(Math.random() * 99) + 1;
    const shown = `${new Intl.NumberFormat('es-MX', { style: 'currency', currency: 'MXN', currencyDisplay: 'narrowSymbol' }).format(amount / 100)} MXN`;
    const why = `Proveedor recurrente, confirmado por teléfono (${crypto.randomUUID().slice(0, 6)})`;
    const po = await a.call('POST', '/v1/payouts', { key: ten.testKey, body: { clabe: '072691004495711499', beneficiary_name: 'Aceros del Norte', amount_minor: amount, currency: 'MXN', concepto: 'Factura A-77' }, headers: { 'idempotency-key': crypto.randomUUID() } });
    t.equal(po.status, 202, po.text);
    const ana = await operator('reviewer', 'Ana Revisora');
    const beto = await operator('reviewer', 'Beto Revisor');

    // Ana: signs in with her code, sees the queue, asks for the payout's approval.
    const A = await signIn(ana, 1);
    t.match(await A.page.locator('header').innerText(), /Ana Revisora · reviewer/);
    t.same(await axe(A.page), [], 'home: no serious or critical axe violation');
    await shot(A.page, 'operator-home.png');
    await A.page.locator('nav').getByRole('button', { name: 'Aprobaciones', exact: true }).click();
    const payoutRow = A.page.getByRole('row').filter({ hasText: shown }).filter({ hasText: 'Ferretería La Tuerca' });
    await payoutRow.waitFor();
    t.same(await axe(A.page), [], 'approvals: no serious or critical axe violation');
    await shot(A.page, 'operator-approvals.png');
    await payoutRow.getByRole('button', { name: 'Pedir aprobación' }).click();
    await A.page.getByLabel('Motivo (lo verá el segundo operador)').fill(why);
    await A.page.getByRole('button', { name: 'Confirmar' }).click();
    await A.page.getByText(/otro operador debe aprobarlo/).waitFor();

    // Ana tries to approve her own request: refused, and nothing ran.
    await A.page.locator('nav').getByRole('button', { name: 'Cuatro ojos', exact: true }).click();
    const mineA = A.page.getByRole('row').filter({ hasText: why });
    await mineA.getByText('La pediste tú.').waitFor();
    await mineA.getByRole('button', { name: 'Aprobar' }).click();
    await A.page.getByRole('button', { name: 'Confirmar' }).click();
    await A.page.getByText(/operator_decision\.self_approval_conflict/).waitFor();
    await shot(A.page, 'operator-self-approval-refused.png');
    const [pending] = await a.app.deps.sql`select status from payout_approvals where id = ${po.body.id}`;
    t.equal(pending!.status, 'pending', 'her own approval ran nothing');

    // Beto, in another browser, approves: the payout goes out.
    const B = await signIn(beto, 1);
    await B.page.locator('nav').getByRole('button', { name: 'Cuatro ojos', exact: true }).click();
    const rowB = B.page.getByRole('row').filter({ hasText: why });
    await rowB.waitFor();
    t.same(await axe(B.page), [], 'four-eyes queue: no serious or critical axe violation');
    await shot(B.page, 'operator-four-eyes.png');
    await rowB.getByRole('button', { name: 'Aprobar' }).click();
    await B.page.getByRole('button', { name: 'Confirmar' }).click();
    await B.page.getByText(/hecho/).waitFor();
    const [approved] = await a.app.deps.sql`select status, approver, payout_id from payout_approvals where id = ${po.body.id}`;
    t.equal(approved!.status, 'approved');
    t.equal(approved!.approver, `operator:${beto.email}`);
    await B.page.locator('#dec-status').selectOption('approved');
    await B.page.getByRole('cell', { name: beto.email }).first().waitFor();

    // Beto registers a terminal for the tenant and deactivates it.
    await B.page.locator('nav').getByRole('button', { name: 'Terminales', exact: true }).click();
    await B.page.getByLabel('Comercio').fill(ten.id);
    await B.page.getByRole('button', { name: 'Ver terminales' }).click();
    await B.page.getByLabel('Número de serie').fill('PAX-A920-0042');
    await B.page.getByLabel('Sucursal').fill('Centro');
    await B.page.getByLabel('Caja').fill('Caja 1');
    await B.page.getByRole('button', { name: 'Registrar' }).click();
    await B.page.getByText(/Terminal PAX-A920-0042 registrada \(active\)/).waitFor();
    t.same(await axe(B.page), [], 'terminals: no serious or critical axe violation');
    await shot(B.page, 'terminal-list.png');
    await B.page.getByRole('button', { name: 'Desactivar PAX-A920-0042' }).click();
    await B.page.getByLabel('Motivo').fill('Equipo en reparación');
    await shot(B.page, 'terminal-deactivate.png');
    await B.page.getByRole('button', { name: 'Confirmar' }).click();
    await B.page.getByRole('cell', { name: 'inactive' }).waitFor();
    const [term] = await a.app.deps.sql`select id, status from terminals where tenant_id = ${ten.id} and serial = 'PAX-A920-0042'`;
    t.equal(term!.status, 'inactive');
    const refused = await a.call('POST', '/v1/payment_intents', { key: ten.testKey, body: { amount_minor: 1000, currency: 'MXN', metadata: { terminal_id: term!.id } }, headers: { 'idempotency-key': crypto.randomUUID() } });
    t.equal(refused.body.error.code, 'payment_intent.terminal_not_active', 'a charge on the deactivated terminal is refused');

    // The audit log shows both operators' actions.
    await B.page.locator('nav').getByRole('button', { name: 'Auditoría', exact: true }).click();
    // The screen renders after its fetch: until then the terminals screen, with its own 'Comercio'
    // field, is still shown (filling that one left the audit filter empty: a failure in a full run).
    await B.page.getByRole('heading', { name: 'Auditoría' }).waitFor();
    await B.page.getByLabel('Comercio').fill(ten.id);
    await B.page.getByRole('button', { name: 'Filtrar' }).click();
    const log = B.page.getByRole('table', { name: new RegExp(`filtro: tenant_id=${ten.id}`) });
    await log.getByRole('cell', { name: 'terminal.deactivate' }).first().waitFor();
    t.same(await axe(B.page), [], 'audit log: no serious or critical axe violation');
    await shot(B.page, 'operator-audit.png');
    const text = await log.innerText();
    t.match(text, /payout_approval\.approve\.requested/);
    t.match(text, /operator_decision\.approve/);
    t.match(text, new RegExp(ana.email.replace(/[+.]/g, '\\$&')));

    // Phone width: tables become cards.
    await B.page.setViewportSize({ width: 390, height: 844 });
    await B.page.locator('nav').getByRole('button', { name: 'Inicio', exact: true }).click();
    await shot(B.page, 'operator-phone.png');
    t.same([...A.errors, ...B.errors], [], 'no script error on any page');
    await A.ctx.close();
    await B.ctx.close();
  });
}
