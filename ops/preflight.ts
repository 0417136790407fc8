// Before start or test: are Postgres and Redis reachable? If not, start them when the Debian
// packages are installed on this machine, or say exactly what to run.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

function redisCli(args: string[], timeout = 10_000): string | null {
  try {
    return execFileSync('redis-cli', args, { timeout, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
}

/** The Cluster's own view: `cluster_state:ok` and every slot assigned. */
const clusterOk = (host: string, port: number) => {
  const info = redisCli(['-h', host, '-p', String(port), 'cluster', 'info']) ?? '';
  return /cluster_state:ok/.test(info) && /cluster_slots_assigned:16384/.test(info);
};

/**
 * A Redis Cluster (REDIS_CLUSTER_NODES, and under `npm test` the test cluster of
 * TEST_REDIS_CLUSTER_NODES, default 127.0.0.1:7001-7003): nodes that do not answer are started
 * from Debian's redis-server in cluster mode (nothing on disk but nodes.conf under the temp
 * directory) and, if the slots are not all assigned, the cluster is (re)created with redis-cli
 * --cluster create: three masters, no replicas. Only local nodes are ever started or reset.
 */
async function ensureRedisCluster(nodes: readonly string[], envName: string): Promise<string | null> {
  const parsed = nodes.map((n) => {
    const i = n.lastIndexOf(':');
    return { host: n.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(n.slice(i + 1)) };
  });
  const down = [];
  for (const n of parsed) if (!(await reach(n.host, n.port))) down.push(n);
  const canStart = parsed.every((n) => isLocal(n.host)) && (existsSync('/usr/bin/redis-server') || existsSync('/usr/local/bin/redis-server')) && existsSync('/usr/bin/redis-cli');
  if (!down.length && clusterOk(parsed[0].host, parsed[0].port)) return null;
  if (!canStart) {
    return `The Redis Cluster of ${envName} (${nodes.join(', ')}) is not reachable or not ready (cluster_state not ok).\n  Start its nodes with cluster-enabled yes and create it:  redis-cli --cluster create ${nodes.join(' ')} --cluster-replicas 0`;
  }
  const base = join(tmpdir(), 'orquesta-redis-cluster');
  for (const n of down) {
    const dir = join(base, String(n.port));
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    process.stderr.write(`Redis Cluster node ${n.host}:${n.port} is not answering; starting redis-server in cluster mode…\n`);
    tryRun('redis-server', ['--daemonize', 'yes', '--bind', '127.0.0.1', '--port', String(n.port), '--dir', dir, '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '5000', '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction']);
  }
  for (const n of down) if (!(await waitFor(n.host, n.port, 10))) return `Redis Cluster node ${n.host}:${n.port} did not start (redis-server --cluster-enabled yes).`;
  if (!clusterOk(parsed[0].host, parsed[0].port)) {
    // A node started afresh beside nodes that remember an older cluster: start the whole cluster over
    // (it keeps nothing on disk that matters: queues and locks of a dead cluster are gone anyway).
    for (const n of parsed) {
      redisCli(['-h', n.host, '-p', String(n.port), 'flushall']);
      redisCli(['-h', n.host, '-p', String(n.port), 'cluster', 'reset', 'hard']);
    }
    process.stderr.write(`Creating the Redis Cluster ${nodes.join(' ')} (three masters)…\n`);
    redisCli(['--cluster', 'create', ...parsed.map((n) => `${n.host}:${n.port}`), '--cluster-replicas', '0', '--cluster-yes'], 30_000);
    for (let i = 0; i < 40 && !parsed.every((n) => clusterOk(n.host, n.port)); i++) await sleep(250);
    if (!parsed.every((n) => clusterOk(n.host, n.port))) return `The Redis Cluster ${nodes.join(' ')} could not be created (redis-cli --cluster create).`;
  }
  return null;
}

const TEST_REDIS_CLUSTER_NODES = '127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003';

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
const clusters: Array<Promise<string | null>> = [];
if (config.redisClusterNodes.length) clusters.push(ensureRedisCluster(config.redisClusterNodes, 'REDIS_CLUSTER_NODES'));
const testCluster = (process.env.TEST_REDIS_CLUSTER_NODES ?? TEST_REDIS_CLUSTER_NODES).split(',').filter(Boolean);
if (process.env.NODE_ENV === 'test' && testCluster.join(',') !== config.redisClusterNodes.join(',')) clusters.push(ensureRedisCluster(testCluster, 'TEST_REDIS_CLUSTER_NODES'));
const problems = (
  await Promise.all([ensurePostgres(new URL(config.databaseUrl)), config.redisClusterNodes.length ? null : ensureRedis(new URL(config.redisUrl)), ensureTestTools(), ...clusters])
).filter(Boolean);
if (problems.length) {
  process.stderr.write(`\n${problems.join('\n\n')}\n\n`);
  process.exit(3);
}
