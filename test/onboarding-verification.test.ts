// The automatic onboarding verifier (actors/onboarding-verification.ts) and the formats it uses
// (formats/rfc.ts with validate-rfc, formats/clabe.ts with clabe-validator): pure, no database.
import t from 'tap';
import { completeness, verdictOf, formatCheck } from '../actors/onboarding-verification.js';
import { checkClabe, institutionOf, makeClabe, maskClabe } from '../formats/clabe.js';
import { checkRfc, checkRfcFor } from '../formats/rfc.js';
import { SIM_BLOCKED_RFCS, SimTaxpayerScreen } from '../connectors/taxpayer-lists.js';

const DOCS = ['ine', 'comprobante_domicilio', 'constancia_fiscal', 'caratula_estado_cuenta'].map((document_type) => ({ document_type }));
const MORAL = { legal_name: 'Tacos SA de CV', person_type: 'moral' as const, contact_email: 'a@b.mx', rfc: 'EKU9003173C9', clabe: '646180110400000007', documents: DOCS };

t.test('RFC: validate-rfc, consistent with person_type', async (t) => {
  t.match(checkRfcFor('GODE561231GR8', 'fisica'), { ok: true, rfc: 'GODE561231GR8', kind: 'fisica' }, '13 characters: persona física');
  t.match(checkRfcFor('EKU9003173C9', 'moral'), { ok: true, rfc: 'EKU9003173C9', kind: 'moral' }, '12 characters: persona moral');
  t.match(checkRfcFor('GODE561231GR8', 'moral'), { ok: false, message: /13 characters, but person_type moral needs 12/ });
  t.match(checkRfcFor('EKU9003173C9', 'fisica'), { ok: false, message: /12 characters, but person_type fisica needs 13/ });
  t.match(checkRfcFor(' eku9003173c9 ', 'moral'), { ok: true, rfc: 'EKU9003173C9' }, 'trimmed and upper-cased');
  t.match(checkRfcFor('GODE561231GR9', 'fisica'), { ok: true }, 'the check digit is not enforced (SAT issued RFCs whose digit does not compute)');
  t.match(checkRfcFor('AAA010101AAA', 'moral'), { ok: true }, "SAT's test issuer");
  t.match(checkRfcFor('GODE561331GR8', 'fisica'), { ok: false, message: /not a valid date/ }, 'month 13');
  t.match(checkRfcFor('ABC', 'fisica'), { ok: false, message: /homoclave/ });
  t.match(checkRfcFor('EKU-900317-3C9', 'moral'), { ok: false, message: /characters outside/ });
  t.match(checkRfcFor('XAXX010101000', 'moral'), { ok: false, message: /generic RFC/ });
  t.match(checkRfcFor('XEXX010101000', 'fisica'), { ok: false, message: /foreign/ });
  t.match(checkRfc('XAXX010101000'), { ok: true, kind: 'generic' });
});

t.test('CLABE: clabe-validator, 18 digits, 3-7-1 check digit, known bank code', async (t) => {
  t.match(checkClabe('646180110400000007'), { ok: true, bankCode: '646', institution: '90646' });
  t.match(checkClabe('072691004495711499'), { ok: true, institution: '40072' }, "STP's documented example beneficiary (Banorte)");
  t.match(checkClabe('646180110400000008'), { ok: false, problem: 'checksum', message: /should be 7/ });
  t.match(checkClabe('64618011040000000'), { ok: false, problem: 'length' });
  t.match(checkClabe('6461801104000000071'), { ok: false, problem: 'length' });
  t.match(checkClabe('64618011040000000a'), { ok: false, problem: 'characters' });
  t.match(checkClabe(makeClabe('003', '180', '11040000000')), { ok: false, problem: 'bank', message: /003/ }, 'valid check digit, unknown bank');
  t.match(checkClabe(makeClabe('999', '180', '11040000000')), { ok: false, problem: 'bank' }, '999 is reserved (N/A)');
  t.match(checkClabe(makeClabe('002', '999', '11040000000')), { ok: true }, 'a plaza outside the library catalog is accepted');
  t.equal(maskClabe('646180110400000007'), '646***********0007');
  t.equal(institutionOf('001'), '2001');
  t.equal(institutionOf('006'), '37006');
  t.equal(institutionOf('135'), '37135');
  t.equal(institutionOf('012'), '40012');
  t.equal(institutionOf('646'), '90646');
});

t.test('completeness: missing fields listed first, then documents', async (t) => {
  t.same(completeness(MORAL), { ok: true });
  const none = completeness({ legal_name: 'X', person_type: 'moral', contact_email: 'a@b.mx', documents: [] });
  t.match(none, { ok: false, code: 'onboarding_application.missing_fields', missing: ['rfc', 'clabe'], message: /missing: rfc, clabe/ });
  t.match(completeness({ ...MORAL, rfc: '  ' }), { code: 'onboarding_application.missing_fields', missing: ['rfc'] }, 'blank counts as missing');
  t.match(completeness({ ...MORAL, documents: DOCS.slice(0, 2) }), { ok: false, code: 'onboarding_application.missing_documents', missing: ['constancia_fiscal', 'caratula_estado_cuenta'] });
});

t.test('verdict: needs_info on malformed formats, rejected on a list match, else approved', async (t) => {
  t.same(verdictOf(MORAL, null), { result: 'approved' });
  t.match(verdictOf({ ...MORAL, rfc: 'GODE561231GR8' }, null), { result: 'needs_info', reason: /person_type moral/ });
  t.match(verdictOf({ ...MORAL, clabe: '646180110400000008' }, null), { result: 'needs_info', reason: /check digit/ });
  const both = verdictOf({ ...MORAL, rfc: 'XYZ', clabe: '123' }, null);
  t.match(both, { result: 'needs_info', reason: /RFC XYZ.*18 digits/ }, 'both problems named');
  t.match(verdictOf(MORAL, { list: 'SAT 69-B (simulated)', reason: 'EFOS' }), { result: 'rejected', reason: /EKU9003173C9 appears on SAT 69-B/ });
  t.match(verdictOf({ ...MORAL, rfc: 'bad' }, { list: 'x', reason: 'y' }), { result: 'needs_info' }, 'format problems win over a list match');
  t.match(formatCheck({ ...MORAL, rfc: 'eku9003173c9' }), { ok: true, rfc: 'EKU9003173C9' });
});

t.test('the sim list: valid RFCs of simulated EFOS', async (t) => {
  const screen = new SimTaxpayerScreen();
  for (const rfc of Object.keys(SIM_BLOCKED_RFCS)) {
    t.ok(checkRfc(rfc).ok, `${rfc} is a well-formed RFC`);
    t.ok(await screen.match(rfc), `${rfc} is listed`);
  }
  t.equal(await screen.match('EKU9003173C9'), null);
});
