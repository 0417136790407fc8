// orquesta charge: create a payment intent (Idempotency-Key), confirm it, then poll
// GET /v1/payment_intents/{id}?expand=attempts until the charge has an outcome, and print it.
import { Command, InvalidArgumentError, Option } from 'commander';
import { Api, isAbort, sdkCall } from '../api.js';
import { DEFAULT_PROFILE, loadCredentials } from '../config.js';
import { CliError, EXIT_CODES_HELP, ExitCode } from '../exit-codes.js';
import { columns, keyValues, money, paint } from '../format.js';
import { interrupt, pause } from '../interrupt.js';
import { progress } from '../progress.js';

export interface Attempt {
  id: string;
  status: string;
  method?: string;
  connector_key?: string;
  provider_ref?: string;
  failure_code?: string;
  failure_message?: string;
  amount_minor?: number;
  currency?: string;
}

export interface NextAction {
  type: string;
  clabe?: string;
  beneficiary?: string;
  qr_payload?: string;
  reference?: string;
  redirect_url?: string;
  expires_at?: string;
}

export interface PaymentIntent {
  id: string;
  status: string;
  amount_minor: number;
  tip_minor?: number;
  total_minor?: number;
  currency: string;
  livemode?: boolean;
  receipt_code?: string;
  next_action?: NextAction;
  last_payment_error?: { code: string; message?: string };
  attempts?: Attempt[];
  created_at?: string;
  updated_at?: string;
}

/** What the CLI makes of an intent's state. `authorized`: the card is authorized and waits for a capture (tok_sim_auth); the intent stays processing (spec). */
export type Outcome = 'succeeded' | 'failed' | 'action' | 'authorized' | 'pending';

export function outcomeOf(pi: PaymentIntent): Outcome {
  switch (pi.status) {
    case 'succeeded':
      return 'succeeded';
    case 'failed':
    case 'canceled':
    case 'expired':
      return 'failed';
    case 'requires_action':
      return 'action';
    case 'processing':
      return pi.attempts?.at(-1)?.status === 'authorized' ? 'authorized' : 'pending';
    default:
      return 'pending';
  }
}

const positiveInt = (name: string) => (v: string) => {
  if (!/^\d+$/.test(v) || Number(v) <= 0 || !Number.isSafeInteger(Number(v))) throw new InvalidArgumentError(`${name} must be a positive whole number.`);
  return Number(v);
};
const nonNegativeInt = (name: string) => (v: string) => {
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) throw new InvalidArgumentError(`${name} must be a whole number >= 0.`);
  return Number(v);
};

interface ChargeOptions {
  amount: number;
  method: string;
  token: string;
  currency: string;
  json?: boolean;
  wait?: boolean;
  capture?: boolean;
  timeout: number;
  live?: boolean;
}

export function chargeCommand(): Command {
  return new Command('charge')
    .summary('create, confirm and follow a payment until it has an outcome')
    .description(
      'Creates a payment intent (with an Idempotency-Key), confirms it with a payment token, and polls it until it succeeds or fails, with a progress line. For push methods (spei, codi, oxxo) it prints what the payer needs: the CLABE, the QR payload or the cash reference.',
    )
    .requiredOption('--amount <cents>', 'amount in cents (minor units), e.g. 15000 for 150.00 MXN', positiveInt('--amount'))
    .option('--method <method>', 'payment method: card, spei, codi, oxxo, …', 'card')
    .option('--token <token>', 'payment token; test mode: tok_sim_ok, tok_sim_insufficient, tok_sim_3ds, …', 'tok_sim_ok')
    .option('--currency <code>', 'ISO 4217 currency', 'MXN')
    .option('--json', 'print the final payment intent as JSON (for scripts); no progress line')
    .option('--wait', 'for push methods: after printing the payer instructions, keep polling until paid, failed or expired')
    .option('--capture', 'when the card is only authorized (tok_sim_auth), capture it and follow it to its outcome')
    .option('--timeout <seconds>', 'stop waiting after this long (exit 6); 0 waits forever', nonNegativeInt('--timeout'), 60)
    .addOption(new Option('--live', 'allow a charge with a live key (sk_live_…): it moves real money'))
    .addHelpText(
      'after',
      `\nExamples:\n  $ orquesta charge --amount 15000\n  $ orquesta charge --amount 15000 --token tok_sim_insufficient\n  $ orquesta charge --amount 25000 --method spei\n  $ orquesta charge --amount 15000 --json | jq -r .status\n  $ orquesta charge --amount 15000 --token tok_sim_auth --capture\n\nA decline, hard or soft (with no retry left on another connector), fails the intent (exit 1).\nWith a push method the command ends (exit 0) once the payer instructions are shown, unless --wait.\nAn authorized card (not captured) ends the command (exit 0) with the capture command to run, unless --capture.\n\n${EXIT_CODES_HELP}`,
    )
    .action(async (opts: ChargeOptions, cmd: Command) => {
      const creds = loadCredentials(cmd.optsWithGlobals().profile ?? DEFAULT_PROFILE);
      if (creds.livemode && !opts.live) {
        throw new CliError(ExitCode.USAGE, 'The stored key is a live key (sk_live_…): this charge would move real money.', 'Add --live if that is what you want, or log in with a test key.');
      }
      const api = new Api(creds.baseUrl, creds.apiKey, interrupt.signal);
      const p = progress({ quiet: Boolean(opts.json) });
      let pi: PaymentIntent | undefined;
      const started = Date.now();
      try {
        p.update('Creating the payment intent…');
        // The SDK sends each POST with its own Idempotency-Key, the same on every retry of that call.
        pi = (await sdkCall(api.sdk.paymentIntents.create({ amount_minor: opts.amount, currency: opts.currency }))) as PaymentIntent;
        p.update(`Confirming ${pi.id} with ${opts.method}…`);
        try {
          pi = (await sdkCall(api.sdk.paymentIntents.confirm(pi.id, { payment_token: opts.token, payment_method: opts.method }))) as PaymentIntent;
        } catch (e) {
          if (e instanceof CliError && pi) e.hint = [e.hint, `The payment intent ${pi.id} was created and stays in ${pi.status}.`].filter(Boolean).join('\n  ');
          throw e;
        }
        let shownAction = false;
        let captured = false;
        let delay = 200;
        for (;;) {
          pi = (await sdkCall(api.sdk.paymentIntents.retrieve(pi.id, { expand: 'attempts' }))) as PaymentIntent;
          const o = outcomeOf(pi);
          if (o === 'succeeded' || o === 'failed') break;
          if (o === 'authorized') {
            if (!opts.capture) break;
            if (!captured) {
              p.update(`Capturing ${pi.id}…`);
              pi = (await sdkCall(api.sdk.paymentIntents.capture(pi.id))) as PaymentIntent;
              captured = true;
            }
          }
          if (o === 'action') {
            if (!opts.wait) break;
            if (!shownAction && !opts.json) {
              p.stop();
              process.stdout.write(`${headline(pi)}\n\n${actionBlock(pi)}\n\n`);
              shownAction = true;
            }
          }
          const elapsed = (Date.now() - started) / 1000;
          if (opts.timeout > 0 && elapsed >= opts.timeout) {
            p.stop();
            print(pi, opts, shownAction);
            throw new CliError(ExitCode.PENDING, `Still ${pi.status} after ${opts.timeout} s; the payment may yet complete.`, `Follow it with GET ${creds.baseUrl}/v1/payment_intents/${pi.id}?expand=attempts (a new charge would be a second payment).`);
          }
          p.update(o === 'action' ? `Waiting for the payer (${pi.status})` : `Waiting for the provider (${pi.status})`, `${elapsed.toFixed(1)} s`);
          await pause(delay);
          if (interrupt.signal.aborted) throw new DOMException('interrupted', 'AbortError');
          delay = Math.min(1000, Math.round(delay * 1.5));
        }
      } catch (e) {
        p.stop();
        if (isAbort(e) && interrupt.signal.aborted) {
          throw new CliError(
            ExitCode.INTERRUPTED,
            'Interrupted.',
            pi ? `The payment intent ${pi.id} (last seen ${pi.status}) may still complete: GET ${creds.baseUrl}/v1/payment_intents/${pi.id}?expand=attempts` : undefined,
          );
        }
        throw e;
      }
      p.stop();
      print(pi, opts, Boolean(opts.wait));
      const o = outcomeOf(pi);
      process.exitCode = o === 'failed' ? ExitCode.PAYMENT_FAILED : ExitCode.OK;
    });
}

function print(pi: PaymentIntent, opts: ChargeOptions, actionShown = false): void {
  if (opts.json) {
    process.stdout.write(JSON.stringify(pi, null, 2) + '\n');
    return;
  }
  process.stdout.write(humanIntent(pi, actionShown) + '\n');
}

export function headline(pi: PaymentIntent): string {
  const o = outcomeOf(pi);
  const amount = money(pi.total_minor ?? pi.amount_minor, pi.currency);
  if (o === 'succeeded') return `${paint('green', '✔')} Payment succeeded: ${amount}`;
  if (o === 'failed') {
    const err = pi.last_payment_error ?? failedAttempt(pi);
    const why = err ? `: ${err.code}${err.message ? ` (${err.message})` : ''}` : '';
    return `${paint('red', '✖')} Payment ${pi.status}${why}`;
  }
  if (o === 'action') return `${paint('yellow', '…')} Waiting for the payer: ${amount} (${pi.next_action?.type ?? 'requires_action'})`;
  if (o === 'authorized') return `${paint('yellow', '…')} Authorized, not captured: ${amount} (the card is held; capture it to charge it)`;
  return `${paint('yellow', '…')} Payment ${pi.status}`;
}

function failedAttempt(pi: PaymentIntent): { code: string; message?: string } | undefined {
  const a = [...(pi.attempts ?? [])].reverse().find((x) => x.failure_code);
  return a ? { code: a.failure_code!, message: a.failure_message } : undefined;
}

export function humanIntent(pi: PaymentIntent, actionShown = false): string {
  const tip = pi.tip_minor ?? 0;
  const lines = [headline(pi), ''];
  // What the payer has to do comes first: it is why the command stopped here.
  if (pi.status === 'requires_action' && pi.next_action && !actionShown) lines.push(actionBlock(pi), '');
  if (outcomeOf(pi) === 'authorized') lines.push(`  Capture it with:  orquesta capture ${pi.id}`, `  (or POST /v1/payment_intents/${pi.id}/capture with an Idempotency-Key)`, '');
  lines.push(
    keyValues(
      [
        ['Payment intent', pi.id],
        ['Status', pi.status],
        ['Amount', money(pi.amount_minor, pi.currency)],
        ['Tip', tip > 0 ? money(tip, pi.currency) : undefined],
        ['Total', tip > 0 ? money(pi.total_minor, pi.currency) : undefined],
        ['Mode', pi.livemode === undefined ? undefined : pi.livemode ? 'live' : 'test'],
        ['Receipt code', pi.receipt_code],
        ['Error', pi.last_payment_error ? `${pi.last_payment_error.code}${pi.last_payment_error.message ? ` — ${pi.last_payment_error.message}` : ''}` : undefined],
        ['Created', pi.created_at],
        ['Updated', pi.updated_at],
      ],
      '  ',
    ),
  );
  if (pi.attempts?.length) {
    lines.push(
      '',
      '  Attempts',
      columns(
        ['#', 'STATUS', 'METHOD', 'CONNECTOR', 'PROVIDER REF', 'FAILURE'],
        pi.attempts.map((a, i) => [String(i + 1), a.status, a.method ?? '', a.connector_key ?? '', a.provider_ref ?? '', a.failure_code ?? '']),
        '  ',
      ),
    );
  }
  return lines.join('\n');
}

/** What the payer (or the developer, for 3-D Secure) has to do. */
export function actionBlock(pi: PaymentIntent): string {
  const na = pi.next_action;
  if (!na) return '';
  const amount = money(pi.total_minor ?? pi.amount_minor, pi.currency);
  let title: string;
  let rows: Array<[string, string | undefined]>;
  switch (na.type) {
    case 'bank_transfer':
      title = 'Pay by SPEI bank transfer';
      rows = [
        ['CLABE', na.clabe],
        ['Beneficiary', na.beneficiary],
        ['Amount', amount],
      ];
      break;
    case 'codi_qr':
      title = 'Pay with CoDi: scan the QR code holding this payload';
      rows = [
        ['QR payload', na.qr_payload],
        ['Amount', amount],
      ];
      break;
    case 'oxxo_voucher':
      title = 'Pay in cash at OXXO with this reference';
      rows = [
        ['Reference', na.reference],
        ['Amount', amount],
      ];
      break;
    case 'redirect':
      title = 'Authenticate the card (3-D Secure) at';
      rows = [['URL', na.redirect_url]];
      break;
    default:
      title = `Payer action: ${na.type}`;
      rows = Object.entries(na)
        .filter(([k]) => k !== 'type' && k !== 'expires_at')
        .map(([k, v]) => [k, String(v)]);
  }
  rows.push(['Expires', na.expires_at]);
  const out = [`  ${paint('bold', title)}`, keyValues(rows, '    ')];
  if (pi.livemode === false) {
    // Test mode: the merchant's own test key plays the payer (test helpers; no operator key needed).
    const redirect = na.type === 'redirect';
    out.push(
      '',
      redirect ? '  Test mode: pass (or fail) the 3-D Secure challenge with' : '  Test mode: make the payment arrive with',
      redirect ? `    orquesta trigger 3ds-approve ${pi.id}   (or 3ds-fail)` : `    orquesta trigger pay ${pi.id}`,
      redirect
        ? `    or POST /v1/test_helpers/payment_intents/${pi.id}/three_d_secure/approve with your test key`
        : `    or POST /v1/test_helpers/payment_intents/${pi.id}/pay with your test key`,
    );
  }
  return out.join('\n');
}
