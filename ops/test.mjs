// npm test: install, build, check Postgres/Redis, then run the tap suite against the real services,
// in its own database (orquesta_test) and Redis key prefix (orq_test…). Extra args go to tap.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { build, checkNode, ensureInstalled, preflight, root } from './launcher.mjs';

checkNode();
ensureInstalled();
build();
const env = { ...process.env, NODE_ENV: 'test' };
preflight(env);
// The browser tests' Chromium, found or installed once here (saying so) rather than by two test
// files at the same time (two apt-get runs would fight over dpkg's lock).
{
  const { ensureChromium } = await import('../dist/test/helpers/browser.js');
  const found = ensureChromium((s) => process.stderr.write(s));
  if ('skip' in found) process.stderr.write(`browser tests will be skipped: ${found.skip}\n`);
}

const args = process.argv.slice(2);
const files = args.filter((a) => !a.startsWith('-'));
const flags = args.filter((a) => a.startsWith('-'));
const tap = join(root, 'node_modules', 'tap', 'dist', 'esm', 'run.mjs');
const child = spawn(process.execPath, [tap, ...flags, ...(files.length ? files : ['dist/test/**/*.test.js'])], {
  cwd: root,
  env: { ...env, NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} --enable-source-maps`.trim() },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let pass = 0;
let fail = 0;
let skip = 0;
let buf = '';
child.stdout.on('data', (d) => {
  process.stdout.write(d);
  buf += d.toString();
  const lines = buf.split('\n');
  buf = lines.pop() ?? '';
  for (const l of lines) {
    // the base reporter's per-file summary lines, e.g. "# { total: 12, pass: 12 }" are not printed; count asserts below
    const m = /^\s*#\s*\{\s*total:\s*(\d+)(?:,\s*pass:\s*(\d+))?(?:,\s*fail:\s*(\d+))?(?:,\s*skip:\s*(\d+))?/.exec(l);
    if (m) {
      pass = Number(m[2] ?? 0);
      fail = Number(m[3] ?? 0);
      skip = Number(m[4] ?? 0);
    }
  }
});
child.on('exit', (code) => {
  process.stdout.write(`\n${pass} passed, ${fail} failed${skip ? `, ${skip} skipped` : ''}\n`);
  process.exit(code ?? 1);
});
