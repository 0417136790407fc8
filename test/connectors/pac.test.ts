// Runs the PAC conformance suite against the sim and against the Finkok adapter talking to its local
// fake (test/fakes/finkok.ts), then Finkok-only answers: credentials, 307 recovery, 708, HTTP 500,
// SOAP fault, repeated incidences, cancellation pending acceptance and a bad signature, and the
// cancellation request's XML-DSig checked by Debian's xmlsec1.
import t from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimPac } from '../../connectors/pac/sim.js';
import { FinkokPac } from '../../connectors/pac/finkok.js';
import { pacErrorCode } from '../../connectors/pac/pac.js';
import { readCancelAnswer, readStampAnswer } from '../../connectors/pac/finkok-mapping.js';
import { firmarCancelacion } from '../../formats/cfdi/cancelacion.js';
import { testCsd } from '../../connectors/pac/test-csd.js';
import { startFakeFinkok, type FakeFinkok } from '../fakes/finkok.js';
import { pacConformance, sealed } from './pac-conformance.js';
import { OutcomeUnknown } from '../../kernel/outbound.js';

let fake: FakeFinkok;
t.before(async () => {
  fake = await startFakeFinkok();
});
t.teardown(() => fake.close());

t.test('sim', async (t) => pacConformance(t, async () => ({ pac: new SimPac({ trustAllUuids: false }), livemode: false, credentials: {} })));
t.test('finkok (local fake)', async (t) =>
  pacConformance(t, async () => ({ pac: new FinkokPac({ baseUrl: fake.url, timeoutMs: 1500 }), livemode: true, credentials: { user: fake.user, password: fake.password } })),
);

const csd = testCsd(false);
const req = (xml: string, password = 'finkok-pass') => ({ xml, livemode: true, credentials: { user: 'finkok-user', password }, now: new Date() });

t.test('finkok only', async (t) => {
  const pac = new FinkokPac({ baseUrl: fake.url, timeoutMs: 1500 });
  const wrong = await pac.stamp(req(sealed(), 'nope'));
  t.match(wrong, { kind: 'rejected', code: '300' }, 'wrong password: incidence 300, invoice.pac_error');
  const none = await pac.stamp({ ...req(sealed()), credentials: {} });
  t.match(none, { kind: 'rejected' }, 'no credentials: rejected without a call');

  const xml = sealed();
  const first = await pac.stamp(req(xml));
  const before = fake.calls.length;
  const again = await pac.stamp(req(xml));
  t.same(fake.calls.slice(before).map((c) => c.op), ['stamp', 'stamped'], '307 → stamped');
  t.ok(first.kind === 'stamped' && again.kind === 'stamped' && first.uuid === again.uuid, 'the original stamp is recovered');

  for (const [nombre, kind] of [['FINKOK 708', 'unreachable'], ['FINKOK 500', 'unreachable'], ['FINKOK FAULT', 'unreachable']] as const) {
    const e = await pac.stamp(req(sealed(nombre))).catch((x) => x);
    t.ok(e instanceof OutcomeUnknown && e.reason === kind, `${nombre} → OutcomeUnknown ${kind}`);
  }
  const dbl = await pac.stamp(req(sealed('FINKOK DOUBLE')));
  t.match(dbl, { kind: 'rejected', code: '301', message: '301 XML mal formado' }, 'a repeated incidence is reported once');

  const pending = await pac.stamp(req(sealed('CANCELA CON ACEPTACION')));
  if (pending.kind !== 'stamped') throw new Error('stamp');
  const c = await pac.cancel({ uuid: pending.uuid, rfcEmisor: 'AAA010101AAA', motivo: '02', livemode: true, credentials: { user: 'finkok-user', password: 'finkok-pass' }, csd, now: new Date() });
  t.equal(c.kind, 'pending', '201 "En proceso": waits for the receptor');
  const other = testCsd(false);
  const badKey = { ...other, certificado: other.certificado, privateKey: (await import('node:crypto')).generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey };
  const bad = await pac.cancel({ uuid: pending.uuid, rfcEmisor: 'AAA010101AAA', motivo: '02', livemode: true, credentials: { user: 'finkok-user', password: 'finkok-pass' }, csd: badKey, now: new Date() });
  t.match(bad, { kind: 'rejected', code: '711' }, 'a signature that does not verify: 711');
  await t.rejects(pac.stamp({ ...req(sealed()), livemode: false }), /live mode only/, 'never in test mode');
});

t.test('finkok mapping reads unknown statuses as errors, never as success', async (t) => {
  const env = (inner: string) => `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><cancel_signatureResponse><cancel_signatureResult>${inner}</cancel_signatureResult></cancel_signatureResponse></soap:Body></soap:Envelope>`;
  const u = '11111111-2222-4333-8444-000000000001';
  t.throws(() => readCancelAnswer(env(`<Folios><Folio><UUID>${u}</UUID><EstatusUUID>999</EstatusUUID></Folio></Folios>`), u), OutcomeUnknown);
  t.match(readCancelAnswer(env(`<Folios><Folio><UUID>${u}</UUID><EstatusUUID>no_cancelable</EstatusUUID></Folio></Folios>`), u), { kind: 'rejected' });
  t.match(readCancelAnswer(env(`<Folios><Folio><UUID>${u}</UUID><EstatusUUID>202</EstatusUUID><EstatusCancelacion>Cancelado sin aceptación</EstatusCancelacion></Folio></Folios>`), u), { kind: 'cancelled' });
  t.throws(() => readCancelAnswer(env('<CodEstatus>798</CodEstatus>'), u), OutcomeUnknown, '798: retry later');
  t.throws(() => readStampAnswer('<not-soap/>', 'stamp'), OutcomeUnknown);
  const e = (() => {
    try {
      readStampAnswer(env('').replace(/cancel_signature/g, 'stamp'), 'stamp');
    } catch (x) {
      return x as OutcomeUnknown;
    }
  })();
  t.equal(e && pacErrorCode(e), 'invoice.pac_no_uuid', 'an empty result is no UUID');
});

t.test('the cancellation request signature verifies with xmlsec1 (independent XML-DSig implementation)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'orq-xmlsec-'));
  try {
    const signed = firmarCancelacion({ rfcEmisor: 'AAA010101AAA', fecha: '2026-03-02T12:00:00', folios: [{ uuid: 'fe1b9833-db29-4601-99e4-94747050608e', motivo: '01', folioSustitucion: '6d984420-6a2e-4bcb-8ebe-402db8855d48' }] }, csd);
    writeFileSync(join(dir, 'c.xml'), signed);
    writeFileSync(join(dir, 'tampered.xml'), signed.replace('Motivo="01"', 'Motivo="02"'));
    writeFileSync(join(dir, 'cert.der'), Buffer.from(csd.certificado, 'base64'));
    const verify = (f: string) => spawnSync('xmlsec1', ['--verify', '--insecure', '--pubkey-cert-der', join(dir, 'cert.der'), join(dir, f)], { encoding: 'utf8' });
    const ok = verify('c.xml');
    t.equal(ok.status, 0, 'xmlsec1 verifies the signature', { stderr: ok.stderr });
    t.not(verify('tampered.xml').status, 0, 'a changed motivo does not verify');
    t.match(signed, /<Folio FolioSustitucion="6D984420-6A2E-4BCB-8EBE-402DB8855D48" Motivo="01" UUID="FE1B9833-DB29-4601-99E4-94747050608E">/);
    void execFileSync;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
