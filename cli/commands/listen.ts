// orquesta listen: follow GET /v1/events from now on and forward each event to a local URL, signed
// with a per-session secret (whsec_cli_…), never a real endpoint's secret. It registers no endpoint:
// the stream only has rows while the account has an active endpoint, which it checks and explains.
// "From now on" is a cursor, never a clock: it starts after the stream's head, the id of the newest
// event the server reports in `Orquesta-Latest-Event-Id` (listed or not), so history that becomes
// visible later (an endpoint registered after listen started) is behind the cursor.
import { Command, Option } from 'commander';
import { newWebhookSecret, SIGNATURE_HEADER, signatureHeader } from '../../kernel/signing.js';
import { Api, ApiError, describeCause, isAbort, type Answer } from '../api.js';
import { DEFAULT_PROFILE, loadCredentials, maskKey, normalizeBaseUrl } from '../config.js';
import { CliError, EXIT_CODES_HELP, ExitCode } from '../exit-codes.js';
import { paint } from '../format.js';
import { interrupt, pause } from '../interrupt.js';
import { VERSION } from '../version.js';

export interface StreamEvent {
  id: number;
  event_id: string;
  event_type: string;
  delivered?: boolean;
  created_at: string;
  data: { event_id: string; event_type: string; created_at: string; livemode: boolean; data?: { id?: string; object?: string; status?: string } };
}

export interface EventPage {
  object: 'list';
  data: StreamEvent[];
  has_more: boolean;
}

interface ListenOptions {
  forwardTo?: string;
  printOnly?: boolean;
  json?: boolean;
  interval: number;
}

const PAGE = 200;
const FORWARD_TIMEOUT_MS = 10_000; // the service's own delivery window
const ENDPOINT_RECHECK_POLLS = 10;
/** Headers of GET /v1/events (api/routes/webhooks.ts). */
const H_LATEST = 'orquesta-latest-event-id';
const H_WITHHELD = 'orquesta-events-withheld';
const H_NOTICE = 'orquesta-notice';

export function listenCommand(): Command {
  return new Command('listen')
    .summary('forward events from GET /v1/events to a local URL, signed with a session secret')
    .description(
      "Follows the event stream (GET /v1/events) from now on, every 2 seconds, and POSTs each event envelope to --forward-to, signed in Gateway-Signature with a session secret (whsec_cli_…) printed at start, never a real endpoint's secret. It registers no webhook endpoint. Stop it with Ctrl-C.",
    )
    .option('--forward-to <url>', 'POST each event here, e.g. http://localhost:3000/webhooks')
    .option('--print-only', 'only print the events, forward nothing')
    .option('--json', 'one JSON object per line (the session first, then each event with its envelope)')
    .addOption(new Option('--interval <ms>', 'poll interval in milliseconds').default(2000).argParser((v) => Math.max(50, Number.parseInt(v, 10) || 2000)).hideHelp())
    .addHelpText(
      'after',
      `\nExamples:\n  $ orquesta listen --forward-to http://localhost:3000/webhooks\n  $ orquesta listen --print-only\n\nGET /v1/events has rows only while the account (in this mode) has an active webhook endpoint; if it\nhas none, listen says so and how to register one. Your receiver verifies Gateway-Signature with the\nsession secret exactly as it would with an endpoint's secret.\n\n${EXIT_CODES_HELP}`,
    )
    .action(async (opts: ListenOptions, cmd: Command) => {
      if (Boolean(opts.forwardTo) === Boolean(opts.printOnly)) {
        throw new CliError(ExitCode.USAGE, 'Give exactly one of --forward-to <url> and --print-only.');
      }
      const forwardTo = opts.forwardTo ? normalizeForwardUrl(opts.forwardTo) : undefined;
      const creds = loadCredentials(cmd.optsWithGlobals().profile ?? DEFAULT_PROFILE);
      const api = new Api(creds.baseUrl, creds.apiKey, interrupt.signal);
      const out = (s: string) => process.stdout.write(s + '\n');
      const say = (s: string) => (opts.json ? process.stderr.write(s + '\n') : out(s));

      // "From now on": after the stream's head. A server too old to report it: the last listed id
      // (then events recorded while no endpoint was active show up once one is registered).
      const first = await api.get<EventPage>(`/v1/events?after_id=0&limit=1`);
      const head = streamHead(first);
      let cursor = head.latestId ?? (await lastEventId(api, first.body));
      let endpoints = head.latestId !== undefined ? (head.withheld ? 0 : undefined) : await activeEndpoints(api);
      const secret = newWebhookSecret('whsec_cli_');

      if (opts.json) {
        out(JSON.stringify({ object: 'listen_session', secret, forward_to: forwardTo ?? null, base_url: creds.baseUrl, livemode: creds.livemode, after_id: cursor }));
      } else {
        out(`Orquesta listen ${VERSION}: ${creds.baseUrl} (${creds.livemode ? 'LIVE' : 'test'} mode, ${maskKey(creds.apiKey)})`);
        out(`Session signing secret: ${secret}`);
        out(`  Verify ${SIGNATURE_HEADER} with it; it is valid for this session only. No webhook endpoint is registered.`);
        out(forwardTo ? `Forwarding events to ${forwardTo} (POST, signed).` : 'Printing events (forwarding none).');
        out(`Polling GET /v1/events every ${fmtInterval(opts.interval)} after event ${cursor}. Ctrl-C to stop.`);
      }
      if (endpoints === 0) {
        process.stderr.write(noEndpointHelp(creds.baseUrl, creds.apiKey, creds.livemode, { notice: head.notice, localEndpoints: head.localEndpoints, forwardTo, keyInEnv: Boolean(process.env.ORQUESTA_API_KEY) }) + '\n');
      }
      if (head.latestId === undefined && endpoints === 0) process.stderr.write('warning: this server does not report the stream head (Orquesta-Latest-Event-Id); events recorded before now are forwarded once an endpoint is registered.\n');

      let polls = 0;
      let forwarded = 0;
      let failedForwards = 0;
      let seen = 0;
      let failingSince: number | undefined;
      try {
        while (!interrupt.signal.aborted) {
          let page: EventPage;
          let withheld: boolean | undefined;
          try {
            const r = await api.get<EventPage>(`/v1/events?after_id=${cursor}&limit=${PAGE}`, { retries: 0 });
            page = r.body;
            const h = streamHead(r);
            if (h.latestId !== undefined) withheld = h.withheld !== undefined;
            if (failingSince !== undefined) process.stderr.write(`The event stream answers again.\n`);
            failingSince = undefined;
          } catch (e) {
            if (isAbort(e) && interrupt.signal.aborted) break;
            if (e instanceof ApiError && (e.status === 401 || e.status === 403)) throw e;
            if (failingSince === undefined) {
              failingSince = Date.now();
              process.stderr.write(`warning: GET /v1/events failed (${e instanceof CliError ? e.message : describeCause(e)}); retrying.\n`);
            }
            await pause(Math.min(10_000, opts.interval * 2));
            continue;
          }
          polls++;
          if (endpoints === 0 && (withheld === false || page.data.length)) {
            endpoints = undefined; // rows, or no longer withheld: an endpoint is active now
            say('An active webhook endpoint exists now: events flow from here on.');
          } else if (withheld && endpoints !== 0) {
            endpoints = 0;
            process.stderr.write('The account has no active webhook endpoint any more (deleted, or disabled after 72 hours of failed deliveries): nothing is listed until one is active again.\n');
          }
          for (const ev of page.data) {
            if (interrupt.signal.aborted) break;
            cursor = Math.max(cursor, ev.id);
            seen++;
            if (forwardTo) {
              const r = await forward(forwardTo, secret, ev);
              if (r.aborted) break;
              if (r.status !== undefined && r.status >= 200 && r.status < 300) forwarded++;
              else failedForwards++;
              if (opts.json) out(JSON.stringify({ object: 'forwarded_event', ...summary(ev), status: r.status ?? null, error: r.error ?? null, duration_ms: r.ms, envelope: ev.data }));
              else out(`${eventLine(ev)}  → ${r.status !== undefined ? statusText(r.status) : paint('red', `error ${r.error}`)}`);
            } else if (opts.json) out(JSON.stringify({ object: 'event', ...summary(ev), envelope: ev.data }));
            else out(eventLine(ev));
          }
          if (page.has_more) continue;
          if (endpoints === 0 && withheld === undefined && polls % ENDPOINT_RECHECK_POLLS === 0) {
            endpoints = await activeEndpoints(api).catch(() => endpoints);
            if (endpoints !== 0) say('An active webhook endpoint exists now: events flow from here on.');
          }
          await pause(opts.interval);
        }
      } catch (e) {
        if (!(isAbort(e) && interrupt.signal.aborted)) throw e;
      }
      const tally = forwardTo ? `${seen} event${seen === 1 ? '' : 's'}: ${forwarded} forwarded with a 2xx answer, ${failedForwards} not` : `${seen} event${seen === 1 ? '' : 's'} printed`;
      say(`Stopped (${interrupt.by ?? 'done'}). ${tally}.`);
      process.exitCode = ExitCode.OK;
    });
}

function normalizeForwardUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new CliError(ExitCode.USAGE, `--forward-to is not a URL: ${JSON.stringify(raw)}`, 'For example http://localhost:3000/webhooks');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new CliError(ExitCode.USAGE, `--forward-to must be http:// or https:// (got ${u.protocol})`);
  return u.toString();
}

/** How many active endpoints the account has in this mode; undefined when the key may not list them. */
async function activeEndpoints(api: Api): Promise<number | undefined> {
  try {
    const r = await api.get<{ data: Array<{ active?: boolean }> }>('/v1/webhook_endpoints');
    return r.body.data.filter((e) => e.active !== false).length;
  } catch (e) {
    if (e instanceof ApiError && e.status === 403) return undefined;
    throw e;
  }
}

/**
 * The id of the newest event. Pages forward (200 a page) until has_more is false; a long history
 * is crossed by galloping probes of one event each instead, so a large account does not spend its
 * rate limit here.
 */
export async function lastEventId(api: Pick<Api, 'get'>, first: EventPage): Promise<number> {
  let page = first;
  let cursor = page.data.at(-1)?.id ?? 0;
  for (let pages = 1; page.has_more && pages < 5; pages++) {
    page = (await api.get<EventPage>(`/v1/events?after_id=${cursor}&limit=${PAGE}`)).body;
    cursor = page.data.at(-1)?.id ?? cursor;
  }
  if (!page.has_more) return cursor;
  // Galloping search: probe(x) answers the first id after x, or nothing.
  const probe = async (x: number) => (await api.get<EventPage>(`/v1/events?after_id=${x}&limit=1`)).body.data[0]?.id;
  let lo = cursor; // an id that exists (or 0)
  let hi: number | undefined; // nothing exists after hi
  let step = 1024;
  while (hi === undefined || lo < hi) {
    const x = hi === undefined ? lo + step : lo + Math.floor((hi - lo) / 2);
    const next = await probe(x);
    if (next === undefined) hi = x;
    else {
      lo = next;
      if (hi === undefined) step *= 2;
    }
  }
  return lo;
}

/** What GET /v1/events reports besides the page: the stream's head, and why rows are withheld. */
export function streamHead(r: Pick<Answer, 'headers'>): { latestId?: number; withheld?: string; localEndpoints?: boolean; notice?: string } {
  const raw = r.headers.get(H_LATEST);
  const latestId = raw !== null && /^\d+$/.test(raw.trim()) ? Number(raw) : undefined;
  const [reason, ...params] = (r.headers.get(H_WITHHELD) ?? '').split(';').map((p) => p.trim());
  return {
    latestId,
    withheld: reason || undefined,
    localEndpoints: reason ? params.includes('local_endpoints=accepted') : undefined,
    notice: r.headers.get(H_NOTICE) ?? undefined,
  };
}

async function forward(url: string, secret: string, ev: StreamEvent): Promise<{ status?: number; error?: string; ms: number; aborted?: boolean }> {
  const body = JSON.stringify(ev.data);
  const t = Math.floor(Date.now() / 1000);
  const started = Date.now();
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signatureHeader([secret], t, body), 'user-agent': `orquesta-cli/${VERSION}` },
      body,
      redirect: 'manual',
      signal: AbortSignal.any([interrupt.signal, AbortSignal.timeout(FORWARD_TIMEOUT_MS)]),
    });
    await res.arrayBuffer().catch(() => undefined);
    return { status: res.status, ms: Date.now() - started };
  } catch (e) {
    if (interrupt.signal.aborted) return { aborted: true, ms: Date.now() - started };
    return { error: describeCause(e), ms: Date.now() - started };
  }
}

function summary(ev: StreamEvent) {
  return { id: ev.id, event_id: ev.event_id, event_type: ev.event_type, created_at: ev.data?.created_at ?? ev.created_at };
}

function eventLine(ev: StreamEvent): string {
  const ts = new Date(ev.data?.created_at ?? ev.created_at).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return `${ts}  ${ev.event_type.padEnd(31)}  evt ${ev.event_id}`;
}

function statusText(status: number): string {
  const s = String(status);
  return status >= 200 && status < 300 ? paint('green', s) : paint('red', s);
}

function fmtInterval(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);
const isLocalUrl = (u: string) => {
  try {
    return LOOPBACK.has(new URL(u).hostname.toLowerCase());
  } catch {
    return false;
  }
};

/**
 * What to do when the account has no active endpoint: the server's own notice, and a registration
 * that works there. When the server says it accepts local URLs for this key (a development server,
 * test mode: `Orquesta-Events-Withheld: …; local_endpoints=accepted`), a local URL (the forward
 * URL when it is local); otherwise an https:// URL of the developer's.
 */
export function noEndpointHelp(baseUrl: string, apiKey: string, livemode: boolean, o: { notice?: string; localEndpoints?: boolean; forwardTo?: string; keyInEnv?: boolean } = {}): string {
  const local = !livemode && o.localEndpoints === true;
  const url = local ? (o.forwardTo && isLocalUrl(o.forwardTo) ? o.forwardTo : 'http://localhost:3000/webhooks') : 'https://your-app.example/webhooks';
  const lines = [
    `${paint('yellow', 'Note:', process.stderr)} this account has no active webhook endpoint in ${livemode ? 'live' : 'test'} mode, so GET /v1/events stays empty`,
    '  and there is nothing to forward. listen registers none itself.',
  ];
  if (o.notice) lines.push(`  The server says: ${o.notice}`);
  lines.push(
    local
      ? '  Register one; this development server accepts a local URL for test keys, e.g.:'
      : '  Register one with a URL of yours the service accepts (https://; an endpoint that keeps failing is disabled after 72 hours):',
    `    curl -s ${baseUrl}/v1/webhook_endpoints -H "Authorization: Bearer $ORQUESTA_API_KEY" \\`,
    `      -H 'Content-Type: application/json' -d '{"url":"${url}"}'`,
  );
  if (!o.keyInEnv) lines.push(`  (first: export ORQUESTA_API_KEY=<your ${livemode ? 'sk_live_' : 'sk_test_'} key, ${maskKey(apiKey)}>)`);
  if (local && o.forwardTo && url === o.forwardTo) {
    lines.push('  That URL then also gets the service\'s own delivery of each event, signed with the endpoint\'s secret (printed once by that call) rather than this session\'s.');
  }
  lines.push('  listen keeps polling and picks up events as soon as an endpoint is active.');
  return lines.join('\n');
}
