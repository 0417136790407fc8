// CONTPAQi Contabilidad: póliza import as fixed-width text (records P, M1, AM, AD).
// Layout and sources: docs/reports.md ("CONTPAQi layout"). Positions are 1-based and inclusive.
// Every field is padded to its width; a value longer than its field is an error, never cut.
import { assertPoliza, compactDate, decimal2, PolizaFormatError, toAscii, type Poliza } from './poliza.js';

export interface ContpaqiOptions {
  /** Number of the tipo de póliza in the company's catalog: 1 Ingresos, 2 Egresos, 3 Diario (defaults). */
  polizaType: number;
}

type Align = 'left' | 'right';
export interface Field {
  name: string;
  /** first column, 1-based */
  col: number;
  width: number;
  align: Align;
  /** false: inferred, not seen in a public file (docs/reports.md says which source). */
  confirmed: boolean;
}

/**
 * The one table of positions. P and M1 follow the text generator observed in public code and the
 * legend of CONTPAQi's own exports; AM/AD text positions are inferred (token, space, UUID at col 4),
 * the only unconfirmed part.
 */
export const CONTPAQI_LAYOUT = {
  P: [
    { name: 'token', col: 1, width: 1, align: 'left', confirmed: true },
    { name: 'Fecha', col: 4, width: 8, align: 'left', confirmed: true },
    { name: 'TipoPol', col: 13, width: 4, align: 'right', confirmed: true },
    { name: 'Folio', col: 18, width: 9, align: 'right', confirmed: true },
    { name: 'Clase', col: 28, width: 1, align: 'left', confirmed: true },
    { name: 'IdDiario', col: 30, width: 10, align: 'left', confirmed: true },
    { name: 'Concepto', col: 41, width: 100, align: 'left', confirmed: true },
    { name: 'SistOrig', col: 142, width: 2, align: 'left', confirmed: true },
    { name: 'Impresa', col: 145, width: 1, align: 'left', confirmed: true },
    { name: 'Ajuste', col: 147, width: 1, align: 'left', confirmed: true },
  ],
  M1: [
    { name: 'token', col: 1, width: 2, align: 'left', confirmed: true },
    { name: 'IdCuenta', col: 4, width: 30, align: 'left', confirmed: true },
    { name: 'Referencia', col: 35, width: 20, align: 'left', confirmed: true },
    { name: 'TipoMovto', col: 56, width: 1, align: 'left', confirmed: true },
    { name: 'Importe', col: 58, width: 20, align: 'left', confirmed: true },
    { name: 'IdDiario', col: 79, width: 10, align: 'left', confirmed: true },
    { name: 'ImporteME', col: 90, width: 20, align: 'left', confirmed: true },
    { name: 'Concepto', col: 111, width: 100, align: 'left', confirmed: true },
    { name: 'IdSegNeg', col: 212, width: 4, align: 'right', confirmed: true },
  ],
  AM: [
    { name: 'token', col: 1, width: 2, align: 'left', confirmed: true },
    { name: 'UUID', col: 4, width: 36, align: 'left', confirmed: false },
  ],
  AD: [
    { name: 'token', col: 1, width: 2, align: 'left', confirmed: true },
    { name: 'UUID', col: 4, width: 36, align: 'left', confirmed: false },
  ],
} as const satisfies Record<string, readonly Field[]>;

/** Line lengths as the observed generator writes them (one blank after the last field). */
const LINE_LENGTH = { P: 148, M1: 216, AM: 39, AD: 39 } as const;

type Rec = keyof typeof CONTPAQI_LAYOUT;

/** One record: values by field name, placed at their columns. */
export function record(rec: Rec, values: Record<string, string>): string {
  const line = Array<string>(LINE_LENGTH[rec]).fill(' ');
  for (const f of CONTPAQI_LAYOUT[rec] as readonly Field[]) {
    const v = toAscii(values[f.name] ?? '');
    if (v.length > f.width) throw new PolizaFormatError(`CONTPAQi ${rec}.${f.name} is ${v.length} characters; the field holds ${f.width}: "${v}"`);
    const padded = f.align === 'right' ? v.padStart(f.width) : v.padEnd(f.width);
    for (let i = 0; i < f.width; i++) line[f.col - 1 + i] = padded[i];
  }
  return line.join('');
}

/** Reads a record back into its fields (trimmed): what the tests use to check a file field by field. */
export function parseRecord(line: string): { rec: Rec; fields: Record<string, string> } {
  const token = line.slice(0, 2).trim() as Rec;
  const layout = CONTPAQI_LAYOUT[token] as readonly Field[] | undefined;
  if (!layout) throw new PolizaFormatError(`unknown CONTPAQi record "${token}"`);
  const fields: Record<string, string> = {};
  for (const f of layout) fields[f.name] = line.slice(f.col - 1, f.col - 1 + f.width).trim();
  return { rec: token, fields };
}

/**
 * The import file: for each póliza a P record, its M1 records (each followed by an AM per CFDI of
 * that movement), then an AD per CFDI of the póliza. CRLF line ends (the program runs on Windows),
 * ASCII only (accents folded), so the bytes are the same in Windows-1252.
 */
export function contpaqiText(polizas: readonly Poliza[], opts: ContpaqiOptions): string {
  if (!Number.isInteger(opts.polizaType) || opts.polizaType < 1 || opts.polizaType > 9999) throw new PolizaFormatError(`CONTPAQi tipo de póliza ${opts.polizaType} is not 1..9999`);
  const out: string[] = [];
  for (const p of polizas) {
    assertPoliza(p);
    out.push(
      record('P', {
        token: 'P',
        Fecha: compactDate(p.date),
        TipoPol: String(opts.polizaType),
        Folio: String(p.folio),
        Clase: '1',
        IdDiario: '0',
        Concepto: p.concept,
        SistOrig: '11',
        Impresa: '0',
        Ajuste: '0',
      }),
    );
    for (const m of p.movements) {
      out.push(
        record('M1', {
          token: 'M1',
          IdCuenta: m.account,
          Referencia: m.reference ?? '',
          TipoMovto: m.side === 'cargo' ? '0' : '1',
          Importe: decimal2(m.amountMinor),
          IdDiario: '0',
          ImporteME: '0.00',
          Concepto: m.concept,
          IdSegNeg: '',
        }),
      );
      for (const c of m.cfdis ?? []) out.push(record('AM', { token: 'AM', UUID: c.uuid.toUpperCase() }));
    }
    for (const c of p.cfdis ?? []) out.push(record('AD', { token: 'AD', UUID: c.uuid.toUpperCase() }));
  }
  return out.length ? out.join('\r\n') + '\r\n' : '';
}
