// Migrations: numbered files applied once, under an advisory lock, even when processes race.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSql, ensureDatabase } from '../kernel/db.js';
import { migrate } from '../ops/migrate.js';
import { testConfig } from './helpers/app.js';

t.test('concurrent migrators apply each file once; edits are refused', async (t) => {
  const base = new URL(testConfig().databaseUrl);
  base.pathname = `/orq_mig_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`;
  const url = base.toString();
  t.equal(await ensureDatabase(url), true, 'created');
  t.equal(await ensureDatabase(url), false, 'exists now');
  const dir = mkdtempSync(join(tmpdir(), 'orq-mig-'));
  writeFileSync(join(dir, '0001_a.sql'), 'create table a (id int);');
  writeFileSync(join(dir, '0002_b.sql'), 'create table b (id int);');
  const pools = [createSql(url, 2), createSql(url, 2), createSql(url, 2)];
  try {
    const results = await Promise.all(pools.map((p) => migrate(p, dir)));
    t.same(results.flat().sort(), ['0001_a.sql', '0002_b.sql'], 'each applied exactly once overall');
    t.same(await migrate(pools[0], dir), [], 'nothing left to apply');
    writeFileSync(join(dir, '0002_b.sql'), 'create table b (id bigint);');
    await t.rejects(migrate(pools[0], dir), /edited after it was applied/);
    writeFileSync(join(dir, '0002_b.sql'), 'create table b (id int);');
    writeFileSync(join(dir, '0003_bad.sql'), 'create table c (id int); select * from nowhere;');
    await t.rejects(migrate(pools[0], dir), /0003_bad.sql failed/);
    const c = await pools[0]`select to_regclass('c') as c`;
    t.equal(c[0].c, null, 'a failed migration leaves nothing half-applied');
  } finally {
    await Promise.all(pools.map((p) => p.end()));
    const admin = createSql(url.replace(/\/[^/]+$/, '/postgres'), 1);
    await admin.unsafe(`drop database if exists "${base.pathname.slice(1)}"`);
    await admin.end();
  }
});
