// Secrets at rest: AES-256-GCM with a key of the deployment, for what must be read back by the
// service but never shown (full CLABEs for payouts, a tenant's STP private key and passphrase).
// Each sealed value is bound to where it lives (associated data such as `payout:<id>:clabe`), so
// a ciphertext copied to another row does not open there.
//
// The key comes from the deployment (ops/secret-box.ts: SECRETS_KEY, or one kept in STATE_DIR).
import { createCipheriv, createDecipheriv, createHash, createHmac, randomFillSync } from 'node:crypto';

const VERSION = 'v1';

// IVs (96 random bits each, from the CSPRNG) are taken from a pool filled 4 KiB at a time, as Node's
// randomUUID does: randomBytes(12) per seal cost a system call each (OpenSSL's fork check: getpid),
// on the payout create's path. The pool is this process's own (processes are spawned, never
// forked), and an IV is copied into the sealed value before the next seal can refill the pool.
const IV_BYTES = 12;
const ivPool = Buffer.alloc(IV_BYTES * 341);
let ivOffset = ivPool.length;
function nextIv(): Buffer {
  if (ivOffset + IV_BYTES > ivPool.length) {
    randomFillSync(ivPool);
    ivOffset = 0;
  }
  return ivPool.subarray(ivOffset, (ivOffset += IV_BYTES));
}

export class SecretBox {
  private readonly key: Buffer;
  /** A short id of the key (sha256 prefix): lets an operator tell keys apart without seeing them. */
  readonly keyId: string;
  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('the secrets key must be 32 bytes');
    this.key = Buffer.from(key);
    this.keyId = createHash('sha256').update(key).digest('hex').slice(0, 8);
  }

  seal(plain: string, context: string): string {
    const iv = nextIv();
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    c.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return `${VERSION}.${Buffer.concat([iv, c.getAuthTag(), body]).toString('base64')}`;
  }

  open(sealed: string, context: string): string {
    const [v, b64] = sealed.split('.', 2);
    if (v !== VERSION || !b64) throw new Error('not a sealed value of this service');
    const raw = Buffer.from(b64, 'base64');
    const d = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    d.setAAD(Buffer.from(context, 'utf8'));
    d.setAuthTag(raw.subarray(12, 28));
    try {
      return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
    } catch {
      throw new Error(`sealed value does not open with key ${this.keyId} in context ${context.split(':')[0]}`);
    }
  }

  /** HMAC-SHA256 under the key: a deterministic digest for equality lookups of a secret without storing it in clear. */
  digest(plain: string, purpose: string): string {
    return createHmac('sha256', this.key).update(purpose).update('\0').update(plain).digest('hex');
  }
}

/** Decodes SECRETS_KEY (base64 or hex of 32 bytes). */
export function parseSecretsKey(value: string): Buffer {
  const v = value.trim();
  const buf = /^[0-9a-f]{64}$/i.test(v) ? Buffer.from(v, 'hex') : Buffer.from(v, 'base64');
  if (buf.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes, base64 or hex encoded');
  return buf;
}

