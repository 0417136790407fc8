// API and operator keys: generation, and the sha256 hash that is all Postgres keeps of them.
import * as cryptoModule from 'node:crypto';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

// crypto.hash (Node 20.12+) is the one-shot form: no Hash object per request.
const oneShot = (cryptoModule as unknown as { hash?: (alg: string, data: string, enc: 'hex') => string }).hash;
export const hashKey = oneShot ? (key: string) => oneShot('sha256', key, 'hex') : (key: string) => createHash('sha256').update(key).digest('hex');

export const KEY_SHAPE = /^sk_(test|live)_[A-Za-z0-9]{24,64}$/;
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A new API key: sk_test_ or sk_live_ followed by 32 base62 characters (~190 bits). */
export function generateApiKey(livemode: boolean): string {
  const bytes = randomBytes(48);
  let s = '';
  for (const b of bytes) {
    if (b < 248) s += BASE62[b % 62]; // rejection sampling keeps the alphabet uniform
    if (s.length === 32) break;
  }
  while (s.length < 32) s += BASE62[randomBytes(1)[0] % 62];
  return `sk_${livemode ? 'live' : 'test'}_${s}`;
}

export function constantTimeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

