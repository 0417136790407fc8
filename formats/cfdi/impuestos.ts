// The tax model of a CFDI 4.0 concept (issue 27, defect 5): IVA 16 / 8 (región fronteriza) / 0 /
// exento, ObjetoImp 01/02/03, retenciones of ISR and IVA (RESICO's 1.25 % ISR when a persona física
// in régimen 626 invoices a persona moral: LISR art. 113-J; the usual 2/3 of IVA, 10.6667 %: RLIVA
// art. 3 fr. I), Descuento, Cantidad × ValorUnitario, and SAT's rounding (Anexo 20, CFDI 4.0, and its
// "Guía de llenado" §Concepto/Impuestos: Importe = Cantidad × ValorUnitario; the tax Base is Importe −
// Descuento; a Traslado or Retención Importe = Base × TasaOCuota, rounded to the currency's two
// decimals, accepted within [trunc((Base − 0.005) × Tasa), ceil((Base + 0.005) × Tasa)]).
//
// Two ways to give a line, both integer cents:
// - `importeMinor`: the line's amount with its IVA trasladado inside (the API's historical form,
//   decisions.md §6: 16 % included stays the default): base = round(t / (1 + tasa)), IVA = t − base.
//   |IVA − Base × tasa| = (1 + tasa) × |t/(1 + tasa) − base| ≤ 0.58 cents < 1.0x: always within SAT's limits.
// - `valorUnitarioMinor` (+ `cantidad`, `descuentoMinor`): before taxes, Importe = round(Cantidad ×
//   ValorUnitario), Base = Importe − Descuento, each tax = round(Base × tasa), half up.
// The Comprobante sums the concepts per tax group (Impuesto, TipoFactor, TasaOCuota): no re-rounding,
// so every total agrees to the cent with its lines. Total = SubTotal − Descuento + traslados − retenciones.

export type Iva = '16' | '8' | '0' | 'exento';
export type ObjetoImp = '01' | '02' | '03';

/** Tasa of each IVA treatment, in millionths (SAT writes TasaOCuota with 6 decimals). */
const IVA_MILLIONTHS: Record<Exclude<Iva, 'exento'>, bigint> = { '16': 160_000n, '8': 80_000n, '0': 0n };

export interface ConceptoFiscal {
  descripcion: string;
  claveProdServ?: string;
  claveUnidad?: string;
  noIdentificacion?: string;
  /** Decimal with up to 6 places; default "1". */
  cantidad?: string;
  /** Unit value before taxes, in cents (with `cantidad`). */
  valorUnitarioMinor?: number;
  /** Or: the line's amount with its IVA inside (cantidad 1, no descuento). */
  importeMinor?: number;
  descuentoMinor?: number;
  /** Default '02' (sí objeto de impuesto). '01' no objeto, '03' sí objeto, no obligado al desglose. */
  objetoImp?: ObjetoImp;
  /** Default '16'. */
  iva?: Iva;
  /** ISR withheld by the receptor, as a decimal rate ("0.012500" RESICO, "0.100000" honorarios). */
  retencionIsr?: string;
  /** IVA withheld by the receptor ("0.106667" two thirds of 16 %, "0.040000" autotransporte). */
  retencionIva?: string;
}

export interface TrasladoCalc {
  impuesto: '002';
  tipoFactor: 'Tasa' | 'Exento';
  /** "0.160000"; absent for Exento. */
  tasa?: string;
  baseMinor: number;
  /** Absent for Exento. */
  importeMinor?: number;
}

export interface RetencionCalc {
  impuesto: '001' | '002';
  tasa: string;
  baseMinor: number;
  importeMinor: number;
}

export interface LineaCalc {
  input: ConceptoFiscal;
  cantidad: string;
  valorUnitario: string;
  importeMinor: number;
  descuentoMinor: number;
  baseMinor: number;
  objetoImp: ObjetoImp;
  traslado?: TrasladoCalc;
  retenciones: RetencionCalc[];
}

export interface CalculoCfdi {
  lineas: LineaCalc[];
  subtotalMinor: number;
  descuentoMinor: number;
  traslados: TrasladoCalc[];
  retenciones: { impuesto: '001' | '002'; importeMinor: number }[];
  /** Retenciones per (impuesto, tasa) with their base: what Pagos 2.0 needs per document. */
  retencionesDetalle: RetencionCalc[];
  totalTrasladosMinor: number;
  totalRetencionesMinor: number;
  /** IVA trasladado (all Tasa groups): the books' 208/209. */
  ivaMinor: number;
  /** The CFDI's Total: SubTotal − Descuento + traslados − retenciones. */
  totalMinor: number;
}

export class TaxError extends Error {
  override name = 'TaxError';
}

/** "0.012500" → 12500n (millionths); refuses anything else. */
export function rateMillionths(rate: string, max: bigint): bigint {
  const m = /^0\.(\d{6})$/.exec(rate) ?? /^0\.(\d{1,5})$/.exec(rate);
  if (!m) throw new TaxError(`a rate is a decimal between 0 and 1 with up to 6 places ("0.012500"): ${rate}`);
  const v = BigInt(m[1]!.padEnd(6, '0'));
  if (v <= 0n || v > max) throw new TaxError(`rate ${rate} is out of range`);
  return v;
}
const fmtRate = (v: bigint) => `0.${v.toString().padStart(6, '0')}`;

/** Cantidad as millionths (exact), from "1", "2.5", "0.125000". */
function cantidadMicro(c: string): bigint {
  const m = /^(\d{1,12})(?:\.(\d{1,6}))?$/.exec(c);
  if (!m) throw new TaxError(`cantidad must be a positive decimal with up to 6 places: ${c}`);
  const v = BigInt(m[1]!) * 1_000_000n + BigInt((m[2] ?? '').padEnd(6, '0'));
  if (v <= 0n) throw new TaxError(`cantidad must be positive: ${c}`);
  return v;
}

/** round(a / b) half up, a ≥ 0, b > 0. */
const divRound = (a: bigint, b: bigint) => (a * 2n + b) / (2n * b);

/** x × rate (millionths), rounded half up to cents. */
const times = (baseMinor: number, millionths: bigint) => Number(divRound(BigInt(baseMinor) * millionths, 1_000_000n));

export function calcularLinea(c: ConceptoFiscal): LineaCalc {
  const objetoImp = c.objetoImp ?? '02';
  const iva = c.iva ?? '16';
  const taxed = objetoImp === '02';
  if (!taxed && (c.retencionIsr || c.retencionIva || c.iva)) throw new TaxError(`ObjetoImp ${objetoImp} carries no taxes: drop iva and retenciones, or use ObjetoImp 02`);
  let importe: number;
  let descuento = 0;
  let base: number;
  let ivaMinor: number | undefined;
  let cantidad = '1';
  let valorUnitario: string;
  if (c.valorUnitarioMinor !== undefined) {
    if (c.importeMinor !== undefined) throw new TaxError('give either importe_minor (taxes inside) or valor_unitario_minor (before taxes), not both');
    if (!Number.isSafeInteger(c.valorUnitarioMinor) || c.valorUnitarioMinor < 1) throw new TaxError(`valor_unitario_minor must be a positive integer of cents: ${c.valorUnitarioMinor}`);
    cantidad = c.cantidad ?? '1';
    importe = Number(divRound(cantidadMicro(cantidad) * BigInt(c.valorUnitarioMinor), 1_000_000n));
    descuento = c.descuentoMinor ?? 0;
    if (!Number.isSafeInteger(descuento) || descuento < 0 || descuento > importe) throw new TaxError(`descuento_minor must be between 0 and the line's importe (${importe}): ${descuento}`);
    base = importe - descuento;
    valorUnitario = pesosDe(c.valorUnitarioMinor);
    if (taxed && iva !== 'exento') ivaMinor = times(base, IVA_MILLIONTHS[iva]);
  } else {
    const t = c.importeMinor;
    if (t === undefined || !Number.isSafeInteger(t) || t < 1) throw new TaxError(`concept importe must be a positive integer of cents: ${t}`);
    if (c.descuentoMinor || (c.cantidad && c.cantidad !== '1')) throw new TaxError('cantidad and descuento_minor go with valor_unitario_minor (before taxes), not with importe_minor');
    const r = taxed && iva !== 'exento' ? IVA_MILLIONTHS[iva] : 0n;
    base = Number(divRound(BigInt(t) * 1_000_000n, 1_000_000n + r));
    importe = base;
    valorUnitario = pesosDe(base);
    if (taxed && iva !== 'exento') ivaMinor = t - base;
  }
  const traslado: TrasladoCalc | undefined = !taxed
    ? undefined
    : iva === 'exento'
      ? { impuesto: '002', tipoFactor: 'Exento', baseMinor: base }
      : { impuesto: '002', tipoFactor: 'Tasa', tasa: fmtRate(IVA_MILLIONTHS[iva]), baseMinor: base, importeMinor: ivaMinor! };
  const retenciones: RetencionCalc[] = [];
  if (taxed && c.retencionIsr) {
    const r = rateMillionths(c.retencionIsr, 350_000n);
    retenciones.push({ impuesto: '001', tasa: fmtRate(r), baseMinor: base, importeMinor: times(base, r) });
  }
  if (taxed && c.retencionIva) {
    if (iva === 'exento' || iva === '0') throw new TaxError('IVA is withheld only from a sale that bears IVA');
    const r = rateMillionths(c.retencionIva, IVA_MILLIONTHS[iva]);
    retenciones.push({ impuesto: '002', tasa: fmtRate(r), baseMinor: base, importeMinor: times(base, r) });
  }
  return { input: c, cantidad, valorUnitario, importeMinor: importe, descuentoMinor: descuento, baseMinor: base, objetoImp, traslado, retenciones };
}

function pesosDe(minor: number): string {
  const s = String(minor).padStart(3, '0');
  return `${s.slice(0, -2)}.${s.slice(-2)}`;
}

export function calcular(conceptos: ConceptoFiscal[]): CalculoCfdi {
  if (!conceptos.length) throw new TaxError('at least one concept');
  const lineas = conceptos.map(calcularLinea);
  const subtotal = lineas.reduce((s, l) => s + l.importeMinor, 0);
  const descuento = lineas.reduce((s, l) => s + l.descuentoMinor, 0);
  const tras = new Map<string, TrasladoCalc>();
  const retD = new Map<string, RetencionCalc>();
  for (const l of lineas) {
    if (l.traslado) {
      const k = `${l.traslado.tipoFactor}|${l.traslado.tasa ?? ''}`;
      const g = tras.get(k);
      if (g) {
        g.baseMinor += l.traslado.baseMinor;
        if (g.importeMinor !== undefined) g.importeMinor += l.traslado.importeMinor!;
      } else tras.set(k, { ...l.traslado });
    }
    for (const r of l.retenciones) {
      const k = `${r.impuesto}|${r.tasa}`;
      const g = retD.get(k);
      if (g) {
        g.baseMinor += r.baseMinor;
        g.importeMinor += r.importeMinor;
      } else retD.set(k, { ...r });
    }
  }
  // SAT's order of groups is free; a stable one (16, 8, 0, exento) keeps documents comparable.
  const order = (t: TrasladoCalc) => (t.tipoFactor === 'Exento' ? 9 : -Number(t.tasa));
  const traslados = [...tras.values()].sort((a, b) => order(a) - order(b));
  const retByImp = new Map<'001' | '002', number>();
  for (const r of retD.values()) retByImp.set(r.impuesto, (retByImp.get(r.impuesto) ?? 0) + r.importeMinor);
  const retenciones = [...retByImp.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([impuesto, importeMinor]) => ({ impuesto, importeMinor }));
  const totalTras = traslados.reduce((s, t) => s + (t.importeMinor ?? 0), 0);
  const totalRet = retenciones.reduce((s, r) => s + r.importeMinor, 0);
  return {
    lineas,
    subtotalMinor: subtotal,
    descuentoMinor: descuento,
    traslados,
    retenciones,
    retencionesDetalle: [...retD.values()],
    totalTrasladosMinor: totalTras,
    totalRetencionesMinor: totalRet,
    ivaMinor: totalTras,
    totalMinor: subtotal - descuento + totalTras - totalRet,
  };
}

/**
 * A payment's share of each tax group of the invoice it pays (Pagos 2.0, Guía de llenado: the
 * DoctoRelacionado's ImpuestosDR are those of the paid document in proportion to ImpPagado / Total):
 * BaseDR = round(Base × pagado / total); ImporteDR = round(BaseDR × tasa).
 */
export function proporcion(calc: Pick<CalculoCfdi, 'traslados' | 'retencionesDetalle' | 'totalMinor'>, pagadoMinor: number): { traslados: TrasladoCalc[]; retenciones: RetencionCalc[] } {
  const share = (b: number) => Number(divRound(BigInt(b) * BigInt(pagadoMinor), BigInt(calc.totalMinor)));
  const rate = (tasa: string) => BigInt(tasa.slice(2).padEnd(6, '0'));
  return {
    traslados: calc.traslados.map((t) => {
      const baseMinor = share(t.baseMinor);
      return t.tipoFactor === 'Exento' ? { ...t, baseMinor } : { ...t, baseMinor, importeMinor: times(baseMinor, rate(t.tasa!)) };
    }),
    retenciones: calc.retencionesDetalle.map((r) => {
      const baseMinor = share(r.baseMinor);
      return { ...r, baseMinor, importeMinor: times(baseMinor, rate(r.tasa)) };
    }),
  };
}

/** The tax summary an invoice row keeps (jsonb) for its payment complements, credit notes and books. */
export interface ResumenImpuestos {
  traslados: TrasladoCalc[];
  retencionesDetalle: RetencionCalc[];
  totalMinor: number;
  subtotalMinor: number;
  descuentoMinor: number;
}
export const resumen = (c: CalculoCfdi): ResumenImpuestos => ({ traslados: c.traslados, retencionesDetalle: c.retencionesDetalle, totalMinor: c.totalMinor, subtotalMinor: c.subtotalMinor, descuentoMinor: c.descuentoMinor });

/** The historical summary (IVA 16 % inside every amount) of an invoice stored before the tax model. */
export const resumen16 = (totalMinor: number, baseMinor: number, ivaMinor: number): ResumenImpuestos => ({
  traslados: [{ impuesto: '002', tipoFactor: 'Tasa', tasa: '0.160000', baseMinor, importeMinor: ivaMinor }],
  retencionesDetalle: [],
  totalMinor,
  subtotalMinor: baseMinor,
  descuentoMinor: 0,
});

/**
 * Concept lines (before taxes) whose CFDI Total is exactly `totalMinor`: what a charge paid when the
 * receptor withholds (RESICO's 1.25 % ISR): Base + IVA − retenciones = paid. Each cent of base moves
 * the Total by 1 or 2 cents, so some totals have no single base: then a second line of the
 * remaining cent(s) (whose taxes round to 0) closes the gap, and the Total is exact.
 */
export function lineasParaTotal(totalMinor: number, c: Omit<ConceptoFiscal, 'importeMinor' | 'valorUnitarioMinor' | 'cantidad' | 'descuentoMinor'>): ConceptoFiscal[] {
  const total = (b: number) => calcular([{ ...c, valorUnitarioMinor: b }]).totalMinor;
  const iva = c.objetoImp && c.objetoImp !== '02' ? 0 : c.iva === undefined || c.iva === '16' ? 0.16 : c.iva === '8' ? 0.08 : 0;
  const ret = (c.retencionIsr ? Number(c.retencionIsr) : 0) + (c.retencionIva ? Number(c.retencionIva) : 0);
  let b = Math.max(1, Math.floor(totalMinor / (1 + iva - ret)) - 3);
  while (total(b + 1) <= totalMinor) b++;
  while (b > 1 && total(b) > totalMinor) b--;
  const gap = totalMinor - total(b);
  if (gap === 0) return [{ ...c, valorUnitarioMinor: b }];
  const rest = { ...c, valorUnitarioMinor: gap };
  if (calcular([{ ...c, valorUnitarioMinor: b }, rest]).totalMinor !== totalMinor) throw new TaxError(`no concept lines make a Total of ${totalMinor} cents with these taxes`);
  return [{ ...c, valorUnitarioMinor: b }, rest];
}
