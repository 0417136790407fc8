// The delivery's HTTP client (undici pools in actors/webhook-delivery.ts) end to end, against a real
// local server: the DNS guard is applied when a connection is made (a name that now resolves to
// loopback is refused), redirects are not followed, a large answer is drained, the whole answer must
// come within 10 s, and stopping the worker closes its connections.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import t from 'tap';
import { startTestApp, type TestApp } from './helpers/app.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Rx {
  port: number;
  paths: string[];
  open: Set<Socket>;
  server: Server;
}

async function receiver(): Promise<Rx> {
  const paths: string[] = [];
  const open = new Set<Socket>();
  const server = createServer((req, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '/';
      paths.push(path);
      if (path === '/redir') res.writeHead(307, { location: '/redirected' }).end();
      else if (path === '/big') res.writeHead(200, { 'content-type': 'text/plain' }).end(Buffer.alloc(1 << 20, 'x'));
      else if (path === '/slow') setTimeout(() => res.writeHead(200).end('late'), 11_000).unref();
      else res.writeHead(200).end('ok');
    });
  });
  server.on('connection', (s: Socket) => {
    open.add(s);
    s.on('close', () => open.delete(s));
  });
  server.keepAliveTimeout = 60_000; // idle connections stay open until the client closes them
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, paths, open, server };
}

async function endpoint(a: TestApp, key: string, url: string): Promise<string> {
  const r = await a.call('POST', '/v1/webhook_endpoints', { key, body: { url } });
  if (r.status !== 201) throw new Error(`endpoint: ${r.status} ${r.text}`);
  return r.body.id as string;
}

/** One event, relayed at once by this app (its relay timer is off: other test files share the database, and an
 * interval relay here would also take their events, whose deliveries and spans they wait for in their own process). */
async function emit(a: TestApp, tenantId: string) {
  const sql = a.app.deps.sql;
  await sql`insert into outbox_events (event_id, tenant_id, livemode, event_type, entity_id, data)
            values (${crypto.randomUUID()}, ${tenantId}, false, 'payment_intent.succeeded', ${crypto.randomUUID()}, ${sql.json({ metadata: null })})`;
  await a.app.deps.webhooks.relayOnce();
}

/** The endpoint's delivery once it has an outcome (succeeded, or at least one failed attempt recorded). */
async function outcome(a: TestApp, endpointId: string, ms = 15_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const [d] = await a.app.deps.sql`select status, attempts, last_status, last_error from webhook_deliveries where endpoint_id = ${endpointId}`;
    if (d && (d.status !== 'pending' || d.attempts > 0)) return d as { status: string; attempts: number; last_status: number | null; last_error: string | null };
    await sleep(50);
  }
  throw new Error(`no outcome for endpoint ${endpointId} in ${ms} ms`);
}

t.test('undici delivery path: guard at connect, no redirects, drained answers, 10 s deadline, sockets closed on stop', async (t) => {
  const rx = await receiver();
  // Relay, sweeps and reconciler off (the test relays its own events): other test files share the
  // database, and this app's worker would otherwise also pick up their events, timers and attempts.
  const a = await startTestApp({ ROLE: 'all', WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1', RELAY_INTERVAL_MS: '3600000', SWEEP_INTERVAL_MS: '3600000', RECONCILE_INTERVAL_MS: '3600000' });
  let stopped = false;
  t.teardown(async () => {
    if (!stopped) await a.stop();
    rx.server.closeAllConnections();
    await new Promise((r) => rx.server.close(r));
  });
  const ten = await a.newTenant();
  const base = `http://127.0.0.1:${rx.port}`;

  const ok = await endpoint(a, ten.testKey, `${base}/ok`);
  const redir = await endpoint(a, ten.testKey, `${base}/redir`);
  const big = await endpoint(a, ten.testKey, `${base}/big`);
  const slow = await endpoint(a, ten.testKey, `${base}/slow`);
  // Registered while 127.0.0.1 was its address; now the endpoint's host is a name that resolves to
  // loopback (as a rebinding DNS answer would): the connection's own lookup must refuse it.
  const rebound = await endpoint(a, ten.testKey, `${base}/rebound`);
  await a.app.deps.sql`update webhook_endpoints set url = ${`http://localhost:${rx.port}/rebound`} where id = ${rebound}`;

  const started = Date.now();
  await emit(a, ten.id);

  t.match(await outcome(a, ok), { status: 'succeeded', attempts: 1 }, 'a plain 200 is delivered');
  t.match(await outcome(a, big), { status: 'succeeded', attempts: 1 }, 'a 1 MiB answer is read and dropped');
  const r = await outcome(a, redir);
  t.match(r, { status: 'pending', attempts: 1, last_status: 307 }, 'a redirect is a failure with its status recorded');
  const g = await outcome(a, rebound);
  t.equal(g.attempts, 1);
  t.match(g.last_error, /^refused: localhost resolves to private address /, 'refused by guardedLookup when connecting');
  t.notOk(rx.paths.includes('/rebound'), 'nothing reached the receiver through the refused name');

  const s = await outcome(a, slow, 20_000);
  const took = Date.now() - started;
  t.match(s, { status: 'pending', attempts: 1, last_error: 'no answer within 10 s', last_status: null }, 'no answer within the deadline');
  t.ok(took >= 10_000 && took < 12_500, `the deadline is 10 s (the outcome came after ${took} ms)`);
  t.notOk(rx.paths.includes('/redirected'), 'the redirect was not followed');
  t.same(rx.paths.filter((p) => p !== '/rebound').sort(), ['/big', '/ok', '/redir', '/slow'], 'one request each');

  // One more delivery, then stop: its keep-alive connection must not outlive the worker.
  const ten2 = await a.newTenant();
  const again = await endpoint(a, ten2.testKey, `${base}/again`);
  await emit(a, ten2.id);
  t.match(await outcome(a, again), { status: 'succeeded' });
  t.ok(rx.open.size > 0, 'keep-alive connections stay open while the worker runs');
  await a.stop();
  stopped = true;
  const end = Date.now() + 2_000;
  while (rx.open.size > 0 && Date.now() < end) await sleep(20);
  t.equal(rx.open.size, 0, 'stopping the worker closes its connections');
});
