// RFC (Registro Federal de Contribuyentes), the Mexican tax id, checked with validate-rfc
// (maintained, no dependencies: format, date, forbidden words) plus the rule that ties it to the
// kind of taxpayer: 13 characters for a persona física, 12 for a persona moral. The check digit is
// not enforced (formats/cfdi/receptor.ts builds its receptor checks on this one): SAT has issued RFCs whose homoclave digit does not
// compute (its own test issuer AAA010101AAA is one); whether an RFC exists is a list question
// (SAT's LCO), not a digit question.
import { createRequire } from 'node:module';

// validate-rfc is a CommonJS bundle whose typings declare an ES default export; required as it is
// published, it is the function itself.
const validateRfc = createRequire(import.meta.url)('validate-rfc') as (typeof import('validate-rfc'))['default'];

export type PersonType = 'fisica' | 'moral';

export type RfcCheck = { ok: true; rfc: string; kind: 'fisica' | 'moral' | 'generic' | 'foreign' } | { ok: false; message: string };

const LIB_ERRORS: Record<string, string> = {
  INVALID_FORMAT: 'it is not 3-4 letters, 6 digits of a date and a 3-character homoclave',
  INVALID_DATE: 'its 6 digits are not a valid date (YYMMDD)',
  FORBIDDEN_WORD: 'its first four letters are a word SAT never issues',
};

/** Checks an RFC on its own: answers the normalized RFC (trimmed, upper case) and its kind. */
export function checkRfc(value: string): RfcCheck {
  if (typeof value !== 'string' || !value.trim()) return { ok: false, message: 'The RFC is empty.' };
  const normalized = value.trim().toUpperCase();
  // The library strips any character outside the RFC alphabet before checking; we do not accept
  // such input silently (an RFC with dashes or spaces inside is sent back to be corrected).
  if (!/^[A-ZÑ&0-9]+$/.test(normalized)) return { ok: false, message: `RFC ${normalized} has characters outside A-Z, Ñ, & and digits.` };
  const r = validateRfc(normalized, { omitVerificationDigit: true });
  if (!r.isValid) {
    const why = (r.errors ?? []).map((e: string) => LIB_ERRORS[e] ?? e.toLowerCase()).join('; ');
    return { ok: false, message: `RFC ${normalized} is not valid: ${why || 'rejected'}.` };
  }
  const kind = r.type === 'person' ? 'fisica' : r.type === 'company' ? 'moral' : (r.type as 'generic' | 'foreign');
  return { ok: true, rfc: r.rfc ?? normalized, kind };
}

/**
 * Checks an RFC for a taxpayer of the given kind: valid, not one of SAT's generic RFCs
 * (XAXX010101000 público en general, XEXX010101000 extranjeros), and of the length of its kind.
 */
export function checkRfcFor(value: string, personType: PersonType): RfcCheck {
  const r = checkRfc(value);
  if (!r.ok) return r;
  if (r.kind === 'generic' || r.kind === 'foreign') return { ok: false, message: `RFC ${r.rfc} is SAT's generic RFC for ${r.kind === 'generic' ? 'the general public' : 'foreign residents'}; the taxpayer's own RFC is needed.` };
  if (r.kind !== personType) {
    const want = personType === 'fisica' ? '13 characters (persona física)' : '12 characters (persona moral)';
    return { ok: false, message: `RFC ${r.rfc} has ${r.rfc.length} characters, but person_type ${personType} needs ${want}.` };
  }
  return r;
}
