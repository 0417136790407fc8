// SAT's CFDI 4.0 cancellation request (`Cancelacion`, namespace http://cancelacfd.sat.gob.mx),
// signed by the issuer with its CSD as an enveloped XML-DSig (C14N 2001-03-15, RSA-SHA1, SHA-1
// digest, KeyInfo with X509IssuerSerial, X509Certificate and RSAKeyValue), the form PACs relay to
// SAT (shared format notes: Finkok `cancel_signature`). The document is written directly in its
// canonical form (attributes in order, no whitespace, empty elements as start/end pairs), so the
// digest and the signed SignedInfo are computed over the very bytes that are sent; the tests verify
// the signature with Debian's xmlsec1 as an independent implementation.
import { X509Certificate, createHash, createSign, type KeyObject } from 'node:crypto';
import { escapeAttr } from './xml.js';

export const CANCELACION_NS = 'http://cancelacfd.sat.gob.mx';
const DSIG = 'http://www.w3.org/2000/09/xmldsig#';

export interface SolicitudCancelacion {
  rfcEmisor: string;
  /** t_FechaH local time of the request. */
  fecha: string;
  folios: { uuid: string; motivo: '01' | '02' | '03' | '04'; folioSustitucion?: string }[];
}

const text = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#xD;');

/** The request without its signature, canonical (what the enveloped signature digests). */
export function cancelacionCanonica(s: SolicitudCancelacion): string {
  // C14N: no-namespace attributes sorted by name: Fecha < RfcEmisor; FolioSustitucion < Motivo < UUID.
  const folios = s.folios
    .map((f) => `<Folio${f.folioSustitucion ? ` FolioSustitucion="${escapeAttr(f.folioSustitucion.toUpperCase())}"` : ''} Motivo="${f.motivo}" UUID="${escapeAttr(f.uuid.toUpperCase())}"></Folio>`)
    .join('');
  return `<Cancelacion xmlns="${CANCELACION_NS}" Fecha="${escapeAttr(s.fecha)}" RfcEmisor="${escapeAttr(s.rfcEmisor)}"><Folios>${folios}</Folios>`;
}

function issuerName(cert: X509Certificate): string {
  // RFC 4514 order (most specific first) from Node's one-per-line issuer text.
  return cert.issuer
    .split('\n')
    .filter(Boolean)
    .map((l) => l.replace(/([,+"\\<>;])/g, '\\$1'))
    .join(',');
}

/**
 * XML-DSig's X509SerialNumber is the certificate's serial as a decimal integer (W3C XML Signature
 * §4.4.4: `integer`), not SAT's NoCertificado, which is the same serial's bytes read as ASCII
 * (issue 27, defect 1: 30001000000500003416 is serial 0x3330303031…, decimal 2923378…).
 */
export function x509SerialDecimal(cert: X509Certificate): string {
  return BigInt(`0x${cert.serialNumber}`).toString(10);
}

/** Signs the request with the issuer's CSD and returns the signed XML document. */
export function firmarCancelacion(s: SolicitudCancelacion, csd: { certificado: string; noCertificado: string; privateKey: KeyObject }): string {
  const body = cancelacionCanonica(s);
  const digest = createHash('sha1').update(`${body}</Cancelacion>`, 'utf8').digest('base64');
  const signedInfo =
    `<SignedInfo xmlns="${DSIG}"><CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"></CanonicalizationMethod>` +
    `<SignatureMethod Algorithm="${DSIG}rsa-sha1"></SignatureMethod><Reference URI=""><Transforms><Transform Algorithm="${DSIG}enveloped-signature"></Transform></Transforms>` +
    `<DigestMethod Algorithm="${DSIG}sha1"></DigestMethod><DigestValue>${digest}</DigestValue></Reference></SignedInfo>`;
  const signature = createSign('RSA-SHA1').update(signedInfo, 'utf8').sign(csd.privateKey, 'base64');
  const cert = new X509Certificate(Buffer.from(csd.certificado, 'base64'));
  const jwk = cert.publicKey.export({ format: 'jwk' }) as { n: string; e: string };
  const b64 = (u: string) => Buffer.from(u, 'base64url').toString('base64');
  const keyInfo =
    `<KeyInfo><X509Data><X509IssuerSerial><X509IssuerName>${text(issuerName(cert))}</X509IssuerName><X509SerialNumber>${x509SerialDecimal(cert)}</X509SerialNumber></X509IssuerSerial>` +
    `<X509Certificate>${csd.certificado}</X509Certificate></X509Data><KeyValue><RSAKeyValue><Modulus>${b64(jwk.n)}</Modulus><Exponent>${b64(jwk.e)}</Exponent></RSAKeyValue></KeyValue></KeyInfo>`;
  // SignedInfo inside Signature inherits the same default namespace, so its c14n is the string signed.
  const signedInfoInDoc = signedInfo.replace(` xmlns="${DSIG}"`, '');
  return `<?xml version="1.0" encoding="UTF-8"?>\n${body}<Signature xmlns="${DSIG}">${signedInfoInDoc}<SignatureValue>${signature}</SignatureValue>${keyInfo}</Signature></Cancelacion>`;
}

