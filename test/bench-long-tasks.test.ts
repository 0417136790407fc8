// bench/openloop --profile's long tasks (bench/confirm-lib.ts longTasks): the busy stretches of a
// V8 .cpuprofile between idle samples, read on a profile written here so each figure is known.
// bench/RESULTS.md's account of the open loop's slow answers (issue 26, seventh session) rests on it.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { longTasks } from '../bench/confirm-lib.js';

const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber, columnNumber: 0 });
const nodes = [
  { id: 1, callFrame: frame('(root)'), children: [2, 3, 5] },
  { id: 2, callFrame: frame('(idle)') },
  { id: 3, callFrame: frame('send', 'file:///srv/orquesta/dist/api/edge/reply.js', 25), children: [4] },
  { id: 4, callFrame: frame('writeBuffer') },
  { id: 5, callFrame: frame('(garbage collector)') },
];
const IDLE = 2, WRITE = 4, GC = 5;

/** Samples 1 ms apart from t = 1,000,000 µs: `[node, count]` runs. */
function profile(runs: Array<[number, number]>) {
  const samples: number[] = [];
  for (const [node, n] of runs) for (let i = 0; i < n; i++) samples.push(node);
  return { nodes, startTime: 1_000_000, endTime: 1_000_000 + samples.length * 1000, samples, timeDeltas: samples.map(() => 1000) };
}

t.test('a stretch ends at an idle sample; its samples are named by their nearest app frame', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'orq-longtasks-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'p.cpuprofile');
  // idle 10; busy 31 samples (30 ms: 20 writes under send, then 11 collector); idle 10; busy 6 (5 ms); idle 5
  writeFileSync(file, JSON.stringify(profile([[IDLE, 10], [WRITE, 20], [GC, 11], [IDLE, 10], [WRITE, 6], [IDLE, 5]])));

  const all = longTasks(file, 1);
  t.equal(all.length, 2, 'two busy stretches');
  t.same(all.map((x) => x.ms), [30, 5], 'longest first; from first to last sample');
  t.equal(all[0].startUs, 1_011_000, 'starts at its first busy sample');
  t.same(all[0].top, [{ name: 'send api/edge/reply.js:26', pct: 65 }, { name: '(garbage collector)', pct: 35 }]);

  t.same(longTasks(file, 20).map((x) => x.ms), [30], 'shorter stretches are left out');
  // A window that begins in the middle of the long stretch still shows it (its answers waited for it);
  // one after both stretches shows neither.
  t.same(longTasks(file, 1, 1_030_000, 1_060_000).map((x) => x.ms), [30, 5]);
  t.same(longTasks(file, 1, 1_060_000, 1_062_000), []);
});
