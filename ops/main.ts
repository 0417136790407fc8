// Process entry point: configuration, then telemetry before anything else, then the app.
import { ConfigError, loadConfig } from './config.js';
import { startTelemetry, stopTelemetry } from './telemetry.js';

let config;
try {
  config = loadConfig();
} catch (e) {
  if (e instanceof ConfigError) {
    process.stderr.write(`orquesta: ${e.message}\n`);
    process.exit(2);
  }
  throw e;
}
startTelemetry({ otelEndpoint: config.otelEndpoint, tracesExporter: config.otelTracesExporter });

const { startApp } = await import('./app.js');
const { createLogger } = await import('../kernel/log.js');
const { printBanner } = await import('./banner.js');
const log = createLogger(config.logLevel, { role: config.role });

let app: Awaited<ReturnType<typeof startApp>>;
try {
  app = await startApp(config, log);
} catch (e) {
  log.error('start failed', { err: e });
  process.stderr.write(`\norquesta could not start: ${(e as Error).message}\n`);
  process.exit(1);
}
if (config.banner) printBanner(config, app); // ops/start.mjs: one banner for several processes
// Under the supervisor (ops/processes.ts) the IPC channel says the app is up, then closes so that it
// holds nothing open; a process that exits before this is not restarted.
process.send?.('ready', () => process.disconnect?.());
(await import('./safety-net.js')).installSafetyNet(log);

let shuttingDown = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, async () => {
    if (shuttingDown) process.exit(1);
    shuttingDown = true;
    log.info('shutting down', { signal: sig });
    await app.stop();
    await stopTelemetry();
    process.exit(0);
  });
}
