// The operator console's API (issue 30; docs/operator.md) against the running service: named
// operators on the portal's accounts (a second factor is required before anything; a merchant's
// member is not an operator; roles limit what each may do), four-eyes decisions (an above-threshold
// payout and a tenant's release need a second operator; the one who asked cannot approve), the
// suspension of a tenant (its keys answer 401 at once), an application the verifier flagged, and
// every decision in the audit log with who, why, before and after.
import t from 'tap';
import { startTestApp, type TestApp } from './helpers/app.js';
import { PortalClient, signUpOwner, totpCode } from './helpers/portal.js';

let a: TestApp;
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const OP = '/portal/api/operator';
const PASSWORD = 'operator password 123';

/** A named operator with a second factor set up, signed in. */
async function operator(role: string, name: string) {
  const email = `${name}+${crypto.randomUUID().slice(0, 6)}@orquesta.mx`;
  const c = await a.admin('POST', '/admin/operators', { email, name, role, password: PASSWORD });
  if (c.status !== 201) throw new Error(c.text);
  const p = new PortalClient(a);
  await p.signIn(email, PASSWORD);
  const setup = await p.call('POST', '/portal/api/me/totp');
  const secret = setup.body.secret as string;
  const ok = await p.call('POST', '/portal/api/me/totp/confirm', { code: totpCode(secret) });
  if (ok.status >= 400) throw new Error(ok.text);
  return { p, email, id: c.body.id as string, secret };
}

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000', SWEEP_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500' });
});
t.teardown(() => a.stop());

t.test('operators sign in with a second factor; a merchant member is not one; roles limit actions', async (t) => {
  const email = `nuevo+${crypto.randomUUID().slice(0, 6)}@orquesta.mx`;
  const c = await a.admin('POST', '/admin/operators', { email, name: 'Nueva', role: 'reviewer', password: PASSWORD });
  t.equal(c.status, 201, c.text);
  t.match(c.body, { object: 'operator', email, role: 'reviewer', totp_enabled: false, permissions: ['read', 'decide', 'terminals', 'simulate'] });
  const p = new PortalClient(a);
  const s = await p.signIn(email, PASSWORD);
  t.equal(s.status, 200);
  const before = await p.call('GET', `${OP}/me`);
  t.equal(before.status, 403, 'no second factor yet: nothing but setting it up');
  t.equal(before.body.error.code, 'portal.totp_setup_required_unauthorized');
  const setup = await p.call('POST', '/portal/api/me/totp');
  await p.call('POST', '/portal/api/me/totp/confirm', { code: totpCode(setup.body.secret) });
  t.equal((await p.call('GET', `${OP}/me`)).status, 200, 'with TOTP set up');
  await p.call('DELETE', '/portal/api/session');
  const again = new PortalClient(a);
  const first = await again.call('POST', '/portal/api/session', { email, password: PASSWORD });
  t.equal(first.body.stage, 'totp', 'the next sign-in asks for the code');
  t.equal((await again.call('GET', `${OP}/me`)).status, 401, 'a password alone is no session');
  t.equal((await again.call('POST', '/portal/api/session/totp', { code: '000000' })).status, 401);
  const full = await again.call('POST', '/portal/api/session/totp', { code: totpCode(setup.body.secret, Date.now() + 30_000) });
  t.equal(full.status, 200, full.text);
  t.match((await again.call('GET', `${OP}/me`)).body, { email, role: 'reviewer' });

  const owner = await signUpOwner(a);
  const m = new PortalClient(a);
  await m.signIn(owner.email, owner.password);
  const notOp = await m.call('GET', `${OP}/me`);
  t.equal(notOp.status, 403);
  t.equal(notOp.body.error.code, 'operator.unauthorized', "a merchant's member is not an operator");
  t.equal((await m.call('GET', `${OP}/tenants`)).body.error.code, 'operator.unauthorized');
  // The merchant's own admins administer their terminals in the portal (same actor, audited as the member).
  const mine = await m.call('POST', '/portal/api/terminals', { serial: 'MOST-1', branch: 'Centro', activate: true, reason: 'caja nueva' });
  t.equal(mine.status, 201, mine.text);
  t.match(mine.body, { object: 'terminal', status: 'active', livemode: false });
  t.equal((await m.call('GET', '/portal/api/terminals')).body.data.length, 1);
  t.equal((await m.call('POST', `/portal/api/terminals/${mine.body.id}/deactivate`, {})).body.status, 'inactive');
  const memberRow = (await a.admin('GET', `/admin/audit_log?target_id=${mine.body.id}`)).body.data[0];
  t.match(memberRow, { action: 'terminal.deactivate', actor: { kind: 'member', name: owner.email } });
  const other = await signUpOwner(a, 'Otra SA de CV');
  const o = new PortalClient(a);
  await o.signIn(other.email, other.password);
  t.equal((await o.call('POST', `/portal/api/terminals/${mine.body.id}/activate`, {})).body.error.code, 'terminal.not_found', "another tenant's terminal is not found");

  const viewer = await operator('viewer', 'vera');
  t.equal((await viewer.p.call('GET', `${OP}/tenants`)).status, 200, 'a viewer reads');
  const refused = await viewer.p.call('POST', `${OP}/tenants/${owner.tenantId}/suspend`, { reason: 'x' });
  t.equal(refused.status, 403);
  t.equal(refused.body.error.code, 'operator.role_unauthorized');
  const noCsrf = await again.call('POST', `${OP}/tenants/${owner.tenantId}/terminals`, { serial: 'X1', branch: 'Centro', livemode: false }, { 'x-csrf-token': 'wrong' });
  t.equal(noCsrf.status, 403, 'a change without the session CSRF token is refused (the portal rule)');
});

t.test('four-eyes: an above-threshold payout needs a second operator; self-approval is refused', async (t) => {
  const ten = await a.newTenant('Dispersora SA');
  await a.admin('PATCH', `/admin/tenants/${ten.id}/payout_settings`, { payout_approval_threshold_minor: 100_000 });
  const po = await a.call('POST', '/v1/payouts', { key: ten.testKey, body: { clabe: '072691004495711499', beneficiary_name: 'Proveedora', amount_minor: 500_000, currency: 'MXN', concepto: 'Pago grande' }, headers: idem() });
  t.equal(po.status, 202, po.text);
  const approvalId = po.body.id as string;
  const ana = await operator('reviewer', 'ana');
  const beto = await operator('reviewer', 'beto');
  const queue = await ana.p.call('GET', `${OP}/payout_approvals?status=pending`);
  t.ok(queue.body.data.some((x: any) => x.id === approvalId), 'in the queue');
  const asked = await ana.p.call('POST', `${OP}/tenants/${ten.id}/payout_approvals/${approvalId}/approve`, { approver: 'ana' }, { 'x-operator-reason': encodeURIComponent('proveedor verificado por teléfono') });
  t.equal(asked.status, 202, asked.text);
  t.match(asked.body, { object: 'operator_decision', status: 'pending', action: 'payout_approval.approve', target: { kind: 'payout_approval', id: approvalId }, reason: 'proveedor verificado por teléfono', requested_by: { email: ana.email }, snapshot: { amount_minor: 500_000, status: 'pending' } });
  const again = await ana.p.call('POST', `${OP}/tenants/${ten.id}/payout_approvals/${approvalId}/approve`, { approver: 'ana' });
  t.equal(again.body.id, asked.body.id, 'asking twice gives the open request back');
  const [still] = await a.app.deps.sql`select status from payout_approvals where id = ${approvalId}`;
  t.equal(still!.status, 'pending', 'nothing ran on the first operator\'s word');
  const self = await ana.p.call('POST', `${OP}/decisions/${asked.body.id}/approve`, {});
  t.equal(self.status, 409);
  t.equal(self.body.error.code, 'operator_decision.self_approval_conflict', 'the one who asked cannot approve');
  const ok = await beto.p.call('POST', `${OP}/decisions/${asked.body.id}/approve`, { note: 'visto' });
  t.equal(ok.status, 200, ok.text);
  t.match(ok.body, { status: 'approved', decided_by: { email: beto.email }, decision_note: 'visto', outcome: { object: 'payout', status: 'processing', amount_minor: 500_000, clabe_masked: '072***********1499' } });
  t.notMatch(JSON.stringify(ok.body), /072691004495711499/, 'the answer shows the CLABE only masked');
  const [done] = await a.app.deps.sql`select status, approver, payout_id from payout_approvals where id = ${approvalId}`;
  t.equal(done!.status, 'approved');
  t.equal(done!.approver, `operator:${beto.email}`);
  t.ok(done!.payout_id, 'the payout was created');
  t.equal((await beto.p.call('POST', `${OP}/decisions/${asked.body.id}/approve`, {})).body.error.code, 'operator_decision.resolution_conflict');
  // The decision is an approval (the approvals entity), its steps in entity_history, and the payout
  // approval's step and the payout's creation committed with it.
  const [ap] = await a.app.deps.sql`select subject_kind, status, requested_by, approver, subject_id, amount_minor, resolution_note from approvals where id = ${asked.body.id}`;
  t.match(ap, { subject_kind: 'operator_decision', status: 'approved', requested_by: ana.id, approver: beto.id, subject_id: approvalId, resolution_note: 'visto' });
  t.equal(Number(ap!.amount_minor), 500_000);
  const hist = await a.app.deps.sql`select event, from_status, to_status from entity_history where entity_id = ${asked.body.id} and entity_kind = 'approval' order by id`;
  t.same(hist.map((h) => `${h.event}:${h.from_status ?? ''}>${h.to_status}`), ['requested:>pending', 'approved:pending>approved']);
  const [payout] = await a.app.deps.sql`select approval_id from payouts where id = ${done!.payout_id}`;
  t.equal(payout!.approval_id, approvalId);

  const audit = await a.admin('GET', `/admin/audit_log?tenant_id=${ten.id}`);
  const rows = [...audit.body.data].reverse();
  const requested = rows.find((r: any) => r.action === 'payout_approval.approve.requested');
  t.match(requested, { actor: { kind: 'operator', id: ana.id, name: ana.email }, reason: 'proveedor verificado por teléfono', before: { status: 'pending' }, after: { status: 'pending' } });
  t.match(rows.find((r: any) => r.action === 'operator_decision.approve'), { actor: { id: beto.id }, reason: 'visto', before: { status: 'pending' }, after: { status: 'approved' } });
  t.match(rows.find((r: any) => r.action === 'payout_approval.approve'), { actor: { id: beto.id }, reason: new RegExp(`four-eyes: asked by ${ana.email.replace(/[+.]/g, '\\$&')}, approved by`), before: { status: 'pending' }, after: { status: 'approved', payout_status: 'processing' } });
});

t.test("a suspended tenant's members are refused in the portal too: sessions end, a sign-in says why", async (t) => {
  const owner = await signUpOwner(a, 'Portal Suspendida SA de CV');
  const m = new PortalClient(a);
  t.equal((await m.signIn(owner.email, owner.password)).status, 200);
  t.equal((await m.call('GET', '/portal/api/v1/customers')).status, 200, 'before: the session works');
  const s = await a.admin('POST', `/admin/tenants/${owner.tenantId}/suspend`, { reason: 'fraude' });
  t.equal(s.status, 200, s.text);
  const gone = await m.call('GET', '/portal/api/v1/customers');
  t.equal(gone.status, 401, 'the open session is refused from its next request');
  t.equal(gone.body.error.code, 'portal.session_invalid');
  t.equal((await m.call('GET', '/portal/api/session')).status, 401);
  const wrong = await new PortalClient(a).call('POST', '/portal/api/session', { email: owner.email, password: 'not the password' });
  t.equal(wrong.body.error.code, 'portal.sign_in_invalid', 'a wrong password learns nothing of the suspension');
  const again = await new PortalClient(a).call('POST', '/portal/api/session', { email: owner.email, password: owner.password });
  t.equal(again.status, 403);
  t.equal(again.body.error.code, 'portal.tenant_suspended_unauthorized', 'the right password is told why');
  t.notOk(/orq_session=[^;]/.test(again.headers.get('set-cookie') ?? ''), 'no session cookie is set');
  t.equal((await a.admin('POST', `/admin/tenants/${owner.tenantId}/release`, {})).status, 200);
  const back = new PortalClient(a);
  t.equal((await back.signIn(owner.email, owner.password)).status, 200, 'released: the owner signs in again');
  t.equal((await back.call('GET', '/portal/api/v1/customers')).status, 200);

  await operator('viewer', 'plataforma');
  const [p] = await a.app.deps.sql`select tenant_id from operator_platform`;
  const platform = await a.admin('POST', `/admin/tenants/${p!.tenant_id}/suspend`, { reason: 'x' });
  t.equal(platform.status, 409, "the operators' own tenant is never suspended");
  t.equal(platform.body.error.code, 'tenant.status_conflict');
});

t.test('suspending a tenant stops its keys at once; releasing it needs a second operator', async (t) => {
  const ten = await a.newTenant('Suspendida SA');
  const boss = await operator('admin', 'dora');
  const other = await operator('reviewer', 'ema');
  t.equal((await a.call('GET', '/v1/customers', { key: ten.testKey })).status, 200);
  const s = await boss.p.call('POST', `${OP}/tenants/${ten.id}/suspend`, { reason: 'contracargos' });
  t.equal(s.status, 200, s.text);
  t.match(s.body, { suspended: true, suspended_reason: 'contracargos' });
  t.equal((await a.call('GET', '/v1/customers', { key: ten.testKey })).status, 401, 'its key answers 401 at once');
  t.equal((await boss.p.call('POST', `${OP}/tenants/${ten.id}/suspend`, {})).body.error.code, 'tenant.status_conflict');
  const ask = await boss.p.call('POST', `${OP}/tenants/${ten.id}/release`, { reason: 'aclarado' });
  t.equal(ask.status, 202, ask.text);
  t.equal((await a.call('GET', '/v1/customers', { key: ten.testKey })).status, 401, 'still suspended until a second operator decides');
  t.equal((await boss.p.call('POST', `${OP}/decisions/${ask.body.id}/approve`, {})).body.error.code, 'operator_decision.self_approval_conflict');
  const rej = await other.p.call('POST', `${OP}/decisions/${ask.body.id}/reject`, { note: 'falta documentación' });
  t.equal(rej.body.status, 'rejected');
  t.equal((await a.call('GET', '/v1/customers', { key: ten.testKey })).status, 401, 'a rejected release releases nothing');
  const ask2 = await boss.p.call('POST', `${OP}/tenants/${ten.id}/release`, { reason: 'documentación recibida' });
  t.not(ask2.body.id, ask.body.id, 'a new request after the rejection');
  const ok = await other.p.call('POST', `${OP}/decisions/${ask2.body.id}/approve`, {});
  t.equal(ok.body.status, 'approved', ok.text);
  t.equal((await a.call('GET', '/v1/customers', { key: ten.testKey })).status, 200, 'released: the key works again');

  const actions = (await a.admin('GET', `/admin/audit_log?target_id=${ten.id}`)).body.data.map((r: any) => r.action).reverse();
  t.same(actions, ['tenant.suspend', 'tenant.release.requested', 'tenant.release.requested', 'tenant.release']);
});

t.test('four-eyes races: two asking at once get one decision; two approving at once make one payout', async (t) => {
  const ten = await a.newTenant('Carrera SA');
  await a.admin('PATCH', `/admin/tenants/${ten.id}/payout_settings`, { payout_approval_threshold_minor: 100_000 });
  const po = await a.call('POST', '/v1/payouts', { key: ten.testKey, body: { clabe: '072691004495711499', beneficiary_name: 'Proveedora', amount_minor: 300_000, currency: 'MXN', concepto: 'Carrera' }, headers: idem() });
  t.equal(po.status, 202, po.text);
  const [ana, beto, caro, dani] = [await operator('reviewer', 'ana'), await operator('reviewer', 'beto'), await operator('reviewer', 'caro'), await operator('reviewer', 'dani')];
  const path = `${OP}/tenants/${ten.id}/payout_approvals/${po.body.id}/approve`;
  const asks = await Promise.all([ana.p.call('POST', path, { approver: 'ana' }), beto.p.call('POST', path, { approver: 'beto' })]);
  t.same(asks.map((x) => x.status), [202, 202], asks.map((x) => x.text).join(' | '));
  t.equal(asks[0]!.body.id, asks[1]!.body.id, 'one open decision for both');
  const decisionId = asks[0]!.body.id as string;
  const [{ n }] = await a.app.deps.sql`select count(*)::int as n from approvals where subject_kind = 'operator_decision' and request->>'target_id' = ${po.body.id}` as any;
  t.equal(n, 1);
  const asker = asks[0]!.body.requested_by.id === ana.id ? ana : beto;
  t.ok([ana.id, beto.id].includes(asks[0]!.body.requested_by.id));
  const tries = await Promise.all([caro.p.call('POST', `${OP}/decisions/${decisionId}/approve`, {}), dani.p.call('POST', `${OP}/decisions/${decisionId}/approve`, {})]);
  t.same(tries.map((x) => x.status).sort(), [200, 409], tries.map((x) => x.text).join(' | '));
  t.equal(tries.find((x) => x.status === 409)!.body.error.code, 'operator_decision.resolution_conflict', 'the loser is told it was decided');
  const payouts = await a.app.deps.sql`select id from payouts where approval_id = ${po.body.id}`;
  t.equal(payouts.length, 1, 'one payout');
  const hist = await a.app.deps.sql`select event from entity_history where entity_id = ${decisionId} order by id`;
  t.same(hist.map((h) => h.event), ['requested', 'approved'], 'one approval step');
  t.equal((await asker.p.call('POST', `${OP}/decisions/${decisionId}/reject`, {})).body.error.code, 'operator_decision.resolution_conflict', 'decided: no withdrawal');
});

t.test('an operator decision whose operation is refused when approved stays pending: nothing is written', async (t) => {
  const ten = await a.newTenant('Liberada Antes SA');
  const boss = await operator('admin', 'fer');
  const other = await operator('reviewer', 'gus');
  t.equal((await boss.p.call('POST', `${OP}/tenants/${ten.id}/suspend`, { reason: 'revisión' })).status, 200);
  const ask = await boss.p.call('POST', `${OP}/tenants/${ten.id}/release`, { reason: 'aclarado' });
  t.equal(ask.status, 202, ask.text);
  // Meanwhile the admin key releases it (one step: a shared key names nobody).
  t.equal((await a.admin('POST', `/admin/tenants/${ten.id}/release`, {})).status, 200);
  const late = await other.p.call('POST', `${OP}/decisions/${ask.body.id}/approve`, {});
  t.equal(late.status, 409, late.text);
  t.equal(late.body.error.code, 'tenant.status_conflict', 'the release is refused: the tenant is not suspended');
  const [ap] = await a.app.deps.sql`select status, version from approvals where id = ${ask.body.id}`;
  t.match(ap, { status: 'pending', version: 0 }, 'the decision was not approved');
  t.equal((await a.admin('GET', `/admin/audit_log?target_id=${ask.body.id}&action=operator_decision.approve`)).body.data.length, 0, 'no audit row of an approval that did not happen');
  // Withdrawn by the one who asked (rejecting runs nothing).
  const gone = await boss.p.call('POST', `${OP}/decisions/${ask.body.id}/reject`, { note: 'ya no hace falta' });
  t.match(gone.body, { status: 'rejected', decided_by: { id: boss.id }, decision_note: 'ya no hace falta' });
});

t.test('an application the verifier flagged needs a second operator; a clean one does not', async (t) => {
  const ten = await a.newTenant('Plataforma SA');
  const DOCS = ['ine', 'comprobante_domicilio', 'constancia_fiscal', 'caratula_estado_cuenta'].map((document_type, i) => ({ document_type, reference: `ref-${i}`, reference_hash: `${i}`.repeat(64) }));
  const make = async (clabe: string) => {
    const c = await a.call('POST', '/v1/onboarding/applications', { key: ten.testKey, body: { legal_name: 'Sub SA de CV', person_type: 'moral', contact_email: 'kyc@x.mx', rfc: 'EKU9003173C9', clabe } });
    await a.call('PATCH', `/v1/onboarding/applications/${c.body.id}`, { key: ten.testKey, body: { documents: DOCS } });
    return c.body.id as string;
  };
  const flagged = await make('072691004495711490'); // bad check digit: the verifier asks for information
  const sub = await a.call('POST', `/v1/onboarding/applications/${flagged}/submit`, { key: ten.testKey });
  t.equal(sub.body.status, 'needs_info');
  const clean = await make('072691004495711499'); // left in draft
  const ana = await operator('reviewer', 'ani');
  const beto = await operator('reviewer', 'bet');
  const review = await ana.p.call('GET', `${OP}/tenants/${ten.id}/onboarding/applications/${flagged}`);
  t.match(review.body, { status: 'needs_info', flagged: true, approval_needs_second_operator: true, list_hits: [], verification: { documents: '4 of 4' } });
  t.equal(review.body.documents.length, 4);
  const direct = await ana.p.call('POST', `${OP}/tenants/${ten.id}/onboarding/applications/${clean}/approve`, { reason: 'todo en orden' });
  t.equal(direct.status, 200, 'a clean application is approved by one operator');
  t.match(direct.body, { status: 'approved', status_reason: 'todo en orden' });
  const ask = await ana.p.call('POST', `${OP}/tenants/${ten.id}/onboarding/applications/${flagged}/approve`, { reason: 'CLABE confirmada con el banco' });
  t.equal(ask.status, 202);
  const ok = await beto.p.call('POST', `${OP}/decisions/${ask.body.id}/approve`, {});
  t.match(ok.body, { status: 'approved', outcome: { object: 'onboarding_application', status: 'approved', status_reason: 'CLABE confirmada con el banco' } });
  const row = (await a.admin('GET', `/admin/audit_log?target_id=${flagged}&action=onboarding_application.approve`)).body.data[0];
  t.match(row, { actor: { kind: 'operator', id: beto.id }, before: { status: 'needs_info' }, after: { status: 'approved' } });
  t.match(row.reason, /CLABE confirmada con el banco · four-eyes: asked by/);
});

t.test('changes by the admin key are audited too, and the log exports', async (t) => {
  const ten = await a.newTenant('Auditada SA');
  const r = await a.admin('PATCH', `/admin/tenants/${ten.id}/settings`, { refund_approval_threshold_minor: 50_000 });
  t.equal(r.status, 200);
  const row = (await a.admin('GET', `/admin/audit_log?tenant_id=${ten.id}`)).body.data[0];
  t.match(row, { actor: { kind: 'admin_key' }, action: 'tenant.settings', after: { refund_approval_threshold_minor: 50_000 } });
  const viewer = await operator('viewer', 'lupe');
  const csv = await viewer.p.call('GET', `${OP}/audit_log/export?format=csv&tenant_id=${ten.id}`);
  t.equal(csv.status, 200);
  t.match(csv.text, /admin_key/);
});

t.test("the console's page and its files are served, with the portal's security headers", async (t) => {
  const page = await a.call('GET', '/portal/operator');
  t.equal(page.status, 200, page.text);
  t.match(page.headers.get('content-security-policy'), /script-src 'self'/);
  t.equal(page.headers.get('x-frame-options'), 'DENY');
  t.match(page.text, /\/portal\/operator\/assets\/operator\.js/);
  for (const f of ['operator.js', 'operator.css']) {
    const r = await a.call('GET', `/portal/operator/assets/${f}`);
    t.equal(r.status, 200, `${f}: ${r.text.slice(0, 200)}`);
    t.ok(r.text.length > 100, `${f} has its content`);
  }
  t.equal((await a.call('GET', '/portal/operator/assets/other.js')).status, 404, 'only the console\'s own files');
});

t.test("a release whose notice to Redis was lost (the process died after its commit): the worker's heal frees the keys", async (t) => {
  // Its own API-only app: no worker runs the heal on its timer while the test looks at the set.
  const b = await startTestApp({ ROLE: 'api', RATE_LIMIT_V1_PER_MIN: '100000' });
  t.teardown(() => b.stop());
  const ten = await b.newTenant('Aviso Perdido SA');
  t.equal((await b.call('GET', '/v1/customers', { key: ten.testKey })).status, 200, 'before');
  t.equal((await b.admin('POST', `/admin/tenants/${ten.id}/suspend`, { reason: 'x' })).status, 200);
  // Released in Postgres only, as a crash between the release's commit and its notice leaves it.
  await b.app.deps.sql`update tenants set suspended_at = null, suspended_reason = null where id = ${ten.id}`;
  const keyIds = (await b.app.deps.sql`select id from api_keys where tenant_id = ${ten.id} and revoked_at is null`).map((r) => r.id as string);
  t.equal((await b.call('GET', '/v1/customers', { key: ten.testKey })).status, 401, 'the stale revoked set refuses the released key (Postgres says it is live)');
  t.equal(await b.app.deps.keys.healRevokedSet(), keyIds.length, "the heal drops exactly the tenant's live keys");
  t.equal((await b.call('GET', '/v1/customers', { key: ten.testKey })).status, 200, 'healed: the key works again');
  t.equal(await b.app.deps.keys.healRevokedSet(), 0, 'nothing left to heal');
});
