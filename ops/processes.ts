// Several service processes on one machine (`npm start -- --api N --workers M`, ops/start.mjs): N
// API processes listening on the same port (uWS listens with SO_REUSEPORT, so the kernel spreads
// new connections over them) and M worker processes. The first API process prints the banner; a
// process that dies after it was ready (its 'ready' message on the IPC channel, sent by ops/main.ts
// once the app has started) is started again after `restartMs`. One that exits before it was ready
// (a bad setting, a port taken, a database refused) would fail the same way every second, forever:
// the supervisor stops them all and calls onFatal instead. stop() ends them all.
import { spawn, type ChildProcess } from 'node:child_process';

export interface Supervised {
  /** The processes running now, by role. */
  readonly running: () => Array<{ role: 'api' | 'worker'; proc: ChildProcess; ready: boolean }>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface SuperviseOptions {
  main: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  apis: number;
  workers: number;
  restartMs?: number;
  /**
   * The children's stdout ('inherit' or 'ignore'; stderr is inherited), or 'pipe': stdin, stdout and
   * stderr are pipes for the caller (bench/: a child that sees its stdin close stops, so it dies with
   * the bench), handed over by onSpawn.
   */
  stdio?: 'inherit' | 'ignore' | 'pipe';
  /** Node options before main (default --enable-source-maps, as npm start runs them). */
  execArgv?: string[];
  /** Every process started (restarts too), as it starts. */
  onSpawn?: (role: 'api' | 'worker', index: number, proc: ChildProcess) => void;
  onExit?: (role: string, index: number, how: string) => void;
  /** A process exited before it was ready: the others have been stopped (no restart loop). */
  onFatal?: (role: string, index: number, how: string) => void;
}

export function supervise(o: SuperviseOptions): Supervised {
  if (o.apis + o.workers === 0) throw new Error('--api 0 --workers 0 runs nothing');
  const metricsBase = o.env.METRICS_PORT ? Number(o.env.METRICS_PORT) : undefined;
  const live = new Map<ChildProcess, { role: 'api' | 'worker'; ready: boolean }>();
  let stopping = false;
  const start = (role: 'api' | 'worker', index: number, n: number) => {
    const env: NodeJS.ProcessEnv = { ...o.env, ROLE: role, ORQ_BANNER: role === 'api' && index === 0 ? '' : 'off' };
    if (metricsBase !== undefined) env.METRICS_PORT = String(metricsBase + n);
    const out = o.stdio ?? 'inherit';
    const stdio = out === 'pipe' ? (['pipe', 'pipe', 'pipe', 'ipc'] as const) : (['ignore', out, 'inherit', 'ipc'] as const);
    const proc = spawn(process.execPath, [...(o.execArgv ?? ['--enable-source-maps']), o.main], { cwd: o.cwd, stdio: [...stdio], env });
    const entry = { role, ready: false };
    live.set(proc, entry);
    o.onSpawn?.(role, index, proc);
    proc.on('message', (m) => {
      if (m === 'ready') entry.ready = true;
    });
    proc.on('exit', (code, signal) => {
      live.delete(proc);
      if (stopping) return;
      const how = String(code ?? signal);
      if (!entry.ready) {
        void api.stop().then(() => o.onFatal?.(role, index, how));
        return;
      }
      o.onExit?.(role, index, how);
      setTimeout(() => !stopping && start(role, index, n), o.restartMs ?? 1000).unref();
    });
  };
  let n = 0;
  for (let i = 0; i < o.apis; i++) start('api', i, n++);
  for (let i = 0; i < o.workers; i++) start('worker', i, n++);
  const api: Supervised = {
    running: () => [...live].map(([proc, e]) => ({ role: e.role, proc, ready: e.ready })),
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
  return api;
}
