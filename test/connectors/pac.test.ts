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
  pacConformance(t, async () => ({ pac: new FinkokPac({ baseUrl: fake.url, timeoutMs: 1500, stampLagMs: 300, lagStepMs: 100 }), livemode: true, credentials: { user: fake.user, password: fake.password } })),
);

const csd = testCsd(false);
const req = (xml: string, password = 'finkok-pass') => ({ xml, livemode: true, credentials: { user: 'finkok-user', password }, now: new Date() });

t.test('finkok only', async (t) => {
  const pac = new FinkokPac({ baseUrl: fake.url, timeoutMs: 1500, stampLagMs: 300, lagStepMs: 100 });
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
});

t.test('test keys stamp at Finkok\'s demo host, live keys at production (issue 28.5)', async (t) => {
  t.equal(new FinkokPac({ baseUrl: 'https://facturacion.finkok.com' }).hostFor(false), 'https://demo-facturacion.finkok.com', 'demo by default in test mode');
  t.equal(new FinkokPac({ baseUrl: 'https://facturacion.finkok.com' }).hostFor(true), 'https://facturacion.finkok.com');
  const pac = new FinkokPac({ baseUrl: 'http://127.0.0.1:9', demoUrl: fake.url, timeoutMs: 1500 });
  const r = await pac.stamp({ ...req(sealed()), livemode: false });
  t.equal(r.kind, 'stamped', 'a test-mode stamp goes to the demo host (here the fake), never production');
});

t.test('right after a stamp Finkok answers 603 / 307 without the stamp for seconds: never read as "not stamped" (issue 28.5)', async (t) => {
  const lagged = await startFakeFinkok({ lagMs: 800 });
  t.teardown(() => lagged.close());
  const pac = new FinkokPac({ baseUrl: lagged.url, timeoutMs: 1500, stampLagMs: 3000, lagStepMs: 100 });
  const xml = sealed();
  const first = await pac.stamp(req(xml));
  if (first.kind !== 'stamped') throw new Error('stamp');
  // The reconciler asks at once (its answer was lost): Finkok says 603 for a while.
  const status = await pac.status(req(xml));
  t.match(status, { kind: 'stamped', uuid: first.uuid }, 'status waits out the lag: the CFDI SAT holds is found, not "not stamped"');
  const xml2 = sealed();
  const one = await pac.stamp(req(xml2));
  const again = await pac.stamp(req(xml2));
  t.ok(one.kind === 'stamped' && again.kind === 'stamped' && one.uuid === again.uuid, 'a repeated stamp during the lag recovers the first stamp (307, then stamped after the lag)');
  const never = await pac.status(req(sealed()));
  t.same(never, { kind: 'not_stamped' }, 'a CFDI never sent is still "not stamped" once the lag has passed');
});

t.test('a lookup that carries its first send (sentAt) is asked once: inside the lag "ask again later", after it a 603 is believed (issue 28.5)', async (t) => {
  const lagged = await startFakeFinkok({ lagMs: 60_000 });
  t.teardown(() => lagged.close());
  const pac = new FinkokPac({ baseUrl: lagged.url, timeoutMs: 1500, stampLagMs: 30_000, lagStepMs: 100 });
  const xml = sealed();
  const first = await pac.stamp(req(xml));
  if (first.kind !== 'stamped') throw new Error('stamp');
  const before = lagged.calls.length;
  // The reconciler asks right after the send (its answer was lost): Finkok holds the stamp but says 603.
  const e = await pac.status({ ...req(xml), sentAt: new Date() }).catch((x) => x);
  t.ok(e instanceof OutcomeUnknown && e.reason === 'no_uuid', 'inside the lag: unknown (ask again later), never "not stamped"');
  t.equal(lagged.calls.length - before, 1, 'one `stamped` call: nothing waits under the invoice\'s lock');
  // Once the lag has passed, Finkok's 603 is its answer: a CFDI never stamped is "not stamped".
  const never = await pac.status({ ...req(sealed()), sentAt: new Date(Date.now() - 31_000) });
  t.same(never, { kind: 'not_stamped' });
  lagged.lagMs = 0;
  t.match(await pac.status({ ...req(xml), sentAt: new Date() }), { kind: 'stamped', uuid: first.uuid }, 'once Finkok hands it back, the stamp');
});

t.test('cancel_pending is followed with get_sat_status; a repeated request answers 202 (issue 28.5)', async (t) => {
  const pac = new FinkokPac({ baseUrl: fake.url, timeoutMs: 1500, stampLagMs: 300, lagStepMs: 100 });
  const creds = { user: 'finkok-user', password: 'finkok-pass' };
  const s = await pac.stamp(req(sealed('CANCELA CON ACEPTACION')));
  if (s.kind !== 'stamped') throw new Error('stamp');
  const q = { uuid: s.uuid, rfcEmisor: 'AAA010101AAA', rfcReceptor: 'XAXX010101000', total: '116.00', livemode: true, credentials: creds };
  t.match(await pac.cancelStatus(q), { kind: 'active', estado: 'Vigente' }, 'before the request: valid');
  const c = await pac.cancel({ uuid: s.uuid, rfcEmisor: 'AAA010101AAA', motivo: '02', livemode: true, credentials: creds, csd, now: new Date() });
  t.equal(c.kind, 'pending');
  t.match(await pac.cancelStatus(q), { kind: 'pending', estatusCancelacion: 'En proceso' });
  t.equal((await pac.cancel({ uuid: s.uuid, rfcEmisor: 'AAA010101AAA', motivo: '02', livemode: true, credentials: creds, csd, now: new Date() })).kind, 'pending', '202: requested before, still waiting');
  fake.decideCancellation(s.uuid, true);
  t.match(await pac.cancelStatus(q), { kind: 'cancelled', estado: 'Cancelado' }, 'the receptor accepted');
  const s2 = await pac.stamp(req(sealed('CANCELA CON ACEPTACION')));
  if (s2.kind !== 'stamped') throw new Error('stamp');
  await pac.cancel({ uuid: s2.uuid, rfcEmisor: 'AAA010101AAA', motivo: '02', livemode: true, credentials: creds, csd, now: new Date() });
  fake.decideCancellation(s2.uuid, false);
  t.match(await pac.cancelStatus({ ...q, uuid: s2.uuid }), { kind: 'rejected', estado: 'Vigente' }, 'the receptor refused: the CFDI stays valid');
  t.match(await pac.cancelStatus({ ...q, uuid: '11111111-2222-4333-8444-000000000009' }), { kind: 'not_found' });
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
