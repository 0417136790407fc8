// The baseline for bench/edge: a bare uWebSockets.js hello-world, loaded exactly as the app loads
// it (the native binary, never the JavaScript fallback), answering GET / with a small JSON body.
// Run as its own process by bench/edge.ts; prints `BENCH_READY {"port":N}` on stdout.
import { uws } from '../api/uws.js';

const BODY = '{"object":"health","status":"ok"}';

const app = uws.App();
app.get('/', (res) => {
  res.cork(() => {
    res.writeStatus('200 OK');
    res.writeHeader('Content-Type', 'application/json; charset=utf-8');
    res.end(BODY);
  });
});
app.any('/*', (res) => {
  res.writeStatus('404 Not Found').end();
});

app.listen('127.0.0.1', 0, (sock) => {
  if (!sock) {
    process.stderr.write('bare-server: cannot listen\n');
    process.exit(1);
  }
  const port = uws.us_socket_local_port(sock as never);
  process.stdout.write(`BENCH_READY ${JSON.stringify({ port, pid: process.pid })}\n`);
});

for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => process.exit(0));
// The parent may die without signalling us: exit when our stdin (a pipe from it) closes.
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
