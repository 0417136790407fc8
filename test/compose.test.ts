// The deployment file is valid: `docker compose config` where the compose client is present,
// else parsed here and checked for the shape the operations doc promises.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { projectRoot } from '../ops/paths.js';

const file = join(projectRoot, 'ops', 'deploy', 'compose.yaml');

function composeClient(): boolean {
  try {
    execFileSync('docker', ['compose', 'version'], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

t.test('docker compose config accepts the file (when the client is present)', { skip: composeClient() ? false : 'no `docker compose` client on this machine: the file is parsed and checked below instead' }, async (t) => {
  const out = execFileSync('docker', ['compose', '-f', file, 'config', '-q'], { env: { ...process.env, ADMIN_KEY: 'adm_compose_check_0123456789', SECRETS_KEY: 'c2VjcmV0cy1rZXktb2YtdGhlLWNvbXBvc2UtY2hlY2s=' }, timeout: 30_000 });
  t.ok(out !== undefined, 'valid');
});

t.test('the compose file parses and has the promised shape', async (t) => {
  const doc = parse(readFileSync(file, 'utf8'), { merge: true }) as { services: Record<string, any> };
  const s = doc.services;
  for (const name of ['api', 'worker', 'postgres', 'postgres-replica', 'redis', 'otel-collector', 'jaeger']) t.ok(s[name], `service ${name}`);
  t.equal(s.api.environment.ROLE, 'api');
  t.equal(s.worker.environment.ROLE, 'worker');
  t.ok(s.api.deploy.replicas >= 2 && s.worker.deploy.replicas >= 2, 'N API and M worker replicas');
  t.match(s.api.environment.REPLICA_DATABASE_URL, /postgres-replica/, 'the API knows the replica (/health/replication)');
  t.match(s.api.environment.OTEL_EXPORTER_OTLP_ENDPOINT, /otel-collector/);
  t.equal(s.api.environment.TRACE_URL_TEMPLATE, 'http://localhost:16686/trace/{trace_id}', 'operators link traces to the Jaeger UI the file publishes');
  t.same(s.jaeger.ports, ['16686:16686']);
  t.ok(s.redis.command.includes('noeviction') && s.redis.command.includes('--appendonly'), 'Redis: noeviction and AOF');
  t.ok(s.postgres.command.includes('wal_level=replica'), 'the primary streams WAL');
  // Every file the services mount exists.
  for (const [name, svc] of Object.entries(s)) {
    for (const v of (svc.volumes ?? []) as string[]) {
      const src = v.split(':')[0];
      if (src.startsWith('./')) t.ok(existsSync(join(dirname(file), src)), `${name}: ${src} exists`);
    }
  }
  t.match(readFileSync(join(dirname(file), 'postgres', 'replica-entrypoint.sh'), 'utf8'), /pg_basebackup .* -R /, 'the replica clones the primary as a standby');
  // Every variable given to the app is one the service reads (ops/config.ts) or a standard OTEL_* one.
  const config = readFileSync(join(projectRoot, 'ops', 'config.ts'), 'utf8');
  const known = new Set([...config.matchAll(/(?:opt|int|bool|list)\(env, '([A-Z0-9_]+)'/g)].map((m) => m[1]).concat('NODE_ENV'));
  for (const svc of ['api', 'worker']) {
    for (const k of Object.keys(s[svc].environment)) t.ok(known.has(k) || k.startsWith('OTEL_'), `${svc}: ${k} is a setting of ops/config.ts`);
  }
  t.ok(existsSync(join(projectRoot, 'ops', 'Dockerfile')), 'the image it builds');
});
