// Issue 27, defect 7: the sim PAC refuses what a real PAC refuses (Finkok's codes), its UUIDs are
// random, and a UUID the books already hold never becomes a 500 nor a job retried forever.
import t from 'tap';
import { SimPac } from '../connectors/pac/sim.js';
import { testCsd } from '../connectors/pac/test-csd.js';
import { construirIngreso, sellarComprobante, type Receptor } from '../formats/cfdi/comprobante.js';
import { startTestApp, type TestApp, until } from './helpers/app.js';
import { ownDatabase } from './helpers/db.js';

const csd = testCsd(false);
const emisorOk = { rfc: 'AAA010101AAA', nombre: 'ACCEM SERVICIOS EMPRESARIALES SC', regimenFiscal: '601' };
const receptorOk: Receptor = { rfc: 'EKU9003173C9', nombre: 'ESCUELA KEMPER URGATE', cp: '26015', regimenFiscal: '601', usoCfdi: 'G03' };
let folio = 0;
const sealed = (o: { emisor?: typeof emisorOk; receptor?: Partial<Receptor>; fecha?: Date } = {}) =>
  sellarComprobante(
    construirIngreso({ serie: 'S', folio: String(++folio), fecha: o.fecha ?? new Date(), lugarExpedicion: '06600', emisor: o.emisor ?? emisorOk, receptor: { ...receptorOk, ...o.receptor }, metodoPago: 'PUE', formaPago: '04', conceptos: [{ descripcion: 'Prueba', importeMinor: 11600 }] }).doc,
    csd,
  ).xml;
const req = (xml: string) => ({ xml, livemode: false, credentials: {}, now: new Date() });

t.test('the sim refuses what a real PAC refuses, with the codes Finkok answers', async (t) => {
  const pac = new SimPac();
  const cases: [string, string, Parameters<typeof sealed>[0]][] = [
    ['emisor RFC is not the certificate RFC', '303', { emisor: { ...emisorOk, rfc: 'EKU9003173C9', nombre: 'ESCUELA KEMPER URGATE' } }],
    ['malformed receptor RFC', '301', { receptor: { rfc: 'EKU900317' } }],
    ['malformed receptor CP', '301', { receptor: { cp: '2601' } }],
    ['receptor CP 00000 (not a postal code)', 'CFDI40147', { receptor: { cp: '00000' } }],
    ['regimen of a persona física for a persona moral', 'CFDI40158', { receptor: { regimenFiscal: '612' } }],
    ['uso D01 for a persona moral', 'CFDI40161', { receptor: { usoCfdi: 'D01' } }],
    ['generic RFC not named PUBLICO EN GENERAL', 'CFDI40145', { receptor: { rfc: 'XAXX010101000', nombre: 'JUAN', regimenFiscal: '616', usoCfdi: 'S01', cp: '06600' } }],
  ];
  for (const [what, code, o] of cases) {
    const out = await pac.stamp(req(sealed(o)));
    t.match(out, { kind: 'rejected', code }, what);
  }
  t.match(await pac.stamp(req(sealed())), { kind: 'stamped' }, 'a correct document stamps');
});

t.test('random UUIDs: identical bytes from two tenants get two UUIDs; status answers the stamp given', async (t) => {
  const pac = new SimPac();
  const fecha = new Date('2026-11-27T10:00:00Z');
  folio = 1000;
  const a = sealed({ fecha });
  folio = 1000;
  const b = sealed({ fecha });
  t.equal(a, b, 'two tenants on the test CSD can seal the same bytes');
  const s1 = await pac.stamp({ ...req(a), account: 'tenant-a:false' });
  const s2 = await pac.stamp({ ...req(b), account: 'tenant-b:false' });
  t.ok(s1.kind === 'stamped' && s2.kind === 'stamped');
  if (s1.kind !== 'stamped' || s2.kind !== 'stamped') return;
  t.not(s1.uuid, s2.uuid, 'no UUID derived from the document');
  t.match(s1.uuid, /^[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$/);
  const st = await pac.status({ ...req(a), account: 'tenant-a:false' });
  t.equal(st.kind === 'stamped' && st.uuid, s1.uuid, 'status: the stamp given before');
  const again = await pac.stamp({ ...req(a), account: 'tenant-a:false' });
  t.equal(again.kind === 'stamped' && again.uuid, s1.uuid, 'the same sender\'s same bytes: the same stamp (307 recovery)');
});

t.test('API: a UUID already held is the PAC refusal (400), not a 500; the resolve job settles it', async (t) => {
  // A database of its own (test/helpers/db.ts): below, the app's sim PAC answers one fixed UUID while its
  // reconciler runs; in the shared test database that reconciler settled other files' pending CFDIs
  // with it (uuid_duplicate errors on their invoices).
  const dbUrl = ownDatabase(t, 'orq_sim_pac');
  const app: TestApp = await startTestApp({ DATABASE_URL: dbUrl, ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000', SWEEP_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500' });
  t.teardown(() => app.stop());
  const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
  const ten = await app.newTenant('uuid clash');
  const profile = { rfc: 'AAA010101AAA', nombre: 'ACCEM SERVICIOS EMPRESARIALES SC', regimen_fiscal: '601', cp: '06600', serie: 'F', pac_provider: 'sim' };
  t.equal((await app.call('PUT', '/v1/fiscal_profile', { key: ten.testKey, body: profile })).status, 200);
  const receptor = { rfc: 'EKU9003173C9', nombre: 'Escuela Kemper Urgate', uso_cfdi: 'G03', regimen_fiscal: '601', cp: '26015' };
  const ppd = (r: object = receptor) => app.call('POST', '/v1/invoices/ppd', { key: ten.testKey, body: { total_minor: 11600, receptor: r }, headers: idem() });

  // the receptor checks a PAC applies reach the API as invoice.pac_error, the invoice not live
  const cp0 = await ppd({ ...receptor, cp: '00000' });
  t.equal(cp0.body.error?.code, 'invoice.pac_error', cp0.text);
  t.match(cp0.body.error?.message, /CFDI40147/);
  const other = await app.newTenant('emisor sin CSD propio');
  await app.call('PUT', '/v1/fiscal_profile', { key: other.testKey, body: { ...profile, rfc: 'EKU9003173C9', nombre: 'ESCUELA KEMPER URGATE' } });
  const wrongCsd = await app.call('POST', '/v1/invoices/ppd', { key: other.testKey, body: { total_minor: 11600, receptor }, headers: idem() });
  t.equal(wrongCsd.body.error?.code, 'invoice.pac_error', 'emisor EKU9003173C9 sealed with the AAA010101AAA test certificate');
  t.match(wrongCsd.body.error?.message, /303/);

  const sim = app.app.deps.invoices.pacs.get('sim');
  const stamp = sim.stamp.bind(sim);
  const status = sim.status.bind(sim);
  const first = await ppd();
  t.equal(first.status, 201, first.text);
  const fixed = first.body.uuid_fiscal as string;
  // a PAC that answers a UUID another CFDI holds
  sim.stamp = async (r) => {
    const out = await stamp(r);
    return out.kind === 'stamped' ? { ...out, uuid: fixed } : out;
  };
  sim.status = async (r) => {
    const out = await status(r);
    return out.kind === 'stamped' ? { ...out, uuid: fixed } : out;
  };
  t.teardown(() => {
    sim.stamp = stamp;
    sim.status = status;
  });
  const second = await ppd();
  t.equal(second.status, 400, `not a 500: ${second.text}`);
  t.equal(second.body.error?.code, 'invoice.pac_error');
  const [row] = await app.app.deps.sql`select status, error_detail from invoices where tenant_id = ${ten.id} and uuid_fiscal is null and status = 'error' order by created_at desc limit 1`;
  t.match(row, { status: 'error', error_detail: /uuid_duplicate/ });

  // a lost answer whose later status repeats the UUID: the reconciler's job settles it as error
  // the sim's status for a trigger is not_stamped; make it answer the clashing stamp
  sim.status = async () => ({ kind: 'stamped', uuid: fixed, xml: '<x/>', fechaTimbrado: '', noCertificadoSat: '', selloSat: '', rfcProvCertif: '' });
  const lost = await ppd({ ...receptor, nombre: 'PAC UNREACHABLE' });
  t.equal(lost.body.error?.code, 'invoice.pac_unreachable');
  const id = /Invoice ([0-9a-f-]{36})/.exec(lost.body.error.message)![1]!;
  // The reconciler's job, run here at once: the apps of the other test files share this database and
  // their reconcilers take a pending invoice untouched for 3 s, asking their own sim (which knows
  // nothing of the clashing answer this test gave this app's sim).
  await app.app.deps.invoices.resolve(id);
  const settled = await until(() => app.call('GET', `/v1/invoices/${id}`, { key: ten.testKey }), (x) => x.body.status !== 'pending', 20_000);
  t.equal(settled.body.status, 'error', 'settled, not retried forever');
  t.match(settled.body.error_detail, /uuid_duplicate/);
});
