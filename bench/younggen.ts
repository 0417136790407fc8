// bench/younggen: how much of the young generation the database and Redis clients make V8 promote. Each loop
// runs in its own `node --trace-gc-nvp` child for --seconds against the real Postgres and Redis, with a few
// dozen operations in flight at most. It reads every scavenge after the first second and reports:
// - the share of allocated young bytes promoted to the old generation;
// - the mean scavenge pause;
// - the mark-compacts;
// - operations per second.
// The clients are the build under test's (BENCH_APP_ROOT under `npm run bench:younggen -- --baseline <commit>`),
// so the guard compares the published libraries with patches/ (docs/library-patches.md).
//   node dist/bench/younggen.js [--seconds 5] [--loops redis-autopipeline,pg-reserve-2,pg-pool-2,pg-pool-1]
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { dbUrl, fmt, gcNvp, here, machineInfo, mdTable, parseOptions, redisUrl, type YoungGenStats } from './confirm-lib.js';

const LOOPS = ['redis-autopipeline', 'pg-reserve-2', 'pg-pool-2', 'pg-pool-1'] as const;
type Loop = (typeof LOOPS)[number];

const o = parseOptions<{ seconds: number; loops: string; json?: string }>(process.argv.slice(2), {
  seconds: { type: 'number', default: 5, min: 2, max: 60, help: 'seconds per loop (the first is not counted)' },
  loops: { type: 'string', default: LOOPS.join(','), help: 'which loops, comma-separated' },
  json: { type: 'string', help: 'write the results as JSON here' },
}, 'bench/younggen: young-generation promotion of the Postgres and Redis clients');

// The loop itself: run in the child, with the clients' entry files resolved from the build under test.
const child = (loop: Loop, seconds: number, pg: string, ioredis: string, db: string, redis: string) => `
const { default: postgres } = await import(${JSON.stringify(pg)});
const { default: Redis } = await import(${JSON.stringify(ioredis)});
const loop = ${JSON.stringify(loop)};
const sql = postgres(${JSON.stringify(db)}, { max: 4, onnotice() {} });
const r = loop === 'redis-autopipeline' ? new Redis(${JSON.stringify(redis)}, { enableAutoPipelining: true }) : null;
const key = 'orq:bench:younggen:' + process.pid + ':';
let n = 0;
const end = Date.now() + ${seconds * 1000};
async function one(i) {
  while (Date.now() < end) {
    if (loop === 'redis-autopipeline') await Promise.all([r.set(key + i, String(n), 'PX', 5000), r.get(key + i)]);
    else if (loop === 'pg-reserve-2') { const c = await sql.reserve(); try { await Promise.all([c\`select \${n}::int as a\`, c\`select \${n}::int as b\`]); } finally { c.release(); } }
    else if (loop === 'pg-pool-2') await Promise.all([sql\`select \${n}::int as a\`, sql\`select \${n}::int as b\`]);
    else await sql\`select \${n}::int as a\`;
    n++;
  }
}
await Promise.all(Array.from({ length: loop === 'redis-autopipeline' ? 16 : 8 }, (_, i) => one(i)));
process.stderr.write('OPS ' + n + '\\n');
await sql.end({ timeout: 2 });
r?.disconnect();
`;

interface LoopResult extends YoungGenStats { loop: Loop; opsPerS: number }

async function run(loop: Loop, seconds: number): Promise<LoopResult> {
  const appRoot = process.env.BENCH_APP_ROOT ?? join(here, '..', '..');
  const req = createRequire(join(appRoot, 'package.json'));
  const url = (m: string) => pathToFileURL(req.resolve(m)).href;
  const p = spawn(process.execPath, ['--trace-gc-nvp', '--input-type=module', '-e', child(loop, seconds, url('postgres'), url('ioredis'), dbUrl('postgres'), redisUrl())], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  p.stdout.on('data', (d: Buffer) => (out += d.toString()));
  p.stderr.on('data', (d: Buffer) => (err += d.toString()));
  // 'close', not 'exit': the child's output is read to its end only then.
  const code = await new Promise<number | null>((res) => p.on('close', res));
  const ops = Number(/OPS (\d+)/.exec(err)?.[1]);
  if (code !== 0 || !Number.isFinite(ops)) throw new Error(`${loop}: the loop failed (exit ${code}): ${err.slice(-800)}`);
  const gc = gcNvp(out.split('\n'), 1000);
  if (!gc) throw new Error(`${loop}: no scavenge after the first second (try a longer --seconds)`);
  return { loop, opsPerS: ops / seconds, ...gc };
}

const loops = String(o.loops).split(',').map((s) => s.trim()).filter(Boolean) as Loop[];
for (const l of loops) if (!LOOPS.includes(l)) throw new Error(`unknown loop ${l} (one of ${LOOPS.join(', ')})`);
const m = machineInfo();
process.stdout.write(`bench/younggen: ${m.date}, node ${m.node}, ${m.nproc} CPUs, clients from ${process.env.BENCH_APP_ROOT ?? 'this tree'}, ${o.seconds} s per loop\n`);
const results: LoopResult[] = [];
for (const l of loops) results.push(await run(l, o.seconds));
process.stdout.write(`\n${mdTable(
  ['loop', 'ops/s', 'scavenges', 'promoted % of young bytes', 'kept once %', 'mean scavenge pause ms', 'mark-compacts'],
  results.map((r) => [r.loop, fmt(r.opsPerS), r.scavenges, fmt(r.promotedPct, 1), fmt(r.keptPct, 1), fmt(r.pauseMs, 2), r.markCompacts]),
)}\n`);
const headline: Record<string, { value: number; better: 'higher' | 'lower'; unit: string }> = {};
for (const r of results) {
  headline[`${r.loop} promoted`] = { value: r.promotedPct, better: 'lower', unit: '%' };
  headline[`${r.loop} ops`] = { value: r.opsPerS, better: 'higher', unit: '/s' };
}
if (o.json) writeFileSync(String(o.json), JSON.stringify({ machine: m, results, headline }, null, 2));
