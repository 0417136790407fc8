// npm start: install, build, check Postgres/Redis, then run API and workers (ROLE, default all).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { build, checkNode, ensureInstalled, preflight, root } from './launcher.mjs';

checkNode();
ensureInstalled();
build();
preflight(process.env);
const child = spawn(process.execPath, ['--enable-source-maps', join(root, 'dist', 'ops', 'main.js')], { cwd: root, stdio: 'inherit' });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
