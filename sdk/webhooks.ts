// Verifying Orquesta's webhook deliveries (spec: Events > Signature), for a merchant's receiver:
// `Gateway-Signature: t=<unix>,v1=<hex>[,v1=<hex>]` where v1 = HMAC-SHA256(secret, `${t}.${raw_body}`).
// The rules: verify the raw bytes before parsing, compare in constant time, refuse a `t` more than
// 5 minutes from now, accept either secret during a rotation. The check is kernel/signing.ts's, the
// one the service signs with (stripe-node's Webhooks.constructEvent is the model).
import { verifySignature } from '../kernel/signing.js';

export interface WebhookEvent {
  event_id: string;
  event_type: string;
  created_at: string;
  api_version: string;
  livemode: boolean;
  data: Record<string, unknown>;
}

export class WebhookSignatureError extends Error {
  constructor(readonly reason: 'malformed' | 'no_match' | 'outside_tolerance') {
    super(
      reason === 'malformed'
        ? 'No valid Gateway-Signature header (t=<unix>,v1=<hex>).'
        : reason === 'no_match'
          ? 'The signature does not match: wrong secret, or the body was changed (verify the raw bytes, before any JSON parsing).'
          : 'The signature timestamp is more than the tolerance away from now (a replayed or delayed delivery).',
    );
    this.name = 'WebhookSignatureError';
  }
}

/**
 * The delivered event, once its signature is verified against `secrets` (the endpoint's secret, or
 * both during a rotation). Throws WebhookSignatureError otherwise. Deduplicate on `event_id`.
 */
export function constructEvent(
  rawBody: string | Buffer | Uint8Array,
  signatureHeader: string | null | undefined,
  secrets: string | readonly string[],
  opts: { toleranceSeconds?: number; nowSeconds?: number } = {},
): WebhookEvent {
  const raw = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody);
  const r = verifySignature(raw, signatureHeader ?? undefined, secrets, opts);
  if (!r.ok) throw new WebhookSignatureError(r.reason);
  return JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8')) as WebhookEvent;
}
