// The statement parser without a database (formats/bank-statements.ts): dates, amounts, decoding,
// delimiters, header search, presets, continuation rows, errors with the file's line number.
import t from 'tap';
import { decodeStatement, parseBankAmount, parseBankDate, parseStatement, StatementParseError, type Mapping } from '../formats/bank-statements.js';

t.test('dates as Mexican banks print them', async (t) => {
  const ok: Array<[string, string]> = [
    ['02/01/2026', '2026-01-02'], ['2/1/2026', '2026-01-02'], ['02-01-2026', '2026-01-02'], ['02.01.2026', '2026-01-02'],
    ['2026-01-02', '2026-01-02'], ['22/jun./2026', '2026-06-22'], ['22/JUN/2026', '2026-06-22'], ['05-ene-26', '2026-01-05'],
    ["'02012026", '2026-01-02'], ['02/01/2026 10:15', '2026-01-02'], ['2026-01-02T10:15:00', '2026-01-02'], ['29/02/2028', '2028-02-29'],
    ['15/sept/2026', '2026-09-15'], ['15/set/2026', '2026-09-15'],
  ];
  for (const [raw, want] of ok) t.equal(parseBankDate(raw), want, raw);
  for (const raw of ['', '31/02/2026', '29/02/2026', '2026-13-01', '01/13/2026', '2026/01/02x', 'Total', '22/xyz/2026', '1/1/26', '00/01/2026']) t.equal(parseBankDate(raw), null, raw);
});

t.test('amounts in minor units', async (t) => {
  const ok: Array<[string, number | null]> = [
    ['1234.50', 123450], ['1,234.50', 123450], ['$1,234.50', 123450], ['$ 1,234.50', 123450], ["'1234.5", 123450], ['1234', 123400],
    ['1,000,000.00', 100000000], ['MXN 10.00', 1000], ['', null], ['-', null], ['0.00', null], ['0', null], ['  ', null],
  ];
  for (const [raw, want] of ok) t.equal(parseBankAmount(raw), want, raw);
  for (const raw of ['-10.00', '12a', '1.234', '1,23.00', '1.2.3', 'abc', '10,5']) t.ok(Number.isNaN(parseBankAmount(raw)), raw);
});

t.test('decoding: BOM, UTF-8, Windows-1252', async (t) => {
  t.same(decodeStatement(Buffer.from('\ufeffDía', 'utf8')), { text: 'Día', encoding: 'utf-8' });
  t.same(decodeStatement(Buffer.from([0x44, 0xed, 0x61])), { text: 'Día', encoding: 'windows-1252' });
  t.same(decodeStatement(Buffer.from([0x80])), { text: '€', encoding: 'windows-1252' }, '0x80 is the euro sign in 1252, not a control');
});

const cols: Mapping = { kind: 'columns', date: 0, description: 1, reference: 2, credit: 3, debit: 4 };
const parse = (text: string, m: Mapping = cols, header = true) => parseStatement(Buffer.from(text, 'utf8'), m, header);
const fails = (t: { fail(m: string): void; ok(v: unknown): void; equal(a: unknown, b: unknown): void; match(a: unknown, b: RegExp): void }, text: string, row: number, reason: RegExp, m: Mapping = cols) => {
  try {
    parse(text, m);
    t.fail('parsed');
  } catch (e) {
    t.ok(e instanceof StatementParseError);
    t.equal((e as StatementParseError).row, row);
    t.match((e as Error).message, reason);
  }
};

t.test('delimiters, quoted fields, header search, continuation rows', async (t) => {
  const semi = parse('Fecha;Concepto;Ref;Abono;Cargo\n02/01/2026;"Pago; con punto y coma";R1;"1,000.00";\n');
  t.equal(semi.delimiter, ';');
  t.equal(semi.lines[0].description, 'Pago; con punto y coma');
  const tab = parse('Fecha\tConcepto\tRef\tAbono\tCargo\n02/01/2026\tA\tR1\t5.00\t\n');
  t.equal(tab.delimiter, '\t');
  const titled = parse('BANCO X\nCuenta 123\n\nFecha,Concepto,Ref,Abono,Cargo\n02/01/2026,A,R1,5.00,\n03/01/2026,B,,,7.00\n');
  t.equal(titled.headerRow, 4);
  t.same(titled.lines.map((l) => [l.row, l.creditMinor, l.debitMinor]), [[5, 500, 0], [6, 0, 700]]);
  const cont = parse('Fecha,Concepto,Ref,Abono,Cargo\n02/01/2026,SPEI RECIBIDO,R1,5.00,\n,CLAVE RASTREO 123,,,\n,,,,\n03/01/2026,B,R2,1.00,\n');
  t.equal(cont.lines[0].description, 'SPEI RECIBIDO CLAVE RASTREO 123');
  t.equal(cont.lines.length, 2);
  const crlf = parse('Fecha,Concepto,Ref,Abono,Cargo\r\n02/01/2026,A,R1,5.00,\r\n');
  t.equal(crlf.lines[0].creditMinor, 500);
  const noHeader = parse('02/01/2026,A,R1,5.00,\n', cols, false);
  t.equal(noHeader.lines[0].row, 1);
});

t.test('errors name the file line and the reason', async (t) => {
  const h = 'Fecha,Concepto,Ref,Abono,Cargo\n';
  fails(t, `${h}02/01/2026,A,R,1.00,\n99/01/2026,B,R,1.00,\n`, 3, /^Row 3: invalid date "99\/01\/2026" in column 0/);
  fails(t, `${h}02/01/2026,A,R,x,\n`, 2, /^Row 2: invalid amount "x" in the credit column 3/);
  fails(t, `${h}02/01/2026,A,R,,-5\n`, 2, /^Row 2: invalid amount "-5" in the debit column 4/);
  fails(t, `${h}02/01/2026,A,R,1.00,2.00\n`, 2, /^Row 2: both a credit \(1.00\) and a debit \(2.00\)/);
  fails(t, `${h}02/01/2026,A,R,,\n`, 2, /^Row 2: neither a credit nor a debit/);
  fails(t, `${h}\n\n02/01/2026,A\n`, 4, /^Row 4: it has 2 columns/);
  fails(t, `${h}02/01/2026,"A,R,1.00,\n`, 2, /cannot be read as delimited text/);
  fails(t, '', 0, /empty/);
  // decisions §7: a period with no movements is an empty statement, not an error.
  t.same(parse(h).lines, [], 'a header alone: no lines, no error');
  fails(t, 'Cuenta,Fecha,Hora\n1,2,3\n', 0, /header row of the santander layout/, { kind: 'preset', preset: 'santander' });
  fails(t, 'Cuenta,Fecha,Hora,Sucursal,Descripcion,Cargo/Abono,Importe\n1,02012026,10:00,1,X,*,5.00\n', 2, /invalid amount sign "\*"/, { kind: 'preset', preset: 'santander' });
});

t.test('presets by header name in any column order; reference_column overrides', async (t) => {
  const banorte = parse('SALDO,RETIROS,DEPÓSITOS,DESCRIPCIÓN,REFERENCIA,FECHA\n"$10.00",-,"$5.00",SPEI,W-AAAAA,02/01/2026\n', { kind: 'preset', preset: 'banorte' });
  t.same(banorte.lines[0], { row: 2, valueDate: '2026-01-02', description: 'SPEI', reference: 'W-AAAAA', creditMinor: 500, debitMinor: 0 });
  const bbva = parse('Día,Concepto / Referencia,cargo,Abono,Saldo,Extra\n02-01-2026,SPEI RECIBIDO/abc 99,,1.00,5.00,XYZ\n', { kind: 'preset', preset: 'bbva', reference: 5 });
  t.equal(bbva.lines[0].reference, 'XYZ', 'reference_column wins over the text after /');
  t.equal(bbva.lines[0].description, 'SPEI RECIBIDO/abc 99');
  const positional = parseStatement(Buffer.from("'1,'02012026,10:00,'1,ABONO,+,\"1,000.00\",5.00,'123,PAGO\n"), { kind: 'preset', preset: 'santander' }, false);
  t.same(positional.lines[0], { row: 1, valueDate: '2026-01-02', description: 'ABONO | PAGO', reference: '123', creditMinor: 100000, debitMinor: 0 });
});
