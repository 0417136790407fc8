// bench/confirm-lib.ts diskStalls: the disk's stalls bench/openloop reports beside each window's p99 (bench/RESULTS.md,
// issue 26, ninth session), read on series of readings whose stalls are known.
import t from 'tap';
import { diskStalls, type DiskSample } from '../bench/confirm-lib.js';

// readings every 5 ms: [done, inFlight]
const series = (xs: Array<[number, number]>): DiskSample[] => xs.map(([done, inFlight], i) => ({ atMs: 1000 + 5 * i, done, inFlight }));

t.test('a run of readings with I/O in flight and none completed is a stall, from its first to its last reading', async (t) => {
  const s = series([[1, 0], [2, 1], [2, 1], [2, 1], [2, 1], [2, 1], [2, 2], [3, 0], [3, 0]]);
  t.same(diskStalls(s, 20), [{ atMs: 1005, ms: 25 }]);
  t.same(diskStalls(s, 30), [], 'shorter than minMs: not reported');
});

t.test('completions while in flight, or nothing in flight, is no stall', async (t) => {
  t.same(diskStalls(series([[1, 1], [2, 1], [3, 1], [4, 1], [5, 1], [6, 1], [7, 1]]), 5), [], 'progress every reading');
  t.same(diskStalls(series([[1, 0], [1, 0], [1, 0], [1, 0], [1, 0], [1, 0]]), 5), [], 'idle disk');
});

t.test('several stalls, one reaching the last reading', async (t) => {
  const s = series([[1, 1], [1, 1], [1, 1], [2, 0], [3, 1], [3, 1], [3, 1], [3, 1]]);
  t.same(diskStalls(s, 10), [{ atMs: 1000, ms: 10 }, { atMs: 1020, ms: 15 }]);
});

t.test('an idle reading ends a run even when the count did not move', async (t) => {
  const s = series([[1, 1], [1, 1], [1, 1], [1, 0], [1, 1], [1, 1], [1, 1]]);
  t.same(diskStalls(s, 10), [{ atMs: 1000, ms: 10 }, { atMs: 1020, ms: 10 }]);
});
