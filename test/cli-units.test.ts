// Pure pieces of the CLI, without the service: the outcome rule of charge, key masking, base URL
// checks, the config file's modes, how listen finds the newest event of a long history (old servers),
// where it starts (the stream head the server reports, never a clock) and the help it gives without an endpoint.
import { mkdtempSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { outcomeOf, type PaymentIntent } from '../cli/commands/charge.js';
import { lastEventId, noEndpointHelp, streamHead, type EventPage } from '../cli/commands/listen.js';
import { loadCredentials, maskKey, normalizeBaseUrl, readConfig, saveProfile } from '../cli/config.js';
import { CliError, ExitCode } from '../cli/exit-codes.js';

function exitCodeOf(fn: () => unknown): number | string {
  try {
    fn();
    return 'no error';
  } catch (e) {
    return e instanceof CliError ? e.exitCode : String(e);
  }
}
const pi = (status: string, attempts: Array<{ status: string }> = []) => ({ id: 'x', status, amount_minor: 1, currency: 'MXN', attempts: attempts.map((a, i) => ({ id: String(i), ...a })) }) as PaymentIntent;

t.test('charge outcome: terminal states, push methods, soft declines', async (t) => {
  t.equal(outcomeOf(pi('succeeded')), 'succeeded');
  for (const s of ['failed', 'canceled', 'expired']) t.equal(outcomeOf(pi(s)), 'failed', s);
  t.equal(outcomeOf(pi('requires_action')), 'action');
  t.equal(outcomeOf(pi('processing', [{ status: 'pending' }])), 'pending');
  t.equal(outcomeOf(pi('processing', [{ status: 'authorized' }])), 'authorized', 'an authorized card waits for a capture');
  t.equal(outcomeOf(pi('requires_payment_method')), 'pending', 'not confirmed yet');
  t.equal(outcomeOf(pi('failed', [{ status: 'failed' }])), 'failed', 'a soft decline with no retry left fails the intent (spec)');
  t.equal(outcomeOf(pi('processing', [{ status: 'failed' }, { status: 'pending' }])), 'pending', 'a soft decline retried on another connector is still under way');
});

t.test('keys are masked, base URLs checked', async (t) => {
  t.equal(maskKey('sk_test_6RN3WehNdgtiSDzjAf6O6KSYvZxvjKR6'), 'sk_test_…jKR6');
  t.equal(maskKey('sk_live_abcdefgh'), 'sk_live_…efgh');
  t.equal(maskKey('sk_test_ab'), 'sk_test_…', 'too short to show any of it');
  t.equal(normalizeBaseUrl('http://127.0.0.1:8080/'), 'http://127.0.0.1:8080');
  t.equal(normalizeBaseUrl(' https://api.example.mx/orq/ '), 'https://api.example.mx/orq');
  for (const bad of ['ftp://x', 'not a url', 'http://x/?a=1']) {
    t.equal(exitCodeOf(() => normalizeBaseUrl(bad)), ExitCode.USAGE, bad);
  }
});

t.test('config file: 0600 in a 0700 directory, profiles side by side, environment overrides', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'orq-cli-unit-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const env = { ORQUESTA_CONFIG_DIR: join(root, 'nested', 'cfg') };
  t.equal(exitCodeOf(() => loadCredentials('default', env)), ExitCode.CONFIG, 'not logged in');
  const path = saveProfile('default', { base_url: 'http://a', api_key: 'sk_test_one', livemode: false, saved_at: 'now' }, env);
  t.equal(statSync(path).mode & 0o777, 0o600);
  t.equal(statSync(env.ORQUESTA_CONFIG_DIR).mode & 0o777, 0o700);
  saveProfile('other', { base_url: 'http://b', api_key: 'sk_live_two', livemode: true, saved_at: 'now' }, env);
  t.same(Object.keys(readConfig(env).profiles).sort(), ['default', 'other']);
  t.equal(loadCredentials('other', env).livemode, true);
  const over = loadCredentials('default', { ...env, ORQUESTA_API_KEY: 'sk_test_env', ORQUESTA_BASE_URL: 'http://c/' });
  t.same([over.apiKey, over.baseUrl, over.source], ['sk_test_env', 'http://c', 'environment']);
  chmodSync(path, 0o640);
  readConfig(env);
  t.equal(statSync(path).mode & 0o777, 0o600, 'a widened mode is repaired on read');
  writeFileSync(path, '{nope', { mode: 0o600 });
  t.equal(exitCodeOf(() => readConfig(env)), ExitCode.CONFIG, 'a broken file');
});

t.test('listen finds the newest event: paging, then galloping over a long history', async (t) => {
  for (const ids of [[], [5], [3, 9, 40], Array.from({ length: 450 }, (_, i) => i * 3 + 1), Array.from({ length: 5000 }, (_, i) => 100 + i * 7).concat([999_999])]) {
    let calls = 0;
    const api = {
      async get<T>(path: string) {
        calls++;
        const q = new URL(path, 'http://x').searchParams;
        const after = Number(q.get('after_id'));
        const limit = Number(q.get('limit'));
        const rest = ids.filter((id) => id > after);
        const page: EventPage = { object: 'list', data: rest.slice(0, limit).map((id) => ({ id, event_id: '', event_type: '', created_at: '', data: {} as never })), has_more: rest.length > limit };
        return { status: 200, headers: new Headers(), body: page as T };
      },
    };
    const first = (await api.get<EventPage>('/v1/events?after_id=0&limit=200')).body;
    const last = await lastEventId(api, first);
    t.equal(last, ids.at(-1) ?? 0, `${ids.length} events`);
    t.ok(calls < 80, `${calls} requests`);
  }
});

t.test('listen starts from the stream head the server reports, never from a clock', async (t) => {
  const h = (headers: Record<string, string>) => ({ headers: new Headers(headers) });
  t.same(streamHead(h({ 'Orquesta-Latest-Event-Id': '4711' })), { latestId: 4711, withheld: undefined, localEndpoints: undefined, notice: undefined });
  t.same(streamHead(h({ 'Orquesta-Latest-Event-Id': '0', 'Orquesta-Events-Withheld': 'no_active_endpoint', 'Orquesta-Notice': 'No active webhook endpoint' })), {
    latestId: 0,
    withheld: 'no_active_endpoint',
    localEndpoints: false,
    notice: 'No active webhook endpoint',
  });
  t.equal(streamHead(h({ 'Orquesta-Events-Withheld': 'no_active_endpoint; local_endpoints=accepted' })).localEndpoints, true);
  t.equal(streamHead(h({ date: 'Sun, 22 Nov 2026 07:21:13 GMT' })).latestId, undefined, 'the Date header is not a start point');
  t.equal(streamHead(h({ 'Orquesta-Latest-Event-Id': 'x1' })).latestId, undefined, 'junk is ignored');
});

t.test('listen without an endpoint suggests a registration that works where it runs', async (t) => {
  const local = noEndpointHelp('http://127.0.0.1:8080', 'sk_test_abcdefghijklmnopWBDG', false, { localEndpoints: true, forwardTo: 'http://localhost:4242/hooks', notice: 'No active webhook endpoint in test mode' });
  t.match(local, /The server says: No active webhook endpoint in test mode/);
  t.match(local, /-d '\{"url":"http:\/\/localhost:4242\/hooks"\}'/, 'a server that takes local URLs: the local forward URL');
  t.match(local, /Bearer \$ORQUESTA_API_KEY/);
  t.match(local, /export ORQUESTA_API_KEY=<your sk_test_ key, sk_test_…WBDG>/, 'the key is never printed whole');
  t.notMatch(local, /abcdefghijklmnop/);
  t.match(noEndpointHelp('http://127.0.0.1:8080', 'sk_test_x', false, { localEndpoints: true, keyInEnv: true }), /"url":"http:\/\/localhost:3000\/webhooks"/, 'print-only: a local example URL');
  t.notMatch(noEndpointHelp('http://127.0.0.1:8080', 'sk_test_x', false, { localEndpoints: true, keyInEnv: true }), /export ORQUESTA_API_KEY/, 'the key is in the environment already');
  const remote = noEndpointHelp('https://api.orquesta.mx', 'sk_test_abcdefghijklmnopWBDG', false, { localEndpoints: false, forwardTo: 'http://localhost:4242/hooks' });
  t.match(remote, /"url":"https:\/\/your-app\.example\/webhooks"/, 'a server that takes no local URL: an https URL');
  t.match(noEndpointHelp('http://127.0.0.1:8080', 'sk_live_abcdefghijklmnopWBDG', true, { localEndpoints: true }), /"url":"https:/, 'live mode: never a local URL');
});
