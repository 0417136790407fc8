// CLABE (Clave Bancaria Estandarizada): 18 digits = bank (3) + plaza (3) + account (11) + a check
// digit computed with the weights 3, 7, 1 over the first 17 (spec: Limits > CLABE;
// payout.invalid_clabe). Validation is clabe-validator's (maintained, typed, no dependencies);
// this module adds the rules we choose on top of it and the SPEI participant code STP needs.
import { clabe as lib } from 'clabe-validator';

export type ClabeProblem = 'length' | 'characters' | 'checksum' | 'bank';

export type ClabeCheck =
  | { ok: true; clabe: string; bankCode: string; bankName: string; institution: string }
  | { ok: false; problem: ClabeProblem; message: string };

/**
 * Checks a CLABE: 18 digits, the 3-7-1 check digit, and a bank code Banxico assigned (the
 * library's catalog). The plaza (digits 4-6) is not required to be in the library's city list:
 * that list is incomplete for digital banks, and SPEI routes by bank and account, not by plaza.
 */
export function checkClabe(value: string): ClabeCheck {
  if (typeof value !== 'string') return { ok: false, problem: 'characters', message: 'The CLABE must be a string of 18 digits.' };
  if (value.length !== 18) return { ok: false, problem: 'length', message: `The CLABE must be exactly 18 digits; got ${value.length} characters.` };
  if (!/^\d{18}$/.test(value)) return { ok: false, problem: 'characters', message: 'The CLABE must contain digits only.' };
  const r = lib.validate(value);
  if (r.error === 'invalid-checksum') {
    return { ok: false, problem: 'checksum', message: `The CLABE's check digit (3-7-1 weighting) is wrong: the last digit should be ${String(r.checksum)}.` };
  }
  const bankCode = value.slice(0, 3);
  // The library answers "N/A" for code 999, which Banxico reserves and no bank uses.
  if (!r.valid.bank || r.tag === 'N/A' || !r.bank) return { ok: false, problem: 'bank', message: `The CLABE's bank code ${bankCode} is not a bank Banxico assigned.` };
  if (!r.ok && r.error !== 'invalid-city') return { ok: false, problem: 'characters', message: `The CLABE is not valid (${r.message}).` };
  return { ok: true, clabe: value, bankCode, bankName: r.bank, institution: institutionOf(bankCode) };
}

export const isValidClabe = (value: string): boolean => checkClabe(value).ok;

/** The check digit of the first 17 digits (3-7-1 weighting). */
export function clabeCheckDigit(first17: string): number {
  const d = lib.computeChecksum(first17);
  if (d === null || first17.length !== 17) throw new Error('clabeCheckDigit takes exactly 17 digits');
  return d;
}

/** A valid CLABE from a bank code (3 digits), plaza (3) and an account number (11). */
export function makeClabe(bank: string, plaza: string, account: string): string {
  const first17 = `${bank}${plaza}${account}`;
  if (!/^\d{17}$/.test(first17)) throw new Error('CLABE parts must be 3 + 3 + 11 digits');
  return first17 + clabeCheckDigit(first17);
}

/**
 * The masked form shown everywhere (responses, logs, events): the bank code and the last four
 * digits, e.g. `646***********0007`. The full CLABE is never shown.
 */
export const maskClabe = (value: string) => `${value.slice(0, 3)}${'*'.repeat(11)}${value.slice(14)}`;

/**
 * The 5-digit SPEI participant code (STP's `institucionContraparte`) of a CLABE bank code.
 * Banxico numbers participants by kind: Banxico itself 2001; development banks (Bancomext 006,
 * Banobras 009, Banjercito 019, Nafin 135, Bansefi/Bienestar 166, Hipotecaria Federal 168) 37xxx;
 * other banks (codes below 600) 40xxx; non-bank participants (600 and up: brokers, SOFOMs, STP 646)
 * 90xxx. Source: the same table as cuenca-mx/clabe-python `clabe/banks.py` (Banxico's CEP list).
 */
export function institutionOf(bankCode: string): string {
  if (!/^\d{3}$/.test(bankCode)) throw new Error(`bank code must be 3 digits, got ${bankCode}`);
  if (bankCode === '001') return '2001';
  if (DEVELOPMENT_BANKS.has(bankCode)) return `37${bankCode}`;
  return Number(bankCode) >= 600 ? `90${bankCode}` : `40${bankCode}`;
}
const DEVELOPMENT_BANKS = new Set(['006', '009', '019', '135', '166', '168']);

/** The short name of a CLABE's bank in clabe-validator's catalog (STP for 646), shown to a payer. */
export function bankTagOf(value: string): string | null {
  const tag = lib.validate(value).tag;
  return tag && tag !== 'N/A' ? tag : null;
}
