// orquesta status: GET /status and GET /health/ready, printed readably; exit 5 when not ready.
// Needs no API key, only a base URL (--base-url, ORQUESTA_BASE_URL or the profile's).
import { Command } from 'commander';
import { Api, isAbort, type Answer } from '../api.js';
import { DEFAULT_PROFILE, loadBaseUrl } from '../config.js';
import { CliError, EXIT_CODES_HELP, ExitCode } from '../exit-codes.js';
import { keyValues, paint } from '../format.js';
import { interrupt } from '../interrupt.js';

interface Part {
  status?: string;
  [k: string]: unknown;
}
interface StatusBody {
  object?: string;
  status?: string;
  api?: Part & { version?: string; uptime_seconds?: number };
  database?: Part;
  redis?: Part;
  worker?: Part & { processes?: number; last_heartbeat_at?: string };
}
interface HealthBody {
  object?: string;
  status?: string;
  checks?: Record<string, string>;
}

async function fetchOr<T>(api: Api, path: string): Promise<{ answer?: Answer<T>; error?: string }> {
  try {
    return { answer: await api.get<T>(path, { accept: [500, 502, 503, 504], retries: 0, timeoutMs: 10_000 }) };
  } catch (e) {
    if (isAbort(e) && interrupt.signal.aborted) throw new CliError(ExitCode.INTERRUPTED, 'Interrupted.');
    return { error: e instanceof CliError ? e.message : String(e) };
  }
}

const mark = (s: string | undefined) => (s === 'ok' ? paint('green', 'ok') : paint('red', s ?? 'unknown'));

export function statusCommand(): Command {
  return new Command('status')
    .summary('show the service status (GET /status) and readiness (GET /health/ready)')
    .description('Reads GET /status (api, database, redis, worker) and GET /health/ready, prints them, and exits 5 when the service is not ready.')
    .option('--base-url <url>', 'the API base URL (default: ORQUESTA_BASE_URL, else the profile from login)')
    .option('--json', 'print {base_url, ready, health_ready, status} as JSON')
    .addHelpText('after', `\nExamples:\n  $ orquesta status\n  $ orquesta status --base-url http://127.0.0.1:8080 --json\n\n${EXIT_CODES_HELP}`)
    .action(async (opts: { baseUrl?: string; json?: boolean }, cmd: Command) => {
      const baseUrl = loadBaseUrl(cmd.optsWithGlobals().profile ?? DEFAULT_PROFILE, opts.baseUrl);
      const api = new Api(baseUrl, undefined, interrupt.signal);
      const [st, rd] = await Promise.all([fetchOr<StatusBody>(api, '/status'), fetchOr<HealthBody>(api, '/health/ready')]);
      const ready = rd.answer?.status === 200 && rd.answer.body?.status === 'ok';
      const status = st.answer?.status === 200 ? st.answer.body : undefined;
      if (opts.json) {
        process.stdout.write(
          JSON.stringify(
            {
              base_url: baseUrl,
              ready,
              health_ready: rd.answer ? { http_status: rd.answer.status, ...rd.answer.body } : { error: rd.error },
              status: st.answer ? { http_status: st.answer.status, ...st.answer.body } : { error: st.error },
            },
            null,
            2,
          ) + '\n',
        );
      } else {
        const w = status?.worker;
        const headline = ready
          ? status && status.status !== 'ok'
            ? `${paint('yellow', '!')} Ready, but degraded: ${baseUrl}`
            : `${paint('green', '✔')} Ready: ${baseUrl}`
          : `${paint('red', '✖')} Not ready: ${baseUrl}`;
        const rows: Array<[string, string | undefined]> = [];
        if (status) {
          rows.push(
            ['API', `${mark(status.api?.status)}  version ${status.api?.version ?? '?'}, up ${duration(status.api?.uptime_seconds)}`],
            ['Database', mark(status.database?.status)],
            ['Redis', mark(status.redis?.status)],
            ['Worker', `${mark(w?.status)}  ${w?.processes ?? 0} process${w?.processes === 1 ? '' : 'es'}${w?.last_heartbeat_at ? `, last heartbeat ${w.last_heartbeat_at}` : ''}`],
            ['Overall', mark(status.status)],
          );
        } else {
          rows.push(['/status', paint('red', st.error ?? `HTTP ${st.answer?.status}`)]);
        }
        if (rd.answer) {
          const checks = Object.entries(rd.answer.body?.checks ?? {})
            .map(([k, v]) => `${k} ${v}`)
            .join(', ');
          rows.push(['Ready', `${mark(ready ? 'ok' : (rd.answer.body?.status ?? 'unavailable'))}  GET /health/ready → ${rd.answer.status}${checks ? ` (${checks})` : ''}`]);
        } else rows.push(['Ready', paint('red', rd.error ?? 'no answer')]);
        process.stdout.write(`${headline}\n\n${keyValues(rows, '  ')}\n`);
        if (ready && w && w.status !== 'ok') process.stdout.write('\n  No worker is running: the API answers, but payments will not move past processing.\n');
      }
      if (!ready) {
        const why = rd.error ?? `GET /health/ready answered ${rd.answer?.status}`;
        throw new CliError(ExitCode.NOT_READY, `The service is not ready (${why}).`);
      }
      process.exitCode = ExitCode.OK;
    });
}

function duration(s: number | undefined): string {
  if (typeof s !== 'number') return '?';
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

