// Issue 27, defect 1 (rest), end to end through the Finkok adapter and its fake (test/fakes/finkok.ts):
// a live credit note whose cancellation SAT holds for the receptor ("En proceso", EstatusUUID 201) is
// `cancel_pending`; the reconciler's job invoice.cancel_follow asks `get_sat_status` on every sweep
// (Vigente / "En proceso" waits) until the receptor accepts (Estado Cancelado → `cancelled`) or
// refuses ("Solicitud rechazada" → `stamped` again). The app reaches the fake through FINKOK_URL.
import t from 'tap';
import { startTestApp, type TestApp, until } from './helpers/app.js';
import { startFakeFinkok, type FakeFinkok } from './fakes/finkok.js';
import { makeCsd } from './helpers/csd-gen.js';

let a: TestApp;
let fake: FakeFinkok;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const post = (path: string, body: unknown) => a.call('POST', path, { key: ten.liveKey, body, headers: idem() });
const get = (path: string) => a.call('GET', path, { key: ten.liveKey });
const receptor = { rfc: 'EKU9003173C9', nombre: 'CANCELA CON ACEPTACION', uso_cfdi: 'G03', regimen_fiscal: '601', cp: '26015' };

t.before(async () => {
  fake = await startFakeFinkok();
  a = await startTestApp({ ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000', SWEEP_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500', FINKOK_URL: fake.url });
  ten = await a.newTenant('Cancelaciones Finkok');
  const csd = makeCsd('XIQB891116QE4', 'BERENICE XIMO QUEZADA');
  const r = await a.call('PUT', '/v1/fiscal_profile', {
    key: ten.liveKey,
    body: {
      rfc: 'XIQB891116QE4', nombre: 'BERENICE XIMO QUEZADA', regimen_fiscal: '612', cp: '06600', serie: 'F', pac_provider: 'finkok', pac_user: fake.user, pac_password: fake.password,
      csd: { cer_base64: csd.cer.toString('base64'), key_base64: csd.key.toString('base64'), password: csd.password },
    },
  });
  if (r.status !== 200) throw new Error(r.text);
});
t.teardown(async () => {
  await a.stop();
  await fake.close();
});

const noteOf = async (id: string) => (await get('/v1/invoices?kind=credit_note&limit=100')).body.data.find((d: any) => d.id === id);
const satAsked = (uuid: string) => fake.calls.filter((c) => c.op === 'get_sat_status' && c.body.includes(uuid)).length;

t.test('a live credit note held "En proceso" by SAT: cancel_pending, followed through get_sat_status until the receptor answers', async (t) => {
  const inv = await post('/v1/invoices/ppd', { total_minor: 50000, receptor });
  t.equal(inv.status, 201, inv.text);
  t.equal(inv.body.pac, 'finkok');
  const nc = await post(`/v1/invoices/${inv.body.id}/credit-notes`, { total_minor: 5000 });
  t.equal(nc.status, 200, nc.text);
  const c = await post(`/v1/invoices/${nc.body.id}/cancel`, { motivo: '02' });
  t.equal(c.status, 200, c.text);
  t.match(c.body, { document_kind: 'credit_note', document_id: nc.body.id, status: 'pending' }, 'Finkok: EstatusUUID 201, "En proceso"');
  // The receptor has not answered: SAT says Vigente / "En proceso" at every sweep and nothing moves.
  await until(async () => satAsked(nc.body.uuid_fiscal), (n) => n >= 2, 20_000);
  t.equal((await noteOf(nc.body.id)).status, 'cancel_pending', 'still waiting after SAT said "En proceso" twice');
  t.equal((await get(`/v1/invoices/${inv.body.id}`)).body.credited_minor, 5000);
  fake.decideCancellation(nc.body.uuid_fiscal, true);
  const done = await until(() => noteOf(nc.body.id), (d) => d.status !== 'cancel_pending', 20_000);
  t.equal(done.status, 'cancelled', 'SAT: Estado Cancelado');
  t.match((await get(`/v1/invoices/${inv.body.id}`)).body, { credited_minor: 0, saldo_insoluto_minor: 50000 });
  t.equal(fake.calls.filter((x) => x.op === 'cancel_signature' && x.body.length > 0).length, 1, 'the cancellation was sent once, then only looked up');

  const nc2 = await post(`/v1/invoices/${inv.body.id}/credit-notes`, { total_minor: 2000 });
  t.equal((await post(`/v1/invoices/${nc2.body.id}/cancel`, { motivo: '02' })).body.status, 'pending');
  await until(async () => satAsked(nc2.body.uuid_fiscal), (n) => n >= 1, 20_000);
  fake.decideCancellation(nc2.body.uuid_fiscal, false);
  const back = await until(() => noteOf(nc2.body.id), (d) => d.status !== 'cancel_pending', 20_000);
  t.equal(back.status, 'stamped', 'the receptor refused ("Solicitud rechazada"): live again');
  t.equal((await get(`/v1/invoices/${inv.body.id}`)).body.credited_minor, 2000, 'its share kept');
});
