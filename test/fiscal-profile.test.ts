// PUT/GET /v1/fiscal_profile against the running service: per mode, the PAC password never read
// back nor logged, the CSD upload checked and stored encrypted, slug uniqueness, field checks.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, type TestApp } from './helpers/app.js';
import { projectRoot } from '../ops/paths.js';

let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
const logs: string[] = [];

const csdDir = join(projectRoot, 'connectors', 'pac', 'test-csd');
const testCsdUpload = () => ({
  cer_base64: readFileSync(join(csdDir, 'certificate.cer')).toString('base64'),
  key_base64: readFileSync(join(csdDir, 'private_key.key')).toString('base64'),
  password: readFileSync(join(csdDir, 'password.txt'), 'utf8').trim(),
});
export const profile = (extra: object = {}) => ({
  rfc: 'AAA010101AAA', nombre: 'Accem Servicios Empresariales SC', regimen_fiscal: '601', cp: '06600', serie: 'F',
  pac_provider: 'sim', pac_user: 'usuario', pac_password: 'S3creto-PAC-123', ...extra,
});

t.before(async () => {
  a = await startTestApp({ RATE_LIMIT_V1_PER_MIN: '100000', LOG_LEVEL: 'debug' });
  ten = await a.newTenant();
  // every log line the app writes from here on
  for (const stream of [process.stdout, process.stderr]) {
    const orig = stream.write.bind(stream);
    stream.write = ((chunk: any, ...rest: any[]) => {
      if (String(chunk).startsWith('{"t":')) logs.push(String(chunk)); // the app's JSON log lines only
      return orig(chunk, ...rest);
    }) as typeof stream.write;
  }
});
t.teardown(() => a.stop());

t.test('missing profile, then PUT and GET; the password is never returned', async (t) => {
  const none = await a.call('GET', '/v1/fiscal_profile', { key: ten.testKey });
  t.equal(none.status, 400);
  t.equal(none.body.error.code, 'invoice.fiscal_profile_missing');
  const put = await a.call('PUT', '/v1/fiscal_profile', { key: ten.testKey, body: profile({ self_invoice_enabled: true, self_invoice_slug: `cafe-${ten.id.slice(0, 8)}` }) });
  t.equal(put.status, 200, put.text);
  t.equal(put.body.object, 'fiscal_profile');
  t.equal(put.body.rfc, 'AAA010101AAA');
  t.equal(put.body.nombre, 'ACCEM SERVICIOS EMPRESARIALES SC', 'name upper-cased as SAT writes it');
  t.equal(put.body.pac_password_set, true);
  t.equal(put.body.pac_password, undefined);
  t.equal(put.body.livemode, false);
  t.equal(put.body.self_invoice_url, `/factura/cafe-${ten.id.slice(0, 8)}`);
  t.match(put.body.csd, { source: 'sat_test', no_certificado: '30001000000300023708' }, 'test mode seals with SAT\'s public test CSD');
  const get = await a.call('GET', '/v1/fiscal_profile', { key: ten.testKey });
  t.equal(get.status, 200);
  t.notOk(get.text.includes('S3creto-PAC-123'), 'GET never shows the password');
  t.notOk(put.text.includes('S3creto-PAC-123'), 'PUT never shows the password');
  const [row] = await a.app.deps.sql`select * from fiscal_profiles where tenant_id = ${ten.id} and livemode = false`;
  t.notOk(JSON.stringify(row).includes('S3creto-PAC-123'), 'stored encrypted, not in clear');
  t.ok(logs.some((l) => l.includes('fiscal profile set')), 'the app logged the change');
  t.notOk(logs.join('').includes('S3creto-PAC-123'), 'never logged');
  const live = await a.call('GET', '/v1/fiscal_profile', { key: ten.liveKey });
  t.equal(live.body.error.code, 'invoice.fiscal_profile_missing', 'the live profile is another one');
});

t.test('pac_password: omitted keeps it, "" removes it', async (t) => {
  const kept = await a.call('PUT', '/v1/fiscal_profile', { key: ten.testKey, body: profile({ pac_password: undefined }) });
  t.equal(kept.body.pac_password_set, true);
  const cleared = await a.call('PUT', '/v1/fiscal_profile', { key: ten.testKey, body: profile({ pac_password: '' }) });
  t.equal(cleared.body.pac_password_set, false);
});

t.test('field checks', async (t) => {
  const cases: [object, string, RegExp?][] = [
    [{ rfc: 'NOPE' }, 'fiscal_profile.invalid', /not a valid RFC/],
    [{ rfc: 'XAXX010101000' }, 'fiscal_profile.invalid', /generic/],
    [{ regimen_fiscal: '999' }, 'fiscal_profile.invalid', /c_RegimenFiscal/],
    [{ regimen_fiscal: '612' }, 'fiscal_profile.invalid', /does not apply/],
    [{ cp: '123' }, 'fiscal_profile.invalid'],
    [{ pac_provider: 'acme' }, 'fiscal_profile.invalid'],
    [{ self_invoice_enabled: true }, 'fiscal_profile.invalid', /self_invoice_slug/],
    [{ self_invoice_slug: 'A B' }, 'fiscal_profile.invalid'],
  ];
  for (const [change, code, msg] of cases) {
    const r = await a.call('PUT', '/v1/fiscal_profile', { key: ten.testKey, body: profile(change) });
    t.equal(r.status, 400, JSON.stringify(change));
    t.equal(r.body.error.code, code, JSON.stringify(change));
    if (msg) t.match(r.body.error.message, msg);
  }
  const noRfc = await a.call('PUT', '/v1/fiscal_profile', { key: ten.testKey, body: { ...profile(), rfc: undefined } });
  t.equal(noRfc.body.error.code, 'fiscal_profile.invalid');
});

t.test('self_invoice_slug is unique across tenants', async (t) => {
  const other = await a.newTenant('other');
  const slug = `dup-${other.id.slice(0, 8)}`;
  t.equal((await a.call('PUT', '/v1/fiscal_profile', { key: other.testKey, body: profile({ self_invoice_slug: slug }) })).status, 200);
  const r = await a.call('PUT', '/v1/fiscal_profile', { key: ten.testKey, body: profile({ self_invoice_slug: slug }) });
  t.equal(r.status, 409);
  t.equal(r.body.error.code, 'fiscal_profile.slug_conflict');
});

t.test('CSD upload: checked, stored encrypted, never returned; the public test CSD is refused in live mode', async (t) => {
  const up = testCsdUpload();
  const ok = await a.call('PUT', '/v1/fiscal_profile', { key: ten.testKey, body: profile({ csd: up }) });
  t.equal(ok.status, 200, ok.text);
  t.match(ok.body.csd, { source: 'uploaded', no_certificado: '30001000000300023708', rfc: 'AAA010101AAA' });
  t.notOk(ok.text.includes(up.key_base64.slice(0, 40)), 'the key is not returned');
  const [row] = await a.app.deps.sql`select csd_key_enc, csd_password_enc from fiscal_profiles where tenant_id = ${ten.id} and livemode = false`;
  t.notOk(row.csd_key_enc.includes(up.key_base64.slice(0, 40)), 'the key is stored encrypted');
  t.notOk(row.csd_password_enc.includes(up.password), 'the key password is stored encrypted');
  const wrongPw = await a.call('PUT', '/v1/fiscal_profile', { key: ten.testKey, body: profile({ csd: { ...up, password: 'nope' } }) });
  t.equal(wrongPw.body.error.code, 'invoice.csd_invalid');
  t.match(wrongPw.body.error.message, /password/);
  const otherRfc = await a.call('PUT', '/v1/fiscal_profile', { key: ten.testKey, body: profile({ rfc: 'EKU9003173C9', csd: up }) });
  t.equal(otherRfc.body.error.code, 'invoice.csd_invalid');
  t.match(otherRfc.body.error.message, /AAA010101AAA/);
  const garbage = await a.call('PUT', '/v1/fiscal_profile', { key: ten.testKey, body: profile({ csd: { ...up, cer_base64: 'aGVsbG8=' } }) });
  t.equal(garbage.body.error.code, 'invoice.csd_invalid');
  const live = await a.call('PUT', '/v1/fiscal_profile', { key: ten.liveKey, body: profile({ pac_provider: 'finkok', csd: up }) });
  t.equal(live.body.error.code, 'invoice.test_csd_in_live');
  const liveNoCsd = await a.call('PUT', '/v1/fiscal_profile', { key: ten.liveKey, body: profile({ pac_provider: 'finkok' }) });
  t.equal(liveNoCsd.status, 200);
  t.equal(liveNoCsd.body.csd, undefined, 'live mode has no CSD until one is uploaded');
});
