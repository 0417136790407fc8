// The billers catalog (global, decisions.md §5) and each biller's reference format. Pure.
// cfe: 12-digit service number; telmex: the 10-digit phone line; izzi: 8 to 10-digit account;
// agua_cdmx: 16-digit account (decisions §5: 16 digits is the whole rule; no check digit). Ours
// where the decisions are silent: the categories and the labels (docs/billers.md). A biller whose
// own material documents a check digit can declare `checkDigit`; none does today.

export interface BillerInfo {
  code: string;
  name: string;
  category: 'electricity' | 'telecom' | 'water';
  reference_label: string;
  active: boolean;
  /** Accepted reference lengths (digits only). */
  lengths: readonly number[];
  checkDigit?: 'luhn';
}

export const BILLERS: readonly BillerInfo[] = [
  { code: 'cfe', name: 'CFE (Comisión Federal de Electricidad)', category: 'electricity', reference_label: 'Número de servicio (12 dígitos)', active: true, lengths: [12] },
  { code: 'telmex', name: 'Telmex', category: 'telecom', reference_label: 'Número telefónico a 10 dígitos', active: true, lengths: [10] },
  { code: 'izzi', name: 'izzi', category: 'telecom', reference_label: 'Número de cuenta (8 a 10 dígitos)', active: true, lengths: [8, 9, 10] },
  { code: 'agua_cdmx', name: 'Agua CDMX (SACMEX)', category: 'water', reference_label: 'Número de cuenta (16 dígitos)', active: true, lengths: [16] },
];

export const billerByCode = (code: string) => BILLERS.find((b) => b.code === code);

/** Luhn check over a digit string (the last digit is the check digit). */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Why a reference does not have the biller's format, or undefined when it has. */
export function referenceProblem(b: BillerInfo, reference: string): string | undefined {
  if (!/^\d+$/.test(reference)) return `A ${b.code} reference has digits only.`;
  if (!b.lengths.includes(reference.length)) {
    const want = b.lengths.length === 1 ? `${b.lengths[0]}` : `${b.lengths[0]} to ${b.lengths[b.lengths.length - 1]}`;
    return `A ${b.code} reference has ${want} digits (got ${reference.length}).`;
  }
  if (b.checkDigit === 'luhn' && !luhnValid(reference)) return `The ${b.code} reference has a wrong check digit (Luhn).`;
  return undefined;
}

export const billerView = (b: BillerInfo) => ({ object: 'biller' as const, code: b.code, name: b.name, category: b.category, reference_label: b.reference_label, active: b.active });
