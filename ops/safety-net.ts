// The process-level safety net, installed once the service is up (ops/main.ts).
//
// Every request path is already closed against exceptions at the edge (api/edge.ts: each uWS
// callback catches, answers a 500 envelope and logs), so what reaches here is a bug outside a
// request: a timer, an event handler, a promise nobody awaited. The choice, and why:
// - unhandledRejection: logged, the process keeps running. The promise chain has already unwound;
//   nothing is half-done because of the missing handler. (Node's default would exit.)
// - uncaughtException: logged, the process keeps running. Node warns that state may be
//   inconsistent after one; here the state that matters (money, intents, deliveries, jobs) lives in
//   Postgres and is changed only inside transactions, and what lives in memory (key cache, rate-limit
//   batches, the dispatcher's leased deliveries) is rebuilt from Postgres and Redis by the sweeps and
//   reconcilers. Exiting instead would turn any such bug that a client can trigger into an outage of
//   every request in flight (and of the workers under ROLE=all), over and over.
// Before the service is up, a failure still ends the process (main.ts exits with the reason).
import type { Logger } from '../kernel/log.js';

export function installSafetyNet(log: Logger, proc: NodeJS.EventEmitter = process): void {
  proc.on('unhandledRejection', (reason: unknown) => {
    log.error('unhandled promise rejection; the process keeps running', { err: reason });
  });
  proc.on('uncaughtException', (err: Error, origin: string) => {
    log.error('uncaught exception; the process keeps running', { err, origin });
  });
}
