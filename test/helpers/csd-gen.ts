// A CSD for tests whose holder is any RFC (SAT's public test CSD is AAA010101AAA's only): a
// self-signed certificate made with the openssl CLI, whose serial is a 20-digit SAT certificate number
// in ASCII and whose subject carries the RFC in x500UniqueIdentifier, as SAT's CSDs do; the key is
// PKCS#8 DER, encrypted. The sim PAC checks the RFC of the certificate against the emisor's, not who
// signed the certificate.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function makeCsd(rfc: string, nombre: string, noCertificado = '30001000000500003416'): { cer: Buffer; key: Buffer; password: string } {
  const dir = mkdtempSync(join(tmpdir(), 'orq-csd-'));
  try {
    const password = '12345678a';
    const serial = Buffer.from(noCertificado, 'latin1').toString('hex');
    const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'k.pem', '-out', 'c.pem', '-days', '3650', '-set_serial', `0x${serial}`, '-subj', `/CN=${nombre}/name=${nombre}/x500UniqueIdentifier=${rfc}`]);
    run(['x509', '-in', 'c.pem', '-outform', 'DER', '-out', 'c.cer']);
    run(['pkcs8', '-topk8', '-v2', 'aes-256-cbc', '-in', 'k.pem', '-outform', 'DER', '-out', 'k.key', '-passout', `pass:${password}`]);
    return { cer: readFileSync(join(dir, 'c.cer')), key: readFileSync(join(dir, 'k.key')), password };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
