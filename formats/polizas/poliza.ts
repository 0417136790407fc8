// What a póliza (journal entry for a Mexican accounting program) is, independent of the program:
// a dated header and balanced movements on the tenant's account codes, with the CFDIs it documents.
// Pure: no I/O. The writers (contpaqi.ts, aspel-coi.ts) turn a list of these into the import files.

export interface CfdiRef {
  /** Folio fiscal (TimbreFiscalDigital UUID), 36 characters. */
  uuid: string;
  /** Date of the CFDI, YYYY-MM-DD. */
  date: string;
  serie?: string;
  folio?: string;
  rfcEmisor?: string;
  rfcReceptor?: string;
  totalMinor?: number;
}

export interface PolizaMovement {
  /** The tenant's accounting code (CONTPAQi IdCuenta / COI número de cuenta). */
  account: string;
  side: 'cargo' | 'abono';
  /** Positive integer minor units (centavos). */
  amountMinor: number;
  concept: string;
  reference?: string;
  /** CFDIs tied to this movement (CONTPAQi AM, COI CFDI block after the partida). */
  cfdis?: CfdiRef[];
}

export interface Poliza {
  /** YYYY-MM-DD */
  date: string;
  folio: number;
  concept: string;
  movements: PolizaMovement[];
  /** CFDIs tied to the whole póliza (CONTPAQi AD). */
  cfdis?: CfdiRef[];
}

export class PolizaFormatError extends Error {
  override name = 'PolizaFormatError';
}

const UUID_RE = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Cargos equal abonos, every amount a positive integer, dates and UUIDs well formed. */
export function assertPoliza(p: Poliza): void {
  if (!DATE_RE.test(p.date)) throw new PolizaFormatError(`póliza date ${p.date} is not YYYY-MM-DD`);
  if (!Number.isSafeInteger(p.folio) || p.folio < 0) throw new PolizaFormatError(`póliza folio ${p.folio} is not a non-negative integer`);
  if (!p.movements.length) throw new PolizaFormatError(`póliza of ${p.date} has no movements`);
  let cargos = 0;
  let abonos = 0;
  for (const m of p.movements) {
    if (!Number.isSafeInteger(m.amountMinor) || m.amountMinor <= 0) throw new PolizaFormatError(`movement on ${m.account} of ${p.date}: amount ${m.amountMinor} is not a positive integer of centavos`);
    if (m.side === 'cargo') cargos += m.amountMinor;
    else abonos += m.amountMinor;
    for (const c of m.cfdis ?? []) assertCfdi(c);
  }
  for (const c of p.cfdis ?? []) assertCfdi(c);
  if (cargos !== abonos) throw new PolizaFormatError(`póliza of ${p.date} does not balance: cargos ${cargos} vs abonos ${abonos} centavos`);
}

function assertCfdi(c: CfdiRef): void {
  if (!UUID_RE.test(c.uuid)) throw new PolizaFormatError(`CFDI UUID ${c.uuid} is not a 36-character UUID`);
  if (!DATE_RE.test(c.date)) throw new PolizaFormatError(`CFDI date ${c.date} is not YYYY-MM-DD`);
}

/** Integer centavos as `1234.56` (no float arithmetic, no thousands separator). */
export function decimal2(minor: number): string {
  const neg = minor < 0;
  const a = Math.abs(minor);
  return `${neg ? '-' : ''}${Math.trunc(a / 100)}.${String(a % 100).padStart(2, '0')}`;
}

/**
 * Text for programs that read a Windows code page: accents and ñ folded to ASCII, anything else
 * outside printable ASCII replaced by a space, runs of spaces kept as they are.
 */
export function toAscii(s: string): string {
  return s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]/g, ' ');
}

export const dayOf = (date: string) => Number(DATE_RE.exec(date)![3]);
export const compactDate = (date: string) => date.replace(/-/g, '');
/** YYYY-MM-DD → dd/mm/aaaa */
export const dmy = (date: string) => {
  const [, y, m, d] = DATE_RE.exec(date)!;
  return `${d}/${m}/${y}`;
};
