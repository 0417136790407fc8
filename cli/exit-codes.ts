// Exit codes of the CLI, one meaning each, so scripts can branch on them. Printed in every
// command's --help and documented in docs/cli.md.

export const ExitCode = {
  OK: 0,
  /** charge: the payment did not succeed (failed, declined, canceled, expired). */
  PAYMENT_FAILED: 1,
  /** A bad flag, a missing argument, a value the CLI refuses before calling the API. */
  USAGE: 2,
  /** The API answered an error (code, message, doc_url are printed) or could not be reached. */
  API_ERROR: 3,
  /** Not logged in, or the config file cannot be read or written. */
  CONFIG: 4,
  /** status: the service is not ready (/health/ready is not 200, or it does not answer). */
  NOT_READY: 5,
  /** charge: still processing when --timeout ran out (the payment may yet complete). */
  PENDING: 6,
  /** Interrupted with Ctrl-C (charge, login). listen exits 0 on Ctrl-C: that is how it stops. */
  /** A bug in the CLI (an unexpected exception); 70 is sysexits' EX_SOFTWARE. */
  INTERNAL: 70,
  INTERRUPTED: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export const EXIT_CODES_HELP = `Exit codes:
  0    success (charge: the payment succeeded, or is waiting for the payer's push payment)
  1    charge: the payment failed or was declined (soft declines included), canceled or expired
  2    usage error (bad or missing flag)
  3    API error (its code, message and doc_url are printed) or the API could not be reached
  4    not logged in, or the config file cannot be read or written
  5    status: the service is not ready
  6    charge: still processing when --timeout ran out
  70   unexpected internal error (a bug in the CLI; the stack trace is printed)
  130  interrupted (Ctrl-C) during login or charge; listen exits 0 on Ctrl-C`;

/** An error that ends the command with a given exit code; `message` is printed to stderr. */
export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCodeValue,
    message: string,
    public hint?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
