// orquesta listen: follow GET /v1/events from now on and forward each event to a local URL, signed
// with a per-session secret (whsec_cli_…), never a real endpoint's secret. It registers no endpoint:
// the stream only has rows while the account has an active endpoint, which it checks and explains.
import { Command, Option } from 'commander';
import { newWebhookSecret, SIGNATURE_HEADER, signatureHeader } from '../../api/webhook-signature.js';
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

      let endpoints = await activeEndpoints(api);
      // "From now on": the stream's last id, and the server's clock for events that appear later
      // with older ids (the whole history shows up once an endpoint is registered).
      const first = await api.get<EventPage>(`/v1/events?after_id=0&limit=${PAGE}`);
      const serverStart = startTime(first, Date.now());
      let cursor = await lastEventId(api, first.body);
      const startCursor = cursor;
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
      if (endpoints === 0) process.stderr.write(noEndpointHelp(creds.baseUrl, creds.apiKey, creds.livemode) + '\n');

      let polls = 0;
      let forwarded = 0;
      let failedForwards = 0;
      let seen = 0;
      let failingSince: number | undefined;
      try {
        while (!interrupt.signal.aborted) {
          let page: EventPage;
          try {
            page = (await api.get<EventPage>(`/v1/events?after_id=${cursor}&limit=${PAGE}`, { retries: 0 })).body;
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
          if (page.data.length && endpoints === 0) {
            endpoints = undefined; // rows mean an endpoint is active now
            say('An active webhook endpoint exists now: events flow from here on.');
          }
          for (const ev of page.data) {
            if (interrupt.signal.aborted) break;
            cursor = Math.max(cursor, ev.id);
            // History that appears behind the start point (an endpoint registered after we started).
            if (startCursor === 0 && Date.parse(ev.created_at) < serverStart) continue;
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
          if (endpoints === 0 && polls % ENDPOINT_RECHECK_POLLS === 0) {
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

/**
 * The server's clock when listen started, in milliseconds. The Date header has whole seconds: the
 * local clock is trusted inside that second (same machine: exact) and clamped to it otherwise
 * (a remote server with a skewed clock: off by less than a second).
 */
export function startTime(r: Pick<Answer, 'headers'>, localNow: number): number {
  const d = Date.parse(r.headers.get('date') ?? '');
  if (!Number.isFinite(d)) return localNow;
  return Math.min(Math.max(localNow, d), d + 999);
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

export function noEndpointHelp(baseUrl: string, apiKey: string, livemode: boolean): string {
  return [
    `${paint('yellow', 'Note:', process.stderr)} this account has no active webhook endpoint in ${livemode ? 'live' : 'test'} mode, so GET /v1/events stays empty`,
    '  and there is nothing to forward. listen registers none itself. Register one with any URL the service',
    '  accepts (it does not have to be this machine; an endpoint that keeps failing is disabled after 72 hours):',
    `    curl -s ${baseUrl}/v1/webhook_endpoints -H "Authorization: Bearer ${maskKey(apiKey)}" \\`,
    `      -H 'Content-Type: application/json' -d '{"url":"https://your-app.example/webhooks"}'`,
    '  listen keeps polling and picks up events as soon as an endpoint is active.',
  ].join('\n');
}
