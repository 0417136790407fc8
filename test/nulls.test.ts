// spec: Global conventions: null fields are omitted from authenticated responses.
import t from 'tap';
import { stripNulls } from '../kernel/json.js';
import { startTestApp } from './helpers/app.js';

function hasNull(v: unknown): boolean {
  if (v === null) return true;
  if (Array.isArray(v)) return v.some(hasNull);
  if (v && typeof v === 'object') return Object.values(v).some(hasNull);
  return false;
}

t.test('stripNulls', async (t) => {
  t.same(stripNulls({ a: null, b: 1, c: { d: null, e: [{ f: null, g: 0 }] } }), { b: 1, c: { e: [{ g: 0 }] } });
  t.same(stripNulls({ a: false, b: '', c: 0 }), { a: false, b: '', c: 0 }, 'falsy values stay');
});

t.test('authenticated responses carry no null field', async (t) => {
  const a = await startTestApp();
  t.teardown(() => a.stop());
  const ten = await a.newTenant();
  const c = await a.call('POST', '/v1/customers', { key: ten.testKey, body: {} });
  t.equal(c.status, 201);
  t.notOk(hasNull(c.body), 'create');
  t.notOk('name' in c.body || 'email' in c.body || 'metadata' in c.body, 'absent fields are omitted');
  t.notOk(c.text.includes('null'));
  const g = await a.call('GET', `/v1/customers/${c.body.id}`, { key: ten.testKey });
  t.notOk(hasNull(g.body), 'read');
  const l = await a.call('GET', '/v1/customers', { key: ten.testKey });
  t.notOk(hasNull(l.body), 'list');
  const withNull = await a.call('POST', '/v1/customers', { key: ten.testKey, body: { name: 'Ana', email: null } });
  t.equal(withNull.status, 201, 'a null input means not sent');
  t.notOk('email' in withNull.body);
});
