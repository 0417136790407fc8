// A progress line on stderr: a spinner (yocto-spinner) in a terminal; in a pipe or CI, one plain
// line per change of text, so logs show the steps without the animation; nothing with --json.
import yoctoSpinner, { type Spinner } from 'yocto-spinner';

export interface Progress {
  /** `detail` (e.g. the elapsed time) is shown by the spinner only; plain lines change with `text`. */
  update(text: string, detail?: string): void;
  stop(): void;
}

export function progress(opts: { quiet: boolean }): Progress {
  if (opts.quiet) return { update() {}, stop() {} };
  if (process.stderr.isTTY && process.env.TERM !== 'dumb' && !('CI' in process.env)) {
    let spinner: Spinner | undefined;
    return {
      update(text, detail) {
        const shown = detail ? `${text} ${detail}` : text;
        if (!spinner) spinner = yoctoSpinner({ text: shown, stream: process.stderr, handleSignals: false }).start();
        else if (spinner.text !== shown) spinner.text = shown;
      },
      stop() {
        spinner?.stop();
        spinner = undefined;
      },
    };
  }
  let last = '';
  return {
    update(text) {
      if (text !== last) process.stderr.write(`· ${text}\n`);
      last = text;
    },
    stop() {},
  };
}
