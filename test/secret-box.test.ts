// Secrets at rest (ops/secret-box.ts): AES-256-GCM bound to the row it belongs to; the key from
// SECRETS_KEY or generated once into STATE_DIR.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
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
