// The layers point one way (docs/architecture.md "Layers"): api/ → actors/ → machines/,
// connectors/, formats/ → kernel/; ops/ wires them. This test reads every source file's imports and
// fails on an arrow that points the wrong way (an actor importing the edge, the edge importing
// ops/), on any import cycle (type-only imports included), and on a handler that reaches a pool
// instead of a capability's facade (api/services.ts).
import t from 'tap';
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { projectRoot } from '../kernel/paths.js';
import type { Services } from '../api/services.js';

/** What each layer may import (top-level folders of the repository). */
const ALLOWED: Record<string, readonly string[]> = {
  kernel: ['kernel'],
  schemas: ['schemas', 'kernel'],
  machines: ['machines', 'kernel', 'schemas'],
  formats: ['formats', 'kernel'],
  connectors: ['connectors', 'kernel', 'formats', 'schemas'],
  actors: ['actors', 'kernel', 'machines', 'connectors', 'formats', 'schemas'],
  api: ['api', 'actors', 'kernel', 'machines', 'connectors', 'formats', 'schemas'],
};
/** Folders whose files take part in the cycle check (everything that runs). */
const CODE = ['api', 'actors', 'kernel', 'machines', 'connectors', 'formats', 'schemas', 'ops', 'cli', 'sdk'];

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'generated') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Relative imports of every kind: `import`, `import type`, `export … from`, `import()`. */
const importsOf = (text: string) => [...text.matchAll(/(?:from\s+|import\(\s*|^import\s+)'(\.{1,2}\/[^']+)'/gm)].map((m) => m[1]);

/** The repository path an import names (a .js specifier names its .ts source). */
function target(file: string, spec: string): string {
  const abs = resolve(dirname(file), spec);
  for (const c of [abs.replace(/\.js$/, '.ts'), abs + '.ts', join(abs, 'index.ts'), abs]) if (existsSync(c) && statSync(c).isFile()) return relative(projectRoot, c);
  return relative(projectRoot, abs);
}

/** The import graph's cycles (Tarjan's strongly connected components of more than one file, or a file importing itself). */
export function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        c.push(w);
      } while (w !== v);
      if (c.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(c.reverse());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** A handler's way to a pool or Redis: what api/routes/ must not contain (capabilities' facades instead). */
const POOL = /\bdeps\.(?:sql|readSql|redis)\b|\breadSql\b|\bsql`|from '\.\.\/\.\.\/kernel\/db\.js'/;
export const poolUses = (text: string) =>
  text
    .split('\n')
    .map((line, i) => ({ line: line.replace(/\/\/.*$/, ''), n: i + 1 }))
    .filter(({ line }) => POOL.test(line))
    .map(({ n }) => n);

t.test('no import points up the layers', async (t) => {
  const wrong: string[] = [];
  let files = 0;
  for (const [layer, allowed] of Object.entries(ALLOWED)) {
    const dir = join(projectRoot, layer);
    if (!existsSync(dir)) continue;
    for (const file of sources(dir)) {
      files++;
      for (const spec of importsOf(readFileSync(file, 'utf8'))) {
        const to = target(file, spec);
        const top = to.split(/[\\/]/)[0];
        if (!allowed.includes(top)) wrong.push(`${relative(projectRoot, file)} imports ${to} (${layer}/ may import ${allowed.join(', ')})`);
      }
    }
  }
  t.ok(files > 20, `${files} source files read`);
  t.same(wrong, [], 'every import points down the layers (api/ never imports ops/)');
});

t.test('no import cycle, type-only imports included', async (t) => {
  const graph = new Map<string, string[]>();
  for (const top of CODE) {
    const dir = join(projectRoot, top);
    if (!existsSync(dir)) continue;
    for (const file of sources(dir)) graph.set(relative(projectRoot, file), importsOf(readFileSync(file, 'utf8')).map((s) => target(file, s)));
  }
  t.ok(graph.size > 100, `${graph.size} files in the graph`);
  t.same(cycles(graph).map((c) => c.join(' -> ')), [], 'the import graph has no cycle');
});

t.test('no handler reaches a pool: routes call capabilities through ctx.deps (api/services.ts)', async (t) => {
  const found: string[] = [];
  for (const file of sources(join(projectRoot, 'api', 'routes'))) {
    const lines = poolUses(readFileSync(file, 'utf8'));
    if (lines.length) found.push(`${relative(projectRoot, file)}:${lines.join(',')}`);
  }
  t.same(found, [], 'no sql, readSql or redis in api/routes/');
  // The handlers' deps type has no pool: adding one to Services makes this line fail to compile.
  const poolFree: Extract<keyof Services, 'sql' | 'readSql' | 'redis' | 'runtime' | 'queues'> extends never ? true : false = true;
  t.ok(poolFree, 'Services (RequestContext.deps) has no sql, readSql, redis, runtime or queues');
});

t.test('the checks themselves catch what they guard against', async (t) => {
  const sample = "import { ApiError } from '../api/errors.js';\nimport type { X } from '../kernel/x.js';\nexport { Y } from '../ops/y.js';";
  const tops = importsOf(sample).map((s) => relative(projectRoot, resolve(join(projectRoot, 'actors'), s)).split(/[\\/]/)[0]);
  t.same(tops, ['api', 'kernel', 'ops'], 'type-only imports and re-exports are read');
  t.notOk(ALLOWED.actors.includes('api'), 'an actor importing the edge is refused');
  t.notOk(ALLOWED.api.includes('ops'), 'the edge importing ops/ is refused');
  // The cycle of the last session: api/route.ts → ops/deps.ts → api/idempotency.ts → api/route.ts (type-only).
  const graph = new Map([
    ['api/route.ts', ['ops/deps.ts']],
    ['ops/deps.ts', ['api/idempotency.ts', 'kernel/db.ts']],
    ['api/idempotency.ts', ['api/route.ts']],
    ['kernel/db.ts', []],
  ]);
  t.same(cycles(graph), [['api/route.ts', 'ops/deps.ts', 'api/idempotency.ts']], 'a three-file cycle is found');
  t.same(cycles(new Map([['a.ts', ['b.ts']], ['b.ts', []]])), [], 'no cycle where there is none');
  t.same(poolUses("handler: async (ctx) => ({ status: 200, body: await listDisputes(ctx.deps.sql, ctx.principal) }),\n// ctx.deps.sql in a comment\nconst { sql, readSql, config } = ctx.deps;"), [1, 3], 'a handler passing ctx.deps.sql (or taking readSql) is found; a comment is not');
});
