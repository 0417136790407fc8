// bench/confirm-lib.ts gcNvp: the sums behind bench/younggen and bench/openloop --gc (the young-generation figures of
// bench/RESULTS.md, issue 26, eighth session), read on --trace-gc-nvp lines whose figures are known.
import t from 'tap';
import { gcNvp } from '../bench/confirm-lib.js';

const line = (ms: number, gc: string, pause: number, allocated: number, promoted: number, kept: number) =>
  `[4242:0x5a1b2c0]    ${ms} ms: pause=${pause} mutator=1.0 gc=${gc} reduce_memory=0 allocated=${allocated} promoted=${promoted} new_space_survived=${kept} promotion_rate=0.0%`;

t.test('sums scavenges from fromMs on, counts mark-compacts, ignores other lines', async (t) => {
  const lines = [
    line(500, 's', 9, 1000, 900, 900), // before fromMs: not counted
    'Server listening on 127.0.0.1:3000',
    line(1200, 's', 2, 1000, 10, 30),
    line(1500, 'mc', 7, 0, 0, 0),
    line(1800, 's', 4, 3000, 30, 10),
  ];
  t.same(gcNvp(lines, 1000), { scavenges: 2, promotedPct: 1, keptPct: 1, pauseMs: 3, markCompacts: 1 });
  t.equal(gcNvp(lines.slice(0, 2), 1000), undefined, 'no scavenge after fromMs');
});
