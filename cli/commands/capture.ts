// orquesta capture <payment_intent_id>: captures an authorized card (e.g. after
// `orquesta charge --token tok_sim_auth`) and follows the intent until the provider confirms.
import { Command } from 'commander';
import { Api, sdkCall } from '../api.js';
import { DEFAULT_PROFILE, loadCredentials } from '../config.js';
import { CliError, EXIT_CODES_HELP, ExitCode } from '../exit-codes.js';
import { interrupt, pause } from '../interrupt.js';
import { progress } from '../progress.js';
import { humanIntent, outcomeOf, type PaymentIntent } from './charge.js';

export function captureCommand(): Command {
  return new Command('capture')
    .summary('capture an authorized payment and follow it until it succeeds')
    .description('POST /v1/payment_intents/{id}/capture (with an Idempotency-Key), then polls the intent until the provider confirms the capture (succeeded) or refuses it.')
    .argument('<payment_intent_id>', 'the intent whose card is authorized (status processing, attempt authorized)')
    .option('--json', 'print the final payment intent as JSON')
    .option('--timeout <seconds>', 'stop waiting after this long (exit 6)', (v) => Number(v), 60)
    .addHelpText('after', `\nExample:\n  $ orquesta charge --amount 15000 --token tok_sim_auth\n  $ orquesta capture 3f1c2a9e-…\n\n${EXIT_CODES_HELP}`)
    .action(async (id: string, opts: { json?: boolean; timeout: number }, cmd: Command) => {
      const creds = loadCredentials(cmd.optsWithGlobals().profile ?? DEFAULT_PROFILE);
      const api = new Api(creds.baseUrl, creds.apiKey, interrupt.signal);
      const p = progress({ quiet: Boolean(opts.json) });
      const started = Date.now();
      p.update(`Capturing ${id}…`);
      let pi: PaymentIntent;
      try {
        pi = (await sdkCall(api.sdk.paymentIntents.capture(id))) as PaymentIntent;
        for (let delay = 200; ; delay = Math.min(1000, Math.round(delay * 1.5))) {
          pi = (await sdkCall(api.sdk.paymentIntents.retrieve(id, { expand: 'attempts' }))) as PaymentIntent;
          const o = outcomeOf(pi);
          if (o === 'succeeded' || o === 'failed') break;
          if (opts.timeout > 0 && Date.now() - started >= opts.timeout * 1000) {
            p.stop();
            throw new CliError(ExitCode.PENDING, `Still ${pi.status} after ${opts.timeout} s.`, `Follow it with GET ${creds.baseUrl}/v1/payment_intents/${id}?expand=attempts`);
          }
          p.update(`Waiting for the provider to confirm the capture (${pi.status})`, `${((Date.now() - started) / 1000).toFixed(1)} s`);
          await pause(delay);
        }
      } finally {
        p.stop();
      }
      process.stdout.write((opts.json ? JSON.stringify(pi, null, 2) : humanIntent(pi)) + '\n');
      process.exitCode = outcomeOf(pi) === 'failed' ? ExitCode.PAYMENT_FAILED : ExitCode.OK;
    });
}
