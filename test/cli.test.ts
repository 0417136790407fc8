// The developer CLI (spec: Endpoints > Command-line tool), run as the real binary
// (`node dist/cli/main.js …`) in subprocesses against the service started in-process with its
// workers: login writes a 0600 file, charge reaches succeeded / failed with the documented exit
// codes, listen forwards an event signed with the session secret it printed, status reports ready.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, chmodSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { verifySignature } from '../kernel/signing.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestApp, type TestApp } from './helpers/app.js';

const CLI = fileURLToPath(new URL('../cli/main.js', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });

let a: TestApp;
let rx: Receiver;
const children = new Set<ChildProcess>();
const dirs: string[] = [];

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment of a CLI run: its own config dir, nothing inherited that would steer it, and no
 * V8 coverage of the children (it doubles their start-up time; cli-units.test covers the pure parts).
 */
function cliEnv(configDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ORQUESTA_CONFIG_DIR: configDir, NO_COLOR: '1', ...extra };
  for (const k of ['ORQUESTA_API_KEY', 'ORQUESTA_BASE_URL', 'ORQUESTA_PROFILE', 'NODE_OPTIONS', 'FORCE_COLOR', 'NODE_V8_COVERAGE']) if (!(k in extra)) delete env[k];
  return env;
}

function start(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d: Buffer) => (out.stdout += d.toString('utf8')));
  child.stderr!.on('data', (d: Buffer) => (out.stderr += d.toString('utf8')));
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  return { child, out, exited };
}

async function run(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 20_000): Promise<Ran> {
  const p = start(args, env);
  const timer = setTimeout(() => p.child.kill('SIGKILL'), timeoutMs);
  const code = await p.exited;
  clearTimeout(timer);
  return { code, ...p.out };
}

const settled = new Set<string>();

async function until(pred: () => boolean, what: string, ms = 10_000, step?: () => Promise<void>) {
  const end = Date.now() + ms;
  for (;;) {
    await step?.();
    if (pred()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'orq-cli-'));
  dirs.push(d);
  return d;
}

/** A tenant logged in through the CLI (non-interactive), with the env that uses its config. */
async function loggedIn() {
  const ten = await a.newTenant('CLI tenant');
  const dir = join(tempDir(), 'config');
  const env = cliEnv(dir);
  const r = await run(['login', '--base-url', a.url, '--api-key', ten.testKey], env);
  if (r.code !== 0) throw new Error(`login failed: ${r.code} ${r.stderr}`);
  return { ten, dir, env };
}

async function payment(key: string, token = 'tok_sim_ok') {
  const pi = await a.call('POST', '/v1/payment_intents', { key, body: { amount_minor: 4321, currency: 'MXN' }, headers: idem() });
  await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key, body: { payment_token: token, payment_method: 'card' }, headers: idem() });
  return pi.body.id as string;
}

t.before(async () => {
  rx = await startReceiver();
  a = await startTestApp({ ROLE: 'all', WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1', RELAY_INTERVAL_MS: '50', SWEEP_INTERVAL_MS: '200', RATE_LIMIT_V1_PER_MIN: '100000' });
});
t.teardown(async () => {
  for (const c of children) c.kill('SIGKILL');
  await a.stop();
  await rx.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

t.test('--help for every command, with the exit codes; usage errors exit 2', async (t) => {
  const env = cliEnv(join(tempDir(), 'c'));
  const helps = [['--help'], ['login', '--help'], ['charge', '--help'], ['listen', '--help'], ['status', '--help']];
  const usage: Array<[string[], string]> = [
    [['charge', '--amount', 'abc'], 'a bad --amount'],
    [['charge', '--amount', '0'], 'a zero --amount'],
    [['charge'], 'no --amount'],
    [['listen'], 'listen needs --forward-to or --print-only'],
    [['frobnicate'], 'an unknown command'],
  ];
  // Independent runs, side by side.
  const [helpRuns, usageRuns, notIn] = await Promise.all([
    Promise.all(helps.map((args) => run(args, env))),
    Promise.all(usage.map(([args]) => run(args, env))),
    run(['charge', '--amount', '100'], env),
  ]);
  helps.forEach((args, i) => {
    const r = helpRuns[i];
    t.equal(r.code, 0, `${args.join(' ')} exits 0`);
    t.match(r.stdout, /Usage: orquesta/, args.join(' '));
    t.match(r.stdout, /Exit codes:[\s\S]*130/, `${args.join(' ')} documents the exit codes`);
  });
  t.match(helpRuns[2].stdout, /--amount <cents>[\s\S]*--method[\s\S]*default:\s+"card"[\s\S]*--token[\s\S]*default:\s+"tok_sim_ok"[\s\S]*--currency[\s\S]*default:\s+"MXN"/);
  usage.forEach(([, what], i) => t.equal(usageRuns[i].code, 2, what));
  t.equal(notIn.code, 4, 'not logged in: exit 4');
  t.match(notIn.stderr, /Not logged in[\s\S]*orquesta login/);
});

t.test('login: checks the key, writes a 0600 file, never prints the key', async (t) => {
  const ten = await a.newTenant('login');
  const dir = join(tempDir(), 'config');
  const env = cliEnv(dir);
  const bad = await run(['login', '--base-url', a.url, '--api-key', 'sk_test_notarealkey123'], env);
  t.equal(bad.code, 3, 'a key the API refuses: exit 3');
  t.match(bad.stderr, /api_key\.missing_or_invalid/, 'the error code');
  t.match(bad.stderr, /#err-api_key\.missing_or_invalid/, 'its doc_url');
  t.notOk(existsSync(join(dir, 'config.json')), 'nothing saved');
  const noTty = await run(['login', '--base-url', a.url], env);
  t.equal(noTty.code, 2, 'without a terminal both flags are needed');

  const ok = await run(['login', '--base-url', a.url + '/', '--api-key', ten.testKey], env);
  t.equal(ok.code, 0, ok.stderr);
  const file = join(dir, 'config.json');
  t.equal(statSync(file).mode & 0o777, 0o600, 'the config file is 0600');
  t.equal(statSync(dir).mode & 0o777, 0o700, 'its directory is 0700');
  const saved = JSON.parse(readFileSync(file, 'utf8'));
  t.same(saved.profiles.default, { base_url: a.url, api_key: ten.testKey, livemode: false, saved_at: saved.profiles.default.saved_at }, 'base URL (normalized) and key stored');
  t.notMatch(ok.stdout + ok.stderr, ten.testKey, 'the full key is never printed');
  t.match(ok.stdout, `sk_test_…${ten.testKey.slice(-4)}`, 'masked');

  // A second profile; a file whose mode was widened is put back to 0600.
  chmodSync(file, 0o644);
  const second = await run(['--profile', 'live', 'login', '--base-url', a.url, '--api-key', ten.liveKey], env);
  t.equal(second.code, 0, second.stderr);
  t.equal(statSync(file).mode & 0o777, 0o600, 'mode repaired');
  t.match(second.stderr, /readable by others/);
  const both = JSON.parse(readFileSync(file, 'utf8'));
  t.same(Object.keys(both.profiles).sort(), ['default', 'live']);
  t.equal(both.profiles.live.livemode, true);
  const liveCharge = await run(['--profile', 'live', 'charge', '--amount', '100'], env);
  t.equal(liveCharge.code, 2, 'a live key needs --live to charge');
});

t.test('charge: succeeded exits 0, a hard decline exits 1, API errors exit 3 with code and doc_url', async (t) => {
  const { ten, env } = await loggedIn();
  const [ok, json, declined, soft, apiErr] = await Promise.all([
    run(['charge', '--amount', '15000'], env),
    run(['charge', '--amount', '2500', '--json'], env),
    run(['charge', '--amount', '15000', '--token', 'tok_sim_insufficient'], env),
    run(['charge', '--amount', '15000', '--token', 'tok_sim_issuer_down', '--json'], env),
    run(['charge', '--amount', '100', '--currency', 'XYZ'], env),
  ]);
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.stdout, /Payment succeeded/);
  t.match(ok.stdout, /Status\s+succeeded/);
  t.match(ok.stdout, /150\.00 MXN/);
  const id = /Payment intent\s+([0-9a-f-]{36})/.exec(ok.stdout)?.[1];
  t.ok(id, 'prints the intent id');
  const seen = await a.call('GET', `/v1/payment_intents/${id}?expand=attempts`, { key: ten.testKey });
  t.equal(seen.body.status, 'succeeded', 'the service agrees');
  t.equal(seen.body.attempts[0].method, 'card', 'default --method card');

  t.equal(json.code, 0);
  const pi = JSON.parse(json.stdout);
  t.equal(pi.status, 'succeeded');
  t.equal(pi.amount_minor, 2500);
  t.equal(pi.currency, 'MXN', 'default --currency MXN');
  t.equal(pi.attempts.length, 1);

  t.equal(declined.code, 1, 'a failed payment exits 1');
  t.match(declined.stdout, /Payment failed/);
  t.match(declined.stdout, /insufficient_funds/, 'the failure is shown');
  t.match(declined.stdout, /Status\s+failed/);

  t.equal(soft.code, 1, 'a soft decline is a failed charge too');
  t.equal(JSON.parse(soft.stdout).status, 'failed', 'spec: a soft decline with no retry left fails the intent');

  t.equal(apiErr.code, 3, 'an API error exits 3');
  t.match(apiErr.stderr, /payment_intent\.invalid_currency/, 'code');
  t.match(apiErr.stderr, /ISO 4217/, 'message');
  t.match(apiErr.stderr, /Docs:\s+http:\/\/\S+#err-payment_intent\.invalid_currency/, 'doc_url');
});

t.test('charge: an authorized card says so with the capture command; --capture and `orquesta capture` capture it', async (t) => {
  const { env } = await loggedIn();
  const [held, both] = await Promise.all([
    run(['charge', '--amount', '15000', '--token', 'tok_sim_auth'], env),
    run(['charge', '--amount', '16000', '--token', 'tok_sim_auth', '--capture', '--json'], env),
  ]);
  t.equal(held.code, 0, `the charge ends at once, not after a 60 s wait: ${held.stderr}`);
  t.match(held.stdout, /Authorized, not captured/);
  const id = /orquesta capture ([0-9a-f-]{36})/.exec(held.stdout)?.[1];
  t.ok(id, 'the capture command to run is printed');
  t.equal(JSON.parse(both.stdout).status, 'succeeded', '--capture captures and follows it');
  t.equal(both.code, 0);
  const cap = await run(['capture', id!], env);
  t.equal(cap.code, 0, cap.stderr);
  t.match(cap.stdout, /Payment succeeded/);
});

t.test('charge with a push method prints the payer instructions', async (t) => {
  const { env } = await loggedIn();
  const [spei, oxxo, codi] = await Promise.all(['spei', 'oxxo', 'codi'].map((m) => run(['charge', '--amount', '25000', '--method', m], env)));
  t.equal(spei.code, 0, spei.stderr);
  t.match(spei.stdout, /requires_action/);
  t.match(spei.stdout, /CLABE\s+\d{18}/);
  t.match(spei.stdout, /Beneficiary\s+\S+/);
  t.match(oxxo.stdout, /Reference\s+\d{14}/);
  t.match(codi.stdout, /QR payload\s+codi:\/\//);
  // Test mode names the command that plays the payer, with the intent: no literal {tenantId}, no operator key.
  t.notMatch(spei.stdout, /\{tenantId\}|X-Admin-Key/);
  const id = /Payment intent\s+([0-9a-f-]{36})/.exec(spei.stdout)![1];
  t.match(spei.stdout, new RegExp(`orquesta trigger pay ${id}`));
});

t.test('trigger: the test key plays the payer (push payment, 3-D Secure), through the SDK', async (t) => {
  const { ten, env } = await loggedIn();
  const charged = await run(['charge', '--amount', '25000', '--method', 'oxxo', '--json'], env);
  const pi = JSON.parse(charged.stdout);
  const paid = await run(['trigger', 'pay', pi.id], env);
  t.equal(paid.code, 0, paid.stderr);
  t.match(paid.stdout, /Payment succeeded/);
  const card = await run(['charge', '--amount', '15000', '--token', 'tok_sim_3ds'], env);
  t.match(card.stdout, /orquesta trigger 3ds-approve/);
  const cardId = /Payment intent\s+([0-9a-f-]{36})/.exec(card.stdout)![1];
  const failed = await run(['trigger', '3ds-fail', cardId], env);
  t.equal(failed.code, 1, 'a failed challenge fails the payment (exit 1)');
  t.match(failed.stdout, /authentication_failed/);
  const again = await run(['trigger', 'pay', cardId], env);
  t.equal(again.code, 3, 'nothing to pay: the API error, exit 3');
  t.match(again.stderr, /test_helpers\.state_conflict/);
  t.equal((await run(['trigger', 'refund', cardId], env)).code, 2, 'an unknown action is a usage error');
  const live = await run(['trigger', 'pay', cardId], { ...env, ORQUESTA_API_KEY: ten.liveKey });
  t.equal(live.code, 2, 'a live key: refused before any call');
});

t.test('listen: from now on, forwards signed with the printed session secret, stops on Ctrl-C', async (t) => {
  const { ten, env } = await loggedIn();
  const ep = await a.call('POST', '/v1/webhook_endpoints', { key: ten.testKey, body: { url: `${rx.url}/registered-${ten.id}` } });
  t.equal(ep.status, 201);
  // An event from before listen starts: it must not be forwarded.
  const before = await payment(ten.testKey);
  await until(() => rx.received.some((r) => r.path === `/registered-${ten.id}`), 'the earlier event');

  const path = `/cli-${ten.id}`;
  const l = start(['listen', '--forward-to', `${rx.url}${path}`, '--interval', '200'], env);
  await until(() => /whsec_cli_\S+/.test(l.out.stdout), 'the session secret line');
  const secret = /(whsec_cli_[A-Za-z0-9_-]+)/.exec(l.out.stdout)![1];
  t.not(secret, ep.body.secret);
  await until(() => /Ctrl-C to stop/.test(l.out.stdout), 'listen to start polling');

  const id = await payment(ten.testKey);
  const got = await rx.waitFor((r) => r.some((x) => x.path === path), 15_000);
  const d = got.find((x) => x.path === path)!;
  const header = d.headers['gateway-signature'] as string;
  t.match(header, /^t=\d+,v1=[0-9a-f]{64}$/);
  t.equal(verifySignature(d.raw, header, secret).ok, true, 'verifies with the printed session secret');
  t.equal(verifySignature(d.raw, header, ep.body.secret).ok, false, "not signed with the real endpoint's secret");
  t.equal(d.json.event_type, 'payment_intent.succeeded');
  t.equal(d.json.data.id, id, 'the new payment');
  t.equal(d.headers['content-type'], 'application/json');
  await until(() => l.out.stdout.includes(d.json.event_id), 'the event line');
  t.match(l.out.stdout, new RegExp(`\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\s+payment_intent\\.succeeded\\s+evt ${d.json.event_id}\\s+→ 200`), 'one line with the receiver status');

  l.child.kill('SIGINT');
  const code = await l.exited;
  t.equal(code, 0, 'exits cleanly on Ctrl-C');
  t.match(l.out.stdout, /Stopped \(SIGINT\)\. 1 event: 1 forwarded/);
  const forwarded = rx.received.filter((x) => x.path === path);
  t.equal(forwarded.length, 1, 'exactly the one new event');
  t.notOk(forwarded.some((x) => x.json?.data?.id === before), 'nothing from before listen started');
  const eps = await a.call('GET', '/v1/webhook_endpoints', { key: ten.testKey });
  t.equal(eps.body.data.length, 1, 'listen registered no endpoint');
});

t.test('listen without an active endpoint says so and how to fix it; history that appears later is not forwarded', async (t) => {
  const { ten, env } = await loggedIn();
  const old = await payment(ten.testKey);
  await until(() => settled.has(old), 'the earlier payment', 10_000, async () => {
    const r = await a.call('GET', `/v1/payment_intents/${old}`, { key: ten.testKey });
    if (r.body.status === 'succeeded') settled.add(old); // its event exists now, invisible until an endpoint does
  });
  const path = `/late-${ten.id}`;
  const l = start(['listen', '--forward-to', `${rx.url}${path}`, '--interval', '200'], env);
  await until(() => /no active webhook endpoint/.test(l.out.stderr), 'the note');
  t.match(l.out.stderr, /curl -s \S+\/v1\/webhook_endpoints/, 'shows how to register one');
  t.match(l.out.stdout, /whsec_cli_/);
  const secret = /(whsec_cli_[A-Za-z0-9_-]+)/.exec(l.out.stdout)![1];
  // The fix: an endpoint (anywhere); the old event now shows up in the stream, behind the start point.
  const ep = await a.call('POST', '/v1/webhook_endpoints', { key: ten.testKey, body: { url: `${rx.url}/elsewhere-${ten.id}` } });
  t.equal(ep.status, 201);
  const fresh = await payment(ten.testKey);
  const got = await rx.waitFor((r) => r.some((x) => x.path === path), 15_000);
  await sleep(600);
  const forwarded = got.filter((x) => x.path === path);
  t.same(forwarded.map((x) => x.json.data.id), [fresh], 'only the payment made after listen started');
  t.not(old, fresh);
  t.equal(verifySignature(forwarded[0].raw, forwarded[0].headers['gateway-signature'] as string, secret).ok, true);
  t.match(l.out.stdout, /An active webhook endpoint exists now/);
  l.child.kill('SIGINT');
  t.equal(await l.exited, 0);
});

t.test('listen starts after the stream head, not at a clock: an event stamped ahead of the server clock stays behind', async (t) => {
  const { ten, env } = await loggedIn();
  // Recorded before listen starts, but stamped 30 s ahead, as by a database whose clock runs ahead
  // of the API server's: a start point taken from the Date header would let it through.
  const early = crypto.randomUUID();
  const sql = a.app.deps.sql;
  await sql`insert into outbox_events (event_id, tenant_id, livemode, event_type, entity_id, data, created_at)
            values (${early}, ${ten.id}, false, 'payment_intent.succeeded', ${crypto.randomUUID()}, ${sql.json({ object: 'payment_intent', metadata: null })}, now() + interval '30 seconds')`;
  const path = `/ahead-${ten.id}`;
  const l = start(['listen', '--forward-to', `${rx.url}${path}`, '--interval', '200'], env);
  await until(() => /no active webhook endpoint/.test(l.out.stderr) && /Ctrl-C to stop/.test(l.out.stdout), 'listen to start without an endpoint');
  t.match(l.out.stderr, /The server says: No active webhook endpoint in test mode: events are recorded \(newest id \d+\)/, "the server's own explanation");
  const ep = await a.call('POST', '/v1/webhook_endpoints', { key: ten.testKey, body: { url: `${rx.url}/elsewhere-${ten.id}` } });
  t.equal(ep.status, 201);
  const fresh = await payment(ten.testKey);
  // Events are forwarded one by one in id order: once the fresh one is, an earlier one would have been.
  await rx.waitFor((r) => r.some((x) => x.path === path && x.json?.data?.id === fresh), 15_000);
  const forwarded = rx.received.filter((x) => x.path === path);
  t.notOk(forwarded.some((x) => x.json?.event_id === early), 'the event recorded before listen started is not forwarded');
  t.same(forwarded.map((x) => x.json.data.id), [fresh], 'only the payment made after listen started');
  l.child.kill('SIGINT');
  t.equal(await l.exited, 0);
});

t.test('status: ready exits 0; an address where nothing answers exits 5', async (t) => {
  const { env } = await loggedIn();
  const [ok, json, down] = await Promise.all([run(['status'], env), run(['status', '--json'], env), run(['status', '--base-url', 'http://127.0.0.1:9'], env)]);
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.stdout, /Ready: http/);
  t.match(ok.stdout, /Database\s+ok/);
  t.match(ok.stdout, /GET \/health\/ready → 200/);
  t.equal(JSON.parse(json.stdout).ready, true);
  t.equal(down.code, 5, 'not ready: exit 5');
  t.match(down.stdout, /Not ready/);
});
