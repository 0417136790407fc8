// Shared by `npm start` and `npm test` on a fresh clone: install what is missing, build, preflight.
// Plain JavaScript with no dependencies, because it runs before node_modules exists.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = dirname(dirname(fileURLToPath(import.meta.url)));

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

export function checkNode() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major < 20 || (major === 20 && minor < 6)) {
    console.error(`Orquesta needs Node 20.6 or newer (this is ${process.versions.node}). Install Node 20 LTS: sudo apt-get install -y nodejs, or use nvm.`);
    process.exit(1);
  }
}

/**
 * Installs when node_modules is missing or was installed from another package-lock.json or other patches.
 * `npm install` (which installs the locked versions) rather than `npm ci`: npm 11.19's `ci` refuses
 * this lock file over msgpackr's optional per-platform binaries that it itself left out of the lock.
 * Its postinstall applies patches/ (patch-package; docs/library-patches.md). When the key changed, every package
 * patched before or now is removed first, so that npm puts back the published files: a changed patch applies
 * to them, and a dropped one leaves them as published.
 */
export function ensureInstalled() {
  const stamp = join(root, 'node_modules', '.orquesta-lock-sha256');
  const { key: want, patches } = installKey(root);
  // The stamp: the key, then the patch files that install applied (a patch dropped since must be undone too).
  const [have = '', ...patchedBefore] = existsSync(stamp) ? readFileSync(stamp, 'utf8').trim().split('\n') : [];
  if (have === want && existsSync(join(root, 'node_modules', 'typescript'))) return;
  if (have) for (const f of new Set([...patchedBefore, ...patches])) rmSync(patchedDir(f), { recursive: true, force: true });
  console.error('Installing dependencies (npm install, locked versions, patches/)…');
  const code = run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error']);
  if (code !== 0) {
    console.error('npm could not install the dependencies; see its output above.');
    process.exit(code);
  }
  writeFileSync(stamp, [want, ...patches].join('\n') + '\n');
}

/**
 * The folder a patch-package file patches: `name+1.2.3.patch` → node_modules/name, `@scope+name+1.2.3.patch` →
 * node_modules/@scope/name, and a nested one, `outer++inner+1.2.3.patch`, → node_modules/outer/node_modules/inner.
 */
export function patchedDir(file, dir = root) {
  const segments = file.slice(0, -'.patch'.length).split('++');
  const last = segments.length - 1;
  return join(dir, ...segments.flatMap((s, i) => ['node_modules', ...(i === last ? s.split('+').slice(0, -1) : s.split('+'))]));
}

/** What an install of `dir` depends on: its package-lock.json and its patches/ (names and contents). */
export function installKey(dir) {
  const lock = join(dir, 'package-lock.json');
  const patchDir = join(dir, 'patches');
  const patches = existsSync(patchDir) ? readdirSync(patchDir).filter((f) => f.endsWith('.patch')).sort() : [];
  const hash = createHash('sha256').update(existsSync(lock) ? readFileSync(lock) : 'no-lock');
  for (const f of patches) hash.update('\0' + f + '\0').update(readFileSync(join(patchDir, f)));
  return { key: hash.digest('hex'), patches };
}

/**
 * tsc, then the SDK's types from the route table (ops/gen-sdk.mjs: the OpenAPI document, then
 * openapi-typescript), then tsc again only when those types changed. The first tsc emits dist/ even
 * when the SDK's types are missing or stale (a fresh clone), so its errors are shown only when they
 * stand after the types are current.
 */
function buildTs() {
  const tscArgs = [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'];
  const first = spawnSync(process.execPath, tscArgs, { cwd: root, encoding: 'utf8' });
  if (first.error) throw first.error;
  const gen = spawnSync(process.execPath, [join(root, 'ops', 'gen-sdk.mjs')], { cwd: root, stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8' });
  if (gen.status !== 0 && gen.status !== 10) {
    process.stdout.write(first.stdout ?? '');
    console.error(gen.stderr ?? '');
    console.error('The SDK could not be generated from the OpenAPI document (ops/gen-sdk.mjs); see above.');
    process.exit(gen.status ?? 1);
  }
  if (gen.status === 0 && first.status === 0) return;
  if (gen.status === 0) {
    process.stdout.write(first.stdout ?? '');
    console.error('TypeScript build failed; see the errors above.');
    process.exit(first.status ?? 1);
  }
  const code = run(process.execPath, tscArgs);
  if (code !== 0) {
    console.error('TypeScript build failed; see the errors above.');
    process.exit(code);
  }
}

/** The portal's browser bundle (ops/build-web.mjs: esbuild), after the TypeScript build. */
function buildWeb() {
  const r = spawnSync(process.execPath, [join(root, 'ops', 'build-web.mjs')], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) {
    console.error('The portal bundle could not be built (ops/build-web.mjs); see above.');
    process.exit(r.status ?? 1);
  }
}

export function build() {
  buildTs();
  buildWeb();
}

export function preflight(env) {
  const code = run(process.execPath, [join(root, 'dist', 'ops', 'preflight.js')], { env });
  if (code !== 0) process.exit(code);
}
