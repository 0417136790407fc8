// The SAT verification address printed as a QR code on the representation of a CFDI 4.0
// (Anexo 20, "Representación impresa": id = UUID, re = RFC emisor, rr = RFC receptor, tt = total with
// its non-significant zeros dropped but at least one decimal, fe = last 8 characters of the Sello).
// `&` inside an RFC (e.g. "Ñ&A010101AAA") is written `&amp;` as SAT's rule says.

export const VERIFICA_CFDI_URL = 'https://verificacfdi.facturaelectronica.sat.gob.mx/default.aspx';

/** Total for `tt`: "116.0", "2320.0", "1234.5", "0.01" (from integer cents). */
export function totalQr(minor: number): string {
  if (!Number.isSafeInteger(minor) || minor < 0) throw new Error(`bad total ${minor}`);
  const enteros = Math.floor(minor / 100);
  let dec = String(minor % 100).padStart(2, '0').replace(/0+$/, '');
  if (!dec) dec = '0';
  return `${enteros}.${dec}`;
}

const rfcXml = (rfc: string) => rfc.replace(/&/g, '&amp;');

export function urlVerificacion(p: { uuid: string; rfcEmisor: string; rfcReceptor: string; totalMinor: number; sello: string }): string {
  return `${VERIFICA_CFDI_URL}?id=${p.uuid.toUpperCase()}&re=${rfcXml(p.rfcEmisor)}&rr=${rfcXml(p.rfcReceptor)}&tt=${totalQr(p.totalMinor)}&fe=${p.sello.slice(-8)}`;
}
