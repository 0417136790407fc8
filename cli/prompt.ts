// Terminal questions for `login` with node:readline: a plain one, and a hidden one for the API key
// (the typed characters are not echoed). Only used when stdin is a terminal.
import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';
import { CliError, ExitCode } from './exit-codes.js';

export async function ask(question: string, opts: { defaultValue?: string; hidden?: boolean; signal?: AbortSignal } = {}): Promise<string> {
  let muted = false;
  const out = new Writable({
    write(chunk, _enc, cb) {
      if (!muted) process.stderr.write(chunk);
      cb();
    },
  });
  const rl = createInterface({ input: process.stdin, output: out, terminal: Boolean(process.stdin.isTTY) });
  const shown = opts.defaultValue ? `${question} [${opts.defaultValue}]: ` : `${question}: `;
  // In a terminal readline takes Ctrl-C itself (raw mode: no process SIGINT), so it aborts here too.
  const local = new AbortController();
  rl.on('SIGINT', () => local.abort());
  const signal = opts.signal ? AbortSignal.any([opts.signal, local.signal]) : local.signal;
  try {
    const pending = rl.question(shown, { signal });
    muted = Boolean(opts.hidden); // after the prompt is written: hide what is typed
    const answer = (await pending).trim();
    if (opts.hidden) process.stderr.write('\n');
    return answer || opts.defaultValue || '';
  } catch (e) {
    if ((e as Error).name === 'AbortError') {
      process.stderr.write('\n');
      throw new CliError(ExitCode.INTERRUPTED, 'Interrupted; nothing was saved.');
    }
    throw e;
  } finally {
    rl.close();
  }
}
