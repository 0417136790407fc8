// Before start or test: are Postgres and Redis reachable? If not, start them when the Debian
// packages are installed on this machine, or say exactly what to run.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { loadConfig } from './config.js';

const reach = (host: string, port: number, ms = 1500) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ host, port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(ms, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const isLocal = (h: string) => ['127.0.0.1', 'localhost', '::1'].includes(h);

async function waitFor(host: string, port: number, seconds: number) {
  for (let i = 0; i < seconds * 4; i++) {
    if (await reach(host, port, 500)) return true;
    await sleep(250);
  }
  return false;
}

function tryRun(cmd: string, args: string[], timeout = 30_000): boolean {
  try {
    execFileSync(cmd, args, { stdio: 'ignore', timeout });
    return true;
  } catch {
    return false;
  }
}

async function ensurePostgres(url: URL): Promise<string | null> {
  const host = url.hostname || '127.0.0.1';
  const port = Number(url.port || 5432);
  if (await reach(host, port)) return null;
  if (isLocal(host) && existsSync('/etc/postgresql') && existsSync('/usr/bin/pg_ctlcluster')) {
    for (const ver of readdirSync('/etc/postgresql')) {
      process.stderr.write(`Postgres is not answering on ${host}:${port}; starting cluster ${ver}/main…\n`);
      tryRun('pg_ctlcluster', ['--skip-systemctl-redirect', ver, 'main', 'start']);
    }
    if (await waitFor(host, port, 15)) return null;
  }
  return (
    `Postgres is not reachable at ${host}:${port} (DATABASE_URL).\n` +
    `  Install and start it (Debian):  sudo apt-get install -y postgresql && sudo pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start\n` +
    `  Orquesta connects as user "postgres" with trust auth on 127.0.0.1 by default; or set DATABASE_URL.`
  );
}

async function ensureRedis(url: URL): Promise<string | null> {
  const host = url.hostname || '127.0.0.1';
  const port = Number(url.port || 6379);
  if (await reach(host, port)) return null;
  const startArgs = ['--daemonize', 'yes', '--bind', '127.0.0.1', '-::1', '--port', String(port), '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'];
  if (isLocal(host) && (existsSync('/usr/bin/redis-server') || existsSync('/usr/local/bin/redis-server'))) {
    process.stderr.write(`Redis is not answering on ${host}:${port}; starting redis-server…\n`);
    tryRun('redis-server', startArgs);
    if (await waitFor(host, port, 10)) return null;
  }
  return (
    `Redis is not reachable at ${host}:${port} (REDIS_URL).\n` +
    `  Install and start it (Debian):  sudo apt-get install -y redis-server && redis-server ${startArgs.map((a) => (a === '' ? '""' : a)).join(' ')}`
  );
}

/**
 * Tests check CFDI documents with SAT's own files through Debian's xmllint (libxml2-utils) and
 * xsltproc, look at invoice PDFs with pdftoppm (poppler-utils) and check XML signatures with xmlsec1: installed here when absent.
 */
function ensureTestTools(): string | null {
  if (process.env.NODE_ENV !== 'test') return null;
  const tools: [string, string][] = [['xmllint', 'libxml2-utils'], ['xsltproc', 'xsltproc'], ['pdftoppm', 'poppler-utils'], ['xmlsec1', 'xmlsec1']];
  const has = (t: string) => tryRun('sh', ['-c', `command -v ${t}`]);
  const missing = tools.filter(([t]) => !has(t)).map(([, pkg]) => pkg);
  if (!missing.length) return null;
  if (existsSync('/usr/bin/apt-get') && process.getuid?.() === 0) {
    process.stderr.write(`Installing ${missing.join(', ')} (Debian) for the CFDI tests…\n`);
    const install = () => tryRun('apt-get', ['install', '-y', '--no-install-recommends', ...missing], 600_000);
    if (!install()) {
      tryRun('apt-get', ['update'], 600_000);
      install();
    }
    if (tools.every(([t]) => has(t))) return null;
  }
  return `The CFDI tests need Debian's ${missing.join(', ')}:  sudo apt-get install -y --no-install-recommends ${missing.join(' ')}`;
}

const config = loadConfig();
const problems = (await Promise.all([ensurePostgres(new URL(config.databaseUrl)), ensureRedis(new URL(config.redisUrl)), ensureTestTools()])).filter(Boolean);
if (problems.length) {
  process.stderr.write(`\n${problems.join('\n\n')}\n\n`);
  process.exit(3);
}
