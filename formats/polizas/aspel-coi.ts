// Aspel COI: the póliza import grid (nine columns A–I), as the public generators write it for COI's
// "importación de pólizas desde Excel" (docs/reports.md, "Aspel COI layout"). The grid is built
// once as data; aspelCoiTsv renders it as tab-separated text (the spec's text/plain answer) and
// aspelCoiXlsx as the .xlsx workbook COI imports.
import ExcelJS from 'exceljs';
import { assertPoliza, decimal2, dayOf, dmy, PolizaFormatError, toAscii, type CfdiRef, type Poliza } from './poliza.js';

export interface AspelCoiOptions {
  /** COI tipo de póliza code: Dr diario, Ig ingresos, Eg egresos (defaults; the company may add types). */
  polizaType: string;
}

/** A cell: text (kept as text in the workbook), a plain number, an amount in centavos, or empty. */
export type Cell = { t: 'text'; v: string } | { t: 'int'; v: number } | { t: 'amount'; v: number } | null;
export type Row = Cell[];

export const ASPEL_COLUMNS = 9;
/** Rows 1–2 are left empty; the first póliza header goes on row 3 (what most public generators do). */
export const ASPEL_FIRST_ROW = 3;
/** Widths the public generators cap at (SaariMiesLocal): concepts 120, número 5 characters. */
const MAX = { concept: 120, numero: 5, account: 20 } as const;

const text = (v: string, what: string, max?: number): Cell => {
  const s = toAscii(v);
  if (max !== undefined && s.length > max) throw new PolizaFormatError(`Aspel COI ${what} is ${s.length} characters; at most ${max}: "${s}"`);
  return { t: 'text', v: s };
};
const row = (...cells: Cell[]): Row => {
  const r = cells.slice();
  while (r.length < ASPEL_COLUMNS) r.push(null);
  return r;
};

function cfdiBlock(c: CfdiRef): Row[] {
  return [
    row(null, null, text('INICIO_CFDI', 'marker')),
    row(
      null,
      null,
      text(dmy(c.date), 'CFDI date'),
      c.serie ? text(c.serie, 'CFDI serie') : null,
      c.folio ? text(c.folio, 'CFDI folio') : null,
      c.rfcEmisor ? text(c.rfcEmisor, 'RFC emisor') : null,
      c.rfcReceptor ? text(c.rfcReceptor, 'RFC receptor') : null,
      c.totalMinor !== undefined ? { t: 'amount', v: c.totalMinor } : null,
      text(c.uuid.toUpperCase(), 'CFDI UUID'),
    ),
    row(null, null, text('FIN_CFDI', 'marker')),
  ];
}

/**
 * The grid: two empty rows, then per póliza a header row (A type, B número, C concepto, D day of the
 * month), a partida row per movement (B account as text, C department 0, D concept, E 1, F cargo or
 * G abono), the CFDI block of a movement right after it, and a row with FIN_PARTIDAS in B. COI files
 * carry no month or year: every póliza must be of the same month (one file per month).
 */
export function aspelCoiGrid(polizas: readonly Poliza[], opts: AspelCoiOptions): Row[] {
  if (!/^[A-Za-z]{1,2}$/.test(opts.polizaType)) throw new PolizaFormatError(`Aspel COI tipo de póliza "${opts.polizaType}" is not a 1–2 letter code such as Dr`);
  const months = new Set(polizas.map((p) => p.date.slice(0, 7)));
  if (months.size > 1) throw new PolizaFormatError(`an Aspel COI file carries only the day of the month; these pólizas span ${[...months].join(', ')}: one file per month`);
  const rows: Row[] = [];
  for (let i = 1; i < ASPEL_FIRST_ROW; i++) rows.push(row());
  for (const p of polizas) {
    assertPoliza(p);
    rows.push(row(text(opts.polizaType, 'tipo'), text(String(p.folio), 'número', MAX.numero), text(p.concept, 'concepto', MAX.concept), { t: 'int', v: dayOf(p.date) }));
    for (const m of p.movements) {
      rows.push(
        row(
          null,
          text(m.account, 'cuenta', MAX.account),
          { t: 'int', v: 0 },
          text(m.concept, 'concepto de partida', MAX.concept),
          { t: 'int', v: 1 },
          m.side === 'cargo' ? { t: 'amount', v: m.amountMinor } : null,
          m.side === 'abono' ? { t: 'amount', v: m.amountMinor } : null,
        ),
      );
      for (const c of m.cfdis ?? []) rows.push(...cfdiBlock(c));
    }
    rows.push(row(null, text('FIN_PARTIDAS', 'marker')));
  }
  return rows;
}

const cellText = (c: Cell) => (c === null ? '' : c.t === 'amount' ? decimal2(c.v) : String(c.v));

/** The grid as tab-separated text, CRLF line ends, ASCII; trailing empty cells kept (nine per row). */
export function aspelCoiTsv(polizas: readonly Poliza[], opts: AspelCoiOptions): string {
  return aspelCoiGrid(polizas, opts).map((r) => r.map(cellText).join('\t')).join('\r\n') + '\r\n';
}

/** The grid as an .xlsx workbook (first sheet): text cells stay text (leading zeros, masks), amounts are numbers shown 0.00. */
export async function aspelCoiXlsx(polizas: readonly Poliza[], opts: AspelCoiOptions): Promise<Buffer> {
  const grid = aspelCoiGrid(polizas, opts);
  const wb = new ExcelJS.Workbook();
  wb.creator = 'Orquesta';
  // A fixed date keeps the same file for the same pólizas.
  wb.created = wb.modified = new Date(Date.UTC(2000, 0, 1));
  const ws = wb.addWorksheet('Polizas');
  grid.forEach((r, i) => {
    const xr = ws.getRow(i + 1);
    r.forEach((c, j) => {
      if (c === null) return;
      const cell = xr.getCell(j + 1);
      if (c.t === 'text') {
        cell.value = c.v;
        cell.numFmt = '@';
      } else if (c.t === 'int') cell.value = c.v;
      else {
        cell.value = c.v / 100;
        cell.numFmt = '0.00';
      }
    });
    xr.commit();
  });
  return Buffer.from(await wb.xlsx.writeBuffer());
}
