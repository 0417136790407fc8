// Another tenant's id (or the other mode's) answers exactly like an unknown id.
import t from 'tap';
import { startTestApp } from './helpers/app.js';

const sansRequestId = (b: any) => ({ ...b, error: { ...b.error, request_id: undefined } });

t.test('cross-tenant and cross-mode reads look like unknown ids', async (t) => {
  const a = await startTestApp();
  t.teardown(() => a.stop());
  const A = await a.newTenant('A');
  const B = await a.newTenant('B');
  const made = await a.call('POST', '/v1/customers', { key: A.testKey, body: { name: 'Only A', email: 'a@example.com' } });
  t.equal(made.status, 201);
  const id = made.body.id;
  t.equal((await a.call('GET', `/v1/customers/${id}`, { key: A.testKey })).status, 200, 'owner reads it');

  const unknown = await a.call('GET', `/v1/customers/${crypto.randomUUID()}`, { key: B.testKey });
  const otherTenant = await a.call('GET', `/v1/customers/${id}`, { key: B.testKey });
  const otherMode = await a.call('GET', `/v1/customers/${id}`, { key: A.liveKey });
  const malformed = await a.call('GET', `/v1/customers/not-a-uuid`, { key: B.testKey });
  for (const [name, r] of [['other tenant', otherTenant], ['other mode', otherMode], ['malformed id', malformed]] as const) {
    t.equal(r.status, unknown.status, `${name}: status`);
    t.equal(r.body.error.code, 'customer.not_found');
    t.same(sansRequestId(r.body), sansRequestId(unknown.body), `${name}: same body as unknown`);
  }
  t.equal(unknown.status, 404);
  const listB = await a.call('GET', '/v1/customers', { key: B.testKey });
  t.same(listB.body, { object: 'list', data: [] }, 'lists are scoped too');
  const listLive = await a.call('GET', '/v1/customers', { key: A.liveKey });
  t.same(listLive.body.data, []);
});
