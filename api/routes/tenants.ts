// Operator API for tenants (decisions.md §2), behind X-Admin-Key: tenants, their API keys, settings.
import {
  apiKeyResource,
  createApiKeyBody,
  createTenantBody,
  tenantResource,
  type CreateApiKeyBody,
  type CreateTenantBody,
} from '../../schemas/admin.js';
import { defineRoute } from '../route.js';
import { tenantSettingsBody, type TenantSettingsBody } from '../../schemas/refunds.js';

export const tenantRoutes = [
  defineRoute<CreateTenantBody>({
    method: 'POST',
    path: '/admin/tenants',
    auth: 'admin',
    body: createTenantBody,
    summary: 'Create a tenant with one sk_test_ and one sk_live_ key (scope "*")',
    description: 'The full keys are shown only in this response; only their hashes are stored.',
    tags: ['Operator'],
    responses: { 201: { description: 'The tenant and its two keys', schema: tenantResource } },
    handler: async (ctx) => ({ status: 201, body: await ctx.deps.tenants.create(ctx.body.name) }),
  }),
  defineRoute<CreateApiKeyBody>({
    method: 'POST',
    path: '/admin/tenants/{tenantId}/api_keys',
    auth: 'admin',
    body: createApiKeyBody,
    notFound: 'tenant.not_found',
    summary: 'Issue an API key with the given mode and scopes',
    tags: ['Operator'],
    responses: { 201: { description: 'The key, shown in full only here', schema: apiKeyResource } },
    errors: ['tenant.not_found'],
    handler: async (ctx) => ({
      status: 201,
      body: await ctx.deps.tenants.createApiKey(ctx.params.tenantId, ctx.body.livemode, [...ctx.body.scopes]),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/admin/tenants/{tenantId}/api_keys',
    auth: 'admin',
    notFound: 'tenant.not_found',
    summary: "List a tenant's API keys (never the keys themselves)",
    description: 'Newest first; each with `key_prefix` (the first characters), mode, scopes and whether it is revoked.',
    tags: ['Operator'],
    responses: { 200: { description: 'The keys' } },
    errors: ['tenant.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.tenants.listApiKeys(ctx.params.tenantId) }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/admin/tenants/{tenantId}/api_keys/{keyId}',
    auth: 'admin',
    notFound: 'api_key.not_found',
    summary: 'Revoke an API key; it answers 401 on every API process at once',
    tags: ['Operator'],
    responses: { 200: { description: 'The revoked key', schema: apiKeyResource } },
    errors: ['tenant.not_found', 'api_key.not_found'],
    handler: async (ctx) => {
      const k = await ctx.deps.tenants.revokeApiKey(ctx.params.tenantId, ctx.params.keyId);
      return { status: 200, body: { id: k.id, object: 'api_key', revoked: true } };
    },
  }),
  defineRoute<TenantSettingsBody>({
    method: 'PATCH',
    path: '/admin/tenants/{tenantId}/settings',
    auth: 'admin',
    body: tenantSettingsBody,
    notFound: 'tenant.not_found',
    summary: "Change a tenant's settings (refund four-eyes threshold)",
    description: '`refund_approval_threshold_minor`: refunds above it answer 202 with a pending refund_approval; `refund_approval_disabled: true` removes it.',
    tags: ['Operator'],
    responses: { 200: { description: 'The settings' } },
    errors: ['tenant.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.tenants.updateSettings(ctx.params.tenantId, ctx.body) }),
  }),
];
