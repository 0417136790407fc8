// A tiny HTTP server base for the card processor fakes: JSON in and out, per-socket cleanup,
// a slow answer on demand (the client's deadline passes first).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FakeReq {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: unknown;
}
export type FakeAnswer = { status: number; json?: unknown; text?: string; delayMs?: number };

export abstract class CardFake {
  private server: Server;
  private sockets = new Set<Socket>();
  private timers = new Set<NodeJS.Timeout>();
  url = '';
  readonly calls: Array<{ method: string; path: string }> = [];

  constructor() {
    this.server = createServer((req, res) => void this.serve(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  protected abstract handle(r: FakeReq): FakeAnswer | Promise<FakeAnswer>;

  private async serve(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = undefined;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    const u = new URL(req.url ?? '/', 'http://fake');
    this.calls.push({ method: req.method ?? 'GET', path: u.pathname });
    const a = await this.handle({ method: req.method ?? 'GET', path: u.pathname, query: u.searchParams, headers: req.headers, body });
    const send = () => {
      if (res.destroyed) return;
      res.writeHead(a.status, { 'content-type': a.text !== undefined ? 'text/html' : 'application/json' });
      res.end(a.text ?? JSON.stringify(a.json ?? {}));
    };
    if (a.delayMs) {
      const t = setTimeout(() => {
        this.timers.delete(t);
        send();
      }, a.delayMs);
      this.timers.add(t);
    } else send();
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
