// One Orquesta process for bench/confirm and bench/webhooks: the real app (startApp) configured
// from the environment the parent passes (ROLE=api or ROLE=worker, DATABASE_URL of a scratch
// database, REDIS_PREFIX, …), without telemetry, as ops/main.ts would run it. Prints one line
// `BENCH_READY {"pid":…,"port":…,"role":…}` on stdout when it serves (api) or consumes (worker).
// Stops cleanly (so that node --cpu-prof writes its profile) on SIGTERM/SIGINT or when its stdin
// (a pipe from the parent) closes.
import { startApp, type RunningApp } from '../ops/app.js';
import { loadConfig } from '../ops/config.js';
import { createLogger } from '../kernel/log.js';

const config = loadConfig(process.env);
const log = createLogger(config.logLevel, { proc: `bench-${config.role}` });

let app: RunningApp | undefined;
let stopping: Promise<void> | undefined;

function stop(code: number): Promise<void> {
  stopping ??= (async () => {
    const hard = setTimeout(() => process.exit(code), 12_000);
    hard.unref();
    try {
      await app?.stop();
    } catch (e) {
      log.error('bench app stop failed', { err: e });
    }
    process.exit(code);
  })();
  return stopping;
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => void stop(0));
process.stdin.on('end', () => void stop(0));
process.stdin.on('error', () => void stop(0));
process.stdin.resume();

try {
  app = await startApp(config, log);
  process.stdout.write(`BENCH_READY ${JSON.stringify({ pid: process.pid, port: app.port ?? null, role: config.role, adminKey: config.adminKey ? 'set' : 'unset' })}\n`);
} catch (e) {
  process.stderr.write(`confirm-app (${config.role}): ${(e as Error).stack ?? String(e)}\n`);
  await stop(1);
}
