// Public checkout (no API key): a payment intent seen and confirmed with its client secret, the
// browser kit and its assets, the simulated 3-D Secure page, and the tenant's checkout settings.
import QRCode from 'qrcode';
import { PUBLIC_NOT_FOUND_MESSAGE, type Caller } from '../../actors/checkout.js';
import { BARCODE_DATA, code128Svg } from '../../formats/barcode.js';
import {
  checkoutConfigResource,
  checkoutSettingsBody,
  checkoutSettingsResource,
  publicConfirmBody,
  publicIntentResource,
  type CheckoutSettingsBody,
  type PublicConfirmBody,
} from '../../schemas/checkout.js';
import { pageCsp, threeDsPage } from '../pages.js';
import { assetRoute } from './common.js';
import { defineRoute, type RouteDef } from '../route.js';

const secretQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { client_secret: { type: 'string', maxLength: 200, description: 'Legacy: prefer the X-Service-Client-Secret header.' } },
} as const;

/** The page's Origin and the Host it asked: the merchant may restrict origins (decisions §7). */
const caller = (ctx: { header(name: string): string | undefined; ip?: string }): Caller => ({ origin: ctx.header('origin'), host: ctx.header('host'), ...(ctx.ip ? { ip: ctx.ip } : {}) });

const html = (status: number, text: string, logoUrl?: string | null) => ({ status, contentType: 'text/html', text, headers: { 'Content-Security-Policy': pageCsp(logoUrl), 'Cache-Control': 'no-store' } });

export const checkoutRoutes: RouteDef[] = [
  defineRoute<unknown, { client_secret?: string }>({
    method: 'GET',
    path: '/public/payment_intents/{id}',
    auth: 'public',
    query: secretQuery,
    notFound: 'payment_intent.not_found',
    notFoundMessage: PUBLIC_NOT_FOUND_MESSAGE,
    summary: 'Read a payment intent with its client secret (public projection)',
    description: 'Header `X-Service-Client-Secret` (legacy: query `client_secret`). An unknown id and a wrong secret answer the very same 404. The kit polls this every 2 seconds until a terminal state.',
    tags: ['Checkout'],
    responses: { 200: { description: 'The public projection', schema: publicIntentResource } },
    errors: ['payment_intent.not_found', 'checkout.origin_unauthorized'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.checkout.get(ctx.params.id, ctx.header('x-service-client-secret') ?? ctx.query.client_secret, caller(ctx)) }),
  }),
  defineRoute<PublicConfirmBody>({
    method: 'POST',
    path: '/public/payment_intents/{id}/confirm',
    auth: 'public',
    body: publicConfirmBody,
    notFound: 'payment_intent.not_found',
    notFoundMessage: PUBLIC_NOT_FOUND_MESSAGE,
    summary: 'Confirm from the browser with the client secret',
    description:
      'Same semantics as the authenticated confirm (tip replaces when sent); answers the public projection with `status = processing`. ' +
      '`return_url` (optional): where the 3-D Secure page sends the shopper back. A checkout without tips (a receivable, or `tips_enabled: false`) refuses a tip. ' +
      'CORS: every `/public/*` answer carries `Access-Control-Allow-Origin: *` and preflights are answered; the client secret is the credential (no cookies). A merchant that lists `allowed_origins` gets other pages refused with 403 `checkout.origin_unauthorized`.',
    tags: ['Checkout'],
    responses: { 200: { description: 'The public projection, processing', schema: publicIntentResource } },
    errors: ['payment_intent.not_found', 'payment_intent.not_confirmable', 'payment_intent.no_route', 'payment_intent.concurrent_modification', 'payment_intent.blocked_by_risk', 'payment_intent.invalid_tip', 'payment_intent.invalid_return_url', 'checkout.origin_unauthorized'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.checkout.confirm(ctx.params.id, ctx.body, caller(ctx)) }),
  }),
  defineRoute<unknown, { client_secret?: string }>({
    method: 'GET',
    path: '/public/payment_intents/{id}/checkout-config',
    auth: 'public',
    query: secretQuery,
    notFound: 'payment_intent.not_found',
    notFoundMessage: PUBLIC_NOT_FOUND_MESSAGE,
    summary: 'What the checkout page needs: amount, methods, tip suggestions, merchant name',
    tags: ['Checkout'],
    responses: { 200: { description: 'The checkout configuration', schema: checkoutConfigResource } },
    errors: ['payment_intent.not_found', 'checkout.origin_unauthorized'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.checkout.config(ctx.params.id, ctx.header('x-service-client-secret') ?? ctx.query.client_secret, caller(ctx)) }),
  }),
  defineRoute<unknown, { data: string }>({
    method: 'GET',
    path: '/public/qr.svg',
    auth: 'public',
    query: { type: 'object', additionalProperties: false, required: ['data'], properties: { data: { type: 'string', minLength: 1, maxLength: 600 } } },
    summary: 'A QR code (SVG) for a CoDi payload',
    tags: ['Checkout'],
    responses: { 200: { description: 'SVG image', contentType: 'image/svg+xml' } },
    handler: async (ctx) => ({ status: 200, contentType: 'image/svg+xml', text: await QRCode.toString(ctx.query.data, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' }) }),
  }),
  defineRoute<unknown, { data: string }>({
    method: 'GET',
    path: '/public/barcode.svg',
    auth: 'public',
    query: { type: 'object', additionalProperties: false, required: ['data'], properties: { data: { type: 'string', pattern: BARCODE_DATA.source } } },
    summary: 'A Code 128 barcode (SVG) of an OXXO payment reference',
    description: 'Digits only (4 to 40). Rendered by bwip-js with the quiet zone scanners need.',
    tags: ['Checkout'],
    responses: { 200: { description: 'SVG image', contentType: 'image/svg+xml' } },
    handler: (ctx) => ({ status: 200, contentType: 'image/svg+xml', text: code128Svg(ctx.query.data), headers: { 'Cache-Control': 'public, max-age=86400' } }),
  }),
  ...['checkout.js', 'tokenize.js', 'checkout.css', 'demo.js', 'sim-3ds.js'].map((file) => assetRoute(file, 'Browser kit asset', 'Checkout')),
  defineRoute<unknown, { return_to?: string }>({
    method: 'GET',
    path: '/sim/3ds/{ref}',
    auth: 'none',
    query: { type: 'object', additionalProperties: false, properties: { return_to: { type: 'string', maxLength: 2000 } } },
    summary: "The sim provider's 3-D Secure page (test mode)",
    tags: ['Checkout'],
    responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
    handler: async (ctx) => {
      // The confirm's return_url (checked against the merchant's allowed origins when it lists them);
      // else, legacy, only a same-host checkout page may be returned to (no open redirect).
      let back = await ctx.deps.checkout.threeDsReturnUrl(ctx.params.ref);
      if (!back) {
        try {
          const u = new URL(ctx.query.return_to ?? '');
          if (u.host === ctx.header('host') && u.pathname.startsWith('/pay/')) back = u.toString();
        } catch {
          back = undefined;
        }
      }
      return html(200, threeDsPage(ctx.params.ref, back));
    },
  }),
  defineRoute<{ decision: 'approve' | 'decline' }>({
    method: 'POST',
    path: '/sim/3ds/{ref}/complete',
    auth: 'none',
    body: { type: 'object', additionalProperties: false, required: ['decision'], properties: { decision: { enum: ['approve', 'decline'] } } },
    summary: "Completes the sim provider's 3-D Secure step (test mode)",
    tags: ['Checkout'],
    responses: { 200: { description: 'Acknowledgement' } },
    errors: ['attempt.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.checkout.complete3ds(ctx.params.ref, ctx.body.decision === 'approve') }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/checkout_settings',
    auth: 'api_key',
    scope: 'payments:read',
    summary: "The merchant's branding on its checkout pages",
    tags: ['Checkout'],
    responses: { 200: { description: 'The checkout settings', schema: checkoutSettingsResource } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.checkout.getSettings(ctx.principal) }),
  }),
  defineRoute<CheckoutSettingsBody>({
    method: 'PUT',
    path: '/v1/checkout_settings',
    auth: 'api_key',
    scope: 'payments:write',
    body: checkoutSettingsBody,
    errors: ['checkout.invalid_settings'],
    summary: "Set the merchant's checkout: logo, privacy notice, terms, allowed origins, tips",
    description:
      'Replaces all three: a field omitted or null is removed. `logo_url` is an https URL or a `data:image/…;base64,` image (up to 100 kB); `privacy_url` (aviso de privacidad) and `terms_url` are https URLs. ' +
      'The checkout (`/pay/{slug}`, the kit) shows the logo (else the merchant\'s initials) and links to both in its footer. ' +
      '`allowed_origins` (null: any) restricts which pages may use the kit and `/public/*` (decisions §7); `tips_enabled` (default true) turns the tip chooser off.',
    tags: ['Checkout'],
    responses: { 200: { description: 'The checkout settings', schema: checkoutSettingsResource } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.checkout.putSettings(ctx.principal, ctx.body) }),
  }),
];
