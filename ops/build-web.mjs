// The portal's browser bundle (docs/portal.md): web/portal (Preact, uPlot, @xstate/store) bundled and
// minified by esbuild into dist/web/portal/portal.js and portal.css at build time (npm start, npm test,
// npm run build). Nothing is fetched at run time: the service serves these two files itself.
import { build } from 'esbuild';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export async function buildWeb() {
  const outdir = join(root, 'dist', 'web', 'portal');
  mkdirSync(outdir, { recursive: true });
  const r = await build({
    absWorkingDir: root,
    entryPoints: { portal: 'web/portal/main.tsx' },
    outdir,
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2020', 'chrome100', 'safari15', 'firefox100'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  return Object.fromEntries(Object.entries(r.metafile.outputs).map(([f, o]) => [f.replace(/^.*\//, ''), o.bytes]));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const sizes = await buildWeb();
  console.log(Object.entries(sizes).map(([f, b]) => `${f} ${(b / 1024).toFixed(1)} kB`).join(', '));
}
