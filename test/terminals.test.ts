// Terminals (issue 30, docs/terminals.md) against the running service: the operator registers,
// activates, deactivates and reassigns a tenant's terminals (every terminal.* code); on /v1 a charge
// whose metadata.terminal_id names no active terminal of the tenant is refused at create and at
// confirm with one answer (unknown, registered-only, inactive, another tenant's, the other mode's,
// malformed: the same status, code and message); each change emits its event and writes its
// audit row (append-only); the cash cut filters by terminal. Before this issue any terminal_id was
// accepted: the first test fails on that code.
import t from 'tap';
import { startTestApp, type TestApp, until } from './helpers/app.js';
import { planTerminalStep, type TerminalRow } from '../actors/terminals.js';
import { ADMIN_KEY_ACTOR } from '../actors/audit.js';

let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
let other: Awaited<ReturnType<TestApp['newTenant']>>;
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const createIntent = (terminalId: string | undefined, key = ten.testKey, headers = idem(), extra: Record<string, string> = {}) =>
  a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: 10000, currency: 'MXN', metadata: { ...(terminalId !== undefined ? { terminal_id: terminalId } : {}), ...extra } }, headers });
const confirm = (id: string, key = ten.testKey) => a.call('POST', `/v1/payment_intents/${id}/confirm`, { key, body: { payment_token: 'tok_sim_ok', payment_method: 'card' }, headers: idem() });
const reg = (tenantId: string, body: object) => a.admin('POST', `/admin/tenants/${tenantId}/terminals`, body);
const act = (tenantId: string, id: string, action: string, body: object = {}) => a.admin('POST', `/admin/tenants/${tenantId}/terminals/${id}/${action}`, body);
const refusal = (r: { status: number; body: any }) => ({ status: r.status, code: r.body?.error?.code, message: r.body?.error?.message, type: r.body?.error?.type });

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000', SWEEP_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500' });
  ten = await a.newTenant('Terminales SA');
  other = await a.newTenant('Otra SA');
});
t.teardown(() => a.stop());

t.test('a charge naming no terminal of the tenant is refused (any terminal_id was accepted before)', async (t) => {
  const r = await createIntent(crypto.randomUUID());
  t.equal(r.status, 400, r.text);
  t.equal(r.body.error.code, 'payment_intent.terminal_not_active');
  t.equal(r.body.error.type, 'invalid_request_error');
  t.match(r.body.error.doc_url, /#err-payment_intent\.terminal_not_active$/);
  const plain = await createIntent(undefined);
  t.equal(plain.status, 201, 'a charge without terminal_id is untouched');
});

t.test('register, activate, charge; deactivate refuses create and confirm; one answer for every reason', async (t) => {
  const r = await reg(ten.id, { serial: 'PAX-A920-0001', branch: 'Centro', register: 'Caja 1', label: 'Mostrador', livemode: false });
  t.equal(r.status, 201, r.text);
  t.match(r.body, { object: 'terminal', serial: 'PAX-A920-0001', branch: 'Centro', register: 'Caja 1', label: 'Mostrador', status: 'registered', livemode: false });
  t.notOk('activated_at' in r.body, 'no nulls in the answer');
  const term = r.body.id as string;

  const unknown = refusal(await createIntent(crypto.randomUUID()));
  const registeredOnly = refusal(await createIntent(term));
  t.same(registeredOnly, unknown, 'a registered (not yet active) terminal: the same answer as an unknown one');

  const on = await act(ten.id, term, 'activate', { reason: 'installed at Centro' });
  t.equal(on.status, 200, on.text);
  t.equal(on.body.status, 'active');
  t.type(on.body.activated_at, 'string');
  const again = await act(ten.id, term, 'activate');
  t.equal(again.body.status, 'active', 'activating an active terminal is a no-op');
  t.equal(again.body.updated_at, on.body.updated_at, 'nothing was written');

  const ok = await createIntent(term);
  t.equal(ok.status, 201, ok.text);
  t.equal(ok.body.metadata.terminal_id, term);
  const pending = await createIntent(term); // created while active, confirmed after deactivation
  t.equal(pending.status, 201);
  const c = await confirm(ok.body.id);
  t.equal(c.status, 200, c.text);

  // Another tenant's active terminal, the other mode's active terminal, a malformed id.
  const foreign = await reg(other.id, { serial: 'PAX-A920-0001', branch: 'Norte', livemode: false, activate: true });
  t.equal(foreign.status, 201, 'serials are unique per tenant: another tenant may register the same one');
  t.equal(foreign.body.status, 'active');
  const live = await reg(ten.id, { serial: 'PAX-LIVE-1', branch: 'Centro', livemode: true, activate: true });
  t.equal(live.body.status, 'active');
  t.same(refusal(await createIntent(foreign.body.id)), unknown, "another tenant's active terminal: the same answer");
  t.same(refusal(await createIntent(live.body.id)), unknown, 'a live terminal with a test key: the same answer');
  t.same(refusal(await createIntent('caja-1')), unknown, 'a malformed id: the same answer');
  t.equal((await createIntent(live.body.id, ten.liveKey)).status, 201, 'the live terminal takes live charges');

  const keyOfFirst = idem();
  const first = await createIntent(term, ten.testKey, keyOfFirst);
  t.equal(first.status, 201);

  const off = await act(ten.id, term, 'deactivate', { reason: 'stolen' });
  t.equal(off.body.status, 'inactive');
  t.same(refusal(await createIntent(term)), unknown, 'an inactive terminal: the same answer');
  const late = await confirm(pending.body.id);
  t.same(refusal(late), unknown, 'confirm of an intent whose terminal was deactivated since: the same answer');
  const still = await a.call('GET', `/v1/payment_intents/${pending.body.id}`, { key: ten.testKey });
  t.equal(still.body.status, 'requires_payment_method', 'nothing was attempted');
  const replay = await createIntent(term, ten.testKey, keyOfFirst);
  t.equal(replay.status, 201, 'a repeat of a create that succeeded replays it (Idempotency-Key), terminal deactivated or not');
  t.equal(replay.body.id, first.body.id);
  t.equal(replay.headers.get('idempotency-replayed'), 'true');

  const back = await act(ten.id, term, 'activate');
  t.equal(back.body.status, 'active', 'an inactive terminal can be activated again');
  t.equal((await confirm(pending.body.id)).status, 200, 'and its charges confirm again');
});

t.test('operator errors: terminal.* codes, tenancy, reassign', async (t) => {
  const code = (r: { status: number; body: any }) => [r.status, r.body?.error?.code];
  t.same(code(await reg(ten.id, { branch: 'Centro', livemode: false })), [400, 'terminal.invalid_serial']);
  t.same(code(await reg(ten.id, { serial: 'bad serial!', branch: 'Centro', livemode: false })), [400, 'terminal.invalid_serial']);
  t.same(code(await reg(ten.id, { serial: 'S-2', livemode: false })), [400, 'terminal.invalid_branch']);
  t.same(code(await reg(ten.id, { serial: 'S-2', branch: '', livemode: false })), [400, 'terminal.invalid_branch']);
  t.same(code(await reg(ten.id, { serial: 'S-2', branch: 'Centro', register: '', livemode: false })), [400, 'terminal.invalid_register']);
  t.same(code(await reg(crypto.randomUUID(), { serial: 'S-2', branch: 'Centro', livemode: false })), [404, 'tenant.not_found']);
  const s2 = await reg(ten.id, { serial: 'S-2', branch: 'Centro', livemode: false });
  t.equal(s2.status, 201);
  t.same(code(await reg(ten.id, { serial: 'S-2', branch: 'Sur', livemode: false })), [409, 'terminal.serial_conflict']);
  t.equal((await reg(ten.id, { serial: 'S-2', branch: 'Sur', livemode: true })).status, 201, 'the same serial in the other mode is another row');
  t.same(code(await act(other.id, s2.body.id, 'activate')), [404, 'terminal.not_found'], "another tenant's terminal is not found");
  t.same(code(await act(ten.id, crypto.randomUUID(), 'activate')), [404, 'terminal.not_found']);
  t.same(code(await act(ten.id, 'nope', 'deactivate')), [404, 'terminal.not_found']);
  t.same(code(await a.admin('GET', `/admin/tenants/${other.id}/terminals/${s2.body.id}`)), [404, 'terminal.not_found']);
  t.same(code(await act(ten.id, s2.body.id, 'reassign', {})), [400, 'terminal.invalid_branch']);
  const moved = await act(ten.id, s2.body.id, 'reassign', { branch: 'Sur', register: 'Caja 3', reason: 'branch opening' });
  t.equal(moved.status, 200, moved.text);
  t.match(moved.body, { branch: 'Sur', register: 'Caja 3', status: 'registered' }, 'reassigning keeps the status');
  const list = await a.admin('GET', `/admin/tenants/${ten.id}/terminals?livemode=false&branch=Sur`);
  t.same(list.body.data.map((x: any) => x.id), [s2.body.id]);
  const noAuth = await a.call('GET', `/admin/tenants/${ten.id}/terminals`, { key: ten.testKey });
  t.equal(noAuth.status, 401, 'an API key is not the operator key');
  const v1 = await a.call('POST', `/v1/terminals`, { key: ten.testKey, body: {} });
  t.equal(v1.status, 404, 'no /v1 terminal administration (spec: a portal action)');
});

t.test('every change emits its event and writes its audit row; the log is append-only', async (t) => {
  const r = await reg(ten.id, { serial: 'EV-1', branch: 'Centro', livemode: false, reason: 'new device' });
  const id = r.body.id as string;
  await act(ten.id, id, 'activate');
  await act(ten.id, id, 'activate'); // a no-op: no event, no audit row
  await act(ten.id, id, 'reassign', { branch: 'Norte' });
  await act(ten.id, id, 'deactivate', { reason: 'repair' });
  const sql = a.app.deps.sql;
  const events = await sql`select event_type, data from outbox_events where entity_id = ${id} order by id`;
  t.same(events.map((e) => e.event_type), ['terminal.registered', 'terminal.activated', 'terminal.reassigned', 'terminal.deactivated']);
  t.match(events[2]!.data, { id, object: 'terminal', branch: 'Norte', status: 'active' });
  const audit = await a.admin('GET', `/admin/audit_log?target_id=${id}`);
  t.equal(audit.status, 200, audit.text);
  const rows = [...audit.body.data].reverse();
  t.same(rows.map((x: any) => x.action), ['terminal.register', 'terminal.activate', 'terminal.reassign', 'terminal.deactivate']);
  t.match(rows[0], { actor: { kind: 'admin_key' }, tenant_id: ten.id, livemode: false, target: { kind: 'terminal', id }, reason: 'new device', after: { status: 'registered' } });
  t.notOk('before' in rows[0], 'a registration has no before');
  t.match(rows[2], { before: { branch: 'Centro' }, after: { branch: 'Norte' } });
  t.match(rows[3], { reason: 'repair', before: { status: 'active' }, after: { status: 'inactive' }, request_id: String });
  const csv = await a.call('GET', `/admin/audit_log/export?format=csv&target_id=${id}`, { headers: { 'x-admin-key': a.adminKey } });
  t.equal(csv.status, 200);
  t.match(csv.headers.get('content-type'), /text\/csv/);
  const lines = csv.text.trim().split('\r\n');
  t.equal(lines.length, 5, 'a header and four rows, oldest first');
  t.match(lines[0], /^seq,id,at,actor_kind,actor_id,/);
  t.match(lines[4], /terminal\.deactivate/);
  await t.rejects(sql`update audit_log set reason = 'edited' where target_id = ${id}`, /append-only/, 'an update is refused by the database');
  await t.rejects(sql`delete from audit_log where target_id = ${id}`, /append-only/, 'a delete is refused by the database');
  const [n] = await sql`select count(*)::int as n from audit_log where target_id = ${id}`;
  t.equal(n.n, 4);
});

t.test('the cash cut filters by terminal', async (t) => {
  const t1 = (await reg(ten.id, { serial: 'CUT-1', branch: 'Centro', livemode: false, activate: true })).body.id as string;
  const t2 = (await reg(ten.id, { serial: 'CUT-2', branch: 'Centro', livemode: false, activate: true })).body.id as string;
  const from = new Date(Date.now() - 60_000).toISOString();
  const ids: string[] = [];
  for (const term of [t1, t1, t2, undefined]) {
    const pi = await createIntent(term, ten.testKey, idem(), { branch: 'Centro' });
    await confirm(pi.body.id);
    ids.push(pi.body.id);
  }
  for (const id of ids) await until(() => a.call('GET', `/v1/payment_intents/${id}`, { key: ten.testKey }), (r) => r.body.status === 'succeeded');
  const to = new Date(Date.now() + 60_000).toISOString();
  const cut = (q: string) => a.call('GET', `/v1/reports/cash-cut?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}${q}`, { key: ten.testKey });
  await until(() => cut(''), (r) => r.body.by_branch?.find((b: any) => b.key === 'Centro')?.operation_count >= 4);
  const one = await cut(`&terminal_id=${t1}`);
  t.equal(one.status, 200, one.text);
  t.equal(one.body.terminal_id, t1);
  t.equal(one.body.totals.operation_count, 2);
  t.equal(one.body.totals.charged_minor, 20000);
  t.equal((await cut(`&terminal_id=${t2}`)).body.totals.operation_count, 1);
  t.equal((await cut(`&terminal_id=${crypto.randomUUID()}`)).body.totals.operation_count, 0);
  const foreign = await a.call('GET', `/v1/reports/cash-cut?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&terminal_id=${t1}`, { key: other.testKey });
  t.equal(foreign.body.totals.operation_count, 0, "another tenant's cut never shows this tenant's terminal");
});

t.test('the plan is pure: a no-op writes nothing, a change writes row, event and audit row', async (t) => {
  const at = new Date('2026-11-27T05:00:00Z');
  const row: TerminalRow = {
    id: '00000000-0000-4000-8000-000000000001', tenant_id: '00000000-0000-4000-8000-000000000002', livemode: false, status: 'active', version: 3,
    serial: 'X', branch: 'Centro', register: null, label: null, activated_at: at, created_at: at, updated_at: at,
  };
  const env = { at, now: at, newId: () => '00000000-0000-4000-8000-0000000000aa' };
  const noop = planTerminalStep({ row, clockOffsetMs: 0 }, { kind: 'activate', actor: ADMIN_KEY_ACTOR }, env);
  t.same(noop, { result: row });
  const same = planTerminalStep({ row, clockOffsetMs: 0 }, { kind: 'reassign', branch: 'Centro', actor: ADMIN_KEY_ACTOR }, env);
  t.same(same, { result: row }, 'reassigning to where it is: a no-op');
  const off = planTerminalStep({ row, clockOffsetMs: 0 }, { kind: 'deactivate', actor: ADMIN_KEY_ACTOR, reason: 'r' }, env);
  t.match(off.set, { status: 'inactive' });
  t.same(off.events!.map((e) => e.type), ['terminal.deactivated']);
  t.equal(off.writes!.length, 1);
  t.match(off.writes![0], { op: 'insert', table: 'audit_log', row: { action: 'terminal.deactivate', actor_kind: 'admin_key', reason: 'r' } });
  const from = planTerminalStep({ row: { ...row, status: 'registered', activated_at: null }, clockOffsetMs: 0 }, { kind: 'deactivate', actor: ADMIN_KEY_ACTOR }, env);
  t.match(from.set, { status: 'inactive' }, 'a registered terminal can be retired before it ever worked');
});
