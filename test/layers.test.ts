// The layers point one way (docs/architecture.md "Layers"): api/ → actors/ → machines/,
// connectors/, formats/ → kernel/; ops/ wires them. This test reads every source file's imports and
// fails on an arrow that points the wrong way (e.g. an actor importing the edge).
import t from 'tap';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { projectRoot } from '../ops/paths.js';

/** What each layer may import (top-level folders of the repository). */
const ALLOWED: Record<string, readonly string[]> = {
  kernel: ['kernel'],
  schemas: ['schemas', 'kernel'],
  machines: ['machines', 'kernel', 'schemas'],
  formats: ['formats', 'kernel'],
  connectors: ['connectors', 'kernel', 'formats', 'schemas'],
  actors: ['actors', 'kernel', 'machines', 'connectors', 'formats', 'schemas'],
};

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const importsOf = (text: string) => [...text.matchAll(/(?:from\s+|import\(\s*|^import\s+)'(\.{1,2}\/[^']+)'/gm)].map((m) => m[1]);

t.test('no import points up the layers', async (t) => {
  const wrong: string[] = [];
  let files = 0;
  for (const [layer, allowed] of Object.entries(ALLOWED)) {
    let dir: string;
    try {
      dir = join(projectRoot, layer);
      statSync(dir);
    } catch {
      continue;
    }
    for (const file of sources(dir)) {
      files++;
      for (const spec of importsOf(readFileSync(file, 'utf8'))) {
        const target = relative(projectRoot, resolve(dirname(file), spec));
        const top = target.split(/[\\/]/)[0];
        if (!allowed.includes(top)) wrong.push(`${relative(projectRoot, file)} imports ${target} (${layer}/ may import ${allowed.join(', ')})`);
      }
    }
  }
  t.ok(files > 20, `${files} source files read`);
  t.same(wrong, [], 'every import points down the layers');
});

t.test('the check itself catches an actor importing the edge', async (t) => {
  const sample = "import { ApiError } from '../api/errors.js';\nimport type { X } from '../kernel/x.js';";
  const targets = importsOf(sample).map((s) => relative(projectRoot, resolve(join(projectRoot, 'actors'), s)).split(/[\\/]/)[0]);
  t.same(targets, ['api', 'kernel']);
  t.notOk(ALLOWED.actors.includes('api'));
});
