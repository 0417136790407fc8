// What `npm start` prints: where to go and which keys to use.
import type { RunningApp } from './app.js';
import type { Config } from './config.js';

export function printBanner(config: Config, app: RunningApp): void {
  const lines: string[] = [''];
  lines.push(`Orquesta is running (ROLE=${config.role}).`);
  if (app.url && config.role === 'worker') lines.push(`  Metrics        ${app.url}/metrics`);
  else if (app.url) {
    lines.push(`  API            ${config.publicBaseUrl}   (listening on ${app.url})`);
    lines.push(`  OpenAPI        ${config.publicBaseUrl}/openapi/v1.json`);
    lines.push(`  Errors         ${config.publicBaseUrl}/docs/errors`);
    lines.push(`  Status         ${config.publicBaseUrl}/status`);
  }
  if (app.admin.plain) lines.push(`  Admin key      ${app.admin.plain}   (header X-Admin-Key${app.admin.source === 'env' ? ', from ADMIN_KEY' : `, stored in ${config.stateDir}/admin-key.json`})`);
  else lines.push(`  Admin key      set on another machine; set ADMIN_KEY to choose one here`);
  if (app.demo) {
    lines.push(`  Demo tenant    ${app.demo.tenant_id}${app.demo.created ? ' (created now)' : ''}`);
    if (app.demo.test_key) {
      lines.push(`    test key     ${app.demo.test_key}`);
      lines.push(`    live key     ${app.demo.live_key}`);
    } else lines.push(`    keys         not known on this machine; issue new ones with POST /admin/tenants/${app.demo.tenant_id}/api_keys`);
  }
  if (app.url && app.demo?.test_key) {
    lines.push('', 'Try:', `  curl -s ${config.publicBaseUrl}/v1/customers -H "Authorization: Bearer ${app.demo.test_key}" -d '{"name":"Ana"}'`);
  }
  lines.push('');
  process.stdout.write(lines.join('\n') + '\n');
}
