// The API a Stripe user expects (issue: what a newcomer trips over, item 5): lists of intents and
// refunds with cursor paging and filters, one webhook endpoint read, customer update and delete,
// customer_id on intents (and from a saved method), amount_refunded_minor, an operator's key list,
// the customer list filtered by email; the spec's simple lists keep their shape.
import t from 'tap';
import { startTestApp, type TestApp } from './helpers/app.js';

let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const get = (path: string, key = ten.testKey) => a.call('GET', path, { key });
const post = (path: string, body: object, key = ten.testKey) => a.call('POST', path, { key, body, headers: idem() });

async function until(path: string, ok: (b: any) => boolean) {
  for (let i = 0; i < 200; i++) {
    const r = await get(path);
    if (ok(r.body)) return r.body;
    await sleep(50);
  }
  throw new Error(`condition not met on ${path}`);
}

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000', RECONCILE_INTERVAL_MS: '500' });
  ten = await a.newTenant();
});
t.teardown(() => a.stop());

t.test('payment intents: pages of `limit` with starting_after and has_more, and each filter', async (t) => {
  const own = await a.newTenant();
  const cust = (await post('/v1/customers', { email: 'pagos@example.mx' }, own.testKey)).body;
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) {
    const body = { amount_minor: 1000 + i, currency: 'MXN', ...(i % 2 ? { metadata: { branch: 'centro' } } : {}), ...(i < 3 ? { customer_id: cust.id } : {}) };
    const r = await post('/v1/payment_intents', body, own.testKey);
    t.equal(r.status, 201);
    ids.unshift(r.body.id); // newest first
    await sleep(5);
  }
  const seen: string[] = [];
  let after: string | undefined;
  for (let page = 0; page < 5; page++) {
    const r = await get(`/v1/payment_intents?limit=3${after ? `&starting_after=${after}` : ''}`, own.testKey);
    t.equal(r.status, 200);
    seen.push(...r.body.data.map((x: { id: string }) => x.id));
    if (!r.body.has_more) break;
    after = r.body.data.at(-1).id;
  }
  t.same(seen, ids, 'every intent once, newest first, across pages');
  const branch = await get('/v1/payment_intents?metadata[branch]=centro', own.testKey);
  t.same(branch.body.data.map((x: { metadata: { branch: string } }) => x.metadata.branch), ['centro', 'centro', 'centro']);
  const mine = await get(`/v1/payment_intents?customer=${cust.id}`, own.testKey);
  t.equal(mine.body.data.length, 3);
  t.ok(mine.body.data.every((x: { customer_id: string }) => x.customer_id === cust.id), 'customer_id on each');
  const none = await get(`/v1/payment_intents?status=succeeded`, own.testKey);
  t.same(none.body, { object: 'list', data: [], has_more: false });
  const future = await get(`/v1/payment_intents?created[gte]=${encodeURIComponent(new Date(Date.now() + 3600_000).toISOString())}`, own.testKey);
  t.same(future.body.data, [], 'created[gte] in the future: nothing');
  const past = await get(`/v1/payment_intents?created[lt]=${encodeURIComponent(new Date(Date.now() + 3600_000).toISOString())}&limit=100`, own.testKey);
  t.equal(past.body.data.length, 7);
  t.equal((await get('/v1/payment_intents', ten.testKey)).body.data.filter((x: { id: string }) => ids.includes(x.id)).length, 0, 'another tenant sees none of them');
  const bad = await get(`/v1/payment_intents?starting_after=${crypto.randomUUID()}`, own.testKey);
  t.equal(bad.status, 404);
  t.equal(bad.body.error.code, 'payment_intent.not_found');
  const unknownCustomer = await post('/v1/payment_intents', { amount_minor: 100, currency: 'MXN', customer_id: crypto.randomUUID() }, own.testKey);
  t.equal(unknownCustomer.body.error?.code, 'customer.not_found', 'an unknown customer_id is refused');
});

t.test('a fully refunded charge shows amount_refunded_minor = total; refunds list and page', async (t) => {
  const pi = (await post('/v1/payment_intents', { amount_minor: 5000, tip_minor: 500, currency: 'MXN' })).body;
  await post(`/v1/payment_intents/${pi.id}/confirm`, { payment_method: 'card', payment_token: 'tok_sim_ok' });
  const done = await until(`/v1/payment_intents/${pi.id}?expand=attempts`, (b) => b.status === 'succeeded');
  t.equal(done.amount_refunded_minor, 0);
  const r1 = await post('/v1/refunds', { attempt_id: done.attempts[0].id, amount_minor: 2000 });
  const r2 = await post('/v1/refunds', { attempt_id: done.attempts[0].id });
  t.same([r1.status, r2.status], [201, 201]);
  const after = await until(`/v1/payment_intents/${pi.id}`, (b) => b.amount_refunded_minor === 5500);
  t.equal(after.amount_refunded_minor, after.total_minor, 'fully refunded, visible on the intent');
  const page1 = await get(`/v1/refunds?payment_intent=${pi.id}&limit=1`);
  t.same([page1.body.data.length, page1.body.has_more, page1.body.data[0].id], [1, true, r2.body.id]);
  const page2 = await get(`/v1/refunds?payment_intent=${pi.id}&limit=1&starting_after=${page1.body.data[0].id}`);
  t.same([page2.body.data.map((x: { id: string }) => x.id), page2.body.has_more], [[r1.body.id], false]);
  const list = (await get(`/v1/payment_intents?limit=100`)).body.data.find((x: { id: string }) => x.id === pi.id);
  t.equal(list.amount_refunded_minor, 5500, 'the list carries it too');
});

t.test('one webhook endpoint reads without its secret', async (t) => {
  const c = await a.call('POST', '/v1/webhook_endpoints', { key: ten.testKey, body: { url: 'https://8.8.8.8/hooks' } });
  t.equal(c.status, 201);
  const r = await get(`/v1/webhook_endpoints/${c.body.id}`);
  t.equal(r.status, 200);
  t.equal(r.body.url, 'https://8.8.8.8/hooks');
  t.notOk('secret' in r.body, 'never the secret');
  t.equal((await get(`/v1/webhook_endpoints/${crypto.randomUUID()}`)).body.error.code, 'webhook_endpoint.not_found');
});

t.test('customers: update merges, delete hides and detaches; the list filters by email and stays a simple list', async (t) => {
  const c = (await post('/v1/customers', { name: 'Ana', email: 'ana@example.mx', metadata: { a: '1', b: '2' } })).body;
  const u = await post(`/v1/customers/${c.id}`, { name: 'Ana López', metadata: { b: '', c: '3' } });
  t.equal(u.status, 200);
  t.same([u.body.name, u.body.email, u.body.metadata], ['Ana López', 'ana@example.mx', { a: '1', c: '3' }], 'only what was sent changed; an empty value removes its key');
  const byEmail = await get('/v1/customers?email=ANA@example.mx');
  t.same(byEmail.body.data.map((x: { id: string }) => x.id), [c.id], 'email filter, case-insensitive');
  t.notOk('has_more' in byEmail.body, 'a simple list (spec): no has_more');
  const pm = await post(`/v1/customers/${c.id}/payment_methods`, { payment_token: 'tok_sim_ok' });
  const active = await until(`/v1/customers/${c.id}/payment_methods`, (b) => b.data?.[0]?.status === 'active');
  t.equal(active.data[0].id, pm.body.id);
  // A one-click charge of the saved method belongs to its customer.
  const pi = (await post('/v1/payment_intents', { amount_minor: 1200, currency: 'MXN' })).body;
  const conf = await post(`/v1/payment_intents/${pi.id}/confirm`, { payment_method_id: pm.body.id });
  t.equal(conf.body.customer_id, c.id, 'customer_id set from the saved method');
  const other = (await post('/v1/customers', {})).body;
  const pi2 = (await post('/v1/payment_intents', { amount_minor: 1200, currency: 'MXN', customer_id: other.id })).body;
  const mismatch = await post(`/v1/payment_intents/${pi2.id}/confirm`, { payment_method_id: pm.body.id });
  t.same([mismatch.status, mismatch.body.error.code], [400, 'payment_intent.customer_mismatch']);
  const del = await a.call('DELETE', `/v1/customers/${c.id}`, { key: ten.testKey });
  t.same(del.body, { id: c.id, object: 'customer', deleted: true });
  t.equal((await get(`/v1/customers/${c.id}`)).status, 404, 'a deleted customer reads as unknown');
  t.equal((await a.call('DELETE', `/v1/customers/${c.id}`, { key: ten.testKey })).status, 404);
  t.notOk((await get('/v1/customers?email=ana@example.mx')).body.data.length, 'not listed');
  const [m] = await a.app.deps.sql`select status from payment_methods where id = ${pm.body.id}`;
  t.equal(m.status, 'detached', 'its saved methods are detached');
  t.equal((await get(`/v1/payment_intents/${pi.id}`)).body.customer_id, c.id, 'its intents keep their customer_id');
});

t.test("an operator lists a tenant's keys without the keys", async (t) => {
  const r = await a.admin('GET', `/admin/tenants/${ten.id}/api_keys`);
  t.equal(r.status, 200);
  t.equal(r.body.data.length, 2);
  t.notMatch(r.text, new RegExp(ten.testKey), 'never the key');
  t.ok(r.body.data.every((k: { key_prefix: string }) => /^sk_(test|live)_.{4}…$/.test(k.key_prefix)), 'only its first characters');
  t.equal((await a.admin('GET', `/admin/tenants/${crypto.randomUUID()}/api_keys`)).status, 404);
});
