// Sub-merchant onboarding against the running service: the application lifecycle (draft →
// needs_info → approved; rejected), every onboarding_application.* code, operator actions, the
// masked CLABE, races, tenancy.
import t from 'tap';
import { startTestApp, type TestApp } from './helpers/app.js';
import { SIM_BLOCKED_RFCS } from '../connectors/taxpayer-lists.js';

let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
const CLABE = '646180110400000007';
const DOCS = [
  { document_type: 'ine', reference: 's3://kyc/ine.pdf', reference_hash: 'a'.repeat(64) },
  { document_type: 'comprobante_domicilio', reference: 's3://kyc/dom.pdf', reference_hash: 'b'.repeat(64) },
  { document_type: 'constancia_fiscal', reference: 's3://kyc/csf.pdf', reference_hash: 'c'.repeat(64) },
  { document_type: 'caratula_estado_cuenta', reference: 's3://kyc/edo.pdf', reference_hash: 'd'.repeat(64) },
];

const create = (body: object, key = ten.testKey) => a.call('POST', '/v1/onboarding/applications', { key, body });
const patch = (id: string, body: object, key = ten.testKey) => a.call('PATCH', `/v1/onboarding/applications/${id}`, { key, body });
const submit = (id: string, key = ten.testKey) => a.call('POST', `/v1/onboarding/applications/${id}/submit`, { key });
const get = (id: string, key = ten.testKey) => a.call('GET', `/v1/onboarding/applications/${id}`, { key });
const operator = (id: string, action: string, body: object = {}, tenant = ten.id) => a.admin('POST', `/admin/tenants/${tenant}/onboarding/applications/${id}/${action}`, body);

async function complete(over: object = {}) {
  const c = await create({ legal_name: 'Tacos El Güero SA de CV', person_type: 'moral', contact_email: 'kyc@tacos.mx' });
  const p = await patch(c.body.id, { rfc: 'EKU9003173C9', clabe: CLABE, documents: DOCS, ...over });
  if (p.status !== 200) throw new Error(p.text);
  return c.body.id as string;
}

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000' });
  ten = await a.newTenant();
});
t.teardown(() => a.stop());

t.test('create: minimal, draft; validation codes', async (t) => {
  const r = await create({ legal_name: 'Tienda Uno', person_type: 'fisica', contact_email: 'uno@tienda.mx' });
  t.equal(r.status, 201);
  t.match(r.body, { object: 'onboarding_application', status: 'draft', legal_name: 'Tienda Uno', person_type: 'fisica', contact_email: 'uno@tienda.mx', documents: [] });
  t.notOk('clabe_masked' in r.body, 'null fields are omitted');
  for (const [body, code] of [
    [{ person_type: 'fisica', contact_email: 'a@b.mx' }, 'onboarding_application.invalid_legal_name'],
    [{ legal_name: '', person_type: 'fisica', contact_email: 'a@b.mx' }, 'onboarding_application.invalid_legal_name'],
    [{ legal_name: 'X', contact_email: 'a@b.mx' }, 'onboarding_application.invalid_person_type'],
    [{ legal_name: 'X', person_type: 'sociedad', contact_email: 'a@b.mx' }, 'onboarding_application.invalid_person_type'],
    [{ legal_name: 'X', person_type: 'moral' }, 'onboarding_application.invalid_contact_email'],
    [{ legal_name: 'X', person_type: 'moral', contact_email: 'not-an-email' }, 'onboarding_application.invalid_contact_email'],
  ] as const) {
    const e = await create(body);
    t.equal(e.status, 400, code);
    t.equal(e.body.error.code, code);
  }
});

t.test('patch: null or omitted fields untouched; documents replace by type; invalid_document', async (t) => {
  const c = await create({ legal_name: 'Tienda Dos', person_type: 'moral', contact_email: 'dos@tienda.mx' });
  const p1 = await patch(c.body.id, { rfc: 'EKU9003173C9', clabe: CLABE, documents: DOCS.slice(0, 2) });
  t.equal(p1.status, 200);
  t.equal(p1.body.clabe_masked, '646***********0007', 'the CLABE is shown masked');
  t.notMatch(p1.text, /646180110400000007/, 'never in full');
  t.equal(p1.body.documents.length, 2);
  t.match(p1.body.documents[0], { document_type: 'ine', reference: 's3://kyc/ine.pdf', reference_hash: 'a'.repeat(64), created_at: String });
  const p2 = await patch(c.body.id, { legal_name: null, contact_email: 'nuevo@tienda.mx', documents: [{ document_type: 'ine', reference: 's3://kyc/ine-v2.pdf', reference_hash: 'e'.repeat(64) }] });
  t.equal(p2.status, 200);
  t.equal(p2.body.legal_name, 'Tienda Dos', 'null = untouched');
  t.equal(p2.body.contact_email, 'nuevo@tienda.mx');
  t.equal(p2.body.rfc, 'EKU9003173C9', 'omitted = untouched');
  t.equal(p2.body.documents.length, 2, 'a document replaces the earlier one of its type');
  t.equal(p2.body.documents.find((d: { document_type: string }) => d.document_type === 'ine').reference, 's3://kyc/ine-v2.pdf');
  for (const bad of [
    [{ document_type: 'pasaporte', reference: 'x', reference_hash: 'y' }],
    [{ document_type: 'ine', reference_hash: 'y' }],
    [{ document_type: 'ine', reference: 'x' }],
    [{ document_type: 'ine', reference: '', reference_hash: 'y' }],
  ]) {
    const e = await patch(c.body.id, { documents: bad });
    t.equal(e.status, 400);
    t.equal(e.body.error.code, 'onboarding_application.invalid_document', JSON.stringify(bad));
  }
  t.equal((await patch(c.body.id, { person_type: 'otra' })).body.error.code, 'onboarding_application.invalid_person_type');
  t.equal((await patch(crypto.randomUUID(), { legal_name: 'x' })).body.error.code, 'onboarding_application.not_found');
  t.equal((await patch('not-a-uuid', { legal_name: 'x' })).status, 404);
});

t.test('submit: missing fields (listed) and documents are 400 and change nothing', async (t) => {
  const c = await create({ legal_name: 'Tienda Tres', person_type: 'moral', contact_email: 'tres@tienda.mx' });
  const e1 = await submit(c.body.id);
  t.equal(e1.status, 400);
  t.equal(e1.body.error.code, 'onboarding_application.missing_fields');
  t.match(e1.body.error.message, /rfc, clabe/, 'the message lists the missing fields');
  await patch(c.body.id, { rfc: 'EKU9003173C9', clabe: CLABE, documents: DOCS.slice(0, 3) });
  const e2 = await submit(c.body.id);
  t.equal(e2.status, 400);
  t.equal(e2.body.error.code, 'onboarding_application.missing_documents');
  t.match(e2.body.error.message, /caratula_estado_cuenta/);
  const after = await get(c.body.id);
  t.equal(after.body.status, 'draft', 'nothing changed');
  t.notOk(after.body.submitted_at);
});

t.test('lifecycle: draft -> needs_info (malformed RFC) -> approved; edits after resolution are transition_conflict', async (t) => {
  const id = await complete({ rfc: 'GODE561231GR8' }); // a persona física RFC on a moral application
  const s1 = await submit(id);
  t.equal(s1.status, 200);
  t.equal(s1.body.status, 'needs_info');
  t.match(s1.body.status_reason, /13 characters, but person_type moral needs 12/);
  t.equal(s1.body.resolved_by, 'automatic_verifier');
  t.ok(s1.body.submitted_at && s1.body.resolved_at);
  const fixed = await patch(id, { rfc: 'EKU9003173C9' });
  t.equal(fixed.status, 200, 'needs_info is editable');
  const s2 = await submit(id);
  t.equal(s2.body.status, 'approved');
  t.notOk(s2.body.status_reason);
  t.equal(s2.body.resolved_by, 'automatic_verifier');
  const late = await patch(id, { legal_name: 'Otro' });
  t.equal(late.status, 409);
  t.equal(late.body.error.code, 'onboarding_application.transition_conflict');
  t.equal((await submit(id)).body.error.code, 'onboarding_application.transition_conflict');
  const ev = await a.app.deps.sql`select event_type, data from outbox_events where entity_id = ${id} order by id`;
  t.same(ev.map((e) => e.event_type), ['onboarding_application.needs_info', 'onboarding_application.approved']);
  t.equal(ev[1].data.clabe_masked, '646***********0007');
  const hist = await a.app.deps.sql`select event, from_status, to_status from entity_history where entity_id = ${id} order by id`;
  t.same(hist.map((h) => `${h.event}:${h.from_status ?? ''}>${h.to_status}`), ['create:>draft', 'edit:draft>draft', 'submit:draft>needs_info', 'edit:needs_info>needs_info', 'submit:needs_info>approved']);
});

t.test('malformed CLABE -> needs_info; list match -> rejected', async (t) => {
  const bad = await complete({ clabe: '646180110400000008' });
  const r1 = await submit(bad);
  t.equal(r1.body.status, 'needs_info');
  t.match(r1.body.status_reason, /check digit/);
  const unknownBank = await complete({ clabe: '003180110400000006' });
  t.match((await submit(unknownBank)).body, { status: 'needs_info', status_reason: /bank code 003/ });
  const efos = await complete({ rfc: Object.keys(SIM_BLOCKED_RFCS)[0] });
  const r2 = await submit(efos);
  t.equal(r2.body.status, 'rejected');
  t.match(r2.body.status_reason, /SAT 69-B/);
  t.equal(r2.body.resolved_by, 'automatic_verifier');
  t.equal((await patch(efos, { rfc: 'EKU9003173C9' })).body.error.code, 'onboarding_application.transition_conflict', 'rejected is final');
});

t.test('two submits racing: one resolves, the other is transition_conflict', async (t) => {
  const id = await complete();
  const [x, y] = await Promise.all([submit(id), submit(id)]);
  const statuses = [x.status, y.status].sort();
  t.same(statuses, [200, 409]);
  t.equal([x, y].find((r) => r.status === 409)!.body.error.code, 'onboarding_application.transition_conflict');
  const hist = await a.app.deps.sql`select count(*)::int as n from entity_history where entity_id = ${id} and event = 'submit'`;
  t.equal(hist[0].n, 1, 'one submit step');
});

t.test('operator: request-info, approve, reject; resolved_by operator', async (t) => {
  const id = await complete();
  const ri = await operator(id, 'request-info', { reason: 'La INE está vencida' });
  t.equal(ri.status, 200);
  t.match(ri.body, { status: 'needs_info', status_reason: 'La INE está vencida', resolved_by: 'operator' });
  const ap = await operator(id, 'approve', { reason: 'Revisado' });
  t.match(ap.body, { status: 'approved', resolved_by: 'operator', status_reason: 'Revisado' });
  t.equal((await operator(id, 'reject', { reason: 'x' })).body.error.code, 'onboarding_application.transition_conflict');
  const id2 = await complete();
  t.match((await operator(id2, 'reject', { reason: 'Documentos alterados' })).body, { status: 'rejected', resolved_by: 'operator' });
  const draft = await create({ legal_name: 'Incompleta', person_type: 'fisica', contact_email: 'x@y.mx' });
  t.equal((await operator(draft.body.id, 'approve')).body.error.code, 'onboarding_application.missing_fields', 'approval needs a complete application');
  t.equal((await operator(crypto.randomUUID(), 'approve')).body.error.code, 'onboarding_application.not_found');
  const other = await a.newTenant();
  t.equal((await operator(id2, 'approve', {}, other.id)).body.error.code, 'onboarding_application.not_found', "another tenant's application");
  t.equal((await a.call('POST', `/admin/tenants/${ten.id}/onboarding/applications/${id2}/approve`, { body: {} })).status, 401, 'needs the operator key');
});

t.test('list (without documents), status filter, limit clamp; tenancy', async (t) => {
  const l = await a.call('GET', '/v1/onboarding/applications?limit=1000', { key: ten.testKey });
  t.equal(l.status, 200);
  t.equal(l.body.object, 'list');
  t.ok(l.body.data.length > 5);
  t.notOk(l.body.data.some((x: object) => 'documents' in x), 'no documents in lists');
  const approved = await a.call('GET', '/v1/onboarding/applications?status=approved', { key: ten.testKey });
  t.ok(approved.body.data.length >= 1 && approved.body.data.every((x: { status: string }) => x.status === 'approved'));
  t.equal((await a.call('GET', '/v1/onboarding/applications?limit=2', { key: ten.testKey })).body.data.length, 2);
  t.equal((await a.call('GET', '/v1/onboarding/applications?limit=0', { key: ten.testKey })).status, 400);
  const other = await a.newTenant();
  const mine = l.body.data[0].id;
  t.equal((await get(mine, other.testKey)).body.error.code, 'onboarding_application.not_found');
  t.equal((await get(mine, ten.liveKey)).body.error.code, 'onboarding_application.not_found', 'other mode');
  t.equal((await a.call('GET', '/v1/onboarding/applications', { key: other.testKey })).body.data.length, 0);
});
