// Inbound notices of the real card connectors (spec: `POST /webhooks/in/{provider}/{tenantId}`;
// docs/routing.md).
import { defineRoute } from '../route.js';

const ack = { type: 'object', properties: { object: { const: 'inbound_acknowledgement' }, received: { type: 'boolean' }, provider: { type: 'string' }, type: { type: 'string' }, matched: { type: 'boolean' } } } as const;

export const cardWebhookRoutes = [
  defineRoute({
    method: 'POST',
    path: '/webhooks/in/conekta/{tenantId}',
    auth: 'none',
    body: { type: 'object' },
    signedBody: true,
    notFound: 'tenant.not_found',
    bodyLimit: 256 * 1024,
    summary: "Conekta's webhook delivery (provider evidence)",
    description:
      'Verified with the tenant\'s `webhook_public_key` (Conekta\'s webhook key, stored with the connector\'s credentials): header `DIGEST` is Conekta\'s RSA encryption (its private key) of the raw body\'s hex SHA-256, base64 (docs/routing.md). A chargeback names its charge (`charge_id`). ' +
      'An event about an order (`order.*`, `charge.*`) becomes a notice about its attempt; the worker asks Conekta for the order before the intent changes. A chargeback event opens the attempt\'s dispute. Unknown orders are acknowledged (`matched: false`).',
    tags: ['Routing'],
    responses: { 200: { description: 'Acknowledgement', schema: ack } },
    errors: ['webhook_in.invalid_signature', 'webhook_in.invalid_body'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.cardWebhooks.conekta(ctx.params.tenantId!, ctx.rawBody ?? JSON.stringify(ctx.body), ctx.header('digest')) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/webhooks/in/openpay/{tenantId}',
    auth: 'none',
    body: { type: 'object' },
    notFound: 'tenant.not_found',
    bodyLimit: 256 * 1024,
    summary: "Openpay's webhook delivery (provider evidence)",
    description:
      'Openpay signs nothing: the delivery must carry the webhook\'s user and password (HTTP Basic) that the tenant stored as `webhook_user`/`webhook_password`, and the charge is re-read from Openpay before anything changes. `verification` pings are acknowledged and their code kept for the tenant (`GET /v1/routing/connectors/openpay` → `webhook.verification_code`, to type into Openpay\'s dashboard). A chargeback event opens the attempt\'s dispute.',
    tags: ['Routing'],
    responses: { 200: { description: 'Acknowledgement', schema: ack } },
    errors: ['webhook_in.invalid_signature', 'webhook_in.invalid_body'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.cardWebhooks.openpay(ctx.params.tenantId!, ctx.body, ctx.header('authorization')) }),
  }),
];
