// Inbound notices of the real card connectors (`POST /webhooks/in/{provider}/{tenantId}`): checked
// for authenticity (Conekta: DIGEST signature; Openpay: the webhook's Basic user/password), then
// written to the inbox as a notice about the attempt they concern; the worker asks the provider
// for the charge (retrieve) before anything changes (actors/payment-intents.ts processNotice), so
// a notice is a hint, never the evidence itself. Chargebacks open the attempt's dispute.
import type { Sql } from '../kernel/db.js';
import { ApiError } from '../kernel/errors.js';
import { verifyConektaWebhook, type ConektaAcquirer } from '../connectors/card/conekta.js';
import { readOpenpayWebhook } from '../connectors/card/openpay.js';
import { isObj } from '../connectors/card/http.js';
import { openDispute } from './disputes.js';
import type { PaymentIntents } from './payment-intents.js';
import type { Routing } from './routing.js';

export class CardWebhooks {
  constructor(private d: { sql: Sql; routing: Pick<Routing, 'credentialsFor' | 'recordVerification'>; payments: Pick<PaymentIntents, 'receiveNotice'>; conekta: Pick<ConektaAcquirer, 'orderOfCharge'> }) {}

  private async attemptBy(connector: string, tenantId: string, where: { providerRef?: string; providerKey?: string }) {
    const rows = where.providerKey
      ? await this.d.sql`select id, payment_intent_id, livemode from attempts where tenant_id = ${tenantId} and connector_key = ${connector} and provider_key = ${where.providerKey}`
      : await this.d.sql`select id, payment_intent_id, livemode from attempts where tenant_id = ${tenantId} and connector_key = ${connector} and provider_ref = ${where.providerRef ?? ''}`;
    return rows[0] as { id: string; payment_intent_id: string; livemode: boolean } | undefined;
  }

  private async apply(connector: string, tenantId: string, eventId: string, type: string, attempt: { id: string; payment_intent_id: string; livemode: boolean } | undefined, reason?: string) {
    const ack = { object: 'inbound_acknowledgement' as const, received: true, provider: connector, type };
    if (!attempt) return { ...ack, matched: false };
    if (/chargeback|dispute/.test(type)) {
      await this.d.sql.begin(async (tx) => {
        await tx`
          insert into inbox (id, tenant_id, livemode, kind, source, subject_id, dedupe_key, payload, processed_at)
          values (gen_random_uuid(), ${tenantId}, ${attempt.livemode}, 'attempt.dispute', ${`webhook:${connector}`}, ${attempt.id}, ${`${connector}:${tenantId}:${eventId}`}, ${tx.json({ type } as never)}, now())
          on conflict (dedupe_key, tenant_id) do nothing`;
        await openDispute(tx, attempt.id, reason ?? 'general');
      });
      return { ...ack, matched: true };
    }
    await this.d.payments.receiveNotice({ tenantId, livemode: attempt.livemode, attemptId: attempt.id, intentId: attempt.payment_intent_id, source: `webhook:${connector}`, dedupeKey: `${connector}:${tenantId}:${eventId}`, payload: { type } });
    return { ...ack, matched: true };
  }

  async conekta(tenantId: string, rawBody: string, digest: string | undefined) {
    let livemode = false;
    try {
      livemode = (JSON.parse(rawBody) as { livemode?: boolean }).livemode === true;
    } catch {
      throw new ApiError('webhook_in.invalid_body', 'The body is not JSON.');
    }
    const creds = await this.d.routing.credentialsFor(tenantId, livemode, 'conekta');
    const ev = verifyConektaWebhook(rawBody, digest, creds?.webhook_public_key);
    if (!ev) throw new ApiError('webhook_in.invalid_signature');
    const o = ev.object;
    // A chargeback names its charge (`charge_id`, Conekta's chargeback object), not its order: the
    // adapter booked charge id → order id when the order was answered or found.
    const byCharge = typeof o.charge_id === 'string' ? await this.d.conekta.orderOfCharge(o.charge_id) : null;
    const orderId = byCharge ?? (typeof o.order_id === 'string' ? o.order_id : o.object === 'order' && typeof o.id === 'string' ? o.id : undefined);
    const attempt = orderId ? await this.attemptBy('conekta', tenantId, { providerRef: orderId }) : undefined;
    const eventId = String((JSON.parse(rawBody) as { id?: string }).id ?? `${ev.type}:${orderId}`);
    return this.apply('conekta', tenantId, eventId, ev.type, attempt, typeof o.reason === 'string' ? o.reason : undefined);
  }

  async openpay(tenantId: string, body: unknown, authorization: string | undefined) {
    const peek = isObj(body) && isObj(body.transaction) ? body.transaction : undefined;
    const orderId = typeof peek?.order_id === 'string' ? peek.order_id : undefined;
    const attempt = orderId ? await this.attemptBy('openpay', tenantId, { providerKey: orderId }) : undefined;
    // The mode is the attempt's; a verification ping (no transaction) is checked against each mode's
    // credentials (live first), and its mode is the one whose webhook user and password it carries.
    const modes = attempt ? [attempt.livemode] : [true, false];
    let ev: ReturnType<typeof readOpenpayWebhook> = null;
    let mode: boolean | undefined;
    let anyCreds = false;
    for (const m of modes) {
      const creds = await this.d.routing.credentialsFor(tenantId, m, 'openpay');
      if (!creds) continue;
      anyCreds = true;
      ev = readOpenpayWebhook(body, authorization, creds);
      if (ev) {
        mode = m;
        break;
      }
    }
    if (!anyCreds) throw new ApiError('webhook_in.invalid_signature', 'No Openpay credentials are stored for this tenant.');
    if (!ev || mode === undefined) throw new ApiError('webhook_in.invalid_signature');
    if (ev.type === 'verification') {
      // The tenant types this code into Openpay's dashboard to activate the webhook: kept, and shown in
      // GET /v1/routing/connectors/openpay (issue 28.2).
      if (ev.verificationCode) await this.d.routing.recordVerification(tenantId, mode, 'openpay', ev.verificationCode);
      return { object: 'inbound_acknowledgement' as const, received: true, provider: 'openpay', type: ev.type, matched: false };
    }
    const eventId = `${ev.type}:${String(peek?.id ?? orderId)}`;
    return this.apply('openpay', tenantId, eventId, ev.type, attempt, typeof peek?.reason === 'string' ? peek.reason : undefined);
  }
}
