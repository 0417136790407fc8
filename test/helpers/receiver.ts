// A real local HTTP receiver for webhook tests: records every request with its raw body, and
// answers per a programmable policy (status codes in order, then a default).
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  json: any;
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Milliseconds to wait before answering (a slow receiver). */
  delayMs: number;
  /** Status codes to answer, in order, for a path; then `fallback`. */
  script(path: string, statuses: number[], fallback?: number): void;
  waitFor(pred: (r: Received[]) => boolean, ms?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const scripts = new Map<string, { statuses: number[]; fallback: number }>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let json: unknown;
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        json = undefined;
      }
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, raw, json, at: Date.now() });
      const s = scripts.get(path);
      const status = s ? (s.statuses.shift() ?? s.fallback) : 200;
      const answer = () => res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'nope');
      if (self.delayMs > 0) setTimeout(answer, self.delayMs);
      else answer();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const self: Receiver = {
    url: `http://127.0.0.1:${port}`,
    received,
    delayMs: 0,
    script(path, statuses, fallback = 200) {
      scripts.set(path, { statuses: [...statuses], fallback });
    },
    async waitFor(pred, ms = 10_000) {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        if (pred(received)) return received;
        await new Promise((r) => setTimeout(r, 40));
      }
      throw new Error(`receiver: condition not met in ${ms} ms (${received.length} received)`);
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  return self;
}
