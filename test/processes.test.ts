// `npm start -- --api 2 --workers 1` (ops/processes.ts): two API processes listen on the one port
// (SO_REUSEPORT), the worker beats, and an API process killed with SIGKILL leaves the port answering
// while the supervisor starts it again.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { supervise } from '../ops/processes.js';
import { projectRoot } from '../ops/paths.js';
import { freePort, httpCall, testConfig, until } from './helpers/app.js';

/** PIDs listening on 127.0.0.1:port (ss from iproute2), or null where ss is missing. */
function listeners(port: number): number[] | null {
  try {
    const out = execFileSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8' });
    return [...out.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
  } catch {
    return null;
  }
}

// Three service processes boot here, one of them twice: more than tap's default 120 s on a loaded machine.
t.setTimeout(300_000);

t.test('two API processes on one port and a worker, under the supervisor', async (t) => {
  const base = testConfig();
  const port = await freePort();
  const restarts: string[] = [];
  const s = supervise({
    main: join(projectRoot, 'dist', 'ops', 'main.js'),
    cwd: projectRoot,
    stdio: process.env.DEBUG_PROCS ? 'inherit' : 'ignore',
    restartMs: 200,
    apis: 2,
    workers: 1,
    onExit: (role, i, how) => restarts.push(`${role}${i}:${how}`),
    env: {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'error',
      PORT: String(port),
      DATABASE_URL: base.databaseUrl,
      REDIS_URL: base.redisUrl,
      REDIS_PREFIX: `orq_test_sup_${randomBytes(3).toString('hex')}`,
      ADMIN_KEY: base.adminKey,
      STATE_DIR: mkdtempSync(join(tmpdir(), 'orq-sup-')),
      SEED_DEMO_TENANT: 'false',
    },
  });
  t.teardown(() => s.stop('SIGKILL'));
  const url = `http://127.0.0.1:${port}`;
  const apis = () => s.running().filter((r) => r.role === 'api').map((r) => r.proc.pid!);
  t.equal(apis().length, 2, 'two API processes');
  t.equal(s.running().filter((r) => r.role === 'worker').length, 1, 'one worker process');

  // Both API processes listen on the same port (the kernel balances new connections between them).
  const seen = await until(async () => listeners(port), (l) => l === null || apis().every((p) => l.includes(p)), 90_000);
  if (seen === null) t.comment('ss (iproute2) is not installed: listeners not checked');
  else t.same([...seen].sort(), [...apis()].sort(), 'both API processes listen on the port');
  const status = await until(() => httpCall(`${url}/status`, 'GET', {}).then((r) => JSON.parse(r.text)), (b) => b.worker?.processes === 1, 60_000);
  t.equal(status.worker.status, 'ok', 'the worker beats');
  await until(async () => s.running(), (r) => r.every((p) => p.ready), 30_000);

  // One API process dies: the port keeps answering, and the supervisor starts a new one.
  const victim = apis()[0];
  process.kill(victim, 'SIGKILL');
  // A connection already queued on the dead process's listening socket is reset (SO_REUSEPORT has no
  // hand-over between sockets): a client's retry reaches the survivor. So: every request answered
  // by its first or second try.
  const live = () => httpCall(`${url}/health/live`, 'GET', {}).then((r) => r.status, () => 0);
  let answered = 0;
  for (let i = 0; i < 20; i++) if ((await live()) === 200 || (await live()) === 200) answered++;
  t.equal(answered, 20, 'every request answered by the surviving process (at most one retry)');
  const after = await until(async () => apis(), (a) => a.length === 2 && !a.includes(victim), 30_000);
  t.notOk(after.includes(victim), 'a new API process replaced the killed one');
  t.match(restarts.join(','), /api0:SIGKILL/, 'the supervisor saw the death');
  const again = await until(async () => listeners(port), (l) => l === null || after.every((p) => l.includes(p)), 90_000);
  if (again !== null) t.same([...again].sort(), [...after].sort(), 'the new process listens on the same port');
});

t.test('a process that exits before it is ready stops them all instead of restarting every second', async (t) => {
  const fatal: string[] = [];
  const restarts: string[] = [];
  let done!: () => void;
  const stopped = new Promise<void>((r) => (done = r));
  const s = supervise({
    main: join(projectRoot, 'dist', 'ops', 'main.js'),
    cwd: projectRoot,
    stdio: 'ignore',
    restartMs: 50,
    apis: 2,
    workers: 1,
    onExit: (role, i, how) => restarts.push(`${role}${i}:${how}`),
    onFatal: (role, i, how) => {
      fatal.push(`${role}${i}:${how}`);
      done();
    },
    // A setting the process refuses at boot (ops/main.ts exits 2 on a ConfigError).
    env: { ...process.env, NODE_ENV: 'test', PORT: 'not-a-port', SEED_DEMO_TENANT: 'false' },
  });
  t.teardown(() => s.stop('SIGKILL'));
  await stopped;
  t.equal(fatal.length, 1, 'onFatal once');
  t.match(fatal[0], /:2$/, 'with the exit code of the refused setting');
  t.same(restarts, [], 'nothing was started again');
  t.equal(s.running().length, 0, 'the other processes were stopped');
});

t.test("stdio 'pipe', execArgv and onSpawn (bench/: the benches start the app's processes through this supervisor)", async (t) => {
  // A stand-in for the app: prints its role and Node options, stops when its stdin closes.
  const dir = mkdtempSync(join(tmpdir(), 'orq-sup-pipe-'));
  const main = join(dir, 'child.mjs');
  writeFileSync(main, "process.stdout.write(`UP ${process.env.ROLE} ${JSON.stringify(process.execArgv)}\\n`); process.stdin.resume(); process.stdin.on('end', () => process.exit(0));\n");
  const spawned: Array<{ role: string; index: number; pid: number }> = [];
  const lines: string[] = [];
  const s = supervise({
    main,
    cwd: dir,
    stdio: 'pipe',
    execArgv: ['--no-warnings'],
    apis: 2,
    workers: 1,
    env: { ...process.env },
    onSpawn: (role, index, proc) => {
      spawned.push({ role, index, pid: proc.pid! });
      proc.stdout!.on('data', (d: Buffer) => lines.push(...d.toString().trim().split('\n')));
    },
  });
  t.teardown(() => s.stop('SIGKILL'));
  t.same(spawned.map((x) => `${x.role}${x.index}`), ['api0', 'api1', 'worker0'], 'onSpawn for every process, as it starts');
  t.same(spawned.map((x) => x.pid).sort(), s.running().map((r) => r.proc.pid!).sort(), 'the same processes as running()');
  await until(async () => lines.length, (n) => n === 3, 10_000);
  t.same([...lines].sort(), ['UP api ["--no-warnings"]', 'UP api ["--no-warnings"]', 'UP worker ["--no-warnings"]'], "the caller's Node options instead of --enable-source-maps; stdout piped to the caller");
  await s.stop();
  t.equal(s.running().length, 0, 'stopped');
});
