// orquesta login: asks for (or takes) the base URL and the API key, checks them against the API,
// and stores them in the config file (0600) under a profile.
import { Command } from 'commander';
import { Api, ApiError } from '../api.js';
import { DEFAULT_PROFILE, FILE_MODE, maskKey, normalizeBaseUrl, readConfig, saveProfile } from '../config.js';
import { CliError, EXIT_CODES_HELP, ExitCode } from '../exit-codes.js';
import { paint } from '../format.js';
import { interrupt } from '../interrupt.js';
import { ask } from '../prompt.js';

const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

export function loginCommand(): Command {
  return new Command('login')
    .summary('store the base URL and API key (checked against the API)')
    .description(
      'Checks a base URL and an API key against the API and stores them in the config file, readable only by you (mode 0600). Asks for both in a terminal; with --base-url and --api-key it asks nothing. The key is never printed whole.',
    )
    .option('--base-url <url>', 'the API base URL, e.g. http://127.0.0.1:8080')
    .option('--api-key <key>', 'an API key, sk_test_… or sk_live_… (prefer the prompt: flags stay in shell history)')
    .addHelpText(
      'after',
      `\nExamples:\n  $ orquesta login\n  $ orquesta login --base-url http://127.0.0.1:8080 --api-key sk_test_…\n  $ orquesta --profile staging login\n\nThe file: $ORQUESTA_CONFIG_DIR/config.json when set, else the platform's config directory\n(Linux: $XDG_CONFIG_HOME/orquesta or ~/.config/orquesta).\n\n${EXIT_CODES_HELP}`,
    )
    .action(async (opts: { baseUrl?: string; apiKey?: string }, cmd: Command) => {
      const profile: string = cmd.optsWithGlobals().profile ?? DEFAULT_PROFILE;
      const existing = readConfig().profiles[profile];
      let baseUrl = opts.baseUrl;
      let apiKey = opts.apiKey;
      if (baseUrl === undefined || apiKey === undefined) {
        if (!process.stdin.isTTY) {
          throw new CliError(ExitCode.USAGE, 'login needs --base-url and --api-key when it is not run in a terminal.');
        }
        if (baseUrl === undefined) baseUrl = await ask('Base URL', { defaultValue: existing?.base_url ?? DEFAULT_BASE_URL, signal: interrupt.signal });
        if (apiKey === undefined) apiKey = await ask('API key (sk_test_… or sk_live_…, not echoed)', { hidden: true, signal: interrupt.signal });
      }
      const url = normalizeBaseUrl(baseUrl);
      apiKey = apiKey.trim();
      if (!/^sk_(test|live)_[A-Za-z0-9]+$/.test(apiKey)) {
        throw new CliError(ExitCode.USAGE, `That does not look like an API key (${apiKey ? maskKey(apiKey) : 'empty'}).`, 'Keys start with sk_test_ (test mode) or sk_live_ (live mode).');
      }

      // 1. The base URL answers like Orquesta.
      const probe = await new Api(url, undefined, interrupt.signal).get('/health/live', { accept: [404, 503], retries: 0 });
      if (probe.body?.object !== 'health') {
        throw new CliError(ExitCode.API_ERROR, `${url} answered /health/live with HTTP ${probe.status}, not an Orquesta health object.`, 'Check the base URL.');
      }
      // 2. The key is accepted: 401 ends here; 403 (a key without payments:read) is saved with a warning.
      const api = new Api(url, apiKey, interrupt.signal);
      let warning: string | undefined;
      try {
        await api.get('/v1/events?limit=1');
      } catch (e) {
        if (e instanceof ApiError && e.status === 403) warning = `This key lacks a scope that charge/listen use (${e.error.code}: ${e.error.message}).`;
        else throw e;
      }
      const livemode = apiKey.startsWith('sk_live_');
      const path = saveProfile(profile, { base_url: url, api_key: apiKey, livemode, saved_at: new Date().toISOString() });
      const out = process.stdout;
      out.write(`${paint('green', '✔')} Logged in to ${url} with ${maskKey(apiKey)} (${livemode ? paint('yellow', 'LIVE mode') : 'test mode'}).\n`);
      out.write(`  Profile "${profile}" saved to ${path} (mode 0${FILE_MODE.toString(8)}).\n`);
      if (warning) process.stderr.write(`warning: ${warning}\n`);
    });
}
