// Pure pieces of formats/cfdi: the IVA split against SAT's limits, amounts in words, the QR address,
// RFC and receptor checks (generic RFCs, catalogs).
import t from 'tap';
import { baseDeTotal, desglosar, limitesTraslado, pesos } from '../formats/cfdi/amounts.js';
import { importeConLetra, numeroALetras } from '../formats/cfdi/letras.js';
import { totalQr, urlVerificacion } from '../formats/cfdi/qr.js';
import { checkReceptor, checkRfc } from '../formats/cfdi/receptor.js';
import { normalizeSpace } from '../formats/cfdi/cadena.js';
import { fechaLocal } from '../formats/cfdi/comprobante.js';

t.test('IVA inside the total: base = round(total / 1.16), iva within SAT limits for every line', async (t) => {
  t.equal(baseDeTotal(11600), 10000);
  t.equal(baseDeTotal(1), 1);
  t.equal(baseDeTotal(2), 2);
  t.equal(baseDeTotal(100), 86, '1.00 / 1.16 = 0.862 → 0.86');
  t.equal(pesos(5), '0.05');
  t.equal(pesos(123456), '1234.56');
  let bad = 0;
  const check = (total: number) => {
    const b = baseDeTotal(total);
    const iva = total - b;
    const { lower, upper } = limitesTraslado(b);
    if (iva < lower || iva > upper || Math.abs(b - total / 1.16) > 0.5) bad++;
  };
  for (let total = 1; total <= 100_000; total++) check(total);
  let seed = 42;
  for (let i = 0; i < 20_000; i++) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    check(100_000 + (seed % 2_000_000_000));
  }
  t.equal(bad, 0, 'no line breaks the Traslado Importe limits');
  const limit = limitesTraslado(10000);
  t.same(limit, { lower: 1599, upper: 1601 }, 'SAT limits of base 100.00: [15.99, 16.01]');
  const d = desglosar([11600, 1, 9999, 333]);
  t.equal(d.baseMinor + d.ivaMinor, d.totalMinor);
  t.equal(d.totalMinor, 11600 + 1 + 9999 + 333, 'the sums agree exactly');
  t.same(d.lineas.map((l) => [l.baseMinor, l.ivaMinor]), [[10000, 1600], [1, 0], [8620, 1379], [287, 46]]);
});

t.test('amounts in words', async (t) => {
  const cases: [number, string][] = [
    [11600, 'CIENTO DIECISÉIS PESOS 00/100 M.N.'],
    [100, 'UN PESO 00/100 M.N.'],
    [0, 'CERO PESOS 00/100 M.N.'],
    [10000, 'CIEN PESOS 00/100 M.N.'],
    [2100000, 'VEINTIÚN MIL PESOS 00/100 M.N.'],
    [100100, 'MIL UN PESOS 00/100 M.N.'],
    [3654099, 'TREINTA Y SEIS MIL QUINIENTOS CUARENTA PESOS 99/100 M.N.'],
    [100000000, 'UN MILLÓN DE PESOS 00/100 M.N.'],
    [2100000000, 'VEINTIÚN MILLONES DE PESOS 00/100 M.N.'],
    [123456789, 'UN MILLÓN DOSCIENTOS TREINTA Y CUATRO MIL QUINIENTOS SESENTA Y SIETE PESOS 89/100 M.N.'],
    [10100000, 'CIENTO UN MIL PESOS 00/100 M.N.'],
    [31, 'CERO PESOS 31/100 M.N.'],
  ];
  for (const [minor, words] of cases) t.equal(importeConLetra(minor), words, `${minor} cents`);
  t.equal(numeroALetras(1_000_000_000), 'mil millones');
  t.equal(numeroALetras(71), 'setenta y uno');
});

t.test('SAT verification QR address', async (t) => {
  t.equal(totalQr(11600), '116.0');
  t.equal(totalQr(232000), '2320.0');
  t.equal(totalQr(123450), '1234.5');
  t.equal(totalQr(1), '0.01');
  t.equal(
    urlVerificacion({ uuid: 'cee4be01-adfa-4deb-8421-add60f0bedac', rfcEmisor: 'Ñ&A010101AAA', rfcReceptor: 'XAXX010101000', totalMinor: 11600, sello: 'abcdefgh12345678' }),
    'https://verificacfdi.facturaelectronica.sat.gob.mx/default.aspx?id=CEE4BE01-ADFA-4DEB-8421-ADD60F0BEDAC&re=Ñ&amp;A010101AAA&rr=XAXX010101000&tt=116.0&fe=12345678',
  );
});

t.test('RFC form with validate-rfc', async (t) => {
  t.ok(checkRfc('EKU9003173C9').ok, 'persona moral');
  t.equal(checkRfc('EKU9003173C9').persona, 'moral');
  t.equal(checkRfc('cacx7605101p8').persona, 'fisica', 'lower case accepted and upper-cased');
  t.ok(checkRfc('AAA010101AAA').ok, "SAT's test issuer (its check digit does not compute) is accepted");
  t.notOk(checkRfc('ABC').ok);
  t.notOk(checkRfc('EKU9013173C9').ok, 'month 13');
  t.equal(checkRfc('XAXX010101000').generico, 'publico');
  t.equal(checkRfc('XEXX010101000').generico, 'extranjero');
});

t.test('receptor: generic RFC triple, catalogs, régimen/uso coherence', async (t) => {
  const ok = { rfc: 'EKU9003173C9', nombre: 'Escuela  Kemper Urgate', uso_cfdi: 'G03', regimen_fiscal: '601', cp: '26015' };
  const r = checkReceptor(ok);
  t.ok(r.ok);
  if (r.ok) t.equal(r.receptor.nombre, 'ESCUELA KEMPER URGATE', 'name upper-cased, spaces collapsed');
  const gen = { rfc: 'XAXX010101000', nombre: 'PUBLICO EN GENERAL', uso_cfdi: 'S01', regimen_fiscal: '616', cp: '01000' };
  t.ok(checkReceptor(gen).ok, 'public in general with the triple');
  t.ok(checkReceptor({ ...gen, rfc: 'XEXX010101000' }).ok, 'foreign generic with the triple');
  for (const bad of [{ nombre: 'JUAN PEREZ' }, { uso_cfdi: 'G03' }, { regimen_fiscal: '601' }]) {
    const x = checkReceptor({ ...gen, ...bad });
    t.equal(!x.ok && x.problem.code, 'receptor_incoherente', `generic RFC with ${JSON.stringify(bad)}`);
  }
  const x = checkReceptor({ ...ok, rfc: 'XEXX010101000' });
  t.equal(!x.ok && x.problem.code, 'receptor_incoherente', 'foreign generic RFC with a company name');
  const cases: [Partial<typeof ok>, RegExp][] = [
    [{ rfc: 'NOPE' }, /not a valid RFC/],
    [{ cp: '123' }, /5-digit/],
    [{ regimen_fiscal: '999' }, /c_RegimenFiscal/],
    [{ regimen_fiscal: '612' }, /persona moral/],
    [{ uso_cfdi: 'ZZZ' }, /c_UsoCFDI/],
    [{ uso_cfdi: 'D01' }, /does not apply to a persona moral/],
    [{ rfc: 'CACX7605101P8', regimen_fiscal: '605', uso_cfdi: 'G03' }, /not admitted with regimen_fiscal 605/],
  ];
  for (const [change, msg] of cases) {
    const y = checkReceptor({ ...ok, ...change });
    t.ok(!y.ok && y.problem.code === 'invalid_receptor' && msg.test(y.problem.message), `${JSON.stringify(change)} → invalid_receptor ${msg}`);
  }
});

t.test('normalize-space and local time', async (t) => {
  t.equal(normalizeSpace('  a \t\n b  '), 'a b');
  t.equal(normalizeSpace('a\u00a0b'), 'a\u00a0b', 'a no-break space is not XML whitespace');
  t.equal(fechaLocal(new Date('2026-01-01T05:59:59Z')), '2025-12-31T23:59:59', 'Mexico City is UTC-6');
  // The last second's text is kept per zone: the same second answers the same, another second or zone its own.
  t.equal(fechaLocal(new Date('2026-01-01T05:59:59.999Z')), '2025-12-31T23:59:59', 'the same second');
  t.equal(fechaLocal(new Date('2026-01-01T06:00:00.000Z')), '2026-01-01T00:00:00', 'the next second');
  t.equal(fechaLocal(new Date('2026-01-01T06:00:00.500Z'), 'UTC'), '2026-01-01T06:00:00', 'the same second in another zone');
  t.equal(fechaLocal(new Date('2026-01-01T06:00:00.700Z')), '2026-01-01T00:00:00', 'each zone keeps its own');
  t.equal(fechaLocal(new Date('2022-07-01T12:00:00Z')), '2022-07-01T07:00:00', 'DST before October 2022: UTC-5');
  t.throws(() => fechaLocal(new Date(NaN)), RangeError, 'an invalid date is refused as before');
});
