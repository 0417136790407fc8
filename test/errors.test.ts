// The error catalog, the status rule, the envelope and /docs/errors agree.
import t from 'tap';
import { ERROR_CATALOG, ERROR_CODES, SPEC_STATUS } from '../kernel/error-catalog.js';
import { ApiError, envelope, statusForCode } from '../kernel/errors.js';
import { errorDocsHtml } from '../api/error-docs.js';
import { startTestApp } from './helpers/app.js';

t.test('the status rule gives every status the spec tables show', async (t) => {
  for (const [code, status] of Object.entries(SPEC_STATUS)) t.equal(statusForCode(code), status, code);
  // spec: "So refund.exceeds_refundable, refund.nothing_refundable and attempt.not_capturable are 400"
  t.equal(statusForCode('refund.exceeds_refundable'), 400);
  t.equal(statusForCode('refund.nothing_refundable'), 400);
  t.equal(statusForCode('attempt.not_capturable'), 400);
  t.equal(statusForCode('anything.revoked'), 409);
  t.equal(statusForCode('x.some_conflict'), 409);
  t.equal(statusForCode('x.unauthorized'), 403);
  t.equal(statusForCode('whatever'), 400);
});

t.test('every code has a family and a doc', async (t) => {
  const families = new Set(['invalid_request_error', 'authentication_error', 'authorization_error', 'idempotency_error', 'rate_limit_error', 'api_error']);
  for (const code of ERROR_CODES) {
    t.ok(families.has(ERROR_CATALOG[code].type), `${code} family`);
    t.ok(ERROR_CATALOG[code].doc.length > 10, `${code} doc`);
  }
  t.equal(ERROR_CATALOG.rate_limit_exceeded.type, 'rate_limit_error');
  t.equal(ERROR_CATALOG['api_key.missing_or_invalid'].type, 'authentication_error');
  t.equal(ERROR_CATALOG.idempotency_key_reused.type, 'idempotency_error');
});

t.test('the docs page has an anchor for every code', async (t) => {
  const html = errorDocsHtml();
  for (const code of ERROR_CODES) t.ok(html.includes(`id="err-${code}"`), code);
});

t.test('envelope shape', async (t) => {
  const e = envelope(new ApiError('customer.not_found'), 'req-1', 'https://x.test');
  t.same(Object.keys(e.error).sort(), ['code', 'doc_url', 'message', 'request_id', 'type']);
  t.equal(e.error.doc_url, 'https://x.test/docs/errors#err-customer.not_found');
});

t.test('errors over HTTP carry the envelope, request id and doc anchor', async (t) => {
  const a = await startTestApp();
  t.teardown(() => a.stop());
  const cases: Array<[string, string, object, string, number]> = [
    ['GET', '/v1/customers', {}, 'api_key.missing_or_invalid', 401],
    ['GET', '/nowhere', {}, 'route.not_found', 404],
    ['POST', '/admin/tenants', { body: {} }, 'admin_key.missing_or_invalid', 401],
  ];
  for (const [method, path, opts, code, status] of cases) {
    const r = await a.call(method, path, opts);
    t.equal(r.status, status, `${path} status`);
    t.equal(r.body.error.code, code);
    t.ok(r.body.error.type && r.body.error.message, 'type and message');
    t.equal(r.body.error.request_id, r.headers.get('x-request-id'), 'request_id equals X-Request-Id');
    t.match(r.body.error.doc_url, new RegExp(`/docs/errors#err-${code.replace('.', '\\.')}$`));
  }
  const page = await a.call('GET', '/docs/errors');
  t.equal(page.status, 200);
  t.match(page.headers.get('content-type'), /text\/html/);
  t.ok(page.text.includes('id="err-api_key.missing_or_invalid"'));
  t.ok(page.headers.get('x-request-id'), 'X-Request-Id on every response');
});
