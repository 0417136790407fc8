import t from 'tap';
import { ConfigError, loadConfig, redactedConfig } from '../ops/config.js';

t.test('defaults (decisions.md §1)', async (t) => {
  const c = loadConfig({});
  t.equal(c.port, 8080);
  t.equal(c.host, '127.0.0.1');
  t.equal(c.databaseUrl, 'postgres://postgres@127.0.0.1:5432/orquesta');
  t.equal(c.redisUrl, 'redis://127.0.0.1:6379/0');
  t.equal(c.publicBaseUrl, 'http://127.0.0.1:8080');
  t.equal(c.rateLimitV1PerMin, 300);
  t.equal(c.rateLimitPublicPerMin, 60);
  t.equal(c.role, 'all');
  t.same(c.webhookAllowHttpHosts, []);
  t.equal(c.bodyLimitBytes, 1024 * 1024);
  t.equal(c.databasePoolMax, 20);
  t.ok(Object.isFrozen(c));
  t.ok(Object.isFrozen(c.trustedProxies));
});

t.test('env overrides, validated', async (t) => {
  const c = loadConfig({ PORT: '9000', ROLE: 'worker', WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1, localhost', PUBLIC_BASE_URL: 'https://pay.example.mx/' });
  t.equal(c.port, 9000);
  t.equal(c.role, 'worker');
  t.same(c.webhookAllowHttpHosts, ['127.0.0.1', 'localhost']);
  t.equal(c.publicBaseUrl, 'https://pay.example.mx');
  t.equal(loadConfig({ NODE_ENV: 'test' }).databaseUrl.endsWith('/orquesta_test'), true, 'tests use their own database');
  t.throws(() => loadConfig({ ROLE: 'both' }), ConfigError);
  t.throws(() => loadConfig({ PORT: 'eighty' }), /PORT must be an integer/);
  t.throws(() => loadConfig({ RATE_LIMIT_V1_PER_MIN: '0' }), ConfigError);
  t.throws(() => loadConfig({ DATABASE_URL: 'mysql://x' }), /databaseUrl/);
  t.throws(() => loadConfig({ ADMIN_KEY: 'short' }), /adminKey/);
  t.equal(loadConfig({ DATABASE_POOL_MAX: '64' }).databasePoolMax, 64);
  t.throws(() => loadConfig({ DATABASE_POOL_MAX: '0' }), /databasePoolMax/);
  t.throws(() => loadConfig({ DATABASE_POOL_MAX: '0' }), /^invalid configuration: DATABASE_POOL_MAX \(databasePoolMax\) must be >= 1$/, 'the error names the variable that was set');
});

t.test('redaction', async (t) => {
  const r = redactedConfig(loadConfig({ ADMIN_KEY: 'a'.repeat(20), DATABASE_URL: 'postgres://u:secret@h/db' }));
  t.equal(r.adminKey, '***');
  t.notMatch(String(r.databaseUrl), /secret/);
});
