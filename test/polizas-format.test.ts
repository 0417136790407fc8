// The póliza writers checked field by field against the documented layouts (docs/reports.md):
// CONTPAQi fixed-width text (P, M1, AM, AD) and the Aspel COI grid (text and .xlsx). The column
// numbers here are written from the layout tables, not read from the writer's own table, so a wrong
// position in the writer fails here.
import t from 'tap';
import ExcelJS from 'exceljs';
import { contpaqiText, parseRecord } from '../formats/polizas/contpaqi.js';
import { aspelCoiGrid, aspelCoiTsv, aspelCoiXlsx } from '../formats/polizas/aspel-coi.js';
import { decimal2, toAscii, type Poliza } from '../formats/polizas/poliza.js';
import { conceptFor, resolveCode } from '../formats/polizas/codigo-agrupador.js';

const UUID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
// The worked example of the format notes: card sales 1,000.00 + IVA 160.00 settled net of a 34.80 fee + 5.57 IVA.
const example: Poliza = {
  date: '2026-03-15',
  folio: 15,
  concept: 'Cobros con tarjeta del 15/03/2026',
  movements: [
    { account: '1020100100', side: 'cargo', amountMinor: 111963, concept: 'Depósito neto liquidación', reference: 'ORQ-20260315' },
    { account: '6017500000', side: 'cargo', amountMinor: 3480, concept: 'Comision adquirente', reference: 'ORQ-20260315' },
    { account: '1180100000', side: 'cargo', amountMinor: 557, concept: 'IVA de la comision', reference: 'ORQ-20260315' },
    {
      account: '4010100000', side: 'abono', amountMinor: 100000, concept: 'Ventas del dia', reference: 'ORQ-20260315',
      cfdis: [{ uuid: UUID, date: '2026-03-15', serie: 'A', folio: '1234', rfcEmisor: 'AAA010101AAA', rfcReceptor: 'XAXX010101000', totalMinor: 116000 }],
    },
    { account: '2080100000', side: 'abono', amountMinor: 16000, concept: 'IVA trasladado cobrado', reference: 'ORQ-20260315' },
  ],
  cfdis: [{ uuid: UUID, date: '2026-03-15' }],
};

/** 1-based inclusive columns, as the layout tables give them. */
const cols = (line: string, from: number, to: number) => line.slice(from - 1, to);

t.test('CONTPAQi: P record, field by field', async (t) => {
  const text = contpaqiText([example], { polizaType: 3 });
  t.ok(text.endsWith('\r\n'), 'CRLF line ends');
  const lines = text.split('\r\n').slice(0, -1);
  t.same(lines.map((l) => l.slice(0, 2).trim()), ['P', 'M1', 'M1', 'M1', 'M1', 'AM', 'M1', 'AD'], 'P, M1s (AM right after its M1), then AD');
  const p = lines[0];
  t.equal(p.length, 148, 'P is 148 characters (one blank after Ajuste at 147)');
  t.equal(cols(p, 1, 3), 'P  ', 'token at 1, then two blanks');
  t.equal(cols(p, 4, 11), '20260315', 'Fecha AAAAMMDD at 4–11');
  t.equal(cols(p, 12, 12), ' ');
  t.equal(cols(p, 13, 16), '   3', 'TipoPol right-aligned at 13–16');
  t.equal(cols(p, 18, 26), '       15', 'Folio right-aligned at 18–26');
  t.equal(cols(p, 28, 28), '1', 'Clase 1 at 28');
  t.equal(cols(p, 30, 39), '0         ', 'IdDiario 0, left-aligned at 30–39');
  t.equal(cols(p, 41, 140), 'Cobros con tarjeta del 15/03/2026'.padEnd(100), 'Concepto padded to 100 at 41–140');
  t.equal(cols(p, 142, 143), '11', 'SistOrig 11 at 142–143');
  t.equal(cols(p, 145, 145), '0', 'Impresa at 145');
  t.equal(cols(p, 147, 147), '0', 'Ajuste at 147');
  for (const c of [2, 3, 12, 17, 27, 29, 40, 141, 144, 146, 148]) t.equal(p[c - 1], ' ', `column ${c} is a separator blank`);
});

t.test('CONTPAQi: M1, AM and AD records, field by field', async (t) => {
  const lines = contpaqiText([example], { polizaType: 3 }).split('\r\n');
  const m = lines[1];
  t.equal(m.length, 216, 'M1 is 216 characters');
  t.equal(cols(m, 1, 3), 'M1 ');
  t.equal(cols(m, 4, 33), '1020100100'.padEnd(30), 'IdCuenta left-aligned at 4–33');
  t.equal(cols(m, 35, 54), 'ORQ-20260315'.padEnd(20), 'Referencia at 35–54');
  t.equal(cols(m, 56, 56), '0', 'TipoMovto 0 = cargo at 56');
  t.equal(cols(m, 58, 77), '1119.63'.padEnd(20), 'Importe with a point and 2 decimals, left-aligned at 58–77');
  t.equal(cols(m, 79, 88), '0'.padEnd(10), 'IdDiario at 79–88');
  t.equal(cols(m, 90, 109), '0.00'.padEnd(20), 'ImporteME at 90–109');
  t.equal(cols(m, 111, 210), 'Deposito neto liquidacion'.padEnd(100), 'Concepto at 111–210, accents folded to ASCII');
  t.equal(cols(m, 212, 215), '    ', 'IdSegNeg blank at 212–215');
  for (const c of [3, 34, 55, 57, 78, 89, 110, 211, 216]) t.equal(m[c - 1], ' ', `column ${c} is a separator blank`);
  const abono = lines[4];
  t.equal(cols(abono, 56, 56), '1', 'TipoMovto 1 = abono');
  t.equal(cols(abono, 58, 77).trim(), '1000.00');
  t.equal(lines[5], `AM ${UUID.toUpperCase()}`, 'AM: token, blank, UUID at 4–39 (upper case)');
  t.equal(lines[7], `AD ${UUID.toUpperCase()}`, 'AD after the last movement');
  const parsed = lines.slice(0, -1).map(parseRecord);
  const cargos = parsed.filter((r) => r.rec === 'M1' && r.fields.TipoMovto === '0').reduce((s, r) => s + Math.round(Number(r.fields.Importe) * 100), 0);
  const abonos = parsed.filter((r) => r.rec === 'M1' && r.fields.TipoMovto === '1').reduce((s, r) => s + Math.round(Number(r.fields.Importe) * 100), 0);
  t.equal(cargos, 116000);
  t.equal(abonos, 116000, 'the file balances');
});

t.test('CONTPAQi: refusals instead of silent cuts', async (t) => {
  t.throws(() => contpaqiText([{ ...example, concept: 'x'.repeat(101) }], { polizaType: 3 }), /Concepto is 101 characters; the field holds 100/);
  t.throws(() => contpaqiText([{ ...example, movements: [{ ...example.movements[0], account: '1'.repeat(31) }, ...example.movements.slice(1)] }], { polizaType: 3 }), /IdCuenta/);
  t.throws(() => contpaqiText([{ ...example, movements: example.movements.slice(1) }], { polizaType: 3 }), /does not balance: cargos 4037 vs abonos 116000/);
  t.throws(() => contpaqiText([{ ...example, movements: [{ ...example.movements[0], amountMinor: -5 }] }], { polizaType: 3 }), /positive integer/);
  t.throws(() => contpaqiText([example], { polizaType: 0 }), /tipo de póliza/);
  t.throws(() => contpaqiText([{ ...example, cfdis: [{ uuid: 'nope', date: '2026-03-15' }] }], { polizaType: 3 }), /UUID/);
  t.equal(contpaqiText([], { polizaType: 3 }), '', 'no pólizas, empty file');
});

t.test('Aspel COI grid: header, partidas, CFDI block, FIN_PARTIDAS', async (t) => {
  const grid = aspelCoiGrid([example, { ...example, date: '2026-03-16', folio: 16, cfdis: undefined }], { polizaType: 'Dr' });
  t.ok(grid.every((r) => r.length === 9), 'nine columns A–I on every row');
  t.same(grid[0], Array(9).fill(null), 'row 1 empty');
  t.same(grid[1], Array(9).fill(null), 'row 2 empty');
  const h = grid[2];
  t.same(h.slice(0, 4), [{ t: 'text', v: 'Dr' }, { t: 'text', v: '15' }, { t: 'text', v: 'Cobros con tarjeta del 15/03/2026' }, { t: 'int', v: 15 }], 'row 3: A tipo, B número (text), C concepto, D day of month');
  t.same(h.slice(4), [null, null, null, null, null]);
  const p1 = grid[3];
  t.same(p1, [null, { t: 'text', v: '1020100100' }, { t: 'int', v: 0 }, { t: 'text', v: 'Deposito neto liquidacion' }, { t: 'int', v: 1 }, { t: 'amount', v: 111963 }, null, null, null], 'partida: B cuenta (text), C depto 0, D concepto, E 1, F cargo');
  const ventas = grid[6];
  t.same([ventas[5], ventas[6]], [null, { t: 'amount', v: 100000 }], 'an abono goes in G, F empty');
  t.same(grid[7][2], { t: 'text', v: 'INICIO_CFDI' }, 'CFDI block right after its partida');
  t.same(grid[8], [null, null, { t: 'text', v: '15/03/2026' }, { t: 'text', v: 'A' }, { t: 'text', v: '1234' }, { t: 'text', v: 'AAA010101AAA' }, { t: 'text', v: 'XAXX010101000' }, { t: 'amount', v: 116000 }, { t: 'text', v: UUID.toUpperCase() }], 'C fecha dd/mm/aaaa, D serie, E folio, F RFC emisor, G RFC receptor, H total, I UUID');
  t.same(grid[9][2], { t: 'text', v: 'FIN_CFDI' });
  t.same(grid[11], [null, { t: 'text', v: 'FIN_PARTIDAS' }, null, null, null, null, null, null, null], 'each póliza closed by FIN_PARTIDAS in B');
  t.same(grid[12].slice(0, 4), [{ t: 'text', v: 'Dr' }, { t: 'text', v: '16' }, { t: 'text', v: 'Cobros con tarjeta del 15/03/2026' }, { t: 'int', v: 16 }], 'the next póliza follows');
  t.throws(() => aspelCoiGrid([example, { ...example, date: '2026-04-01' }], { polizaType: 'Dr' }), /one file per month/);
  t.throws(() => aspelCoiGrid([example], { polizaType: 'Diario' }), /1–2 letter code/);
  t.throws(() => aspelCoiGrid([{ ...example, folio: 123456 }], { polizaType: 'Dr' }), /número is 6 characters/);
});

t.test('Aspel COI as tab-separated text', async (t) => {
  const lines = aspelCoiTsv([example], { polizaType: 'Ig' }).split('\r\n');
  t.equal(lines[0], '\t'.repeat(8), 'an empty row is nine empty cells');
  t.same(lines[2].split('\t'), ['Ig', '15', 'Cobros con tarjeta del 15/03/2026', '15', '', '', '', '', '']);
  t.same(lines[3].split('\t'), ['', '1020100100', '0', 'Deposito neto liquidacion', '1', '1119.63', '', '', '']);
  t.same(lines[6].split('\t'), ['', '4010100000', '0', 'Ventas del dia', '1', '', '1000.00', '', '']);
  t.same(lines[8].split('\t'), ['', '', '15/03/2026', 'A', '1234', 'AAA010101AAA', 'XAXX010101000', '1160.00', UUID.toUpperCase()]);
  t.same(lines[11].split('\t'), ['', 'FIN_PARTIDAS', '', '', '', '', '', '', '']);
  t.equal(lines[12], '', 'the file ends with CRLF');
});

t.test('Aspel COI as .xlsx: text stays text, amounts are numbers', async (t) => {
  const withZeros: Poliza = { ...example, movements: example.movements.map((m, i) => (i === 0 ? { ...m, account: '0102-001-000' } : m)) };
  const buf = await aspelCoiXlsx([withZeros], { polizaType: 'Dr' });
  t.equal(buf.subarray(0, 2).toString('latin1'), 'PK', 'a zip (OOXML) container');
  // The same pólizas give the same cells (the zip container stamps its entries with the time, so
  // two files a second apart differ in bytes but not in content).
  const cells = async (b: Buffer) => {
    const w = new ExcelJS.Workbook();
    await w.xlsx.load(b as never);
    const out: unknown[] = [];
    w.worksheets[0].eachRow({ includeEmpty: true }, (r) => out.push(r.values));
    return out;
  };
  const again = await aspelCoiXlsx([withZeros], { polizaType: 'Dr' });
  t.same(await cells(again), await cells(buf), 'same pólizas, same cells');
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(buf as never);
  const ws = wb.worksheets[0];
  t.equal(ws.getCell('A1').value, null, 'row 1 empty');
  t.equal(ws.getCell('A3').value, 'Dr');
  t.equal(ws.getCell('B3').value, '15', 'número as text');
  t.equal(ws.getCell('D3').value, 15, 'day as a number');
  t.equal(ws.getCell('B4').value, '0102-001-000', 'account kept as text with its mask and leading zero');
  t.equal(ws.getCell('B4').numFmt, '@');
  t.equal(ws.getCell('C4').value, 0);
  t.equal(ws.getCell('E4').value, 1);
  t.equal(ws.getCell('F4').value, 1119.63);
  t.equal(ws.getCell('F4').numFmt, '0.00');
  t.equal(ws.getCell('G4').value, null);
  t.equal(ws.getCell('G7').value, 1000);
  t.equal(ws.getCell('C8').value, 'INICIO_CFDI');
  t.equal(ws.getCell('I9').value, UUID.toUpperCase());
  t.equal(ws.getCell('B12').value, 'FIN_PARTIDAS');
});

t.test('helpers: decimals, ASCII folding, default codes', async (t) => {
  t.equal(decimal2(5), '0.05');
  t.equal(decimal2(100000), '1000.00');
  t.equal(decimal2(123456789012), '1234567890.12');
  t.equal(toAscii('Depósito añejo ÜÇ'), 'Deposito anejo UC');
  t.equal(toAscii('tab\there'), 'tab here');
  t.same(resolveCode('sales', new Map()), { code: '401.01', source: 'default' });
  t.same(resolveCode('connector_fees:sim', new Map()), { code: '601.75', source: 'default' });
  t.same(resolveCode('connector_fees:sim', new Map([['connector_fees:*', '6017500000']])), { code: '6017500000', source: 'tenant' }, 'a prefix rule');
  t.same(resolveCode('connector_fees:sim', new Map([['connector_fees:*', 'x'], ['connector_fees:sim', '6017500001']])), { code: '6017500001', source: 'tenant' }, 'an exact rule wins');
  t.same(resolveCode('something_new', new Map()), { code: '107.05', source: 'default' }, 'unknown account: the fallback default');
  t.equal(conceptFor('connector_receivable:sim'), 'Por cobrar al procesador sim');
});
