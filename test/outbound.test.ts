// The outbound protocol (kernel/outbound.ts) without a database: which of mark, send, lookup and
// record settleLocked runs in each case, and that an unknown outcome leaves the mark in place and
// propagates (the caller's job retries, its reconciler re-enqueues, a replay asks first).
import t from 'tap';
import { OutcomeUnknown, settleLocked, type OutboundCall } from '../kernel/outbound.js';
import type { Hydrated } from '../kernel/entity.js';

type Row = { id: string; tenant_id: string; livemode: boolean; status: string; version: number; started: boolean };
type H = Hydrated<Row>;
const h = (over: Partial<Row> = {}): H => ({ row: { id: 'x', tenant_id: 't', livemode: false, status: 'pending', version: 0, started: false, ...over }, clockOffsetMs: 0 });

function call(o: { seen?: string | null; answer?: string; sendFails?: OutcomeUnknown; resend?: boolean } = {}) {
  const log: string[] = [];
  const c: OutboundCall<H, string, string> = {
    connector: 'fake',
    op: 'send',
    due: (x) => x.row.status === 'pending',
    started: (x) => x.row.started,
    mark: async (x) => {
      log.push('mark');
      return { ...x, row: { ...x.row, started: true, version: x.row.version + 1 } };
    },
    send: async (x) => {
      log.push(`send(v${x.row.version})`);
      if (o.sendFails) throw o.sendFails;
      return o.answer ?? 'sent-answer';
    },
    lookup: async () => {
      log.push('lookup');
      return o.seen ?? null;
    },
    record: async (_x, a) => {
      log.push(`record(${a})`);
      return a;
    },
    resend: o.resend === undefined ? undefined : () => o.resend!,
    idle: (_x, why) => {
      log.push(`idle(${why})`);
      return why;
    },
  };
  return { c, log };
}

t.test('a first call: mark (committed), then send with the marked state, then record', async (t) => {
  const { c, log } = call();
  const s = await settleLocked(c, h());
  t.same(log, ['mark', 'send(v1)', 'record(sent-answer)']);
  t.same(s, { path: 'sent', result: 'sent-answer' });
});

t.test('a call that may have left: ask first; what the provider knows is recorded, nothing is sent', async (t) => {
  const { c, log } = call({ seen: 'known-answer' });
  const s = await settleLocked(c, h({ started: true }));
  t.same(log, ['lookup', 'record(known-answer)']);
  t.equal(s.path, 'looked_up');
});

t.test('a call the provider never saw is sent (again, same state: no second mark)', async (t) => {
  const { c, log } = call({ seen: null });
  const s = await settleLocked(c, h({ started: true }));
  t.same(log, ['lookup', 'send(v0)', 'record(sent-answer)']);
  t.equal(s.path, 'looked_up_then_sent');
});

t.test('resend refused: an unseen call is idle, nothing sent', async (t) => {
  const { c, log } = call({ seen: null, resend: false });
  const s = await settleLocked(c, h({ started: true }));
  t.same(log, ['lookup', 'idle(unseen)']);
  t.same(s, { path: 'unseen', result: 'unseen' });
});

t.test('nothing due: no call at all', async (t) => {
  const { c, log } = call();
  const s = await settleLocked(c, h({ status: 'succeeded' }));
  t.same(log, ['idle(not_due)']);
  t.equal(s.path, 'not_due');
});

t.test('an unknown outcome propagates after the mark; nothing is recorded', async (t) => {
  const { c, log } = call({ sendFails: new OutcomeUnknown('unreachable', 'no answer in time') });
  await t.rejects(settleLocked(c, h()), { name: 'OutcomeUnknown', reason: 'unreachable' });
  t.same(log, ['mark', 'send(v1)'], 'marked, sent, never recorded: the next run asks first');
  t.ok(new OutcomeUnknown('bad_response', 'x') instanceof Error);
});
