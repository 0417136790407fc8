// spec: Endpoints > Operational and public pages.
import t from 'tap';
import { startTestApp } from './helpers/app.js';
import { startApp } from '../ops/app.js';
import { createLogger } from '../kernel/log.js';

t.test('ops routes', async (t) => {
  const a = await startTestApp();
  t.teardown(() => a.stop());
  for (const p of ['/health', '/health/live']) {
    const r = await a.call('GET', p);
    t.equal(r.status, 200, p);
    t.equal(r.body.status, 'ok');
  }
  const ready = await a.call('GET', '/health/ready');
  t.equal(ready.status, 200);
  t.same(ready.body.checks, { database: 'ok', redis: 'ok' });
  const repl = await a.call('GET', '/health/replication');
  t.equal(repl.status, 200);
  t.equal(repl.body.object, 'replication_health');
  const sec = await a.call('GET', '/.well-known/security.txt');
  t.equal(sec.status, 200);
  t.match(sec.text, /^Contact: /m);
  t.match(sec.text, /^Expires: /m);
  const wallet = await a.call('GET', '/.well-known/apple-developer-merchantid-domain-association');
  t.equal(wallet.status, 200);
  t.equal((await a.call('GET', '/.well-known/other-file')).status, 404);
  const chains = await a.call('GET', '/paynet/chains');
  t.equal(chains.status, 200);
  t.ok(chains.body.data.length > 0);
  const metrics = await a.call('GET', '/metrics');
  t.equal(metrics.status, 200);
  t.match(metrics.text, /# TYPE orquesta_http_requests_total counter/);
  t.match(metrics.text, /orquesta_http_request_duration_seconds_bucket/);
});

t.test('/status reports api, database and worker', async (t) => {
  const a = await startTestApp();
  t.teardown(() => a.stop());
  const apiOnly = await a.call('GET', '/status');
  t.equal(apiOnly.status, 200);
  t.equal(apiOnly.body.api.status, 'ok');
  t.equal(apiOnly.body.database.status, 'ok');
  t.equal(apiOnly.body.worker.status, 'down', 'no worker process yet');
  t.equal(apiOnly.body.status, 'degraded');
  const w = await startApp({ ...a.config, role: 'worker' }, createLogger('silent'));
  t.teardown(() => w.stop());
  t.equal(w.port, undefined, 'a worker does not listen');
  const withWorker = await a.call('GET', '/status');
  t.equal(withWorker.body.worker.status, 'ok');
  t.equal(withWorker.body.status, 'ok');
});

t.test('/health/ready answers 503 when Redis is down', async (t) => {
  const a = await startTestApp();
  t.teardown(() => a.stop());
  a.app.deps.redis.disconnect();
  const r = await a.call('GET', '/health/ready');
  t.equal(r.status, 503);
  t.equal(r.body.checks.redis, 'down');
  t.equal(r.body.checks.database, 'ok');
});

t.test('/health/ready answers 503 when Postgres is down', async (t) => {
  const a = await startTestApp();
  t.teardown(() => a.stop());
  await a.app.deps.sql.end({ timeout: 1 });
  const r = await a.call('GET', '/health/ready');
  t.equal(r.status, 503);
  t.equal(r.body.checks.database, 'down');
});
