// Property-based fuzzing of every operation of the served /openapi/v1.json against a real service
// process: malformed path parameters, query values, bodies and headers. Properties: the process
// stays up, no answer is a 5xx, every JSON error answer is the envelope whose request_id equals the
// X-Request-Id header. Seeded and reproducible: FUZZ_SEED=<n> (and FUZZ_RUNS=<n>) replay a run; a
// failure prints the seed and the shrunk request.
import { request } from 'node:http';
import fc from 'fast-check';
import t from 'tap';
import { freePort, httpCall, serviceProcesses, uuid, waitReady } from './helpers/app.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));

interface Op {
  method: string;
  path: string;
  query: string[];
  body: boolean;
  auth: 'api_key' | 'admin' | 'none';
  /** The operation documents an HTML answer for 404 (a shopper's page: /pay/{slug}, /factura/{slug}). */
  html404: boolean;
}

interface Req {
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body?: string;
}

function send(port: number, r: Req): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: r.method, path: r.path, headers: { ...r.headers, connection: 'close' }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(r.body);
  });
}

// ---- generators ---------------------------------------------------------------------------------
const hexByte = fc.integer({ min: 0, max: 255 }).map((n) => `%${n.toString(16).padStart(2, '0').toUpperCase()}`);
/** A path segment: valid ids, near-misses, and percent-encodings that do not decode (or decode to control characters). */
const segment = (validIds: string[]) =>
  fc.oneof(
    fc.constantFrom(...validIds, uuid(), 'nope', '%ZZ', '%E0%A4%A', '%00', 'a%00b', '%C0%AF', '%ED%A0%80', '%', '%%', '..', '%2F', 'x'.repeat(300)),
    fc.array(fc.oneof(hexByte, fc.stringMatching(/^[A-Za-z0-9._~-]{1,8}$/), fc.constant('%')), { minLength: 1, maxLength: 12 }).map((a) => a.join('')),
  );
const weird = fc.oneof(
  fc.constantFrom('1e400', '-1e400', '1e300', '99999999999999999999', 'NaN', 'Infinity', '-1', '0', '1', '2.5', '', 'true', 'null', '%00', 'a%00b', '%ZZ', '%E0%A4%A', 'x'.repeat(3000)),
  fc.string({ maxLength: 20 }).map(encodeURIComponent),
);
const queryString = (names: string[]) =>
  fc.array(fc.tuple(fc.oneof(fc.constantFrom(...names, '__proto__', 'constructor', 'x', '%00'), fc.stringMatching(/^[a-z_]{1,10}$/)), weird), { maxLength: 4 }).map((pairs) =>
    pairs.length ? `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}` : '',
  );
/** JSON-ish values with the strings that break storage. */
const nasty = fc.constantFrom('a\u0000b', '\ud800', 'x\udc00', '\u0000', 'é', '😀', '', ' ', 'x'.repeat(5000), '__proto__', 'tok_sim_ok', 'MXN', 'card', 'spei');
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    nasty,
    fc.string({ maxLength: 30 }),
    fc.constantFrom(0, -1, 1, 1.5, 1e300, -1e300, 2 ** 63, 99_999_999_999, 100_000_000_000, true, false, null),
    fc.integer(),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 12 }), nasty), tie('v'), { maxKeys: 4 }),
  ),
})).v;
const fields = ['amount_minor', 'currency', 'metadata', 'tip_minor', 'payment_token', 'payment_method', 'payment_method_id', 'client_secret', 'name', 'email', 'url', 'events', 'attempt_id', 'reason', 'concepto', 'reusable', 'livemode', 'scopes', 'provider_ref', 'seconds', 'decision', 'action', 'field', 'refund_approval_threshold_minor'];
const body = fc.oneof(
  fc.dictionary(fc.oneof(fc.constantFrom(...fields, '__proto__'), fc.string({ maxLength: 10 })), value, { maxKeys: 6 }).map((o) => JSON.stringify(o)),
  fc.constantFrom(
    '',
    'null',
    '[]',
    '"x"',
    '{',
    '{"a":1,}',
    '{"__proto__":{"amount_minor":5000},"currency":"MXN","tip_minor":null}',
    '{"\\u005f_proto__":{"x":1}}',
    '{"name":"a\\u0000b"}',
    '{"metadata":{"a":"\\ud800"}}',
    '{"amount_minor":1e400,"currency":"MXN"}',
    `{"metadata":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`,
    `${'['.repeat(20_000)}${']'.repeat(20_000)}`,
    '<xml/>',
  ),
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')),
);

/** A valid body per operation, so that mutations of one field reach validation and the handlers. */
const BASES: Record<string, Record<string, unknown>> = {
  'POST /v1/payment_intents': { amount_minor: 1000, currency: 'MXN' },
  'POST /v1/customers': { name: 'Ana', email: 'ana@example.mx' },
  'POST /v1/payment_intents/{id}/confirm': { payment_token: 'tok_sim_ok', payment_method: 'card' },
  'POST /public/payment_intents/{id}/confirm': { client_secret: 'pi_secret_x', payment_token: 'tok_sim_ok', payment_method: 'card' },
  'POST /v1/webhook_endpoints': { url: 'https://hooks.example.mx/x' },
  'POST /v1/payment_links': { amount_minor: 1000, currency: 'MXN', concepto: 'Tacos' },
  'POST /demo/links': { amount_minor: 1000, currency: 'MXN', concepto: 'Tacos' },
  'POST /admin/tenants': { name: 'Fuzz tenant' },
  'POST /v1/refunds': { attempt_id: '00000000-0000-4000-8000-000000000000' },
  'POST /v1/test/clock/advance': { seconds: 60 },
  'POST /v1/customers/{id}/payment_methods': { payment_token: 'tok_sim_ok' },
};
const mutatedBody = (op: { method: string; path: string }) => {
  const base = BASES[`${op.method} ${op.path}`] ?? {};
  const keys = Object.keys(base);
  return fc.oneof(
    fc.constant(JSON.stringify(base)),
    fc.tuple(fc.constantFrom(...(keys.length ? keys : ['x'])), value).map(([k, v]) => JSON.stringify({ ...base, [k]: v })),
    fc.tuple(fc.oneof(fc.constantFrom(...fields), fc.string({ maxLength: 8 })), value).map(([k, v]) => JSON.stringify({ ...base, [k]: v })),
    body,
  );
};

// The file's own budget (the runner's per-file timeout is 120 s): tells tap's runner through the root test.
t.setTimeout(360_000);

t.test(`fuzz every operation of /openapi/v1.json (seed ${SEED}, ${RUNS} runs)`, async (t) => {
  // About 15 s on an idle machine; the whole suite on a shared machine can make it several times slower.
  t.setTimeout(300_000);
  const port = await freePort();
  const adminKey = `adm_${uuid()}`;
  const procs = serviceProcesses({
    ROLE: 'api',
    PORT: String(port),
    ADMIN_KEY: adminKey,
    REDIS_PREFIX: `orq_test_fuzz_${uuid().slice(0, 8)}`,
    RATE_LIMIT_V1_PER_MIN: '1000000',
    RATE_LIMIT_PUBLIC_PER_MIN: '1000000',
    AUTH_FAILURES_PER_MIN: '1000000',
  });
  t.teardown(() => procs.killAll());
  const p = procs.start();
  let exit: string | undefined;
  p.on('exit', (code, signal) => (exit = `exited (code ${code}, signal ${signal})`));
  const base = `http://127.0.0.1:${port}`;
  await waitReady(base, p);
  const tenant = JSON.parse((await httpCall(`${base}/admin/tenants`, 'POST', { 'x-admin-key': adminKey, 'content-type': 'application/json' }, '{"name":"Fuzz"}')).text);
  const testKey = tenant.api_keys.find((k: { livemode: boolean }) => !k.livemode).key as string;
  const doc = JSON.parse((await httpCall(`${base}/openapi/v1.json`, 'GET', {})).text);

  const ops: Op[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      const security = (op.security ?? []) as Array<Record<string, unknown>>;
      ops.push({
        method: method.toUpperCase(),
        path,
        query: (op.parameters ?? []).filter((x: any) => x.in === 'query').map((x: any) => x.name),
        body: !!op.requestBody || ['POST', 'PUT', 'PATCH'].includes(method.toUpperCase()),
        auth: security.some((s) => 'bearerAuth' in s) ? 'api_key' : security.some((s) => 'adminKey' in s) ? 'admin' : 'none',
        html404: !!op.responses?.['404']?.content?.['text/html'],
      });
    }
  }
  t.ok(ops.length > 30, `${ops.length} operations`);
  const ids = [tenant.id as string];
  const contentTypes = fc.constantFrom(undefined, 'application/json', 'application/x-www-form-urlencoded', 'text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', 'image/png', '*/*');

  const request = fc
    .record({
      op: fc.constantFrom(...ops),
      segs: fc.array(segment(ids), { minLength: 4, maxLength: 4 }),
      q: fc.integer({ min: 0, max: 1000 }),
      ct: contentTypes,
      auth: fc.constantFrom('valid', 'valid', 'valid', 'wrong', 'none', 'twice', 'garbage'),
      idem: fc.constantFrom(undefined, 'valid', 'valid', 'valid', 'bad', 'twice'),
      extra: fc.constantFrom(undefined, undefined, undefined, undefined, 'big', 'secret', 'secret-twice', 'xff'),
    })
    .chain((r) => fc.tuple(queryString(r.op.query), mutatedBody(r.op)).map(([qs, b]) => ({ ...r, qs, body: b })));

  let count = 0;
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(request, async (r) => {
      if (exit) throw new Error(`the service process ${exit}`);
      let i = 0;
      const path = r.op.path.replace(/\{[^}]+\}/g, () => r.segs[i++ % r.segs.length]) + r.qs;
      const headers: Record<string, string | string[]> = {};
      const cred = r.op.auth === 'admin' ? adminKey : `Bearer ${testKey}`;
      const name = r.op.auth === 'admin' ? 'x-admin-key' : 'authorization';
      if (r.auth === 'valid') headers[name] = cred;
      else if (r.auth === 'wrong') headers[name] = r.op.auth === 'admin' ? 'adm_wrong_wrong_wrong' : 'Bearer sk_test_wrongwrongwrongwrongwrongwrong';
      else if (r.auth === 'twice') headers[name] = [cred, cred];
      else if (r.auth === 'garbage') headers[name] = 'Bearer \u00e9\u00e9';
      if (r.idem === 'valid') headers['idempotency-key'] = uuid();
      else if (r.idem === 'bad') headers['idempotency-key'] = 'not-a-uuid';
      else if (r.idem === 'twice') headers['idempotency-key'] = [uuid(), uuid()];
      if (r.extra === 'big') headers['x-big'] = 'a'.repeat(5000);
      else if (r.extra === 'secret') headers['x-service-client-secret'] = 'pi_secret_x%00';
      else if (r.extra === 'secret-twice') headers['x-service-client-secret'] = ['a', 'b'];
      else if (r.extra === 'xff') headers['x-forwarded-for'] = '1.2.3.4, ::1';
      if (r.ct) headers['content-type'] = r.ct;
      const req: Req = { method: r.op.method, path, headers, body: r.op.body ? r.body : undefined };
      const res = await send(port, req).catch((e: Error) => {
        throw new Error(`no answer to ${r.op.method} ${path.slice(0, 200)}: ${e.message}${exit ? `; the service process ${exit}` : ''}`);
      });
      count++;
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const label = `${r.op.method} ${path.slice(0, 200)} → ${res.status} ${res.text.slice(0, 300)}`;
      if (res.status >= 500) throw new Error(`5xx: ${label}`);
      if (res.status >= 400 && String(res.headers['content-type']).startsWith('application/json')) {
        const b = JSON.parse(res.text);
        const e = b?.error;
        if (!e || typeof e.code !== 'string' || typeof e.message !== 'string' || typeof e.type !== 'string' || typeof e.doc_url !== 'string') throw new Error(`not an envelope: ${label}`);
        if (e.request_id !== res.headers['x-request-id']) throw new Error(`request_id differs from X-Request-Id: ${label}`);
      } else if (res.status >= 400 && !(res.status === 404 && r.op.html404)) {
        // Only the shoppers' pages answer an unknown link or portal with HTML (documented as such); every other error is the envelope.
        throw new Error(`an error without the JSON envelope: ${label}`);
      }
    }),
    { numRuns: RUNS, seed: SEED, endOnFailure: true, verbose: 1 },
  ).catch((e: Error) => {
    t.fail(`${e.message}\nreplay with FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}`);
  });
  t.equal(exit, undefined, 'the service process is still running');
  t.equal((await httpCall(`${base}/health/live`, 'GET', {})).status, 200, 'and answering');
  t.comment(`${count} requests; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
});
