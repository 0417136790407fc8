// npm run bench:<name>: install, build, check services, then run dist/bench/<name>.js.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { build, checkNode, ensureInstalled, preflight, root } from './launcher.mjs';

checkNode();
ensureInstalled();
build();
preflight(process.env);
const name = process.argv[2];
const child = spawn(process.execPath, [join(root, 'dist', 'bench', `${name}.js`), ...process.argv.slice(3)], { cwd: root, stdio: 'inherit' });
child.on('exit', (code) => process.exit(code ?? 1));
