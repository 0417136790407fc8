// The automatic verifier of an onboarding application: pure functions, no I/O (the list lookup
// is done by the caller and its answer passed in). spec: States > onboarding_application (submit
// runs completeness, RFC/CLABE format and list checks synchronously); decisions.md §6 (submit
// needs `rfc` and `clabe` besides the creation fields and the four documents; missing fields or
// documents are 400 errors and leave the application as it was; a malformed RFC or CLABE
// resolves to `needs_info` with `status_reason`). A list match resolves to `rejected`.
import { checkClabe } from '../formats/clabe.js';
import { checkRfcFor, type PersonType } from '../formats/rfc.js';
import type { Verdict } from '../machines/onboarding-application.js';
import type { ListMatch } from '../connectors/taxpayer-lists.js';

/** Name recorded in `resolved_by` when the automatic verifier resolved the application. */
export const AUTOMATIC_VERIFIER = 'automatic_verifier';
/** Name recorded in `resolved_by` when an operator resolved it (operator API, decisions.md §2). */
export const OPERATOR = 'operator';

export const REQUIRED_FIELDS = ['legal_name', 'person_type', 'contact_email', 'rfc', 'clabe'] as const;
export const DOCUMENT_TYPES = ['ine', 'comprobante_domicilio', 'constancia_fiscal', 'caratula_estado_cuenta'] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

export interface ApplicationFacts {
  legal_name?: string | null;
  person_type?: string | null;
  contact_email?: string | null;
  rfc?: string | null;
  /** The full CLABE (decrypted by the caller for the check; never shown). */
  clabe?: string | null;
  documents: ReadonlyArray<{ document_type: string }>;
}

export type Completeness =
  | { ok: true }
  | { ok: false; code: 'onboarding_application.missing_fields'; missing: string[]; message: string }
  | { ok: false; code: 'onboarding_application.missing_documents'; missing: string[]; message: string };

/** Missing fields first (the message lists them), then missing documents. */
export function completeness(app: ApplicationFacts): Completeness {
  const missing = REQUIRED_FIELDS.filter((f) => {
    const v = app[f];
    return v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
  });
  if (missing.length) {
    return { ok: false, code: 'onboarding_application.missing_fields', missing: [...missing], message: `Submit needs every field; missing: ${missing.join(', ')}. Add them with PATCH and submit again.` };
  }
  const have = new Set(app.documents.map((d) => d.document_type));
  const docs = DOCUMENT_TYPES.filter((t) => !have.has(t));
  if (docs.length) {
    return { ok: false, code: 'onboarding_application.missing_documents', missing: [...docs], message: `Submit needs the four documents; missing: ${docs.join(', ')}.` };
  }
  return { ok: true };
}

export type FormatCheck = { ok: true; rfc: string } | { ok: false; reason: string };

/** RFC (consistent with person_type) and CLABE formats; every problem named in one reason. */
export function formatCheck(app: ApplicationFacts & { person_type: PersonType; rfc: string; clabe: string }): FormatCheck {
  const problems: string[] = [];
  const rfc = checkRfcFor(app.rfc, app.person_type);
  if (!rfc.ok) problems.push(rfc.message);
  const clabe = checkClabe(app.clabe);
  if (!clabe.ok) problems.push(clabe.message);
  return rfc.ok && !problems.length ? { ok: true, rfc: rfc.rfc } : { ok: false, reason: problems.join(' ') };
}

/**
 * The verdict of a complete application: `needs_info` on a malformed RFC or CLABE, `rejected` on a
 * list match of its (well-formed) RFC, otherwise `approved`. `listMatch` is the caller's lookup of
 * the normalized RFC; it is ignored when the formats already failed.
 */
export function verdictOf(app: ApplicationFacts & { person_type: PersonType; rfc: string; clabe: string }, listMatch: ListMatch | null): Verdict {
  const f = formatCheck(app);
  if (!f.ok) return { result: 'needs_info', reason: f.reason };
  if (listMatch) return { result: 'rejected', reason: `RFC ${f.rfc} appears on ${listMatch.list}: ${listMatch.reason}` };
  return { result: 'approved' };
}
