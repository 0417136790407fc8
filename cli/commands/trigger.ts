// orquesta trigger: the merchant's test helpers (decisions §7; Stripe CLI's `trigger` is the
// model): play the payer of a test-mode payment. `pay` makes the SPEI transfer, OXXO cash payment or
// CoDi payment arrive; `3ds-approve` / `3ds-fail` decide a card's 3-D Secure challenge. It waits
// for the intent to be awaiting the payer, calls the helper through the SDK, then follows the intent
// to its outcome and prints it like `charge`.
import { Command, InvalidArgumentError } from 'commander';
import { Api, ApiError, sdkCall } from '../api.js';
import { DEFAULT_PROFILE, loadCredentials } from '../config.js';
import { CliError, EXIT_CODES_HELP, ExitCode } from '../exit-codes.js';
import { interrupt, pause } from '../interrupt.js';
import { progress } from '../progress.js';
import { humanIntent, outcomeOf, type PaymentIntent } from './charge.js';

const ACTIONS = {
  pay: 'the payer pays the SPEI transfer, OXXO voucher or CoDi QR',
  '3ds-approve': 'the cardholder passes the 3-D Secure challenge',
  '3ds-fail': 'the cardholder fails the 3-D Secure challenge',
} as const;
type Action = keyof typeof ACTIONS;

export function triggerCommand(): Command {
  return new Command('trigger')
    .summary('test mode: play the payer (pay a SPEI/OXXO/CoDi intent, pass or fail 3-D Secure)')
    .description(
      "Calls the API's test helpers with your test key (POST /v1/test_helpers/payment_intents/{id}/pay, …/three_d_secure/approve or /fail): no operator key, no tenant id. " +
        'Waits until the intent awaits the payer (requires_action), triggers, then follows the intent to its outcome. Live keys are refused by the API (403).',
    )
    .argument('<action>', `one of: ${Object.entries(ACTIONS).map(([k, v]) => `${k} (${v})`).join('; ')}`, (v: string) => {
      if (!(v in ACTIONS)) throw new InvalidArgumentError(`use ${Object.keys(ACTIONS).join(', ')}.`);
      return v as Action;
    })
    .argument('<payment_intent_id>', 'the test-mode intent (e.g. from `orquesta charge --method spei`)')
    .option('--json', 'print the final payment intent as JSON')
    .option('--timeout <seconds>', 'stop waiting after this long (exit 6)', (v) => Number(v), 60)
    .addHelpText(
      'after',
      `\nExamples:\n  $ orquesta charge --amount 25000 --method spei\n  $ orquesta trigger pay 8c7f991f-…\n  $ orquesta charge --amount 15000 --token tok_sim_3ds\n  $ orquesta trigger 3ds-approve 3f1c2a9e-…\n\n${EXIT_CODES_HELP}`,
    )
    .action(async (action: Action, id: string, opts: { json?: boolean; timeout: number }, cmd: Command) => {
      const creds = loadCredentials(cmd.optsWithGlobals().profile ?? DEFAULT_PROFILE);
      if (creds.livemode) throw new CliError(ExitCode.USAGE, 'trigger works in test mode only: the stored key is a live key (sk_live_…).', 'Log in with a test key (sk_test_…).');
      const api = new Api(creds.baseUrl, creds.apiKey, interrupt.signal);
      const p = progress({ quiet: Boolean(opts.json) });
      const started = Date.now();
      const timedOut = () => opts.timeout > 0 && Date.now() - started >= opts.timeout * 1000;
      const read = async () => (await sdkCall(api.sdk.paymentIntents.retrieve(id, { expand: 'attempts' }))) as PaymentIntent;
      let pi: PaymentIntent;
      try {
        // The worker moves a confirmed intent to requires_action in a moment: wait for it.
        for (let delay = 200; ; delay = Math.min(1000, Math.round(delay * 1.5))) {
          pi = await read();
          if (pi.status !== 'processing') break;
          if (timedOut()) throw new CliError(ExitCode.PENDING, `Still processing after ${opts.timeout} s: nothing to trigger yet.`);
          p.update(`Waiting for ${id} to await the payer (${pi.status})`);
          await pause(delay);
        }
        p.update(`Triggering ${action} on ${id}…`);
        try {
          if (action === 'pay') await sdkCall(api.sdk.testHelpers.pay(id));
          else await sdkCall(api.sdk.testHelpers.threeDSecure(id, action === '3ds-approve' ? 'approve' : 'fail'));
        } catch (e) {
          if (e instanceof ApiError && e.error.code === 'test_helpers.state_conflict') e.hint = `The intent is ${pi!.status}; \`orquesta charge --method spei|oxxo|codi\` or \`--token tok_sim_3ds\` makes one that awaits the payer.`;
          throw e;
        }
        for (let delay = 200; ; delay = Math.min(1000, Math.round(delay * 1.5))) {
          pi = await read();
          const o = outcomeOf(pi);
          if (o === 'succeeded' || o === 'failed') break;
          if (timedOut()) {
            p.stop();
            throw new CliError(ExitCode.PENDING, `Still ${pi.status} after ${opts.timeout} s.`, `Follow it with GET ${creds.baseUrl}/v1/payment_intents/${id}?expand=attempts`);
          }
          p.update(`Waiting for the provider's word (${pi.status})`, `${((Date.now() - started) / 1000).toFixed(1)} s`);
          await pause(delay);
        }
      } finally {
        p.stop();
      }
      process.stdout.write((opts.json ? JSON.stringify(pi, null, 2) : humanIntent(pi)) + '\n');
      process.exitCode = outcomeOf(pi) === 'failed' ? ExitCode.PAYMENT_FAILED : ExitCode.OK;
    });
}
