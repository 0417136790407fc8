// SAT's public test CSD (test-csd/README.md): loaded from the repository for test mode only.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCsd, type Csd } from '../../formats/cfdi/csd.js';

/** The folder beside this file's source (works from dist/ and from the source tree). */
function folder(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const here = join(dir, 'connectors', 'pac', 'test-csd');
    if (existsSync(join(here, 'certificate.cer'))) return here;
    const up = dirname(dir);
    if (up === dir) throw new Error('connectors/pac/test-csd not found above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
}

let cached: Csd | undefined;

export const TEST_CSD_RFC = 'AAA010101AAA';

/** SAT's public test CSD. Refuses in live mode: a public key proves nothing. */
export function testCsd(livemode: boolean): Csd {
  if (livemode) throw new Error("SAT's public test CSD is never used in live mode");
  if (!cached) {
    const d = folder();
    cached = loadCsd({
      cer: readFileSync(join(d, 'certificate.cer')),
      key: readFileSync(join(d, 'private_key.key')),
      password: readFileSync(join(d, 'password.txt'), 'utf8').trim(),
    });
  }
  return cached;
}

/** Whether a certificate (base64 DER) is the public test CSD's: live mode refuses such documents. */
export function isTestCertificate(certificadoBase64: string): boolean {
  return certificadoBase64.replace(/\s+/g, '') === testCsd(false).certificado;
}
