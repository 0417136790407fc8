// Webhook signatures (spec: Events > Signature): `Gateway-Signature: t=<unix>,v1=<hex>[,v1=<hex>]`,
// v1 = HMAC-SHA256(secret, `${t}.${raw_body}`). Small pure functions over the raw body, shared by
// the delivery worker, the CLI and the tests (stripe-node's Webhooks.ts is the model).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'Gateway-Signature';
export const DEFAULT_TOLERANCE_SECONDS = 300;

export function computeSignature(secret: string, t: number, rawBody: string | Buffer): string {
  return createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest('hex');
}

/** The header value, one v1 per secret (two during a rotation). */
export function signatureHeader(secrets: readonly string[], t: number, rawBody: string | Buffer): string {
  return [`t=${t}`, ...secrets.map((s) => `v1=${computeSignature(s, t, rawBody)}`)].join(',');
}

export function parseSignatureHeader(header: string): { t: number; v1: string[] } | null {
  let t: number | undefined;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const [k, v] = part.trim().split('=', 2);
    if (k === 't' && /^\d+$/.test(v ?? '')) t = Number(v);
    else if (k === 'v1' && /^[0-9a-f]{64}$/.test(v ?? '')) v1.push(v);
  }
  return t === undefined || v1.length === 0 ? null : { t, v1 };
}

export type VerifyResult = { ok: true; t: number } | { ok: false; reason: 'malformed' | 'no_match' | 'outside_tolerance' };

/**
 * A receiver's check, per the spec's rules: verify against the raw body before parsing, compare in
 * constant time, reject when |now - t| > tolerance, accept if any given secret (new or previous) matches.
 */
export function verifySignature(
  rawBody: string | Buffer,
  header: string | undefined,
  secrets: string | readonly string[],
  opts: { toleranceSeconds?: number; nowSeconds?: number } = {},
): VerifyResult {
  const parsed = header ? parseSignatureHeader(header) : null;
  if (!parsed) return { ok: false, reason: 'malformed' };
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tol = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  let match = false;
  for (const s of list) {
    const expected = Buffer.from(computeSignature(s, parsed.t, rawBody), 'hex');
    for (const v of parsed.v1) if (timingSafeEqual(expected, Buffer.from(v, 'hex'))) match = true;
  }
  if (!match) return { ok: false, reason: 'no_match' };
  if (Math.abs(now - parsed.t) > tol) return { ok: false, reason: 'outside_tolerance' };
  return { ok: true, t: parsed.t };
}

/** A header for a payload, as the service would sign it (tests, the CLI's listen). */
export function generateTestHeaderString(o: { payload: string; secret: string; timestamp?: number }): string {
  return signatureHeader([o.secret], o.timestamp ?? Math.floor(Date.now() / 1000), o.payload);
}

export function newWebhookSecret(prefix = 'whsec_'): string {
  return prefix + randomBytes(24).toString('base64url');
}
