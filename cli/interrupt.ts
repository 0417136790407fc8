// Ctrl-C (SIGINT) and SIGTERM: the first one aborts `interrupt.signal`, which every request,
// sleep and prompt listens to, so a command can stop cleanly (listen prints a summary and exits 0).
// A second Ctrl-C exits at once with 130.
import { ExitCode } from './exit-codes.js';

const controller = new AbortController();
export const interrupt = { signal: controller.signal, by: undefined as NodeJS.Signals | undefined };

let installed = false;
export function installSignalHandlers(): void {
  if (installed) return;
  installed = true;
  const onSignal = (sig: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(ExitCode.INTERRUPTED);
    interrupt.by = sig;
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

/** Resolves after `ms`, or at once when interrupted. */
export function pause(ms: number, signal: AbortSignal = controller.signal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
