// Secrets at rest (ops/secret-box.ts): AES-256-GCM bound to the row it belongs to; the key from
// SECRETS_KEY or generated once into STATE_DIR.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import fs, { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSecretsKey, resolveSecretBox, SecretBox } from '../ops/secret-box.js';

t.test('seal and open, bound to a context', async (t) => {
  const box = new SecretBox(randomBytes(32));
  const sealed = box.seal('646180110400000007', 'payout:1:clabe');
  t.notMatch(sealed, /646180110400000007/, 'no clear text in the sealed value');
  t.not(sealed, box.seal('646180110400000007', 'payout:1:clabe'), 'a fresh IV every time');
  t.equal(box.open(sealed, 'payout:1:clabe'), '646180110400000007');
  t.throws(() => box.open(sealed, 'payout:2:clabe'), /does not open/, 'moved to another row it does not open');
  t.throws(() => new SecretBox(randomBytes(32)).open(sealed, 'payout:1:clabe'), /does not open/, 'another key');
  t.throws(() => box.open('garbage', 'x'), /not a sealed value/);
  t.equal(box.digest('x', 'p'), box.digest('x', 'p'));
  t.not(box.digest('x', 'p'), box.digest('x', 'q'));
});

t.test('IVs from the pool: each seal its own, across refills of the pool (341 IVs each)', async (t) => {
  const box = new SecretBox(randomBytes(32));
  const ivs = new Set<string>();
  for (let i = 0; i < 1000; i++) {
    const sealed = box.seal(`clabe ${i}`, `payout:${i}:clabe`);
    ivs.add(Buffer.from(sealed.split('.')[1], 'base64').subarray(0, 12).toString('hex'));
    if (box.open(sealed, `payout:${i}:clabe`) !== `clabe ${i}`) t.fail(`seal ${i} does not open`);
  }
  t.equal(ivs.size, 1000, 'no IV repeated');
  t.notOk(ivs.has('00'.repeat(12)), 'none left unfilled');
});

t.test('the key: SECRETS_KEY (base64 or hex), else generated once into STATE_DIR', async (t) => {
  const k = randomBytes(32);
  t.same(parseSecretsKey(k.toString('base64')), k);
  t.same(parseSecretsKey(k.toString('hex')), k);
  t.throws(() => parseSecretsKey('c2hvcnQ='), /32 bytes/);
  const a = resolveSecretBox({ secretsKey: k.toString('base64'), stateDir: '/nonexistent' });
  t.equal(a.open(new SecretBox(k).seal('s', 'c'), 'c'), 's');
  const dir = mkdtempSync(join(tmpdir(), 'orq-sb-'));
  const first = resolveSecretBox({ stateDir: dir });
  const second = resolveSecretBox({ stateDir: dir });
  t.equal(second.open(first.seal('s', 'c'), 'c'), 's', 'the same key at the next start');
  t.equal(statSync(join(dir, 'secrets-key.json')).mode & 0o777, 0o600);
  t.match(JSON.parse(readFileSync(join(dir, 'secrets-key.json'), 'utf8')), { secrets_key: String });
});

// Processes of one deployment starting together on a new STATE_DIR (npm start -- --api 2 --workers 2)
// must all get the one key. Deterministic: the first process's file write is split into its two
// halves (create, then write the bytes), and a whole second process starts in between, as the
// scheduler can arrange (the bench saw it: a worker died at boot with "Unexpected end of JSON input").
t.test('a process starting while another is writing the key file gets the same key', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'orq-sb-race-'));
  const mod = new URL('../ops/secret-box.js', import.meta.url).href;
  const second = `const { resolveSecretBox } = await import(${JSON.stringify(mod)});
    process.stdout.write(resolveSecretBox({ stateDir: process.argv[1] }).digest('probe', 'test'));`;
  let other: ReturnType<typeof spawnSync> | undefined;
  const original = fs.writeFileSync;
  fs.writeFileSync = ((file: fs.PathOrFileDescriptor, data: string | NodeJS.ArrayBufferView, opts?: fs.WriteFileOptions) => {
    if (other || typeof file !== 'string' || !file.startsWith(dir)) return original(file, data, opts);
    const o = typeof opts === 'object' && opts ? opts : {};
    original(file, '', { ...o }); // the create (flag wx, mode 0600) ...
    other = spawnSync(process.execPath, ['--input-type=module', '-e', second, dir], { encoding: 'utf8' });
    return original(file, data, { ...o, flag: 'w' }); // ... then the bytes
  }) as typeof fs.writeFileSync;
  syncBuiltinESMExports();
  let mine: SecretBox;
  try {
    mine = resolveSecretBox({ stateDir: dir });
  } finally {
    fs.writeFileSync = original;
    syncBuiltinESMExports();
  }
  t.ok(other, 'the second process ran while the first was writing');
  t.equal(other!.status, 0, `the second process started (${String(other!.stderr).split('\n').find((l) => /Error/.test(l)) ?? ''})`);
  t.equal(other!.stdout, mine.digest('probe', 'test'), 'both have the one key');
  t.same(readdirSync(dir), ['secrets-key.json'], 'no file of a process of its own left behind');
  t.equal(resolveSecretBox({ stateDir: dir }).digest('probe', 'test'), mine.digest('probe', 'test'), 'and the next start reads it');
});
