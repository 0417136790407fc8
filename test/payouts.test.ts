// Payouts against the running service: every payout.* code, the states (processing → paid,
// failed, returned), idempotency (one order at the rail), four-eyes, ledger, lists, tenancy; and
// live mode through the real STP adapter against the local fake of STP (credentials, the signed
// order, the status callback as provider evidence).
import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { FakeStp } from './fakes/stp.js';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { startTestApp, type TestApp, until } from './helpers/app.js';
import { scratchDatabase } from './helpers/db.js';

let a: TestApp;
let fake: FakeStp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
const CLABE = '072691004495711499';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const passphrase = 'frase secreta de prueba';
const keys = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase },
});


const body = (over: object = {}) => ({ clabe: CLABE, beneficiary_name: 'Proveedora del Norte', amount_minor: 150_000, currency: 'MXN', concepto: 'Pago factura 123', ...over });
const create = (b: object, key = ten.testKey, headers: Record<string, string> = idem()) => a.call('POST', '/v1/payouts', { key, body: b, headers });
const get = (id: string, key = ten.testKey) => a.call('GET', `/v1/payouts/${id}`, { key });
const settled = (id: string, key = ten.testKey) => until(() => get(id, key), (r) => r.body.status !== 'processing');
const lines = (refId: string) => a.app.deps.sql`
  select e.kind, l.account, l.amount_minor from journal_lines l join journal_entries e on e.id = l.entry_id where e.ref_id = ${refId} order by e.created_at, l.id`;

// A database of this file's own, dropped at the end (test/helpers/db.ts). Its live tenants keep STP
// credentials sealed with this app's secrets key (a key of its own STATE_DIR) and payouts sent today;
// in the shared test database every later test file's worker, each with another key, ran the day's
// conciliation over them at its start and logged "sealed value does not open", for one more tenant
// at each `npm test` of the day.
const db = scratchDatabase('orq_payouts');

t.before(async () => {
  fake = await new FakeStp({ empresa: 'MERCADOUNO', publicKey: keys.publicKey }).start();
  a = await startTestApp({ DATABASE_URL: db.url, ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000', STP_API_URL: fake.url, SWEEP_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500' });
  ten = await a.newTenant();
});
t.teardown(async () => {
  await a?.stop();
  await fake?.stop();
  await db.drop();
});

t.test('validations: every payout.* code of the spec, and ours', async (t) => {
  const cases: Array<[object, string, RegExp?]> = [
    [{ clabe: undefined, concepto: undefined }, 'payout.missing_fields', /missing: clabe, concepto/],
    [{ beneficiary_name: '  ' }, 'payout.missing_fields', /beneficiary_name/],
    [{ amount_minor: 0 }, 'payout.invalid_amount'],
    [{ amount_minor: -5 }, 'payout.invalid_amount'],
    [{ amount_minor: 10.5 }, 'payout.invalid_amount'],
    [{ amount_minor: '100' }, 'payout.invalid_amount'],
    [{ amount_minor: undefined }, 'payout.invalid_amount'],
    [{ currency: 'mxn' }, 'payout.invalid_currency'],
    [{ currency: 'XYZ' }, 'payout.invalid_currency'],
    [{ currency: undefined }, 'payout.invalid_currency'],
    [{ currency: 'USD' }, 'payout.unsupported_currency', /MXN only/],
    [{ clabe: '07269100449571149' }, 'payout.invalid_clabe', /18 digits/],
    [{ clabe: '072691004495711498' }, 'payout.invalid_clabe', /check digit/],
    [{ clabe: '07269100449571149A' }, 'payout.invalid_clabe'],
    [{ clabe: 72691004495711499 }, 'payout.invalid_clabe'],
    [{ clabe: '003180110400000006' }, 'payout.invalid_clabe', /bank code 003/],
    [{ beneficiary_rfc: 'NOPE' }, 'payout.invalid_beneficiary_rfc'],
    [{ reference: 'ABC' }, 'payout.invalid_reference'],
    [{ reference: '12345678' }, 'payout.invalid_reference'],
    [{ connector_key: 'banamex' }, 'payout.invalid_connector'],
  ];
  for (const [over, code, msg] of cases) {
    const r = await create(body(over));
    t.equal(r.status, 400, `${JSON.stringify(over)} -> 400`);
    t.equal(r.body.error?.code, code, `${JSON.stringify(over)} -> ${code}`);
    if (msg) t.match(r.body.error.message, msg);
  }
  const noKey = await a.call('POST', '/v1/payouts', { key: ten.testKey, body: body() });
  t.equal(noKey.body.error.code, 'idempotency_key_required');
  const k = await a.admin('POST', `/admin/tenants/${ten.id}/api_keys`, { livemode: false, scopes: ['payments:write', 'payments:read'] });
  const scoped = await create(body(), k.body.key);
  t.equal(scoped.status, 403);
  t.equal(scoped.body.error.code, 'insufficient_scope');
  t.match(scoped.body.error.message, /payouts:write/);
  const [n] = await a.app.deps.sql`select count(*)::int as n from payouts where tenant_id = ${ten.id}`;
  t.equal(n.n, 0, 'no payout was created by a refused request');
});

t.test('a payout: 201 processing, then paid with provider_ref and tracking_key; event, ledger, one order', async (t) => {
  const r = await create(body({ beneficiary_rfc: 'EKU9003173C9', reference: '4455' }));
  t.equal(r.status, 201);
  // spec: the payout lists `clabe` (the masked variants are the *_masked fields of applications and accounts).
  t.match(r.body, { object: 'payout', status: 'processing', clabe: CLABE, beneficiary_name: 'Proveedora del Norte', beneficiary_rfc: 'EKU9003173C9', amount_minor: 150_000, currency: 'MXN', concepto: 'Pago factura 123', reference: '4455', connector_key: 'stp', livemode: false });
  t.notOk(r.body.provider_ref, 'not yet executed');
  t.notOk(r.body.tracking_key);
  const done = await settled(r.body.id);
  t.equal(done.body.status, 'paid');
  t.equal(done.body.clabe, CLABE, 'GET answers the full CLABE too');
  t.equal((await a.call('GET', '/v1/payouts', { key: ten.testKey })).body.data.find((p: { id: string }) => p.id === r.body.id)?.clabe, CLABE, 'and the list');
  t.match(done.body.provider_ref, /^sim_po_/);
  t.match(done.body.tracking_key, /^ORQ[0-9A-Z]{25}$/, 'clave de rastreo');
  t.notOk(done.body.failure_reason);
  const ev = await a.app.deps.sql`select event_type, data from outbox_events where entity_id = ${r.body.id}`;
  t.same(ev.map((e) => e.event_type), ['payout.paid']);
  t.match(ev[0].data, { id: r.body.id, object: 'payout', status: 'paid', clabe_masked: '072***********1499', amount_minor: 150_000 });
  t.notOk('clabe' in ev[0].data, 'an event carries the CLABE masked only');
  t.same((await lines(r.body.id)).map((l) => [l.kind, l.account, l.amount_minor]), [
    ['payout.sent', 'payouts', 150_000],
    ['payout.sent', 'payout_source:stp', -150_000],
  ]);
  const [book] = await a.app.deps.sql`select * from sim_payout_orders where key = ${'orq_po_' + r.body.id}`;
  t.match(book, { sends: 1, state: 'paid', clabe_masked: '072***********1499', amount_minor: 150_000, tracking_key: done.body.tracking_key });
  const hist = await a.app.deps.sql`select event, to_status from entity_history where entity_id = ${r.body.id} order by id`;
  t.same(hist.map((h) => `${h.event}>${h.to_status}`), ['create>processing', 'send_started>processing', 'rail.paid>paid']);
});

t.test('idempotency: the same key answers the same payout, and the rail gets one order', async (t) => {
  const h = idem();
  const [x, y] = await Promise.all([create(body({ amount_minor: 777 }), ten.testKey, h), create(body({ amount_minor: 777 }), ten.testKey, h)]);
  const ok = [x, y].filter((r) => r.status === 201);
  t.ok(ok.length >= 1);
  const replay = await create(body({ amount_minor: 777 }), ten.testKey, h);
  t.equal(replay.status, 201);
  t.equal(replay.body.id, ok[0].body.id, 'replayed');
  t.equal(replay.headers.get('idempotency-replayed'), 'true');
  t.equal(replay.body.clabe, CLABE, 'the replay answers the full CLABE, opened from the sealed record');
  const [rec] = await a.app.deps.sql`select response_body from idempotency_keys where tenant_id = ${ten.id} and key = ${h['idempotency-key']}`;
  t.notMatch(rec.response_body, CLABE, 'the record keeps it sealed');
  t.equal((await create(body({ amount_minor: 778 }), ten.testKey, h)).status, 422, 'same key, another body');
  await settled(replay.body.id);
  const [n] = await a.app.deps.sql`select count(*)::int as n from payouts where tenant_id = ${ten.id} and amount_minor = 777`;
  t.equal(n.n, 1);
  const [book] = await a.app.deps.sql`select sends from sim_payout_orders where key = ${'orq_po_' + replay.body.id}`;
  t.equal(book.sends, 1);
});

t.test('idempotency at commit: a repeat is answered with the stored response even when the stored state it checks changed since', async (t) => {
  // The route does not look its key up before the handler (idempotencyLookup at_commit): a repeat
  // runs until the create's statement, which fails on the idempotency record and is replayed.
  const own = await a.newTenant('payouts idempotency at commit');
  // 1. Above the threshold the first answer is a 202 approval; the threshold is then removed, so
  //    the repeat takes the create path: it must still answer the stored 202 and create nothing.
  t.equal((await a.admin('PATCH', `/admin/tenants/${own.id}/payout_settings`, { payout_approval_threshold_minor: 1_000 })).status, 200);
  const h = idem();
  const first = await create(body({ amount_minor: 5_000 }), own.testKey, h);
  t.equal(first.status, 202);
  t.equal((await a.admin('PATCH', `/admin/tenants/${own.id}/payout_settings`, { payout_approval_disabled: true })).status, 200);
  const again = await create(body({ amount_minor: 5_000 }), own.testKey, h);
  t.equal(again.status, 202, 'the stored answer, not a new payout');
  t.equal(again.body.id, first.body.id);
  t.equal(again.headers.get('idempotency-replayed'), 'true');
  t.equal(again.body.clabe, CLABE, 'opened from the sealed record');
  const [n] = await a.app.deps.sql`select count(*)::int as n from payouts where tenant_id = ${own.id}`;
  t.equal(n.n, 0, 'nothing created by the repeat');
  t.equal((await create(body({ amount_minor: 5_001 }), own.testKey, h)).status, 422, 'same key, another body');
  // 2. Live: the first payout passed the credentials check; the credentials are then removed, so the
  //    repeat is refused before its statement (payout.no_route): it must be answered with the 201.
  const creds = { empresa: 'MERCADOUNO', cuenta_ordenante: '646180110400000007', nombre_ordenante: 'Mercado Uno SA', private_key_pem: keys.privateKey, passphrase };
  t.equal((await a.call('PUT', '/v1/connectors/stp/credentials', { key: own.liveKey, body: creds })).status, 200);
  const hl = idem();
  const live = await create(body({ amount_minor: 4_321 }), own.liveKey, hl);
  t.equal(live.status, 201);
  await a.app.deps.sql`delete from payout_credentials where tenant_id = ${own.id} and livemode`;
  const replay = await create(body({ amount_minor: 4_321 }), own.liveKey, hl);
  t.equal(replay.status, 201, 'replayed, not payout.no_route');
  t.equal(replay.body.id, live.body.id);
  t.equal(replay.headers.get('idempotency-replayed'), 'true');
  const fresh = await create(body({ amount_minor: 4_321 }), own.liveKey);
  t.equal(fresh.body.error?.code, 'payout.no_route', 'a first request is still refused');
});

t.test('beneficiary FAIL: failed with failure_reason; event payout.failed; no ledger entry', async (t) => {
  const r = await create(body({ beneficiary_name: 'FAIL' }));
  t.equal(r.status, 201);
  const done = await settled(r.body.id);
  t.equal(done.body.status, 'failed');
  t.match(done.body.failure_reason, /rejected the transfer/);
  t.ok(done.body.tracking_key, 'tracking key once executed');
  const ev = await a.app.deps.sql`select event_type, data from outbox_events where entity_id = ${r.body.id}`;
  t.same(ev.map((e) => e.event_type), ['payout.failed']);
  t.match(ev[0].data.failure_reason, /rejected/);
  t.same(await lines(r.body.id), [], 'no money moved');
  const sim = await a.admin('POST', `/admin/tenants/${ten.id}/payouts/${r.body.id}/simulate-return`);
  t.equal(sim.body.error.code, 'payout.not_returnable');
});

t.test('a devolución after success: returned; event payout.returned; ledger reversal', async (t) => {
  const r = await create(body({ amount_minor: 42_00 }));
  await settled(r.body.id);
  const sim = await a.admin('POST', `/admin/tenants/${ten.id}/payouts/${r.body.id}/simulate-return`);
  t.equal(sim.status, 200);
  const back = await until(() => get(r.body.id), (x) => x.body.status === 'returned');
  t.match(back.body.failure_reason, /devolución/);
  const ev = await a.app.deps.sql`select event_type from outbox_events where entity_id = ${r.body.id} order by id`;
  t.same(ev.map((e) => e.event_type), ['payout.paid', 'payout.returned']);
  const l = await lines(r.body.id);
  t.same(l.map((x) => [x.kind, x.account, x.amount_minor]), [
    ['payout.sent', 'payouts', 4200],
    ['payout.sent', 'payout_source:stp', -4200],
    ['payout.returned', 'payouts', -4200],
    ['payout.returned', 'payout_source:stp', 4200],
  ]);
  const [inbox] = await a.app.deps.sql`select processed_at from inbox where subject_id = ${r.body.id}`;
  t.ok(inbox.processed_at, 'the notice is processed in the step');
  t.equal((await a.admin('POST', `/admin/tenants/${ten.id}/payouts/${r.body.id}/simulate-return`)).body.error.code, 'payout.not_returnable');
  t.equal((await a.admin('POST', `/admin/tenants/${ten.id}/payouts/${crypto.randomUUID()}/simulate-return`)).body.error.code, 'payout.not_found');
});

t.test('four-eyes above the threshold: 202 pending; a different approver executes it', async (t) => {
  const s = await a.admin('PATCH', `/admin/tenants/${ten.id}/payout_settings`, { payout_approval_threshold_minor: 1_000_000 });
  t.equal(s.status, 200);
  t.equal(s.body.payout_approval_threshold_minor, 1_000_000);
  t.teardown(() => a.admin('PATCH', `/admin/tenants/${ten.id}/payout_settings`, { payout_approval_disabled: true }));
  t.equal((await create(body({ amount_minor: 1_000_000 }))).status, 201, 'at the threshold: no approval');
  const r = await create(body({ amount_minor: 2_500_000 }));
  t.equal(r.status, 202);
  // spec: a payout carries `clabe` (the merchant's own CLABE, in full); the approval of one answers it
  // too, with `clabe_masked`, and keeps it only sealed (row and idempotency record).
  t.match(r.body, { object: 'payout_approval', status: 'pending', amount_minor: 2_500_000, clabe: '072691004495711499', clabe_masked: '072***********1499' });
  const [stored] = await a.app.deps.sql`select a.*, (select json_agg(k.response_body) from idempotency_keys k where k.tenant_id = a.tenant_id) as records from approvals a where a.id = ${r.body.id}`;
  t.equal(stored.subject_kind, 'payout');
  t.notMatch(JSON.stringify(stored), /072691004495711499/, 'the approval row and the idempotency records keep the CLABE sealed');
  t.equal((await a.call('GET', `/v1/payout_approvals/${r.body.id}`, { key: ten.testKey })).body.status, 'pending');
  const [before] = await a.app.deps.sql`select count(*)::int as n from payouts where tenant_id = ${ten.id} and amount_minor = 2500000`;
  t.equal(before.n, 0, 'nothing sent before approval');
  const same = await a.admin('POST', `/admin/tenants/${ten.id}/payout_approvals/${r.body.id}/approve`, { approver: ten.testKeyId });
  t.equal(same.status, 409);
  t.equal(same.body.error.code, 'payout_approval.approver_conflict');
  t.equal((await a.call('GET', `/v1/payout_approvals/${r.body.id}`, { key: ten.testKey })).body.status, 'pending', 'a refused self-approval changes nothing');
  const ok = await a.admin('POST', `/admin/tenants/${ten.id}/payout_approvals/${r.body.id}/approve`, { approver: 'tesorera@mercado.mx' });
  t.equal(ok.status, 200);
  t.match(ok.body, { object: 'payout', status: 'processing', amount_minor: 2_500_000 });
  t.equal((await settled(ok.body.id)).body.status, 'paid');
  const again = await a.admin('POST', `/admin/tenants/${ten.id}/payout_approvals/${r.body.id}/approve`, { approver: 'otra@mercado.mx' });
  t.equal(again.body.error.code, 'payout_approval.resolution_conflict');
  t.match((await a.call('GET', `/v1/payout_approvals/${r.body.id}`, { key: ten.testKey })).body, { status: 'approved', approver: 'tesorera@mercado.mx', payout_id: ok.body.id });
  // The approval is an entity: its steps are in the history, and the payout's creation names it.
  const hist = await a.app.deps.sql`select entity_kind, event, from_status, to_status from entity_history where entity_id in (${r.body.id}, ${ok.body.id}) order by id`;
  const steps = hist.map((h) => `${h.entity_kind}:${h.event}:${h.from_status ?? ''}>${h.to_status}`);
  for (const want of ['approval:requested:>pending', 'approval:approved:pending>approved', 'payout:create:>processing']) t.ok(steps.includes(want), `history has ${want} (${steps.join(', ')})`);
  t.equal(steps.filter((x) => x.startsWith('approval:')).length, 2, 'the refused self-approval and the late second approval wrote nothing');
  const r2 = await create(body({ amount_minor: 3_000_000 }));
  const rej = await a.admin('POST', `/admin/tenants/${ten.id}/payout_approvals/${r2.body.id}/reject`, { approver: 'tesorera@mercado.mx' });
  t.match(rej.body, { status: 'rejected' });
  t.equal((await a.admin('POST', `/admin/tenants/${ten.id}/payout_approvals/${r2.body.id}/approve`, { approver: 'x@y.mx' })).body.error.code, 'payout_approval.resolution_conflict');
  t.equal((await a.admin('POST', `/admin/tenants/${ten.id}/payout_approvals/${crypto.randomUUID()}/approve`, { approver: 'x' })).body.error.code, 'payout_approval.not_found');
});

t.test('four-eyes is checked in the create\'s own statement: the threshold as stored then decides, and a held-back create leaves nothing', async (t) => {
  // Written straight into the tenant's settings (as another process would, with no API call here).
  const own = await a.newTenant();
  const mine = (b: object, headers = idem()) => create(b, own.testKey, headers);
  await a.app.deps.sql`update tenants set settings = settings || '{"payout_approval_threshold_minor": 5000}'::jsonb where id = ${own.id}`;
  t.equal((await mine(body({ amount_minor: 5_000 }))).status, 201, 'at the threshold');
  const key = idem();
  const held = await mine(body({ amount_minor: 5_001 }), key);
  t.equal(held.status, 202, 'one above: an approval');
  t.equal(held.body.object, 'payout_approval');
  const [n] = await a.app.deps.sql`select count(*)::int as n from payouts where tenant_id = ${own.id} and amount_minor = 5001`;
  t.equal(n.n, 0, 'the guarded create rolled back whole: no payout row');
  const records = await a.app.deps.sql`select status_code from idempotency_keys where tenant_id = ${own.id} and key = ${key['idempotency-key']}`;
  t.same(records.map((r) => r.status_code), [202], 'one idempotency record, the approval\'s');
  t.equal((await mine(body({ amount_minor: 5_001 }), key)).body.id, held.body.id, 'a repeat replays the approval');
  await a.app.deps.sql`update tenants set settings = settings || '{"payout_approval_threshold_minor": null}'::jsonb where id = ${own.id}`;
  t.equal((await mine(body({ amount_minor: 9_000_000 }))).status, 201, 'a null threshold holds nothing');
  await a.app.deps.sql`update tenants set settings = settings - 'payout_approval_threshold_minor' where id = ${own.id}`;
  t.equal((await mine(body({ amount_minor: 9_000_000 }))).status, 201, 'no threshold holds nothing');
});

t.test('list: default 100, clamped to 500; read; not_found for other tenants and modes', async (t) => {
  const l = await a.call('GET', '/v1/payouts?limit=100000', { key: ten.testKey });
  t.equal(l.status, 200);
  t.equal(l.body.object, 'list');
  t.ok(l.body.data.length >= 5);
  t.ok(l.body.data.every((p: { clabe: string }) => /^\d{18}$/.test(p.clabe)), 'the full CLABE in lists too (spec: payout `clabe`)');
  t.equal((await a.call('GET', '/v1/payouts?limit=1', { key: ten.testKey })).body.data.length, 1);
  t.equal((await a.call('GET', '/v1/payouts?limit=-1', { key: ten.testKey })).status, 400);
  const id = l.body.data[0].id;
  const other = await a.newTenant();
  t.equal((await get(id, other.testKey)).body.error.code, 'payout.not_found');
  t.equal((await get(id, ten.liveKey)).body.error.code, 'payout.not_found');
  t.equal((await get('nope')).body.error.code, 'payout.not_found');
  t.equal((await a.call('GET', '/v1/payouts', { key: other.testKey })).body.data.length, 0);
});

t.test('live mode: no route without STP credentials; credentials are never readable back', async (t) => {
  const live = await create(body(), ten.liveKey);
  t.equal(live.status, 400);
  t.equal(live.body.error.code, 'payout.no_route');
  t.equal((await create(body({ connector_key: 'sim' }), ten.liveKey)).body.error.code, 'payout.no_route', 'the simulator is never reached with a live key');
  t.equal((await a.call('GET', '/v1/connectors/stp/credentials', { key: ten.liveKey })).body.error.code, 'payout_credentials.not_found');
  const creds = { empresa: 'MERCADOUNO', cuenta_ordenante: '646180110400000007', nombre_ordenante: 'Mercado Uno SA', private_key_pem: keys.privateKey, passphrase };
  const bad = await a.call('PUT', '/v1/connectors/stp/credentials', { key: ten.liveKey, body: { ...creds, passphrase: 'wrong' } });
  t.equal(bad.body.error.code, 'payout_credentials.invalid');
  t.equal((await a.call('PUT', '/v1/connectors/stp/credentials', { key: ten.liveKey, body: { ...creds, cuenta_ordenante: '646180110400000008' } })).body.error.code, 'payout_credentials.invalid');
  const put = await a.call('PUT', '/v1/connectors/stp/credentials', { key: ten.liveKey, body: creds });
  t.equal(put.status, 200);
  t.match(put.body, { object: 'payout_credentials', connector_key: 'stp', empresa: 'MERCADOUNO', cuenta_ordenante_masked: '646***********0007', livemode: true, key_fingerprint: /^[0-9a-f]{16}$/ });
  const read = await a.call('GET', '/v1/connectors/stp/credentials', { key: ten.liveKey });
  t.same(read.body, put.body);
  for (const text of [put.text, read.text]) {
    t.notMatch(text, /PRIVATE KEY|frase secreta|646180110400000007/, 'no key, passphrase or full account');
  }
  const [row] = await a.app.deps.sql`select * from payout_credentials where tenant_id = ${ten.id}`;
  t.notMatch(JSON.stringify(row), /PRIVATE KEY|frase secreta|646180110400000007/, 'sealed at rest');
});

t.test('live mode through STP (the fake): signed order, in flight, the callback, then paid; a devolución', async (t) => {
  fake.initialEstado = 'E';
  const r = await create(body({ beneficiary_name: 'Ñandú Pérez Comercial', concepto: 'Liquidación de ventas', amount_minor: 98_765 }), ten.liveKey);
  t.equal(r.status, 201);
  t.equal(r.body.livemode, true);
  const sent = await until(() => get(r.body.id, ten.liveKey), (x) => !!x.body.provider_ref);
  t.equal(sent.body.status, 'processing', 'accepted by STP, not settled');
  const order = fake.orderByKey(sent.body.tracking_key)!;
  t.ok(order, 'STP registered the order under the clave de rastreo');
  t.match(order.body, { empresa: 'MERCADOUNO', cuentaOrdenante: '646180110400000007', cuentaBeneficiario: CLABE, institucionContraparte: '40072', monto: 987.65, nombreBeneficiario: 'Nandu Perez Comercial', conceptoPago: 'Liquidacion de ventas' });
  t.equal(sent.body.provider_ref, String(order.id));
  fake.settle(sent.body.tracking_key, 'LQ');
  const cb = await fake.notify(`${a.url}/webhooks/in/stp/${ten.id}`, sent.body.tracking_key);
  t.equal(cb.status, 200);
  t.same(JSON.parse(cb.text), { mensaje: 'recibido' });
  const paid = await until(() => get(r.body.id, ten.liveKey), (x) => x.body.status === 'paid');
  t.equal(paid.body.status, 'paid');
  t.same((await lines(r.body.id)).map((l) => [l.account, l.amount_minor]), [['payouts', 98_765], ['payout_source:stp', -98_765]]);
  fake.settle(sent.body.tracking_key, 'D', 1);
  t.equal((await fake.notify(`${a.url}/webhooks/in/stp/${ten.id}`, sent.body.tracking_key, 'legacy')).status, 200, 'the legacy format too');
  const back = await until(() => get(r.body.id, ten.liveKey), (x) => x.body.status === 'returned');
  t.match(back.body.failure_reason, /causa de devolución 1/);
  t.equal(fake.registraCalls.get(sent.body.tracking_key), 1, 'one registraOrden');
});

t.test('the day\'s conciliation (consOrdenesFech) finds a settlement and a devolución whose callbacks never came (issue 28.6)', async (t) => {
  fake.initialEstado = 'E';
  const r = await create(body({ amount_minor: 4_321 }), ten.liveKey);
  const sent = await until(() => get(r.body.id, ten.liveKey), (x) => !!x.body.provider_ref);
  t.equal(sent.body.status, 'processing');
  const calls = fake.conciliaCalls.length;
  t.match(await a.app.deps.payouts.conciliate(new Date(), { tenantId: ten.id }), { notices: 0 }, 'STP still has it sent: nothing to say');
  fake.settle(sent.body.tracking_key, 'LQ'); // settled at STP; its callback is lost
  t.match(await a.app.deps.payouts.conciliate(new Date(), { tenantId: ten.id }), { notices: 1 });
  t.equal((await until(() => get(r.body.id, ten.liveKey), (x) => x.body.status !== 'processing')).body.status, 'paid', 'asked STP and recorded');
  fake.settle(sent.body.tracking_key, 'D', 1); // the beneficiary bank returns it; no callback either, and no poll follows a paid payout
  t.match(await a.app.deps.payouts.conciliate(new Date(), { tenantId: ten.id }), { notices: 1 });
  const back = await until(() => get(r.body.id, ten.liveKey), (x) => x.body.status === 'returned');
  t.match(back.body.failure_reason, /causa de devolución 1/);
  t.match(await a.app.deps.payouts.conciliate(new Date(), { tenantId: ten.id }), { notices: 0 }, 'conciliated: nothing left to say');
  t.ok(fake.conciliaCalls.length > calls, 'STP was asked with consOrdenesFech');
  const [notes] = await a.app.deps.sql`select count(*)::int as n from inbox where subject_id = ${r.body.id} and source = 'conciliation:stp'`;
  t.equal(notes.n, 2, 'two notices, each asked about (processed)');
  t.equal(fake.registraCalls.get(sent.body.tracking_key), 1, 'one registraOrden');
});

t.test('STP callbacks: a forged one changes nothing; bad bodies and other companies are refused', async (t) => {
  fake.initialEstado = 'E';
  const r = await create(body({ amount_minor: 5_555 }), ten.liveKey);
  const sent = await until(() => get(r.body.id, ten.liveKey), (x) => !!x.body.provider_ref);
  // The callback claims "liquidada", but STP still has it "enviada": the payout stays processing.
  const forged = await a.call('POST', `/webhooks/in/stp/${ten.id}`, { body: { id: Number(sent.body.provider_ref), empresa: 'MERCADOUNO', folioOrigen: sent.body.tracking_key, estado: 'LQ' } });
  t.equal(forged.status, 200);
  await until(() => a.app.deps.sql`select processed_at from inbox where subject_id = ${r.body.id}`, (rows) => rows.length > 0 && !!rows[0].processed_at);
  t.equal((await get(r.body.id, ten.liveKey)).body.status, 'processing', 'STP was asked and said enviada');
  const other = await a.call('POST', `/webhooks/in/stp/${ten.id}`, { body: { id: 5, empresa: 'OTRA', folioOrigen: 'X', estado: 'LQ' } });
  t.equal(other.status, 400);
  t.equal(other.body.error.code, 'stp_callback.invalid');
  t.equal((await a.call('POST', `/webhooks/in/stp/${ten.id}`, { body: { hola: 1 } })).body.error.code, 'stp_callback.invalid');
  t.equal((await a.call('POST', `/webhooks/in/stp/${ten.id}`, { raw: 'not json', headers: { 'content-type': 'application/json' } })).status, 400);
  t.equal((await a.call('POST', `/webhooks/in/stp/${crypto.randomUUID()}`, { body: { id: 5, estado: 'LQ' } })).body.error.code, 'tenant.not_found');
  const unknown = await a.call('POST', `/webhooks/in/stp/${ten.id}`, { body: { id: 999999999, empresa: 'MERCADOUNO', folioOrigen: 'NADA', estado: 'LQ' } });
  t.equal(unknown.status, 200, 'an order we do not know is acknowledged and ignored');
  fake.settle(sent.body.tracking_key, 'LQ');
  await a.call('POST', `/webhooks/in/stp/${ten.id}`, { body: { id: Number(sent.body.provider_ref), empresa: 'MERCADOUNO', folioOrigen: sent.body.tracking_key, estado: 'LQ' } });
  t.equal((await until(() => get(r.body.id, ten.liveKey), (x) => x.body.status !== 'processing')).body.status, 'paid');
});

t.test('STP refuses the order: failed with the reason, the account masked', async (t) => {
  fake.initialEstado = 'LQ';
  fake.nonexistentAccounts.add('012180015000000000');
  const r = await create(body({ clabe: '012180015000000000' }), ten.liveKey);
  const done = await until(() => get(r.body.id, ten.liveKey), (x) => x.body.status !== 'processing');
  t.equal(done.body.status, 'failed');
  t.match(done.body.failure_reason, /does not exist/);
  t.equal(done.body.clabe, '012180015000000000', 'the payout answers its CLABE (spec)');
  t.notMatch(done.body.failure_reason, /012180015000000000/, "STP's message names the account: masked in failure_reason");
  t.match(done.body.failure_reason, /012\*{11}0000/);
});

t.test('STP\'s gateway refuses the connection (403 HTML: no VPN, IP not registered): the payout fails at once with a visible configuration error, not retried (issue 28.6)', async (t) => {
  fake.forbidden = true;
  try {
    const r = await create(body({ amount_minor: 7_777 }), ten.liveKey);
    const done = await until(() => get(r.body.id, ten.liveKey), (x) => x.body.status !== 'processing');
    t.equal(done.body.status, 'failed');
    t.match(done.body.failure_reason, /not registered with STP or the VPN/, 'the reason says what to fix');
    const [row] = await a.app.deps.sql`select failure_code from payouts where id = ${r.body.id}`;
    t.equal(row.failure_code, 'rail_configuration_error');
    t.equal(fake.registraCalls.get(done.body.tracking_key) ?? 0, 0, 'nothing reached STP\'s application');
  } finally {
    fake.forbidden = false;
  }
});

t.test('STP\'s gateway refuses a status query (403 HTML) of an order that may have been sent: the payout stays processing with the configuration error visible, is never failed nor sent again, and settles once STP answers (issue 28.6)', async (t) => {
  const failureCode = async (id: string) => (await a.app.deps.sql`select failure_code from payouts where id = ${id}`)[0].failure_code;
  // 1. The registration reached STP but its answer was lost (500 after registering): only a status query can tell.
  fake.initialEstado = 'LQ';
  fake.loseRegistraAnswers = 1;
  fake.forbidQueries = true;
  try {
    const r = await create(body({ amount_minor: 8_881 }), ten.liveKey);
    const shown = await until(() => get(r.body.id, ten.liveKey), (x) => !!x.body.failure_reason || x.body.status !== 'processing', 20_000);
    t.equal(shown.body.status, 'processing', 'not failed: the order may have gone out');
    t.match(shown.body.failure_reason, /not registered with STP or the VPN/, 'the same reason as a refused registration');
    t.match(shown.body.failure_reason, /stays processing/, 'and why it is not failed');
    t.equal(await failureCode(r.body.id), 'rail_configuration_error');
    const [ev] = await a.app.deps.sql`select count(*)::int as n from outbox_events where entity_id = ${r.body.id}`;
    t.equal(ev.n, 0, 'no outcome event: nothing settled');
    const [row] = await a.app.deps.sql`select tracking_key from payouts where id = ${r.body.id}`;
    t.equal(fake.registraCalls.get(row.tracking_key as string), 1, 'sent once; never resent while refused');
    const [tm] = await a.app.deps.sql`select count(*)::int as n from timers where kind = 'payout.poll' and entity_id = ${r.body.id} and fired_at is null`;
    t.equal(tm.n, 1, 'a poll is due: it is asked again');
    fake.forbidQueries = false;
    const paid = await until(() => get(r.body.id, ten.liveKey), (x) => x.body.status !== 'processing', 20_000);
    t.equal(paid.body.status, 'paid', 'STP answers again: its word is recorded');
    t.notOk(paid.body.failure_reason, 'the configuration error is cleared');
    t.equal(await failureCode(r.body.id), null);
    t.equal(fake.registraCalls.get(row.tracking_key as string), 1, 'one registraOrden');
  } finally {
    fake.forbidQueries = false;
    fake.loseRegistraAnswers = 0;
  }
  // 2. An accepted order in flight whose status query (here after its callback) is refused.
  fake.initialEstado = 'E';
  const r = await create(body({ amount_minor: 8_882 }), ten.liveKey);
  const sent = await until(() => get(r.body.id, ten.liveKey), (x) => !!x.body.provider_ref);
  const callback = () => a.call('POST', `/webhooks/in/stp/${ten.id}`, { body: { id: Number(sent.body.provider_ref), empresa: 'MERCADOUNO', folioOrigen: sent.body.tracking_key, estado: 'LQ' } });
  fake.forbidden = true;
  try {
    t.equal((await callback()).status, 200);
    const shown = await until(() => get(r.body.id, ten.liveKey), (x) => !!x.body.failure_reason);
    t.equal(shown.body.status, 'processing');
    t.match(shown.body.failure_reason, /not registered with STP or the VPN/);
  } finally {
    fake.forbidden = false;
  }
  fake.settle(sent.body.tracking_key, 'LQ');
  await callback();
  const paid = await until(() => get(r.body.id, ten.liveKey), (x) => x.body.status !== 'processing');
  t.equal(paid.body.status, 'paid');
  t.notOk(paid.body.failure_reason);
  t.equal(fake.registraCalls.get(sent.body.tracking_key), 1);
});

t.test('OpenAPI documents the payout and onboarding webhook events', async (t) => {
  const doc = (await a.call('GET', '/openapi/v1.json')).body;
  for (const type of ['payout.paid', 'payout.failed', 'payout.returned', 'onboarding_application.approved', 'onboarding_application.needs_info', 'onboarding_application.rejected']) {
    const schema = doc.webhooks?.[type]?.post?.requestBody?.content?.['application/json']?.schema;
    t.equal(schema?.properties?.event_type?.const, type, `${type} documented`);
  }
  t.ok(doc.paths['/v1/payouts'].post['x-error-codes'].includes('payout.invalid_clabe'));
  // Every payout.* and onboarding_application.* event written so far matches its documented data schema.
  const ajv = new Ajv({ strict: false });
  (addFormatsModule as unknown as (a: Ajv) => Ajv)(ajv);
  const events = await a.app.deps.sql`select event_type, data from outbox_events where tenant_id = ${ten.id} and (event_type like 'payout.%' or event_type like 'onboarding_application.%')`;
  t.ok(events.length >= 5);
  for (const e of events) {
    const schema = doc.webhooks[e.event_type as string].post.requestBody.content['application/json'].schema.properties.data;
    t.ok(ajv.validate(schema, e.data), `${e.event_type as string} data as documented ${JSON.stringify(ajv.errors ?? [])}`);
  }
  t.ok(doc.paths['/webhooks/in/stp/{tenantId}'].post);
});
