// patches/ (applied by patch-package on install; docs/library-patches.md): the three shapes that kept
// postgres.js's and ioredis's objects through V8's young-generation collections, checked where V8 decides
// it, in a child started with --allow-natives-syntax (%HaveSameMap, %HasFastProperties). Each check fails
// on the published files: a per-instance getter gives every ioredis pipeline its own hidden class, the
// object-literal getter leaves postgres.js's queues in dictionary mode, and Query's species is an accessor.
// bench/RESULTS.md ("Issue 26, eighth session") has what they cost under load.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
// postgres.js's ESM build (what `import postgres from 'postgres'` loads); its queue is not exported.
const pgSrc = join(dirname(require.resolve('postgres')), '..', '..', 'src');

const probe = `
const { Pipeline, default: Redis } = await import('ioredis');
const { default: Queue } = await import(${JSON.stringify(pathToFileURL(join(pgSrc, 'queue.js')).href)});
const { Query } = await import(${JSON.stringify(pathToFileURL(join(pgSrc, 'query.js')).href)});
const redis = new Redis({ lazyConnect: true, enableOfflineQueue: false });
const a = redis.pipeline(), b = redis.pipeline();
a.get('x'); a.get('y'); b.get('z');
const qa = Queue(), qb = Queue();
qa.push(1); qa.push(2); qa.shift(); qb.push(3);
const species = Object.getOwnPropertyDescriptor(Query, Symbol.species);
const q = new Query(Object.assign(['select 1'], { raw: ['select 1'] }), [], () => {}, null);
const derived = Promise.prototype.then.call(q, () => {});
console.log(JSON.stringify({
  pipelinesShareMap: %HaveSameMap(a, b),
  pipelineOwnLength: Object.getOwnPropertyDescriptor(a, 'length') !== undefined,
  pipelineLengths: [a.length, b.length],
  instanceOfPipeline: a instanceof Pipeline,
  queuesShareMap: %HaveSameMap(qa, qb),
  queueFast: %HasFastProperties(qa),
  queueLengths: [qa.length, qb.length, qa.shift(), qa.length, qa.shift()],
  speciesIsData: !!species && 'value' in species && species.value === Promise,
  speciesAccessor: !!species?.get,
  derivedIsPlainPromise: derived.constructor === Promise && !(derived instanceof Query),
}));
redis.disconnect();
`;

t.test('the patched libraries keep one hidden class per kind and the same behaviour', async (t) => {
  const r = spawnSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', probe], { encoding: 'utf8', timeout: 30_000 });
  t.equal(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout.trim().split('\n').pop()!);
  t.same(got, {
    pipelinesShareMap: true,
    pipelineOwnLength: false,
    pipelineLengths: [2, 1],
    instanceOfPipeline: true,
    queuesShareMap: true,
    queueFast: true,
    queueLengths: [1, 1, 2, 0, undefined],
    speciesIsData: true,
    speciesAccessor: false,
    derivedIsPlainPromise: true,
  });
});

t.test('a changed patch removes the folder it patches (ops/launcher.mjs patchedDir)', async (t) => {
  // dist/test → the repository's ops/launcher.mjs (plain JavaScript, not compiled).
  const launcher = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'ops', 'launcher.mjs')).href;
  const { patchedDir } = (await import(launcher)) as { patchedDir: (file: string, dir?: string) => string };
  t.equal(patchedDir('postgres+3.4.9.patch', '/r'), '/r/node_modules/postgres');
  t.equal(patchedDir('@scope+name+1.2.3.patch', '/r'), '/r/node_modules/@scope/name');
  t.equal(patchedDir('outer++inner+1.2.3.patch', '/r'), '/r/node_modules/outer/node_modules/inner');
  t.equal(patchedDir('@a+b++@c+d+1.0.0.patch', '/r'), '/r/node_modules/@a/b/node_modules/@c/d');
});

t.test("postgres.js's helpers build the same text with the keyword and identifier caches, on a first and a repeated build", async (t) => {
  const { default: postgres } = (await import('postgres')) as unknown as { default: (url: string, o: object) => any };
  const { stringify } = (await import(pathToFileURL(join(pgSrc, 'types.js')).href)) as { stringify: (...a: unknown[]) => string };
  const sql = postgres('postgres://nobody@127.0.0.1:1/none', { transform: { undefined: null } });
  const options = { transform: { column: {}, undefined: null } };
  const build = (q: { strings: string[]; args: unknown[] }) => {
    const parameters: unknown[] = [];
    const text = stringify(q, q.strings[0], q.args[0], parameters, [], options);
    return { text, parameters };
  };
  const cases: Array<[string, () => { strings: string[]; args: unknown[] }, string, unknown[]]> = [
    ['insert', () => sql`insert into ${sql('t')} ${sql({ a: 1, b: 'x' })}`, 'insert into "t" ("a","b")values($1,$2)', [1, 'x']],
    ['insert of rows', () => sql`insert into t ${sql([{ a: 1 }, { a: 2 }])}`, 'insert into t ("a")values($1),($2)', [1, 2]],
    ['update', () => sql`update t set ${sql({ a: 1, b: 2 }, 'b')} where id = ${5}`, 'update t set "b"=$1 where id = $2', [2, 5]],
    ['in', () => sql`select 1 from t where id in ${sql([1, 2])}`, 'select 1 from t where id in ($1,$2)', [1, 2]],
    ['select list', () => sql`select ${sql(['a', 'b'])} from t`, 'select "a","b" from t', []],
    ['values after an insert in a CTE', () => sql`with x as (insert into t ${sql({ a: 1 })}) update u set ${sql({ c: 3 })}`, 'with x as (insert into t ("a")values($1)) update u set "c"=$2', [1, 3]],
    ['identifiers with a dot and a quote', () => sql`select * from ${sql('s.t')}, ${sql('a"b')}`, 'select * from "s"."t", "a""b"', []],
    // A helper after more than 4 kB of text (not kept: searched every time).
    ['after a long list', () => sql`with l as (select 1 from t where id in ${sql(Array.from({ length: 1200 }, (_, i) => i))}) update u set ${sql({ c: 3 })}`, `with l as (select 1 from t where id in (${Array.from({ length: 1200 }, (_, i) => `$${i + 1}`).join(',')})) update u set "c"=$1201`, [...Array.from({ length: 1200 }, (_, i) => i), 3]],
  ];
  for (const [name, make, text, parameters] of cases) {
    t.same(build(make()), { text, parameters }, `${name}: first build`);
    t.same(build(make()), { text, parameters }, `${name}: repeated build (cached keyword and identifiers)`);
  }
  await sql.end();
});
