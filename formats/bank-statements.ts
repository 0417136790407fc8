// Mexican bank statement files (CSV/TXT exports of business banking): decoding, delimiter, the
// header row, the presets of BBVA México, Banorte and Santander México, dates and amounts as the
// banks print them. Pure: bytes in, lines or a StatementParseError (with the file's line number)
// out. docs/bank-statements.md has the layouts and which parts public sources confirm.
//
// CSV splitting is csv-parse's (sync API; each record is handled in `on_record` and dropped, so only
// the normalized lines are kept, not the file's cells).
import { parse } from 'csv-parse/sync';

export const PRESETS = ['bbva', 'banorte', 'santander'] as const;
export type Preset = (typeof PRESETS)[number];

/** Explicit 0-based columns (service-spec: required without a preset). */
export interface ColumnMapping {
  date: number;
  description: number;
  credit: number;
  debit: number;
  reference?: number;
}

export type Mapping = { kind: 'preset'; preset: Preset; reference?: number } | ({ kind: 'columns' } & ColumnMapping);

export interface ParsedLine {
  /** Line number in the file (1-based) where the row ends. */
  row: number;
  /** yyyy-MM-dd */
  valueDate: string;
  description: string;
  reference: string | null;
  creditMinor: number;
  debitMinor: number;
}

export interface ParsedStatement {
  lines: ParsedLine[];
  encoding: 'utf-8' | 'windows-1252';
  delimiter: string;
  /** Line number of the header row (0 when the file has none). */
  headerRow: number;
}

export class StatementParseError extends Error {
  override name = 'StatementParseError';
  constructor(
    readonly row: number,
    readonly reason: string,
  ) {
    super(row > 0 ? `Row ${row}: ${reason}` : reason);
  }
}

// ---------------------------------------------------------------------------------------------
// Text

/**
 * The file's text: a UTF-8 BOM is dropped and the rest read as UTF-8; bytes that are not valid
 * UTF-8 mean a Windows-1252 export (what Mexican banks' Windows tools write), decoded as such.
 */
export function decodeStatement(bytes: Uint8Array): { text: string; encoding: 'utf-8' | 'windows-1252' } {
  let b = bytes;
  if (b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) b = b.subarray(3);
  try {
    return { text: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(b), encoding: 'utf-8' };
  } catch {
    // Node's 'windows-1252' decoder is ISO-8859-1 for 0x80-0x9F (C1 controls): those bytes are
    // mapped to Windows-1252's characters (€, ‘ ’ “ ” – — …) here.
    const text = new TextDecoder('windows-1252').decode(b);
    return { text: /[\u0080-\u009f]/.test(text) ? text.replace(/[\u0080-\u009f]/g, (c) => CP1252_80_9F[c.charCodeAt(0) - 0x80] || c) : text, encoding: 'windows-1252' };
  }
}

/** Windows-1252 0x80-0x9F (empty: undefined in the code page, kept as is). */
const CP1252_80_9F = ['€', '', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '', 'Ž', '', '', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '', 'ž', 'Ÿ'];

/** A header cell for comparison: lower case, no accents, no quotes/apostrophes, single spaces. */
export function normHeader(s: string): string {
  return s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/^['"\s]+|['"\s]+$/g, '')
    .replace(/\s+/g, ' ')
    .toLowerCase();
}

/** A text cell: leading apostrophe (Excel's "text" mark, Santander) and outer spaces removed, inner runs of spaces collapsed. */
export function cleanText(s: string | undefined): string {
  // control characters (NUL included: Postgres text cannot hold it) become spaces
  // eslint-disable-next-line no-control-regex
  return (s ?? '').replace(/[\u0000-\u001f\u007f]/g, ' ').replace(/^\s*'/, '').replace(/\s+/g, ' ').trim();
}

// ---------------------------------------------------------------------------------------------
// Dates and amounts

const MONTHS: Record<string, number> = {
  ene: 1, feb: 2, mar: 3, abr: 4, may: 5, jun: 6, jul: 7, ago: 8, sep: 9, set: 9, oct: 10, nov: 11, dic: 12,
};

function ymd(y: number, m: number, d: number): string | null {
  if (m < 1 || m > 12 || d < 1 || y < 1900 || y > 2999) return null;
  const dt = new Date(Date.UTC(y, m - 1, d));
  if (dt.getUTCMonth() !== m - 1 || dt.getUTCDate() !== d) return null;
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/**
 * A value date as banks print it: `dd/mm/yyyy`, `dd-mm-yyyy`, `dd.mm.yyyy`, `yyyy-mm-dd`,
 * `dd/mmm./yyyy` with a Spanish month (`22/jun./2026`, Banorte), `ddmmyyyy` (Santander's
 * `'02012026`), optionally followed by a time. Null when it is none of them or not a real day.
 */
export function parseBankDate(raw: string): string | null {
  const s = cleanText(raw).replace(/^"|"$/g, '').replace(/[ T]\d{1,2}:\d{2}(:\d{2})?(\.\d+)?$/, '').trim().toLowerCase();
  let m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (m) return ymd(+m[1], +m[2], +m[3]);
  m = /^(\d{1,2})([/.-])(\d{1,2})\2(\d{4})$/.exec(s);
  if (m) return ymd(+m[4], +m[3], +m[1]);
  m = /^(\d{1,2})[/-]([a-z]{3,4})\.?[/-](\d{2}|\d{4})$/.exec(s);
  if (m) {
    const mon = MONTHS[m[2].slice(0, 3)];
    if (!mon || (m[2].length === 4 && m[2] !== 'sept')) return null;
    const y = m[3].length === 2 ? 2000 + +m[3] : +m[3];
    return ymd(y, mon, +m[1]);
  }
  m = /^(\d{2})(\d{2})(\d{4})$/.exec(s);
  if (m) return ymd(+m[3], +m[2], +m[1]);
  return null;
}

/**
 * An unsigned amount in minor units: `1,234.50`, `$1,234.50`, `$ 1 234.50`, `'1234.5`, `1234`.
 * Returns null for an empty cell (also a bare `-`, Banorte's empty, and zero), NaN when it is not
 * an amount (letters, a negative number, more than two decimals).
 */
export function parseBankAmount(raw: string | undefined): number | null {
  let s = (raw ?? '').trim().replace(/^'/, '').replace(/^"|"$/g, '').trim();
  if (s === '' || s === '-') return null;
  s = s.replace(/^mxn\s*|\s*mxn$/i, '').replace(/\$/g, '').replace(/[\s\u00a0]/g, '');
  // thousands separators: commas followed by exactly three digits
  if (/^\d{1,3}(,\d{3})+(\.\d+)?$/.test(s)) s = s.replace(/,/g, '');
  const m = /^(\d+)(?:\.(\d{1,2}))?$/.exec(s);
  if (!m) return NaN;
  const minor = Number(m[1]) * 100 + Number((m[2] ?? '0').padEnd(2, '0'));
  if (!Number.isSafeInteger(minor)) return NaN;
  return minor === 0 ? null : minor;
}

// ---------------------------------------------------------------------------------------------
// Presets (parse by header name; the positions are the fallback when has_header=false)

type Role = 'date' | 'description' | 'credit' | 'debit' | 'reference' | 'detail' | 'sign' | 'amount';

interface PresetDef {
  label: string;
  /** Header names per role, normalized (normHeader), in order of preference. */
  names: Partial<Record<Role, string[]>>;
  /** Roles the header must have for the row to be the header. */
  required: Role[];
  /** Positions when the file has no header row. */
  positions: Partial<Record<Role, number>>;
  /** BBVA: the reference is the text after the first `/` of `Concepto / Referencia`. */
  referenceInDescription?: boolean;
  /** Santander: one unsigned amount and a `+`/`-` indicator column. */
  signed?: boolean;
}

export const PRESET_DEFS: Record<Preset, PresetDef> = {
  bbva: {
    label: 'BBVA (Día, Concepto / Referencia, cargo, Abono, Saldo)',
    names: { date: ['dia', 'fecha', 'fecha operacion'], description: ['concepto / referencia', 'concepto/referencia', 'concepto'], debit: ['cargo', 'cargos'], credit: ['abono', 'abonos'], reference: ['referencia'] },
    required: ['date', 'description', 'credit', 'debit'],
    positions: { date: 0, description: 1, debit: 2, credit: 3 },
    referenceInDescription: true,
  },
  banorte: {
    label: 'Banorte (FECHA, REFERENCIA, DESCRIPCIÓN, DEPÓSITOS, RETIROS, SALDO)',
    names: { date: ['fecha', 'fecha de operacion'], reference: ['referencia'], description: ['descripcion'], credit: ['depositos'], debit: ['retiros'], detail: ['descripcion detallada'] },
    required: ['date', 'description', 'credit', 'debit'],
    positions: { date: 0, reference: 1, description: 2, credit: 5, debit: 6, detail: 9 },
  },
  santander: {
    label: 'Santander (Cuenta, Fecha, Hora, Sucursal, Descripcion, Cargo/Abono, Importe, Saldo, Referencia, Concepto)',
    names: { date: ['fecha'], description: ['descripcion'], sign: ['cargo/abono', 'cargo / abono'], amount: ['importe'], reference: ['referencia'], detail: ['concepto'] },
    required: ['date', 'description', 'sign', 'amount'],
    positions: { date: 1, description: 4, sign: 5, amount: 6, reference: 8, detail: 9 },
    signed: true,
  },
};

/** How many rows from the top are searched for a preset's header (title rows, account data…). */
const HEADER_SEARCH_ROWS = 30;

function findHeader(def: PresetDef, row: string[]): Partial<Record<Role, number>> | null {
  const cells = row.map(normHeader);
  const at: Partial<Record<Role, number>> = {};
  for (const [role, names] of Object.entries(def.names) as Array<[Role, string[]]>) {
    for (const n of names) {
      const i = cells.indexOf(n);
      if (i >= 0) {
        at[role] = i;
        break;
      }
    }
  }
  return def.required.every((r) => at[r] !== undefined) ? at : null;
}

// ---------------------------------------------------------------------------------------------
// Parsing

const DELIMITERS = [',', ';', '\t', '|'];

type Rec = { record: string[]; info: { lines: number } };

/**
 * Runs csv-parse over the text; each record goes to `onRecord` with the file line where it ends
 * (csv-parse's context, not `info: true`, which copies an info object per record: measured 52 MiB
 * of peak RSS against 15 on a 5 MiB file) and is then dropped.
 */
function parseRows(text: string | Buffer, delimiter: string, opts: { toLine?: number; fromLine?: number }, onRecord: (cells: string[], line: number) => void): void {
  const run = parse as unknown as (input: string | Buffer, options: object) => unknown[];
  run(text, {
    delimiter,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    ...(opts.toLine ? { to_line: opts.toLine } : {}),
    ...(opts.fromLine ? { from_line: opts.fromLine } : {}),
    on_record: (record: string[], ctx: { lines: number }) => {
      onRecord(record, ctx.lines);
      return null;
    },
  });
}

/** The top rows under a delimiter, or null when csv-parse cannot read them with it. */
function sniff(text: string, delimiter: string): Rec[] | null {
  // Only the top of the file: csv-parse would scan the rest even past `to_line`.
  const cut = text.length > 65_536 ? text.slice(0, text.lastIndexOf('\n', 65_536) + 1 || 65_536) : text;
  text = cut;
  try {
    const rows: Rec[] = [];
    parseRows(text, delimiter, { toLine: HEADER_SEARCH_ROWS + 10 }, (record, lines) => rows.push({ record, info: { lines } }));
    return rows;
  } catch {
    return null;
  }
}

/** The delimiter whose top rows have the most columns, consistently (the modal count, weighted by how often it occurs). */
function guessDelimiter(text: string): string {
  let best = ',';
  let bestScore = 0;
  for (const d of DELIMITERS) {
    const rows = sniff(text, d);
    if (!rows) continue;
    const counts = new Map<number, number>();
    for (const r of rows) if (r.record.length > 1) counts.set(r.record.length, (counts.get(r.record.length) ?? 0) + 1);
    for (const [cols, n] of counts) {
      const score = n * Math.log2(cols + 1);
      if (score > bestScore) {
        bestScore = score;
        best = d;
      }
    }
  }
  return best;
}

interface Layout {
  delimiter: string;
  /** Line of the header row (0: none); data starts after it. */
  headerRow: number;
  at: Partial<Record<Role, number>>;
  referenceInDescription: boolean;
  signed: boolean;
}

function layoutFor(text: string, mapping: Mapping, hasHeader: boolean): Layout {
  if (mapping.kind === 'preset') {
    const def = PRESET_DEFS[mapping.preset];
    if (hasHeader) {
      for (const d of DELIMITERS) {
        const rows = sniff(text, d);
        if (!rows) continue;
        for (const r of rows.slice(0, HEADER_SEARCH_ROWS)) {
          const at = findHeader(def, r.record);
          if (at) {
            if (mapping.reference !== undefined) at.reference = mapping.reference;
            return { delimiter: d, headerRow: r.info.lines, at, referenceInDescription: !!def.referenceInDescription && at.reference === undefined, signed: !!def.signed };
          }
        }
      }
      throw new StatementParseError(0, `The header row of the ${mapping.preset} layout, ${def.label}, is not in the first ${HEADER_SEARCH_ROWS} rows of the file (searched with , ; tab and | as delimiters). Check the bank and the export, or send has_header=false for a file without a header (the preset's column order is then used).`);
    }
    const at = { ...def.positions };
    if (mapping.reference !== undefined) at.reference = mapping.reference;
    return { delimiter: guessDelimiter(text), headerRow: 0, at, referenceInDescription: !!def.referenceInDescription && at.reference === undefined, signed: !!def.signed };
  }
  const delimiter = guessDelimiter(text);
  const at: Partial<Record<Role, number>> = { date: mapping.date, description: mapping.description, credit: mapping.credit, debit: mapping.debit, reference: mapping.reference };
  let headerRow = 0;
  if (hasHeader) {
    // The header is the first row with a name in each mapped column: rows above it (title, account
    // number, blank separators) are what some exports put before the table.
    const cols = [mapping.date, mapping.description, mapping.credit, mapping.debit];
    const rows = sniff(text, delimiter) ?? [];
    const header = rows.slice(0, HEADER_SEARCH_ROWS).find((r) => cols.every((i) => (r.record[i] ?? '').trim() !== ''));
    headerRow = header ? header.info.lines : rows[0]?.info.lines ?? 1;
  }
  return { delimiter, headerRow, at, referenceInDescription: false, signed: false };
}

const MAX_DESCRIPTION = 500;
const MAX_REFERENCE = 120;

/** Parses a statement file. Throws StatementParseError naming the row and the reason. */
export function parseStatement(bytes: Uint8Array, mapping: Mapping, hasHeader: boolean): ParsedStatement {
  const { text, encoding } = decodeStatement(bytes);
  if (text.trim() === '') throw new StatementParseError(0, 'The file is empty: it has no rows.');
  const layout = layoutFor(text, mapping, hasHeader);
  const { at } = layout;
  const lines: ParsedLine[] = [];
  let failure: StatementParseError | undefined;
  const cell = (cells: string[], i: number | undefined) => (i === undefined ? undefined : cells[i]);
  // the row width the mapped columns need (the reference and detail columns may be missing)
  const width = Math.max(...(Object.entries(at).filter(([role, i]) => i !== undefined && role !== 'detail' && role !== 'reference').map(([, i]) => i as number))) + 1;
  const onRecord = (cells: string[], line: number) => {
    if (failure) return;
    if (cells.every((c) => c.trim() === '')) return;
    const fail = (reason: string) => {
      failure = new StatementParseError(line, reason);
    };
    const rawDate = cleanText(cell(cells, at.date));
    let credit: number | null;
    let debit: number | null;
    let creditRaw: string;
    let debitRaw: string;
    if (layout.signed) {
      const sign = cleanText(cell(cells, at.sign));
      const amountRaw = cleanText(cell(cells, at.amount));
      const amount = parseBankAmount(amountRaw);
      if (rawDate === '' && amount === null && sign === '') return continuation(cells);
      if (cells.length < width) return fail(`it has ${cells.length} columns; the layout needs ${width}.`);
      if (Number.isNaN(amount)) return fail(`invalid amount ${JSON.stringify(amountRaw)} in column ${at.amount} (expected digits with an optional "$", thousands "," and up to two decimals after ".").`);
      if (sign !== '+' && sign !== '-') {
        if (amount === null) return fail('neither a credit nor a debit: the amount is empty.');
        return fail(`invalid amount sign ${JSON.stringify(sign)} in column ${at.sign} (Cargo/Abono must be "+" for a credit or "-" for a debit).`);
      }
      if (amount === null) return fail('neither a credit nor a debit: the amount is empty.');
      credit = sign === '+' ? amount : null;
      debit = sign === '-' ? amount : null;
      creditRaw = debitRaw = amountRaw;
    } else {
      creditRaw = cleanText(cell(cells, at.credit));
      debitRaw = cleanText(cell(cells, at.debit));
      credit = parseBankAmount(creditRaw);
      debit = parseBankAmount(debitRaw);
      if (rawDate === '' && credit === null && debit === null) return continuation(cells);
      if (cells.length < width) return fail(`it has ${cells.length} columns; the mapping needs ${width} (column ${width - 1} is missing). Check the delimiter and the column numbers.`);
    }
    const valueDate = parseBankDate(rawDate);
    if (!valueDate) return fail(`invalid date ${JSON.stringify(rawDate)} in column ${at.date} (expected dd/mm/yyyy, dd-mm-yyyy, yyyy-mm-dd, dd/mmm/yyyy or ddmmyyyy).`);
    if (Number.isNaN(credit)) return fail(`invalid amount ${JSON.stringify(creditRaw)} in the credit column ${at.credit} (expected digits with an optional "$", thousands "," and up to two decimals after ".").`);
    if (Number.isNaN(debit)) return fail(`invalid amount ${JSON.stringify(debitRaw)} in the debit column ${at.debit} (expected digits with an optional "$", thousands "," and up to two decimals after ".").`);
    if (credit !== null && debit !== null) return fail(`both a credit (${creditRaw}) and a debit (${debitRaw}); a movement is one or the other.`);
    if (credit === null && debit === null) return fail('neither a credit nor a debit: both amount columns are empty or zero.');
    let description = cleanText(cell(cells, at.description));
    let reference: string | null = null;
    if (layout.referenceInDescription) {
      const slash = description.indexOf('/');
      if (slash >= 0) {
        // The reference is the first word after the first `/`; the words after it are concept text.
        const after = cleanText(description.slice(slash + 1));
        const sp = after.indexOf(' ');
        reference = (sp < 0 ? after : after.slice(0, sp)) || null;
        description = cleanText(`${description.slice(0, slash)}${sp < 0 ? '' : ` ${after.slice(sp + 1)}`}`);
      }
    } else if (at.reference !== undefined) {
      reference = cleanText(cell(cells, at.reference)) || null;
    }
    if (reference !== null && /^0+$/.test(reference)) reference = null; // Santander: all zeros = no reference
    const detail = cleanText(cell(cells, at.detail));
    if (detail) description = description ? `${description} | ${detail}` : detail;
    lines.push({
      row: line,
      valueDate,
      description: description.slice(0, MAX_DESCRIPTION),
      reference: reference ? reference.slice(0, MAX_REFERENCE) : null,
      creditMinor: credit ?? 0,
      debitMinor: debit ?? 0,
    });
  };
  /** A row with no date and no amount continues the previous movement's description (BBVA, Banorte multi-line concepts). */
  function continuation(cells: string[]) {
    const prev = lines[lines.length - 1];
    const extra = cleanText(cell(cells, at.description));
    if (prev && extra) prev.description = `${prev.description} ${extra}`.slice(0, MAX_DESCRIPTION);
  }
  try {
    // UTF-8 bytes go to csv-parse as they are (a string would be converted back to a Buffer).
    const input = encoding === 'utf-8' ? (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? Buffer.from(bytes.buffer, bytes.byteOffset + 3, bytes.length - 3) : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)) : text;
    parseRows(input, layout.delimiter, { fromLine: layout.headerRow + 1 }, onRecord);
  } catch (e) {
    if (failure) throw failure;
    const line = (e as { lines?: number }).lines ?? 0;
    throw new StatementParseError(line, `the file cannot be read as delimited text (${(e as Error).message}).`);
  }
  if (failure) throw failure;
  // A period without movements is a statement too (decisions §7): its header alone imports with lines_total 0.
  return { lines, encoding, delimiter: layout.delimiter, headerRow: layout.headerRow };
}
