// Encryption at rest of fiscal secrets (PAC password, CSD private key and its password): the
// deployment's SecretBox (kernel/secret-box.ts: SECRETS_KEY, or a key kept in STATE_DIR — never in
// the database next to the data), each value bound to its tenant, mode and field. A copy of the
// database alone reveals none of them; the values are never returned by the API and never logged.
import type { SecretBox } from '../kernel/secret-box.js';

export function seal(box: SecretBox, plain: Buffer | string, context: string): string {
  return box.seal(typeof plain === 'string' ? `s:${plain}` : `b:${plain.toString('base64')}`, `fiscal:${context}`);
}

export function open(box: SecretBox, sealed: string, context: string): Buffer {
  const v = box.open(sealed, `fiscal:${context}`);
  return v.startsWith('b:') ? Buffer.from(v.slice(2), 'base64') : Buffer.from(v.slice(2), 'utf8');
}
