// Importe con letra, as Mexican invoices print it: "CIENTO DIECISÉIS PESOS 00/100 M.N.".
// Written here rather than taken from npm: the Spanish packages checked (n2words 4.0.0 es-MX,
// numero-a-letras 1.0.6) print "dieciseis" without its accent and "veintiuno mil"/"un mil", which an
// accountant would not accept on a fiscal document. Rules of the Real Academia: "un"/"veintiún"
// before a noun (peso, mil, millones), "cien" alone and "ciento" before more, "de pesos" after an
// exact number of millions.

const UNIDADES = ['', 'uno', 'dos', 'tres', 'cuatro', 'cinco', 'seis', 'siete', 'ocho', 'nueve', 'diez', 'once', 'doce', 'trece', 'catorce', 'quince',
  'dieciséis', 'diecisiete', 'dieciocho', 'diecinueve', 'veinte', 'veintiuno', 'veintidós', 'veintitrés', 'veinticuatro', 'veinticinco', 'veintiséis',
  'veintisiete', 'veintiocho', 'veintinueve'];
const DECENAS = ['', '', '', 'treinta', 'cuarenta', 'cincuenta', 'sesenta', 'setenta', 'ochenta', 'noventa'];
const CENTENAS = ['', 'ciento', 'doscientos', 'trescientos', 'cuatrocientos', 'quinientos', 'seiscientos', 'setecientos', 'ochocientos', 'novecientos'];

/** `apocope`: the number stands before a noun, so a final "uno" becomes "un" ("veintiún mil"). */
function hasta99(n: number, apocope: boolean): string {
  if (n < 30) {
    if (apocope && n === 1) return 'un';
    if (apocope && n === 21) return 'veintiún';
    return UNIDADES[n]!;
  }
  const u = n % 10;
  const d = DECENAS[Math.floor(n / 10)]!;
  if (!u) return d;
  return `${d} y ${apocope && u === 1 ? 'un' : UNIDADES[u]}`;
}

function hasta999(n: number, apocope: boolean): string {
  if (n === 100) return 'cien';
  const c = Math.floor(n / 100);
  const r = n % 100;
  return [c ? CENTENAS[c]! : '', r ? hasta99(r, apocope) : ''].filter(Boolean).join(' ');
}

/** Below a million. */
function hastaMillon(n: number, apocope: boolean): string {
  const miles = Math.floor(n / 1000);
  const resto = n % 1000;
  const partes: string[] = [];
  if (miles === 1) partes.push('mil');
  else if (miles > 1) partes.push(`${hasta999(miles, true)} mil`);
  if (resto) partes.push(hasta999(resto, apocope));
  return partes.join(' ');
}

/** Cardinal in Spanish words, lower case, for 0 ≤ n < 10^12. */
export function numeroALetras(n: number, apocope = false): string {
  if (!Number.isSafeInteger(n) || n < 0 || n >= 1e12) throw new Error(`cannot write ${n} in words`);
  if (n === 0) return 'cero';
  const millones = Math.floor(n / 1e6);
  const resto = n % 1e6;
  const partes: string[] = [];
  if (millones === 1) partes.push('un millón');
  else if (millones > 1) partes.push(`${hastaMillon(millones, true)} millones`);
  if (resto) partes.push(hastaMillon(resto, apocope));
  return partes.join(' ');
}

/** "CIENTO DIECISÉIS PESOS 00/100 M.N." for 11600 cents (MXN). */
export function importeConLetra(minor: number, moneda = 'MXN'): string {
  if (!Number.isSafeInteger(minor) || minor < 0) throw new Error(`amount must be a non-negative integer of cents: ${minor}`);
  const pesos = Math.floor(minor / 100);
  const centavos = String(minor % 100).padStart(2, '0');
  const palabras = numeroALetras(pesos, true);
  const unidad = pesos === 1 ? 'peso' : pesos >= 1e6 && pesos % 1e6 === 0 ? 'de pesos' : 'pesos';
  const sufijo = moneda === 'MXN' ? 'M.N.' : moneda;
  return `${palabras} ${unidad} ${centavos}/100 ${sufijo}`.toUpperCase();
}
