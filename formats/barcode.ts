// Code 128 barcodes as SVG (bwip-js, server-side): the OXXO cashier scans the payment reference
// from the shopper's phone or a print-out. Only digits, as OXXO references are; the quiet zone of
// 10 modules either side that scanners need is part of the image.
import { toSVG } from 'bwip-js';

export const BARCODE_DATA = /^[0-9]{4,40}$/;

/** The Code 128 symbol of `digits` (bwip-js picks code set C: two digits per symbol). */
export function code128Svg(digits: string): string {
  if (!BARCODE_DATA.test(digits)) throw new Error('code128Svg: digits only (4 to 40)');
  return toSVG({ bcid: 'code128', text: digits, scale: 2, height: 14, paddingwidth: 10, paddingheight: 2, backgroundcolor: 'FFFFFF' });
}
