// Sub-merchant onboarding applications (decisions.md §3) and the operator's decisions on them (§2).
// docs/connect.md has the choices made where the spec is silent.
import {
  applicationList,
  applicationListQuery,
  applicationResource,
  createApplicationBody,
  decisionBody,
  patchApplicationBody,
  type ApplicationListQuery,
  type CreateApplicationBody,
  type DecisionBody,
  type PatchApplicationBody,
} from '../../schemas/connect.js';
import { LIMIT } from './common.js';
import { defineRoute } from '../route.js';


export const onboardingRoutes = [
  defineRoute<CreateApplicationBody>({
    method: 'POST',
    path: '/v1/onboarding/applications',
    auth: 'api_key',
    scope: 'payments:write',
    idempotency: 'optional',
    body: createApplicationBody,
    summary: 'Create a sub-merchant onboarding application (draft)',
    description: 'Minimal: `legal_name`, `person_type` (`fisica` or `moral`), `contact_email`; `rfc` and `clabe` may come now or with PATCH. Answers the application in `draft`. The CLABE is stored encrypted and shown only as `clabe_masked`.',
    tags: ['Onboarding'],
    responses: { 201: { description: 'The application, draft', schema: applicationResource } },
    errors: ['onboarding_application.invalid_legal_name', 'onboarding_application.invalid_person_type', 'onboarding_application.invalid_contact_email'],
    handler: async (ctx) => ({ status: 201, body: await ctx.deps.onboarding.create(ctx.principal, ctx.body as never, ctx.idem) }),
  }),
  defineRoute<PatchApplicationBody>({
    method: 'PATCH',
    path: '/v1/onboarding/applications/{id}',
    auth: 'api_key',
    scope: 'payments:write',
    idempotency: 'optional',
    body: patchApplicationBody,
    notFound: 'onboarding_application.not_found',
    summary: 'Edit an application (draft or needs_info only)',
    description: 'Null or omitted fields are left as they are. `documents[]` (`ine`, `comprobante_domicilio`, `constancia_fiscal`, `caratula_estado_cuenta`, each with `reference` and `reference_hash`): a document replaces an earlier one of the same type. An approved or rejected application answers `onboarding_application.transition_conflict`.',
    tags: ['Onboarding'],
    responses: { 200: { description: 'The application', schema: applicationResource } },
    errors: ['onboarding_application.not_found', 'onboarding_application.transition_conflict', 'onboarding_application.invalid_document', 'onboarding_application.invalid_legal_name', 'onboarding_application.invalid_person_type', 'onboarding_application.invalid_contact_email'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.onboarding.patch(ctx.principal, ctx.params.id, ctx.body as never, ctx.idem) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/onboarding/applications/{id}/submit',
    auth: 'api_key',
    scope: 'payments:write',
    idempotency: 'optional',
    notFound: 'onboarding_application.not_found',
    summary: 'Submit an application: synchronous verification',
    description:
      'Missing fields (`legal_name`, `person_type`, `contact_email`, `rfc`, `clabe`; the message lists them) or missing documents (all four are required) answer 400 and change nothing. Otherwise the application resolves in this call (`resolved_by: automatic_verifier`): ' +
      '`needs_info` with `status_reason` when the RFC is malformed (validate-rfc; 13 characters for a persona física, 12 for a moral) or the CLABE is (18 digits, 3-7-1 check digit, a bank code Banxico assigned); `rejected` when the RFC is on a sanctions or blocked-taxpayer list (test mode: the simulated SAT 69-B list of docs/connect.md); otherwise `approved`. ' +
      'A later submit of a `needs_info` application verifies again. Events `onboarding_application.approved`, `.needs_info`, `.rejected`.',
    tags: ['Onboarding'],
    responses: { 200: { description: 'The resolved application', schema: applicationResource } },
    errors: ['onboarding_application.not_found', 'onboarding_application.missing_fields', 'onboarding_application.missing_documents', 'onboarding_application.transition_conflict'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.onboarding.submit(ctx.principal, ctx.params.id, ctx.idem) }),
  }),
  defineRoute<unknown, ApplicationListQuery>({
    method: 'GET',
    path: '/v1/onboarding/applications',
    auth: 'api_key',
    scope: 'payments:read',
    query: applicationListQuery,
    summary: 'List applications (without documents)',
    description: `Filter by \`status\`. ${LIMIT}`,
    tags: ['Onboarding'],
    responses: { 200: { description: 'The applications', schema: applicationList } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.onboarding.list(ctx.principal, ctx.query) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/onboarding/applications/{id}',
    auth: 'api_key',
    scope: 'payments:read',
    notFound: 'onboarding_application.not_found',
    summary: 'Read an application (with documents)',
    tags: ['Onboarding'],
    responses: { 200: { description: 'The application', schema: applicationResource } },
    errors: ['onboarding_application.not_found'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.onboarding.get(ctx.principal, ctx.params.id) }),
  }),
  ...(['approve', 'reject', 'request-info'] as const).map((action) =>
    defineRoute<DecisionBody>({
      method: 'POST',
      path: `/admin/tenants/{tenantId}/onboarding/applications/{id}/${action}`,
      auth: 'admin',
      body: decisionBody,
      notFound: 'onboarding_application.not_found',
      summary:
        action === 'approve' ? 'Operator: approve an application' : action === 'reject' ? 'Operator: reject an application' : 'Operator: ask the applicant for more information (needs_info)',
      description:
        'On a `draft` or `needs_info` application (otherwise `onboarding_application.transition_conflict`). `reason` becomes `status_reason`; `resolved_by` is `operator`.' +
        (action === 'approve' ? ' Approval needs a complete application (the same 400s as submit).' : ''),
      tags: ['Operator'],
      responses: { 200: { description: 'The application', schema: applicationResource } },
      errors: ['onboarding_application.not_found', 'onboarding_application.transition_conflict', ...(action === 'approve' ? (['onboarding_application.missing_fields', 'onboarding_application.missing_documents'] as const) : [])],
      handler: async (ctx) => ({
        status: 200,
        body: await ctx.deps.onboarding.operator(ctx.params.tenantId, ctx.params.id, action === 'request-info' ? 'request_info' : action, ctx.body.reason),
      }),
    }),
  ),
];
