// Webhooks on a laptop (issue 21 item 1): a development server (a plain `npm start`: NODE_ENV unset,
// HOST=127.0.0.1) accepts local endpoint URLs (localhost, 127.0.0.1, [::1]) for test-mode keys and
// delivers to them, so GET /v1/events fills and `orquesta listen` forwards signed events; live keys,
// other private addresses and every production server still refuse them. An empty stream says why.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { loadConfig } from '../ops/config.js';
import { verifySignature } from '../kernel/signing.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestApp, type TestApp } from './helpers/app.js';

const CLI = fileURLToPath(new URL('../cli/main.js', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });

t.test('the rule: development on a loopback address only; never in production', async (t) => {
  t.equal(loadConfig({}).webhookLocalEndpoints, true, 'a plain npm start (NODE_ENV unset, HOST 127.0.0.1)');
  t.equal(loadConfig({ NODE_ENV: 'development', HOST: 'localhost' }).webhookLocalEndpoints, true);
  t.equal(loadConfig({ HOST: '0.0.0.0' }).webhookLocalEndpoints, false, 'reachable from other machines: off');
  t.equal(loadConfig({ NODE_ENV: 'test' }).webhookLocalEndpoints, false, 'the test suite keeps the strict rule');
  t.equal(loadConfig({ NODE_ENV: 'production' }).webhookLocalEndpoints, false, 'production');
  t.equal(loadConfig({ NODE_ENV: 'production', HOST: '127.0.0.1', WEBHOOK_LOCAL_ENDPOINTS: 'auto' }).webhookLocalEndpoints, false, 'production behind a local proxy');
  t.equal(loadConfig({ WEBHOOK_LOCAL_ENDPOINTS: 'false' }).webhookLocalEndpoints, false, 'turned off');
  t.equal(loadConfig({ HOST: '0.0.0.0', WEBHOOK_LOCAL_ENDPOINTS: 'true' }).webhookLocalEndpoints, true, 'forced on outside production');
  t.throws(() => loadConfig({ NODE_ENV: 'production', WEBHOOK_LOCAL_ENDPOINTS: 'true' }), /WEBHOOK_LOCAL_ENDPOINTS=true is refused when NODE_ENV=production/, 'cannot be forced on in production');
});

let dev: TestApp;
let prod: TestApp;
let rx: Receiver;
const children = new Set<ChildProcess>();
const dirs: string[] = [];

t.before(async () => {
  rx = await startReceiver();
  // No WEBHOOK_ALLOW_HTTP_HOSTS: only the development rule lets local URLs in.
  dev = await startTestApp({ NODE_ENV: 'development', ROLE: 'all', RELAY_INTERVAL_MS: '50', SWEEP_INTERVAL_MS: '200', RATE_LIMIT_V1_PER_MIN: '100000' });
  prod = await startTestApp({ NODE_ENV: 'production', ROLE: 'api' });
});
t.teardown(async () => {
  for (const c of children) c.kill('SIGKILL');
  await dev.stop();
  await prod.stop();
  await rx.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const port = () => new URL(rx.url).port;

async function payment(a: TestApp, key: string) {
  const pi = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: 2500, currency: 'MXN' }, headers: idem() });
  await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key, body: { payment_token: 'tok_sim_ok', payment_method: 'card' }, headers: idem() });
  return pi.body.id as string;
}

/** The CLI as a subprocess, with its key in the environment (as in CI) and its own config directory. */
function cli(args: string[], a: TestApp, key: string) {
  const dir = mkdtempSync(join(tmpdir(), 'orq-cli-local-'));
  dirs.push(dir);
  const env: NodeJS.ProcessEnv = { ...process.env, ORQUESTA_CONFIG_DIR: dir, ORQUESTA_BASE_URL: a.url, ORQUESTA_API_KEY: key, NO_COLOR: '1' };
  for (const k of ['ORQUESTA_PROFILE', 'NODE_OPTIONS', 'FORCE_COLOR', 'NODE_V8_COVERAGE']) delete env[k];
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d: Buffer) => (out.stdout += d.toString('utf8')));
  child.stderr!.on('data', (d: Buffer) => (out.stderr += d.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => (children.delete(child), resolve(code))));
  return { child, out, exited };
}

async function until(pred: () => boolean, what: string, ms = 15_000) {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

t.test('a development server accepts local URLs for test keys only, and nothing else private', async (t) => {
  const ten = await dev.newTenant();
  for (const url of [`http://localhost:${port()}/a`, `http://127.0.0.1:${port()}/b`, 'http://[::1]:9/c', `https://localhost:${port()}/d`]) {
    const r = await dev.call('POST', '/v1/webhook_endpoints', { key: ten.testKey, body: { url } });
    t.equal(r.status, 201, url);
  }
  const live = await dev.call('POST', '/v1/webhook_endpoints', { key: ten.liveKey, body: { url: `http://localhost:${port()}/live` } });
  t.equal(live.status, 400, 'live mode: never local');
  t.equal(live.body.error.code, 'webhook_endpoint.invalid_url');
  t.match(live.body.error.message, /test-mode keys only/);
  for (const url of ['http://10.0.0.5/x', 'https://192.168.1.10/x', 'https://169.254.169.254/latest/meta-data', 'http://example.com/x', 'http://127.0.0.2/x']) {
    const r = await dev.call('POST', '/v1/webhook_endpoints', { key: ten.testKey, body: { url } });
    t.equal(r.status, 400, `${url} refused`);
  }
});

t.test('a production server refuses local URLs, whatever the key, and says what it needs', async (t) => {
  const ten = await prod.newTenant();
  for (const key of [ten.testKey, ten.liveKey]) {
    const r = await prod.call('POST', '/v1/webhook_endpoints', { key, body: { url: `http://localhost:${port()}/p` } });
    t.equal(r.status, 400);
    t.equal(r.body.error.code, 'webhook_endpoint.invalid_url');
  }
  const ev = await prod.call('GET', '/v1/events', { key: ten.testKey });
  t.equal(ev.headers.get('orquesta-events-withheld'), 'no_active_endpoint', 'no local_endpoints parameter');
  t.match(ev.headers.get('orquesta-notice'), /an https:\/\/ URL of yours/);
});

t.test('an empty stream says why: the head, the reason, and what to register here', async (t) => {
  const ten = await dev.newTenant();
  const empty = await dev.call('GET', '/v1/events', { key: ten.testKey });
  t.equal(empty.status, 200);
  t.same(empty.body, { object: 'list', data: [], has_more: false }, 'the list shape is kept');
  t.equal(empty.headers.get('orquesta-latest-event-id'), '0', 'nothing recorded yet');
  t.equal(empty.headers.get('orquesta-events-withheld'), 'no_active_endpoint; local_endpoints=accepted');
  t.match(empty.headers.get('orquesta-notice'), /^No active webhook endpoint in test mode: .*POST \/v1\/webhook_endpoints \(a local URL such as http:\/\/localhost:3000\/webhooks is accepted by this development server\)\.$/);
  const id = await payment(dev, ten.testKey);
  let latest = 0;
  const end = Date.now() + 15_000;
  while (latest === 0 && Date.now() < end) {
    const r = await dev.call('GET', '/v1/events', { key: ten.testKey });
    latest = Number(r.headers.get('orquesta-latest-event-id'));
    t.same(r.body.data, [], 'still withheld');
    if (!latest) await sleep(50);
  }
  t.ok(latest > 0, 'the head moved: the event is recorded, only not listed');
  const live = await dev.call('GET', '/v1/events', { key: ten.liveKey });
  t.equal(live.headers.get('orquesta-events-withheld'), 'no_active_endpoint', 'live mode: no local endpoints offered');
  t.equal(live.headers.get('orquesta-latest-event-id'), '0', 'the head is per mode');
  t.ok(id);
});

t.test('a newcomer on a development server: local endpoint, the stream fills, listen forwards signed events', async (t) => {
  const ten = await dev.newTenant();
  // listen first, with no endpoint yet: it says why nothing flows and what to register here.
  const fwd = `${rx.url}/fwd-${ten.id}`;
  const l = cli(['listen', '--forward-to', fwd, '--interval', '200'], dev, ten.testKey);
  await until(() => /no active webhook endpoint/.test(l.out.stderr) && /Ctrl-C to stop/.test(l.out.stdout), 'listen to start');
  t.match(l.out.stderr, /this development server accepts a local URL for test keys/);
  t.match(l.out.stderr, new RegExp(`-d '\\{"url":"${fwd.replace(/[/.]/g, '\\$&')}"\\}'`), 'the registration it suggests is the local forward URL');
  const secret = /(whsec_cli_[A-Za-z0-9_-]+)/.exec(l.out.stdout)![1];

  // The registration a newcomer makes: a local URL, plain http.
  const ep = await dev.call('POST', '/v1/webhook_endpoints', { key: ten.testKey, body: { url: `http://localhost:${port()}/app-${ten.id}` } });
  t.equal(ep.status, 201);
  const id = await payment(dev, ten.testKey);

  const direct = (await rx.waitFor((r) => r.some((x) => x.path === `/app-${ten.id}`), 15_000)).find((x) => x.path === `/app-${ten.id}`)!;
  t.equal(direct.json.data.id, id, 'the service delivered to the local endpoint');
  t.equal(verifySignature(direct.raw, direct.headers['gateway-signature'] as string, ep.body.secret).ok, true, "signed with the endpoint's secret");

  const events = await dev.call('GET', '/v1/events', { key: ten.testKey });
  t.ok(events.body.data.some((e: { data: { data: { id: string } } }) => e.data.data.id === id), 'GET /v1/events has it');
  t.equal(events.headers.get('orquesta-events-withheld'), null, 'nothing withheld any more');

  const forwarded = (await rx.waitFor((r) => r.some((x) => x.path === `/fwd-${ten.id}`), 15_000)).find((x) => x.path === `/fwd-${ten.id}`)!;
  t.equal(forwarded.json.data.id, id, 'listen forwarded the payment');
  t.equal(verifySignature(forwarded.raw, forwarded.headers['gateway-signature'] as string, secret).ok, true, 'signed with the session secret listen printed');
  t.match(l.out.stdout, /An active webhook endpoint exists now/);
  l.child.kill('SIGINT');
  t.equal(await l.exited, 0);
});
