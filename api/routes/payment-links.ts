// Payment links: created with the API key, paid on the public /pay page; the demo page makes test links.
import { publicView, type Caller } from '../../actors/checkout.js';
import { createPaymentLinkBody, paymentLinkList, paymentLinkResource, type CreatePaymentLinkBody } from '../../schemas/checkout.js';
import { ApiError } from '../../kernel/errors.js';
import { demoPage, messagePage, pageCsp, payPage } from '../pages.js';
import { defineRoute, type RouteDef } from '../route.js';

/** The page's Origin and the Host it asked: the merchant may restrict origins (decisions §7). */
const caller = (ctx: { header(name: string): string | undefined }): Caller => ({ origin: ctx.header('origin'), host: ctx.header('host') });

const html = (status: number, text: string, logoUrl?: string | null) => ({ status, contentType: 'text/html', text, headers: { 'Content-Security-Policy': pageCsp(logoUrl), 'Cache-Control': 'no-store' } });

export const paymentLinkRoutes: RouteDef[] = [
  defineRoute({
    method: 'POST',
    path: '/public/payment_links/{slug}/intent',
    auth: 'public',
    notFound: 'payment_link.not_found',
    summary: 'The intent that pays a payment link (public projection plus client_secret)',
    description: 'Created once per single-use link and reused while unpaid; a new one per call for reusable links.',
    tags: ['Checkout'],
    responses: { 200: { description: 'The intent to pay, with its client_secret' } },
    errors: ['payment_link.not_found', 'checkout.origin_unauthorized'],
    handler: async (ctx) => {
      const intent = await ctx.deps.links.payableIntent(ctx.params.slug, caller(ctx));
      return { status: 200, body: { ...publicView({ ...intent, next_action: null } as never), client_secret: intent.client_secret } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/pay/{slug}',
    auth: 'none',
    notFound: 'payment_link.not_found',
    summary: 'The payment-link page (HTML with the kit)',
    description: 'Carries the intent it pays in a `data-payment-intent` attribute. A paid single-use link shows as paid.',
    tags: ['Checkout'],
    responses: { 200: { description: 'HTML page', contentType: 'text/html' }, 404: { description: 'Unknown link', contentType: 'text/html' } },
    handler: async (ctx) => {
      let co;
      try {
        co = await ctx.deps.links.intentForLink(ctx.params.slug);
      } catch (e) {
        if (e instanceof ApiError && e.code === 'payment_link.not_found') return html(404, messagePage('Enlace no encontrado', 'Este enlace de pago no existe.', 'link-not-found'));
        throw e;
      }
      if (!co.intent) {
        return co.link.paid_at
          ? html(200, messagePage('Pagado', `Este enlace ya fue pagado. (${co.link.concepto})`, 'link-paid'))
          : html(200, messagePage('Inactivo', 'Este enlace de pago ya no está activo.', 'link-inactive'));
      }
      const page = payPage({ intentId: co.intent.id, clientSecret: co.intent.client_secret, title: `${co.merchant} · ${co.link.concepto}`, slug: co.link.slug, replaced: co.replaced });
      return html(200, page, co.logoUrl);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/demo',
    auth: 'none',
    summary: 'Try the whole flow in test mode with the demo tenant',
    tags: ['Checkout'],
    responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
    handler: async (ctx) => html(200, demoPage(!!(await ctx.deps.links.demoTenantId()))),
  }),
  defineRoute<{ amount_minor: number; concepto: string }>({
    method: 'POST',
    path: '/demo/links',
    auth: 'none',
    body: createPaymentLinkBody,
    summary: 'Create a test-mode payment link for the demo tenant',
    tags: ['Checkout'],
    responses: { 201: { description: 'The link', schema: paymentLinkResource } },
    errors: ['payment_link.not_found'],
    handler: async (ctx) => {
      const tenantId = await ctx.deps.links.demoTenantId();
      if (!tenantId) throw new ApiError('payment_link.not_found', 'No demo tenant on this deployment (SEED_DEMO_TENANT).');
      return { status: 201, body: await ctx.deps.links.create({ tenantId, livemode: false }, ctx.body as CreatePaymentLinkBody) };
    },
  }),
  defineRoute<CreatePaymentLinkBody>({
    method: 'POST',
    path: '/v1/payment_links',
    auth: 'api_key',
    scope: 'payments:write',
    idempotency: 'optional',
    body: createPaymentLinkBody,
    summary: 'Create a payment link',
    description: '`reusable` defaults to false (single-use: paid once). The page is `url` (`/pay/{slug}`).',
    tags: ['Payment links'],
    responses: { 201: { description: 'The link', schema: paymentLinkResource } },
    handler: async (ctx) => ({ status: 201, body: await ctx.deps.links.create(ctx.principal, ctx.body, ctx.idem) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/payment_links',
    auth: 'api_key',
    scope: 'payments:read',
    summary: 'List payment links, newest first',
    tags: ['Payment links'],
    responses: { 200: { description: 'The links', schema: paymentLinkList } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.links.list(ctx.principal) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/payment_links/{id}',
    auth: 'api_key',
    scope: 'payments:read',
    notFound: 'payment_link.not_found',
    summary: 'Read a payment link',
    tags: ['Payment links'],
    responses: { 200: { description: 'The link', schema: paymentLinkResource } },
    errors: ['payment_link.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.links.get(ctx.principal, ctx.params.id) }),
  }),
];
