// The portal in Chromium for the browser tests (test/portal-browser, test/portal-screens): a page
// that collects every console error, failed /portal request, uncaught exception and alert as a
// problem; signing in (with the second step when a TOTP secret is given); axe-core's serious and
// critical findings; full-page screenshots into dist/screenshots (and docs/ with PORTAL_SCREENSHOTS=1).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { projectRoot } from '../../ops/paths.js';
import type { TestApp } from './app.js';
import { totpCode } from './portal.js';

export const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true };
export const DESK = { viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 };
const SHOTS = join(projectRoot, 'dist', 'screenshots');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface PortalPage { ctx: BrowserContext; page: Page; problems: string[]; answers: string[] }

export function portalPages(a: TestApp, browser: Browser) {
  mkdirSync(SHOTS, { recursive: true });

  /** A page that records any console error, CSP violation, failed portal call or uncaught exception. */
  async function open(t: { teardown(fn: () => unknown): void }, size: object = DESK): Promise<PortalPage> {
    const ctx = await browser.newContext({ ...size, locale: 'es-MX', timezoneId: 'America/Mexico_City', acceptDownloads: true });
    const page = await ctx.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      // A failed request is reported below with its URL (the console line has none).
      if (m.type() === 'error' && !/^Failed to load resource/.test(m.text())) problems.push(m.text());
    });
    page.on('response', (r) => {
      const u = new URL(r.url());
      if (r.status() < 400 || !u.pathname.startsWith('/portal')) return;
      // Known and shown by the screens: no session yet (401 before sign-in); no fiscal profile yet (fiscal_profile.not_configured until one is saved).
      if (r.status() === 401 && u.pathname === '/portal/api/session') return;
      if (r.status() < 500 && u.pathname === '/portal/api/v1/fiscal_profile' && r.request().method() === 'GET') return;
      problems.push(`${r.status()} ${r.request().method()} ${u.pathname}${u.search}`);
    });
    page.on('pageerror', (e) => problems.push(String(e)));
    /** What the member types into the next prompts. */
    const answers: string[] = [];
    page.on('dialog', (d) => {
      if (d.type() === 'alert') problems.push(`an alert opened: ${d.message()}`);
      void (d.type() === 'prompt' ? d.accept(answers.shift() ?? '') : d.accept());
    });
    t.teardown(() => ctx.close());
    return { ctx, page, problems, answers };
  }

  async function signIn(page: Page, email: string, password: string, secret?: string) {
    await page.goto(`${a.url}/portal`);
    await page.getByTestId('email').fill(email);
    await page.getByTestId('password').fill(password);
    await page.getByRole('button', { name: 'Entrar' }).click();
    if (secret) {
      // Each code is accepted once per 30-second step: a sign-in right after another one is "30 s later".
      await a.app.deps.sql`update portal_members set totp_last_step = null where lower(email) = ${email.toLowerCase()}`;
      await page.getByTestId('totp-code').waitFor();
      await page.getByTestId('totp-code').fill(totpCode(secret));
      await page.getByRole('button', { name: 'Verificar' }).click();
    }
    await page.getByTestId('tenant-name').waitFor({ timeout: 15_000 });
  }

  async function axe(page: Page): Promise<string[]> {
    await page.evaluate(AXE);
    const r = await page.evaluate(async () => {
      const g = globalThis as any;
      const res = await g.axe.run(g.document, { resultTypes: ['violations'] });
      return res.violations.filter((v: any) => v.impact === 'serious' || v.impact === 'critical').map((v: any) => `${v.id}: ${v.help} (${v.nodes.map((n: any) => n.target.join(' ')).slice(0, 3).join(', ')})`);
    });
    return r as string[];
  }

  async function shot(page: Page, name: string) {
    const png = await page.screenshot({ path: join(SHOTS, `portal-${name}.png`), fullPage: true });
    if (process.env.PORTAL_SCREENSHOTS === '1') writeFileSync(join(projectRoot, 'docs', `portal-${name}.png`), png);
  }

  return { open, signIn, axe, shot };
}
