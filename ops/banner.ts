// What `npm start` prints: where to go and which keys to use.
//
// Keys are secrets and the banner goes to logs: each key is printed in full once, when it is made
// (the first start), and from then on masked, with the file that keeps it (mode 0600, STATE_DIR)
// and a command that reads it, so a newcomer can still copy one line and use the test key.
import { relative, isAbsolute, join } from 'node:path';
import type { RunningApp } from './app.js';
import type { Config } from './config.js';
import { resolveState } from './paths.js';

/** `sk_test_…WBDG`: the prefix and the last four characters. */
export const maskKey = (k: string) => `${/^[a-z]+_(?:test_|live_)?/.exec(k)?.[0] ?? ''}…${k.slice(-4)}`;

/** The state file's path as the reader would type it (relative to the working directory when inside it). */
function shown(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? `./${rel}` : file;
}

export function bannerLines(config: Config, app: Pick<RunningApp, 'url' | 'admin' | 'demo'>): string[] {
  const lines: string[] = [''];
  const base = config.publicBaseUrl;
  const stateDir = resolveState(config.stateDir);
  const adminFile = shown(join(stateDir, 'admin-key.json'));
  const demoFile = shown(join(stateDir, 'demo-tenant.json'));
  lines.push(`Orquesta is running (ROLE=${config.role}).`);
  if (app.url && config.role === 'worker') lines.push(`  Metrics        ${app.url}/metrics`);
  else if (app.url) {
    lines.push(`  API            ${base}   (listening on ${app.url})`);
    lines.push(`  OpenAPI        ${base}/openapi/v1.json`);
    lines.push(`  Errors         ${base}/docs/errors`);
    lines.push(`  Portal         ${base}/portal   (the merchant's dashboard; docs/portal.md)`);
    lines.push(`  Demo           ${base}/demo   (pay a test link in the browser)`);
    lines.push(`  Status         ${base}/status`);
  }
  const { admin } = app;
  if (admin.source === 'env') lines.push('  Admin key      from ADMIN_KEY (header X-Admin-Key)');
  else if (admin.plain && admin.source === 'generated') lines.push(`  Admin key      ${admin.plain}   (header X-Admin-Key; shown in full only now, kept in ${adminFile})`);
  else if (admin.plain) lines.push(`  Admin key      ${maskKey(admin.plain)}   (header X-Admin-Key; kept in ${adminFile})`);
  else lines.push('  Admin key      set on another machine; set ADMIN_KEY to choose one here');
  const demo = app.demo;
  if (demo) {
    lines.push(`  Demo tenant    ${demo.tenant_id}${demo.created ? ' (created now)' : ''}`);
    if (demo.test_key && demo.live_key && demo.created) {
      lines.push(`    test key     ${demo.test_key}`);
      lines.push(`    live key     ${demo.live_key}`);
      if (demo.portal_email && demo.portal_password) lines.push(`    portal       ${demo.portal_email} / ${demo.portal_password}   (sign in at ${base}/portal)`);
      lines.push(`    (shown in full only now; kept in ${demoFile})`);
    } else if (demo.test_key && demo.live_key) {
      lines.push(`    test key     ${maskKey(demo.test_key)}   live key ${maskKey(demo.live_key)}   (kept in ${demoFile})`);
      if (demo.portal_email) lines.push(`    portal       ${demo.portal_email}   (sign in at ${base}/portal; the password is portal_password in ${demoFile})`);
    } else lines.push(`    keys         not known on this machine; issue new ones with POST /admin/tenants/${demo.tenant_id}/api_keys`);
  }
  if (app.url && config.role !== 'worker' && demo?.test_key) {
    lines.push('', 'Try:');
    if (admin.plain && admin.source !== 'env') lines.push(`  export ADMIN=$(node -p "require('${adminFile}').admin_key")`);
    lines.push(`  export KEY=$(node -p "require('${demoFile}').test_key")`);
    lines.push(`  curl -s ${base}/v1/customers -H "Authorization: Bearer $KEY" -d '{"name":"Ana"}'`);
  }
  lines.push('');
  return lines;
}

export function printBanner(config: Config, app: RunningApp): void {
  process.stdout.write(bannerLines(config, app).join('\n') + '\n');
}
