#!/usr/bin/env node
// orquesta: the developer CLI of the Orquesta API (spec: Endpoints > Command-line tool).
//   login    store the base URL and API key (checked against the API) in a 0600 config file
//   charge   create, confirm and follow a payment until it has an outcome
//   capture  capture an authorized payment and follow it
//   listen   forward GET /v1/events to a local URL, signed with a session secret
//   trigger  test mode: play the payer (pay a push payment, pass or fail 3-D Secure) with the test helpers
//   status   GET /status and GET /health/ready
// Exit codes: cli/exit-codes.ts (also in every --help and docs/cli.md).
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { ApiError } from './api.js';
import { captureCommand } from './commands/capture.js';
import { chargeCommand } from './commands/charge.js';
import { listenCommand } from './commands/listen.js';
import { loginCommand } from './commands/login.js';
import { statusCommand } from './commands/status.js';
import { triggerCommand } from './commands/trigger.js';
import { DEFAULT_PROFILE, validProfileName } from './config.js';
import { CliError, EXIT_CODES_HELP, ExitCode } from './exit-codes.js';
import { formatError } from './format.js';
import { installSignalHandlers, interrupt } from './interrupt.js';
import { VERSION } from './version.js';

function usageSettings(cmd: Command): Command {
  return cmd.exitOverride().showHelpAfterError('(add --help for usage)');
}

export function buildProgram(): Command {
  const program = usageSettings(new Command('orquesta'))
    .description('Developer CLI for the Orquesta payments API: log in, make test charges, play the payer in test mode, forward events to a local URL, check the service.')
    .version(VERSION, '-v, --version', 'print the CLI version')
    .addOption(
      new Option('--profile <name>', 'config profile to use (several logins side by side)')
        .default(DEFAULT_PROFILE)
        .env('ORQUESTA_PROFILE')
        .argParser((v) => {
          if (!validProfileName(v)) throw new InvalidArgumentError('letters, digits, ".", "_" and "-", starting with a letter or digit.');
          return v;
        }),
    )
    .addHelpText(
      'after',
      `\nEnvironment:\n  ORQUESTA_PROFILE     profile to use (as --profile)\n  ORQUESTA_BASE_URL    base URL, overrides the profile's\n  ORQUESTA_API_KEY     API key, overrides the profile's (CI)\n  ORQUESTA_CONFIG_DIR  directory of config.json (default: the platform's config directory)\n  NO_COLOR             no colours\n\n${EXIT_CODES_HELP}\n\nDocs: docs/cli.md`,
    );
  for (const c of [loginCommand(), chargeCommand(), captureCommand(), triggerCommand(), listenCommand(), statusCommand()]) program.addCommand(usageSettings(c));
  return program;
}

async function main(argv: string[]): Promise<void> {
  installSignalHandlers();
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version end with 0; every other commander complaint is a usage error.
      process.exitCode = e.exitCode === 0 ? ExitCode.OK : ExitCode.USAGE;
      return;
    }
    if (interrupt.signal.aborted && !(e instanceof CliError)) {
      // Ctrl-C while a request was in flight: not a bug, an interruption.
      process.stderr.write('Interrupted.\n');
      process.exitCode = ExitCode.INTERRUPTED;
      return;
    }
    if (e instanceof ApiError && argv.includes('--json')) process.stdout.write(JSON.stringify({ error: e.error }, null, 2) + '\n');
    process.stderr.write(formatError(e) + '\n');
    process.exitCode = e instanceof CliError ? e.exitCode : ExitCode.INTERNAL;
  }
}

await main(process.argv);
