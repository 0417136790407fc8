// Several service processes on one machine (`npm start -- --api N --workers M`, ops/start.mjs): N
// API processes listening on the same port (uWS listens with SO_REUSEPORT, so the kernel spreads
// new connections over them) and M worker processes. The first API process prints the banner; a
// process that dies is started again after `restartMs`; stop() ends them all.
import { spawn, type ChildProcess } from 'node:child_process';

export interface Supervised {
  /** The processes running now, by role. */
  readonly running: () => Array<{ role: 'api' | 'worker'; proc: ChildProcess }>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface SuperviseOptions {
  main: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  apis: number;
  workers: number;
  restartMs?: number;
  stdio?: 'inherit' | 'ignore';
  onExit?: (role: string, index: number, how: string) => void;
}

export function supervise(o: SuperviseOptions): Supervised {
  if (o.apis + o.workers === 0) throw new Error('--api 0 --workers 0 runs nothing');
  const metricsBase = o.env.METRICS_PORT ? Number(o.env.METRICS_PORT) : undefined;
  const live = new Map<ChildProcess, 'api' | 'worker'>();
  let stopping = false;
  const start = (role: 'api' | 'worker', index: number, n: number) => {
    const env: NodeJS.ProcessEnv = { ...o.env, ROLE: role, ORQ_BANNER: role === 'api' && index === 0 ? '' : 'off' };
    if (metricsBase !== undefined) env.METRICS_PORT = String(metricsBase + n);
    const proc = spawn(process.execPath, ['--enable-source-maps', o.main], { cwd: o.cwd, stdio: ['ignore', o.stdio ?? 'inherit', 'inherit'], env });
    live.set(proc, role);
    proc.on('exit', (code, signal) => {
      live.delete(proc);
      if (stopping) return;
      o.onExit?.(role, index, String(code ?? signal));
      setTimeout(() => !stopping && start(role, index, n), o.restartMs ?? 1000).unref();
    });
  };
  let n = 0;
  for (let i = 0; i < o.apis; i++) start('api', i, n++);
  for (let i = 0; i < o.workers; i++) start('worker', i, n++);
  return {
    running: () => [...live].map(([proc, role]) => ({ role, proc })),
    async stop(signal = 'SIGTERM') {
      stopping = true;
      await Promise.all(
        [...live.keys()].map(
          (p) =>
            new Promise<void>((resolve) => {
              if (p.exitCode !== null || p.signalCode !== null) return resolve();
              p.once('exit', () => resolve());
              p.kill(signal);
            }),
        ),
      );
    },
  };
}
