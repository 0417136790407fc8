// RFC and receptor checks for CFDI. The RFC's form is checked once for the whole service, in
// formats/rfc.ts (validate-rfc; check digit not enforced: SAT has issued RFCs whose homoclave digit
// does not compute, and a PAC validates the RFC against SAT's list, not against the digit).
import { checkRfc as checkRfcForm } from '../rfc.js';
import { REGIMENES, USOS, type Persona } from './catalogs.js';

export const RFC_PUBLICO_GENERAL = 'XAXX010101000';
export const RFC_EXTRANJERO = 'XEXX010101000';
export const NOMBRE_PUBLICO_GENERAL = 'PUBLICO EN GENERAL';

export interface RfcCheck {
  ok: boolean;
  rfc: string;
  persona?: Persona;
  generico?: 'publico' | 'extranjero';
  reason?: string;
}

/** Upper-cases and trims, then checks the form (formats/rfc.ts: validate-rfc, check digit not enforced). */
export function checkRfc(input: string): RfcCheck {
  const rfc = input.trim().toUpperCase();
  const r = checkRfcForm(input);
  if (!r.ok) return { ok: false, rfc, reason: r.message.replace(/^RFC \S+ (is not valid: )?/, '').replace(/\.$/, '') };
  if (r.kind === 'generic') return { ok: true, rfc: r.rfc, persona: 'fisica', generico: 'publico' };
  if (r.kind === 'foreign') return { ok: true, rfc: r.rfc, persona: 'fisica', generico: 'extranjero' };
  return { ok: true, rfc: r.rfc, persona: r.kind };
}

export interface ReceptorInput {
  rfc: string;
  nombre: string;
  uso_cfdi: string;
  regimen_fiscal: string;
  cp: string;
}

export type ReceptorProblem = { code: 'invalid_receptor' | 'receptor_incoherente'; message: string };

/** Names compare as SAT compares them: upper case, single spaces. */
export const normalizarNombre = (s: string) => s.trim().replace(/\s+/g, ' ').toUpperCase();

/**
 * Checks a receptor and returns it normalized (RFC and name upper-cased, spaces collapsed), or the
 * problem. Generic RFCs (CFDI 4.0, Anexo 20 guide for XAXX010101000 / XEXX010101000): nombre
 * "PUBLICO EN GENERAL", RegimenFiscalReceptor 616, UsoCFDI S01 (service-spec: `invoice.receptor_incoherente`
 * otherwise); their DomicilioFiscalReceptor must be the issuer's LugarExpedicion, which the document
 * builder writes (the caller's cp is replaced, see docs/invoices.md).
 */
export function checkReceptor(r: ReceptorInput): { ok: true; receptor: ReceptorInput; generico?: 'publico' | 'extranjero' } | { ok: false; problem: ReceptorProblem } {
  const bad = (message: string): { ok: false; problem: ReceptorProblem } => ({ ok: false, problem: { code: 'invalid_receptor', message } });
  const rfc = checkRfc(r.rfc);
  if (!rfc.ok) return bad(`receptor.rfc "${r.rfc}" is not a valid RFC: ${rfc.reason}.`);
  const nombre = normalizarNombre(r.nombre);
  if (!nombre || nombre.length > 254) return bad('receptor.nombre must be the name as registered with SAT (1-254 characters).');
  if (/\|/.test(nombre)) return bad('receptor.nombre cannot contain "|".');
  const cp = r.cp.trim();
  if (!/^\d{5}$/.test(cp)) return bad(`receptor.cp "${r.cp}" must be the 5-digit postal code of the receptor's domicilio fiscal.`);
  const regimen = r.regimen_fiscal.trim();
  const uso = r.uso_cfdi.trim().toUpperCase();
  const receptor = { rfc: rfc.rfc, nombre, uso_cfdi: uso, regimen_fiscal: regimen, cp };
  if (rfc.generico) {
    if (nombre !== NOMBRE_PUBLICO_GENERAL || regimen !== '616' || uso !== 'S01') {
      return {
        ok: false,
        problem: {
          code: 'receptor_incoherente',
          message: `The generic RFC ${rfc.rfc} needs nombre "${NOMBRE_PUBLICO_GENERAL}", regimen_fiscal "616" and uso_cfdi "S01" (got "${nombre}", "${regimen}", "${uso}").`,
        },
      };
    }
    return { ok: true, receptor, generico: rfc.generico };
  }
  const reg = REGIMENES[regimen];
  if (!reg) return bad(`receptor.regimen_fiscal "${r.regimen_fiscal}" is not a key of SAT's c_RegimenFiscal catalog (e.g. 601, 612, 626).`);
  if (!reg[rfc.persona!]) return bad(`receptor.regimen_fiscal ${regimen} (${reg.descripcion}) does not apply to a persona ${rfc.persona === 'moral' ? 'moral (12-character RFC)' : 'física (13-character RFC)'}.`);
  const u = USOS[uso];
  if (!u) return bad(`receptor.uso_cfdi "${r.uso_cfdi}" is not a key of SAT's c_UsoCFDI catalog (e.g. G03, S01).`);
  if (!u[rfc.persona!]) return bad(`receptor.uso_cfdi ${uso} (${u.descripcion}) does not apply to a persona ${rfc.persona}.`);
  if (!u.regimenes.includes(regimen)) return bad(`receptor.uso_cfdi ${uso} (${u.descripcion}) is not admitted with regimen_fiscal ${regimen} (SAT c_UsoCFDI).`);
  return { ok: true, receptor };
}
