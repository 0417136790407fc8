// Public signup (decisions.md §4; docs/signup.md) and the operator's view of signups.
import type { SignupBody } from '../../actors/signups.js';
import { defineRoute } from '../route.js';

const signupBody = {
  type: 'object',
  additionalProperties: false,
  required: ['email', 'legal_name', 'password'],
  'x-error-code': 'signup.invalid_body',
  properties: {
    email: { type: 'string', maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$', 'x-error-code': 'signup.invalid_body' },
    legal_name: { type: 'string', minLength: 1, maxLength: 200, 'x-error-code': 'signup.invalid_body' },
    password: { type: 'string', minLength: 10, maxLength: 200, 'x-error-code': 'signup.invalid_body', description: 'Hashed with scrypt; never stored or logged in clear.' },
  },
} as const;

const verifyBody = {
  type: 'object',
  additionalProperties: false,
  required: ['email', 'code'],
  'x-error-code': 'signup.invalid_body',
  properties: {
    email: { type: 'string', maxLength: 254, 'x-error-code': 'signup.invalid_body' },
    code: { type: 'string', minLength: 1, maxLength: 16, 'x-error-code': 'signup.invalid_code' },
  },
} as const;

const signupResource = {
  type: 'object',
  required: ['object', 'status'],
  properties: {
    object: { const: 'signup' },
    status: { type: 'string', enum: ['pending_verification', 'verified'] },
    email: { type: 'string' },
    code_expires_at: { type: 'string', format: 'date-time' },
    tenant_id: { type: 'string', format: 'uuid' },
    api_keys: { type: 'array', items: { type: 'object' }, description: 'On verification only: the new tenant\'s test and live keys, shown in full only here.' },
  },
} as const;

export const signupRoutes = [
  defineRoute<SignupBody>({
    method: 'POST',
    path: '/public/signup',
    auth: 'none',
    body: signupBody,
    bodyLimit: 8 * 1024,
    summary: 'Sign up: a pending account and a verification code sent by email',
    description: 'Answers 202 `{object: "signup", status: "pending_verification"}`. The 6-digit code goes out through the notification outbox and expires in 30 minutes. An email already signed up (verified, or pending with a live code) is 409 `signup.email_conflict`.',
    tags: ['Signup'],
    responses: { 202: { description: 'Pending verification', schema: signupResource } },
    errors: ['signup.invalid_body', 'signup.email_conflict'],
    handler: async (ctx) => ({ status: 202, body: await ctx.deps.signups.signup(ctx.body) }),
  }),
  defineRoute<{ email: string; code: string }>({
    method: 'POST',
    path: '/public/signup/verify',
    auth: 'none',
    body: verifyBody,
    bodyLimit: 4 * 1024,
    summary: 'Verify a signup: creates the tenant and its keys',
    description: 'The right code answers 200 `{object: "signup", status: "verified", tenant_id, api_keys}` (the keys shown only here). A wrong or expired code is 400 `signup.invalid_code`; after five wrong codes the signup is locked until the code expires (`signup.too_many_attempts`). No pending signup: 404; already verified: 409.',
    tags: ['Signup'],
    responses: { 200: { description: 'Verified', schema: signupResource } },
    errors: ['signup.invalid_body', 'signup.invalid_code', 'signup.too_many_attempts', 'signup.not_found', 'signup.already_verified_conflict'],
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.signups.verify(ctx.body) }),
  }),
  defineRoute<unknown, { email?: string }>({
    method: 'GET',
    path: '/admin/signups',
    auth: 'admin',
    query: { type: 'object', additionalProperties: false, properties: { email: { type: 'string', maxLength: 254 } } },
    summary: 'Signups (operator): with the pending verification code',
    tags: ['Operator'],
    responses: { 200: { description: 'Signups', schema: { type: 'object' } } },
    handler: async (ctx) => ({ status: 200, body: await ctx.deps.signups.list(ctx.query.email) }),
  }),
];
