// K local webhook receivers for bench/webhooks, in their own process (node:http, keep-alive),
// so that neither the delivery worker nor the bare loop shares an event loop with them.
// Each receiver answers POST /<anything> with 200 "ok" — or 500 for `ratio` of the requests
// (spread evenly: 0.5 = every other one) while a failure window is open — and records
// (path, event_id) for every 2xx answer it gave.
// Controlled over IPC by the parent (messages carry an `rid`, answered with the same `rid`):
//   {cmd:'reset'}                      forget everything received
//   {cmd:'fail', ratio, ms}            fail `ratio` of the requests (spread evenly) for `ms`
//   {cmd:'target', n}                  send {event:'reached', …} once n distinct pairs were accepted
//   {cmd:'stats'}                      counters
//   {cmd:'pairs'}                      the accepted "path|event_id" pairs
// Prints `BENCH_READY {"pid":…,"ports":[…]}`. Exits when its stdin closes or on SIGTERM.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const K = Number(process.argv[2] ?? 4);
const now = () => process.hrtime.bigint();

let accepted = new Set<string>();
let requests = 0;
let failedAnswers = 0;
let okAnswers = 0;
let duplicates = 0;
let unsigned = 0;
let badJson = 0;
let firstOkNs = 0n;
let lastNewNs = 0n;
let failRatio = 0;
let failUntilNs = 0n;
let failCounter = 0;
let target = 0;
let reachedSent = false;

function send(m: Record<string, unknown>) {
  process.send?.(m, undefined, undefined, () => {});
}

function onBody(path: string, raw: Buffer, signed: boolean): number {
  requests++;
  if (!signed) unsigned++;
  const t = now();
  if (failRatio > 0 && t < failUntilNs) {
    // Alternating: exactly `ratio` of the requests fail while the window is open (0.5 → every other).
    failCounter++;
    if (Math.floor(failCounter * failRatio + 1e-9) > Math.floor((failCounter - 1) * failRatio + 1e-9)) {
      failedAnswers++;
      return 500;
    }
  }
  let id: string | undefined;
  try {
    id = (JSON.parse(raw.toString('utf8')) as { event_id?: string }).event_id;
  } catch {
    badJson++;
  }
  okAnswers++;
  const key = `${path}|${id}`;
  if (accepted.has(key)) duplicates++;
  else {
    accepted.add(key);
    lastNewNs = t;
    if (!firstOkNs) firstOkNs = t;
    if (target && !reachedSent && accepted.size >= target) {
      reachedSent = true;
      send({ event: 'reached', atNs: String(t), firstNs: String(firstOkNs), accepted: accepted.size });
    }
  }
  return 200;
}

const servers: Server[] = [];
const ports: number[] = [];
for (let k = 0; k < K; k++) {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = onBody(req.url ?? '/', chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), !!req.headers['gateway-signature']);
      res.writeHead(status, { 'content-type': 'text/plain', 'content-length': status === 200 ? 2 : 4 }).end(status === 200 ? 'ok' : 'nope');
    });
  });
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 65_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  ports.push((server.address() as AddressInfo).port);
}

process.on('message', (m: { rid?: number; cmd?: string; ratio?: number; ms?: number; n?: number }) => {
  switch (m.cmd) {
    case 'reset':
      accepted = new Set();
      requests = failedAnswers = okAnswers = duplicates = unsigned = badJson = 0;
      firstOkNs = lastNewNs = 0n;
      failRatio = 0;
      failUntilNs = 0n;
      failCounter = 0;
      target = 0;
      reachedSent = false;
      send({ rid: m.rid, ok: true });
      break;
    case 'fail':
      failRatio = m.ratio ?? 0.5;
      failUntilNs = now() + BigInt(Math.round((m.ms ?? 0) * 1e6));
      failCounter = 0;
      send({ rid: m.rid, ok: true, untilNs: String(failUntilNs) });
      break;
    case 'target':
      target = m.n ?? 0;
      reachedSent = false;
      if (target && accepted.size >= target) {
        reachedSent = true;
        send({ event: 'reached', atNs: String(lastNewNs), firstNs: String(firstOkNs), accepted: accepted.size });
      }
      send({ rid: m.rid, ok: true });
      break;
    case 'stats':
      send({ rid: m.rid, requests, okAnswers, failedAnswers, duplicates, unsigned, badJson, accepted: accepted.size, firstOkNs: String(firstOkNs), lastNewNs: String(lastNewNs) });
      break;
    case 'pairs':
      send({ rid: m.rid, pairs: [...accepted] });
      break;
    default:
      send({ rid: m.rid, error: `unknown command ${m.cmd}` });
  }
});

const exit = () => {
  for (const s of servers) s.closeAllConnections();
  process.exit(0);
};
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, exit);
process.stdin.on('end', exit);
process.stdin.on('error', exit);
process.stdin.resume();
process.stdout.write(`BENCH_READY ${JSON.stringify({ pid: process.pid, ports })}\n`);
