// Keys, scopes, revocation across processes, tenants and modes.
import t from 'tap';
import { httpCall, startTestApp, testConfig } from './helpers/app.js';
import { startApp } from '../ops/app.js';
import { createLogger } from '../kernel/log.js';

t.test('keys: test and live select the mode; hashes only', async (t) => {
  const a = await startTestApp();
  t.teardown(() => a.stop());
  const ten = await a.newTenant();
  t.match(ten.testKey, /^sk_test_[A-Za-z0-9]{32}$/);
  t.match(ten.liveKey, /^sk_live_[A-Za-z0-9]{32}$/);
  const c1 = await a.call('POST', '/v1/customers', { key: ten.testKey, body: {} });
  t.equal(c1.status, 201);
  t.equal(c1.body.livemode, false);
  const c2 = await a.call('POST', '/v1/customers', { key: ten.liveKey, body: {} });
  t.equal(c2.body.livemode, true);
  const rows = await a.app.deps.sql`select key_hash from api_keys where tenant_id = ${ten.id}`;
  t.equal(rows.length, 2);
  for (const r of rows) {
    t.notOk([ten.testKey, ten.liveKey].includes(r.key_hash), 'the key itself is not stored');
    t.match(r.key_hash, /^[0-9a-f]{64}$/);
  }
});

t.test('every kind of bad key gets the same 401', async (t) => {
  const a = await startTestApp();
  t.teardown(() => a.stop());
  const ten = await a.newTenant();
  const messages = new Set<string>();
  const variants: Array<Record<string, string>> = [
    {},
    { authorization: 'Bearer' },
    { authorization: 'Basic Zm9vOmJhcg==' },
    { authorization: 'Bearer sk_test_unknownunknownunknownunknown12' },
    { authorization: 'Bearer not-a-key' },
    { authorization: `Bearer ${ten.testKey}x` },
  ];
  await a.admin('DELETE', `/admin/tenants/${ten.id}/api_keys/${ten.testKeyId}`);
  variants.push({ authorization: `Bearer ${ten.testKey}` });
  for (const h of variants) {
    const r = await a.call('GET', '/v1/customers', { headers: h });
    t.equal(r.status, 401, JSON.stringify(h));
    t.equal(r.body.error.code, 'api_key.missing_or_invalid');
    t.equal(r.body.error.type, 'authentication_error');
    messages.add(r.body.error.message);
  }
  t.equal(messages.size, 1, 'one generic message for every cause');
});

t.test('revocation is effective at once on every API process', async (t) => {
  const a = await startTestApp();
  const cfgB = testConfig({ REDIS_PREFIX: a.config.redisPrefix, ADMIN_KEY: a.adminKey, KEY_CACHE_SECONDS: '300' });
  const b = await startApp(cfgB, createLogger('silent'));
  t.teardown(async () => {
    await b.stop();
    await a.stop();
  });
  const ten = await a.newTenant();
  const key = await a.admin('POST', `/admin/tenants/${ten.id}/api_keys`, { livemode: false, scopes: ['payments:read'] });
  t.equal(key.status, 201);
  t.equal(key.body.object, 'api_key');
  // Process B caches the key (for 300 s) by using it.
  const before = await httpCall(`${b.url}/v1/customers`, 'GET', { authorization: `Bearer ${key.body.key}` });
  t.equal(before.status, 200);
  const rev = await a.admin('DELETE', `/admin/tenants/${ten.id}/api_keys/${key.body.id}`);
  t.equal(rev.status, 200);
  t.same(rev.body, { id: key.body.id, object: 'api_key', revoked: true });
  const afterA = await a.call('GET', '/v1/customers', { key: key.body.key });
  t.equal(afterA.status, 401, 'revoked on the process that revoked it');
  const afterB = await httpCall(`${b.url}/v1/customers`, 'GET', { authorization: `Bearer ${key.body.key}` });
  t.equal(afterB.status, 401, 'revoked at once on the other process despite its cache');
  // The tenant's other key still works.
  t.equal((await a.call('GET', '/v1/customers', { key: ten.testKey })).status, 200);
  // Revoking again answers the same; unknown key of the tenant is 404.
  t.equal((await a.admin('DELETE', `/admin/tenants/${ten.id}/api_keys/${key.body.id}`)).status, 200);
  const unknown = await a.admin('DELETE', `/admin/tenants/${ten.id}/api_keys/${crypto.randomUUID()}`);
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error.code, 'api_key.not_found');
});

t.test('scopes: 403 insufficient_scope naming the scope', async (t) => {
  const a = await startTestApp();
  t.teardown(() => a.stop());
  const ten = await a.newTenant();
  const ro = await a.admin('POST', `/admin/tenants/${ten.id}/api_keys`, { livemode: false, scopes: ['payments:read'] });
  const r = await a.call('POST', '/v1/customers', { key: ro.body.key, body: {} });
  t.equal(r.status, 403);
  t.equal(r.body.error.code, 'insufficient_scope');
  t.equal(r.body.error.type, 'authorization_error');
  t.match(r.body.error.message, /payments:write/);
  t.equal((await a.call('GET', '/v1/customers', { key: ro.body.key })).status, 200, 'read scope reads');
  const wo = await a.admin('POST', `/admin/tenants/${ten.id}/api_keys`, { livemode: false, scopes: ['payments:write'] });
  t.equal((await a.call('GET', '/v1/customers', { key: wo.body.key })).status, 200, 'write implies read');
  const other = await a.admin('POST', `/admin/tenants/${ten.id}/api_keys`, { livemode: false, scopes: ['payouts:write'] });
  t.equal((await a.call('GET', '/v1/customers', { key: other.body.key })).status, 403);
  const bad = await a.admin('POST', `/admin/tenants/${ten.id}/api_keys`, { livemode: false, scopes: ['root'] });
  t.equal(bad.status, 400);
  const noTenant = await a.admin('POST', `/admin/tenants/${crypto.randomUUID()}/api_keys`, { livemode: false, scopes: ['*'] });
  t.equal(noTenant.status, 404);
  t.equal(noTenant.body.error.code, 'tenant.not_found');
});

t.test('admin API needs the operator key', async (t) => {
  const a = await startTestApp();
  t.teardown(() => a.stop());
  const r = await a.call('POST', '/admin/tenants', { body: { name: 'x' }, headers: { 'x-admin-key': 'wrong' } });
  t.equal(r.status, 401);
  t.equal(r.body.error.code, 'admin_key.missing_or_invalid');
  const ten = await a.newTenant();
  // An API key is not an operator key.
  const r2 = await a.call('POST', '/admin/tenants', { body: { name: 'x' }, headers: { 'x-admin-key': ten.testKey } });
  t.equal(r2.status, 401);
});
