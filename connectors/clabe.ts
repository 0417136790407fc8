// CLABE (Clave Bancaria Estandarizada): 18 digits, the last a check digit computed with the
// weights 3, 7, 1 repeated over the first 17 (spec: Limits > CLABE; payout.invalid_clabe).

const WEIGHTS = [3, 7, 1];

export function clabeCheckDigit(first17: string): number {
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += ((first17.charCodeAt(i) - 48) * WEIGHTS[i % 3]) % 10;
  return (10 - (sum % 10)) % 10;
}

export function isValidClabe(clabe: string): boolean {
  return /^\d{18}$/.test(clabe) && clabeCheckDigit(clabe.slice(0, 17)) === Number(clabe[17]);
}

/** A valid CLABE from a bank code (3 digits), plaza (3) and an account number (11). */
export function makeClabe(bank: string, plaza: string, account: string): string {
  const first17 = `${bank}${plaza}${account}`;
  if (!/^\d{17}$/.test(first17)) throw new Error('CLABE parts must be 3 + 3 + 11 digits');
  return first17 + clabeCheckDigit(first17);
}

/** `0021 **** **** **12 34`-style masking: the full CLABE is never shown. */
export const maskClabe = (clabe: string) => `${clabe.slice(0, 3)}${'*'.repeat(11)}${clabe.slice(14)}`;
