// The operator console's browser tests share these: an operator made through the admin key with
// its second factor set up, a sign-in in its own browser context (password, then the TOTP code),
// axe-core's serious and critical violations, and screenshots into docs/ (OPERATOR_SCREENSHOTS=1).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { projectRoot } from '../../ops/paths.js';
import type { TestApp } from './app.js';
import { PortalClient, totpCode } from './portal.js';

export const OPERATOR_PASSWORD = 'operator password 123';
const AXE = readFileSync(join(projectRoot, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/** A screenshot into docs/ (the whole page; `fullPage: false`: the viewport, for a list as long as the shared test database makes it). */
export const shot = async (page: Page, name: string, o: { fullPage?: boolean } = {}) => {
  if (process.env.OPERATOR_SCREENSHOTS === '1') await page.screenshot({ path: join(projectRoot, 'docs', name), fullPage: o.fullPage ?? true });
};

export async function axe(page: Page): Promise<Array<{ id: string; impact: string; nodes: number }>> {
  await page.evaluate(AXE);
  const res = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] })`)) as { violations: Array<{ id: string; impact: string; nodes: unknown[] }> };
  return res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
}

export interface TestOperator {
  email: string;
  secret: string;
  name: string;
}

/** An operator whose second factor is set up (through the API, as the first sign-in would). */
export async function makeOperator(a: TestApp, role: string, name: string): Promise<TestOperator> {
  const email = `${name.split(' ')[0]!.toLowerCase()}+${crypto.randomUUID().slice(0, 6)}@orquesta.mx`;
  const made = await a.admin('POST', '/admin/operators', { email, name, role, password: OPERATOR_PASSWORD });
  if (made.status !== 201) throw new Error(made.text);
  const p = new PortalClient(a);
  await p.signIn(email, OPERATOR_PASSWORD);
  const setup = await p.call('POST', '/portal/api/me/totp');
  await p.call('POST', '/portal/api/me/totp/confirm', { code: totpCode(setup.body.secret) });
  await p.call('DELETE', '/portal/api/session');
  return { email, secret: setup.body.secret as string, name };
}

/** Signs an operator in, in a browser context of its own; `offsetSteps` picks a TOTP step not used yet. */
export async function signInOperator(browser: Browser, a: TestApp, op: TestOperator, offsetSteps: number, viewport = { width: 1280, height: 860 }) {
  const ctx = await browser.newContext({ viewport });
  const page = await ctx.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${a.url}/portal/operator`);
  await page.getByLabel('Correo').fill(op.email);
  await page.getByLabel('Contraseña').fill(OPERATOR_PASSWORD);
  await page.getByRole('button', { name: 'Entrar' }).click();
  await page.getByLabel('Código de tu app autenticadora').fill(totpCode(op.secret, Date.now() + offsetSteps * 30_000));
  await page.getByRole('button', { name: 'Verificar' }).click();
  await page.getByRole('heading', { name: 'Lo que espera una decisión' }).waitFor();
  return { page, ctx, errors };
}
