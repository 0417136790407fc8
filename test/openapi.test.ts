// GET /openapi/v1.json is a valid OpenAPI 3.1.1 document covering every route and its error codes.
import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { allRoutes } from '../api/routes/index.js';
import { routeErrorCodes } from '../api/openapi.js';
import { ERROR_CODES } from '../kernel/error-catalog.js';
import { startTestApp } from './helpers/app.js';

t.test('the served OpenAPI document', async (t) => {
  const a = await startTestApp();
  t.teardown(() => a.stop());
  const r = await a.call('GET', '/openapi/v1.json');
  t.equal(r.status, 200);
  const doc = r.body;
  t.equal(doc.openapi, '3.1.1');
  t.equal(doc.info.version, '2026-07-12');

  const validator = new Validator();
  const res = await validator.validate(structuredClone(doc));
  t.equal(validator.version, '3.1', 'validated as 3.1');
  t.ok(res.valid, `valid: ${JSON.stringify(res.errors)?.slice(0, 2000)}`);

  const routes = allRoutes(a.config).filter((x) => !x.hidden);
  for (const route of routes) {
    const op = doc.paths[route.path]?.[route.method.toLowerCase()];
    t.ok(op, `${route.method} ${route.path} documented`);
    if (!op) continue;
    t.same(new Set(op['x-error-codes']), new Set(routeErrorCodes(route)), `${route.path} error codes`);
    for (const code of op['x-error-codes']) t.ok(ERROR_CODES.includes(code), `${code} is in the catalog`);
  }
  const createCustomer = doc.paths['/v1/customers'].post;
  t.ok(createCustomer.responses['401'], '401 documented');
  t.ok(createCustomer.responses['429'], '429 documented');
  t.ok(createCustomer.parameters.some((p: any) => p.name === 'Idempotency-Key'), 'Idempotency-Key documented');
});

t.test('a broken document is rejected by the validator (the check can fail)', async (t) => {
  const validator = new Validator();
  const res = await validator.validate({ openapi: '3.1.1', info: { title: 'x' }, paths: { 'no-slash': {} } });
  t.notOk(res.valid);
});
