// npm start: install, build, check Postgres/Redis, then run API and workers (ROLE, default all).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { build, checkNode, ensureInstalled, preflight, root } from './launcher.mjs';

checkNode();
ensureInstalled();
build();
// `npm start -- --role worker` (or api, all) and `--port N` are shorthands for ROLE and PORT.
const env = { ...process.env };
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const [flag, inline] = args[i].split('=', 2);
  const value = () => inline ?? args[++i];
  if (flag === '--role') env.ROLE = value();
  else if (flag === '--port') env.PORT = value();
  else if (flag === '--metrics-port') env.METRICS_PORT = value();
  else {
    console.error(`Unknown option ${args[i]}. Options: --role api|worker|all, --port N, --metrics-port N (or the environment variables of README.md).`);
    process.exit(2);
  }
}
preflight(env);
const child = spawn(process.execPath, ['--enable-source-maps', join(root, 'dist', 'ops', 'main.js')], { cwd: root, stdio: 'inherit', env });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
