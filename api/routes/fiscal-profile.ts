// The tenant's fiscal profile (service-spec Endpoints > Invoices; decisions.md §6).
import { fiscalProfileBody, fiscalProfileResource, type FiscalProfileBody } from '../../schemas/invoices.js';
import { defineRoute, type RouteDef } from '../route.js';

export const fiscalProfileRoutes: RouteDef[] = [
  defineRoute<FiscalProfileBody>({
    method: 'PUT',
    path: '/v1/fiscal_profile',
    auth: 'api_key',
    scope: 'invoices:write',
    body: fiscalProfileBody,
    bodyLimit: 64 * 1024,
    summary: 'Set the fiscal profile of this mode (issuer, PAC, CSD, self-invoice portal)',
    description:
      'One profile per tenant and mode (the key\'s): a test key sets the test profile, a live key the live one. `pac_provider` is `sim` (test mode only) or `finkok` (live only); ' +
      'a mismatch is answered when invoicing (`invoice.livemode_mismatch`). `pac_password` is write-only: never returned nor logged; omitted keeps the stored one, "" removes it. ' +
      'Optional `csd` uploads the tenant\'s CSD (`cer_base64`, `key_base64`, `password`): checked (SAT certificate number, key opens and belongs to the certificate, RFC = the profile\'s, not expired in live mode, never SAT\'s public test CSD in live mode), ' +
      'stored encrypted, never returned. Without an uploaded CSD, test mode seals with SAT\'s public test CSD; live mode cannot invoice. ' +
      '`self_invoice_slug` must be unique across tenants; `self_invoice_enabled` needs it.',
    tags: ['Invoices'],
    responses: { 200: { description: 'The profile (without secrets)', schema: fiscalProfileResource } },
    errors: ['fiscal_profile.invalid', 'fiscal_profile.slug_conflict', 'invoice.csd_invalid', 'invoice.test_csd_in_live'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.fiscalProfile.put(ctx.principal, ctx.body) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/fiscal_profile',
    auth: 'api_key',
    scope: 'invoices:write',
    summary: 'Read the fiscal profile of this mode (never the PAC password nor the CSD key)',
    tags: ['Invoices'],
    responses: { 200: { description: 'The profile', schema: fiscalProfileResource } },
    errors: ['invoice.fiscal_profile_missing'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.fiscalProfile.get(ctx.principal) }),
  }),
];
