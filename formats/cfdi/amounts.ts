// Money in a CFDI: integer cents in, SAT decimal strings out. IVA 16% is inside every amount the
// API receives (decisions.md §6): base = round(total / 1.16), iva = total − base.
//
// Rounding, and why the document is coherent to the cent (Anexo 20, CFDI 4.0):
// - The split is made per concept line: each line's importe (tax included) t gives
//   base_i = round(t / 1.16) (integer cents, half up; an exact half cannot occur, see below) and
//   iva_i = t − base_i. The concept's Importe and ValorUnitario (Cantidad 1) and its Traslado Base
//   are base_i; the Traslado Importe is iva_i.
// - SAT checks each Traslado Importe against its Base within limits:
//   lower = trunc((Base − 0.005) × 0.16, 2), upper = ceil((Base + 0.005) × 0.16, 2). In cents,
//   with x = 0.16 × base_i: iva_i is accepted iff floor(x − 0.08) ≤ iva_i ≤ ceil(x + 0.08), which holds
//   whenever |iva_i − x| < 1.08. Here iva_i − x = 1.16 × (t/1.16 − base_i) and |t/1.16 − base_i| ≤ 0.5,
//   so the difference is at most 0.58 cents: always inside (test/cfdi-units.test.ts checks every
//   total up to 100,000 cents and random larger ones with SAT's formula).
// - The Comprobante's Traslado (one group: 002 / Tasa / 0.160000) has Base = Σ base_i and
//   Importe = Σ iva_i, SubTotal = Σ base_i, TotalImpuestosTrasladados = Σ iva_i, and
//   Total = SubTotal + TotalImpuestosTrasladados = Σ t: the sums agree exactly because every figure
//   is a whole number of cents; no global re-rounding takes place.
// - So with one concept (the default: the whole charge), base_minor = round(total / 1.16) exactly
//   as decisions.md §6 says; with several, the invoice's base_minor is the sum of the lines' bases
//   (it may differ from round(total / 1.16) by a few cents, which is what SAT's per-line rules demand).
// - No exact half: t/1.16 = n + ½ would need 50·t = 29·(2n + 1), an even number equal to an odd one.

export const TASA_IVA_16 = '0.160000';

/** Integer cents as a SAT decimal with two places ("123.45"); cents must be a safe non-negative integer. */
export function pesos(minor: number): string {
  if (!Number.isSafeInteger(minor) || minor < 0) throw new Error(`amount must be a non-negative integer of cents: ${minor}`);
  const s = String(minor).padStart(3, '0');
  return `${s.slice(0, -2)}.${s.slice(-2)}`;
}

/** base = round(total / 1.16) in integer arithmetic (half up; ties cannot happen). */
export function baseDeTotal(totalMinor: number): number {
  if (!Number.isSafeInteger(totalMinor) || totalMinor < 0) throw new Error(`total must be a non-negative integer of cents: ${totalMinor}`);
  return Number((BigInt(totalMinor) * 100n + 58n) / 116n);
}

export interface LineaDesglosada {
  /** What the caller gave: the line's amount with IVA inside. */
  importeMinor: number;
  baseMinor: number;
  ivaMinor: number;
}

export interface Desglose {
  lineas: LineaDesglosada[];
  /** SubTotal = Σ bases = the Traslado Base of the Comprobante. */
  baseMinor: number;
  /** TotalImpuestosTrasladados = Σ IVA of the lines. */
  ivaMinor: number;
  totalMinor: number;
}

export function desglosar(importes: number[]): Desglose {
  const lineas = importes.map((t) => {
    const b = baseDeTotal(t);
    return { importeMinor: t, baseMinor: b, ivaMinor: t - b };
  });
  const baseMinor = lineas.reduce((s, l) => s + l.baseMinor, 0);
  const ivaMinor = lineas.reduce((s, l) => s + l.ivaMinor, 0);
  return { lineas, baseMinor, ivaMinor, totalMinor: baseMinor + ivaMinor };
}

/**
 * SAT's limits for a Traslado Importe given its Base, both in cents with two decimals, at `tasa`
 * (Anexo 20: lower = (Base − 10^-2/2) × Tasa truncated to 2 decimals, upper = (Base + 10^-2/2) × Tasa
 * rounded up). Exact rational arithmetic (tasa in millionths), for tests and self-checks.
 */
export function limitesTraslado(baseMinor: number, tasaMillionths = 160_000n): { lower: number; upper: number } {
  // (base ± 0.5 cents) × tasa, in units of 1e-6 cent × 2: scale by 2 to keep the half exact.
  const b2 = BigInt(baseMinor) * 2n;
  const lowNum = (b2 - 1n) * tasaMillionths; // cents × 2,000,000
  const highNum = (b2 + 1n) * tasaMillionths;
  const den = 2_000_000n;
  const lower = lowNum >= 0n ? lowNum / den : -((-lowNum + den - 1n) / den);
  const upper = (highNum + den - 1n) / den;
  return { lower: Number(lower), upper: Number(upper) };
}
