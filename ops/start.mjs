// npm start: install, build, check Postgres/Redis, then run API and workers (ROLE, default all).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { build, checkNode, ensureInstalled, preflight, root } from './launcher.mjs';

checkNode();
ensureInstalled();
build();
// `npm start -- --role worker` (or api, all) and `--port N` are shorthands for ROLE and PORT.
// `--api N --workers M` (or API_PROCESSES / WORKER_PROCESSES) run N API processes on the one port
// (uWS listens with SO_REUSEPORT: the kernel spreads connections) and M worker processes, restarted
// if they die; without them one process runs ROLE (default all).
const env = { ...process.env };
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const [flag, inline] = args[i].split('=', 2);
  const value = () => inline ?? args[++i];
  if (flag === '--role') env.ROLE = value();
  else if (flag === '--port') env.PORT = value();
  else if (flag === '--metrics-port') env.METRICS_PORT = value();
  else if (flag === '--api') env.API_PROCESSES = value();
  else if (flag === '--workers') env.WORKER_PROCESSES = value();
  else {
    console.error(`Unknown option ${args[i]}. Options: --role api|worker|all, --port N, --metrics-port N, --api N --workers M (or the environment variables of README.md).`);
    process.exit(2);
  }
}
// The process counts are checked before preflight, so that a typo is not reported after a long wait.
const count = (name) => {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) > 64) {
    console.error(`${name} must be a whole number from 0 to 64, got "${raw}".`);
    process.exit(2);
  }
  return Number(raw);
};
const apis = count('API_PROCESSES');
const workers = count('WORKER_PROCESSES');
preflight(env);

const main = join(root, 'dist', 'ops', 'main.js');

if (apis === undefined && workers === undefined) {
  const child = spawn(process.execPath, ['--enable-source-maps', main], { cwd: root, stdio: 'inherit', env });
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
} else {
  const { supervise } = await import('../dist/ops/processes.js');
  let s;
  try {
    s = supervise({ main, cwd: root, env, apis: apis ?? 1, workers: workers ?? 1, onExit: (role, i, how) => console.error(`orquesta: ${role} process ${i + 1} exited (${how}); starting it again in 1 s`),
      onFatal: (role, i, how) => {
        console.error(`orquesta: ${role} process ${i + 1} exited (${how}) before it was ready; stopped them all (its own message is above)`);
        process.exit(1);
      },
    });
  } catch (e) {
    console.error(e.message);
    process.exit(2);
  }
  console.log(`Started ${apis ?? 1} API process(es) on port ${env.PORT ?? 8080} (SO_REUSEPORT) and ${workers ?? 1} worker process(es).`);
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => void s.stop(sig).then(() => process.exit(0)));
}
