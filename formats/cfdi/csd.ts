// The CSD (Certificado de Sello Digital): SAT's X.509 certificate (.cer, DER) and its RSA private
// key (.key, DER PKCS#8 encrypted with the key password). Node's crypto reads both, so no library
// is needed. The Sello is RSA-SHA256 (PKCS#1 v1.5) over the UTF-8 cadena original, in base64
// (Anexo 20, CFDI 4.0); NoCertificado is the certificate serial read as ASCII (20 digits).
import { X509Certificate, createPrivateKey, createSign, createVerify, sign, verify, type KeyObject } from 'node:crypto';

export interface Csd {
  /** 20-digit certificate number (NoCertificado). */
  noCertificado: string;
  /** The .cer in base64 without line breaks (Certificado attribute). */
  certificado: string;
  /** RFC of the holder (x500UniqueIdentifier; the first of "RFC / RFC representative"). */
  rfc: string;
  nombre: string;
  validFrom: Date;
  validTo: Date;
  privateKey: KeyObject;
}

export class CsdError extends Error {
  override name = 'CsdError';
}

type CertificateFields = { cert: X509Certificate; noCertificado: string; certificado: string; rfc: string; nombre: string; validFrom: Date; validTo: Date };

// Certificates read lately from a document's Certificado attribute (base64): a PAC (the sim PAC checks
// every document's emisor against it) reads the same few tenants' certificates again and again, and
// parsing one is ~0.3 ms (7.7 % of the API's samples in bench/invoices). The fields are immutable.
const readLately = new Map<string, CertificateFields>();

/** Reads a certificate (DER or PEM) into its SAT fields. */
export function readCertificate(cer: Buffer | string): CertificateFields {
  if (typeof cer !== 'string') return parseCertificate(cer);
  const k = cer.replace(/\s+/g, '');
  let c = readLately.get(k);
  if (!c) {
    c = parseCertificate(k);
    if (readLately.size >= 64) readLately.delete(readLately.keys().next().value!);
    readLately.set(k, c);
  }
  return c;
}

function parseCertificate(cer: Buffer | string): CertificateFields {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(typeof cer === 'string' ? Buffer.from(cer.replace(/\s+/g, ''), 'base64') : cer);
  } catch {
    throw new CsdError('the certificate (.cer) is not a DER or PEM X.509 certificate');
  }
  const serialHex = cert.serialNumber.length % 2 ? `0${cert.serialNumber}` : cert.serialNumber;
  const noCertificado = Buffer.from(serialHex, 'hex').toString('latin1');
  if (!/^\d{20}$/.test(noCertificado)) throw new CsdError(`the certificate serial is not a SAT certificate number (20 digits): ${noCertificado}`);
  const subject = parseDn(cert.subject);
  const rfc = (subject.x500UniqueIdentifier ?? '').split('/')[0]!.trim();
  const nombre = (subject.name ?? subject.CN ?? subject.O ?? '').trim();
  return {
    cert,
    noCertificado,
    certificado: cert.raw.toString('base64'),
    rfc,
    nombre,
    validFrom: new Date(cert.validFrom),
    validTo: new Date(cert.validTo),
  };
}

function parseDn(dn: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of dn.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) out[line.slice(0, i)] ??= line.slice(i + 1);
  }
  return out;
}

/** Loads a CSD: certificate, encrypted key and its password; checks that the key belongs to the certificate. */
export function loadCsd(input: { cer: Buffer; key: Buffer; password: string }): Csd {
  const c = readCertificate(input.cer);
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: input.key, format: 'der', type: 'pkcs8', passphrase: input.password });
  } catch {
    throw new CsdError('the private key (.key) could not be opened: wrong password or not a PKCS#8 DER key');
  }
  if (privateKey.asymmetricKeyType !== 'rsa') throw new CsdError('the private key is not an RSA key');
  if (!c.cert.checkPrivateKey(privateKey)) throw new CsdError('the private key does not belong to the certificate');
  return { noCertificado: c.noCertificado, certificado: c.certificado, rfc: c.rfc, nombre: c.nombre, validFrom: c.validFrom, validTo: c.validTo, privateKey };
}

/** Sello: base64 of RSA-SHA256 over the UTF-8 bytes of the cadena original. */
export function sellar(cadena: string, privateKey: KeyObject): string {
  return createSign('RSA-SHA256').update(cadena, 'utf8').sign(privateKey, 'base64');
}

/**
 * The same Sello computed on libuv's thread pool (crypto.sign with a callback): the RSA operation,
 * about 1 ms of CPU, does not hold the event loop (issue 26: a burst of invoices must not delay
 * confirms). RSASSA-PKCS1-v1_5 is deterministic: the result equals sellar's.
 */
export function sellarAsync(cadena: string, privateKey: KeyObject): Promise<string> {
  return new Promise((resolve, reject) => sign('sha256', Buffer.from(cadena, 'utf8'), privateKey, (err, sig) => (err ? reject(err) : resolve(sig.toString('base64')))));
}

// Public keys of the certificates seen lately (a PAC or a tenant verifies the same few many times).
const publicKeys = new Map<string, KeyObject>();
function publicKeyOf(certificadoBase64: string): KeyObject {
  const k = certificadoBase64.replace(/\s+/g, '');
  let key = publicKeys.get(k);
  if (!key) {
    key = new X509Certificate(Buffer.from(k, 'base64')).publicKey;
    if (publicKeys.size >= 256) publicKeys.delete(publicKeys.keys().next().value!);
    publicKeys.set(k, key);
  }
  return key;
}

/** verificarSello on libuv's thread pool (crypto.verify with a callback). */
export function verificarSelloAsync(cadena: string, sello: string, certificadoBase64: string): Promise<boolean> {
  return new Promise((resolve) => {
    try {
      verify('sha256', Buffer.from(cadena, 'utf8'), publicKeyOf(certificadoBase64), Buffer.from(sello.replace(/\s+/g, ''), 'base64'), (err, ok) => resolve(!err && ok));
    } catch {
      resolve(false);
    }
  });
}

/** Verifies a Sello against the cadena with the certificate carried in the document (base64 DER). */
export function verificarSello(cadena: string, sello: string, certificadoBase64: string): boolean {
  try {
    return createVerify('RSA-SHA256').update(cadena, 'utf8').verify(publicKeyOf(certificadoBase64), sello.replace(/\s+/g, ''), 'base64');
  } catch {
    return false;
  }
}
