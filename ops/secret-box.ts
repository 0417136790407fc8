// The deployment's key of secrets at rest (kernel/secret-box.ts): SECRETS_KEY (32 bytes, base64 or
// hex); when unset, one generated on first start and kept in STATE_DIR (mode 0600), like the
// operator key. Every process of a deployment (API and workers) must share it: set SECRETS_KEY, or
// give them the same STATE_DIR.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSecretsKey, SecretBox } from '../kernel/secret-box.js';
import { resolveState } from './paths.js';

export { parseSecretsKey, SecretBox };

/** The deployment's secret box: SECRETS_KEY, else the key kept in STATE_DIR (created on first start). */
export function resolveSecretBox(config: { secretsKey?: string; stateDir: string }): SecretBox {
  if (config.secretsKey) return new SecretBox(parseSecretsKey(config.secretsKey));
  const dir = resolveState(config.stateDir);
  const file = join(dir, 'secrets-key.json');
  if (existsSync(file)) return new SecretBox(parseSecretsKey((JSON.parse(readFileSync(file, 'utf8')) as { secrets_key: string }).secrets_key));
  const key = randomBytes(32);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Published whole: written to a file of this process's own, then linked to the name, which fails
  // if another process published first (the loser reads the winner's key). Writing the name itself
  // ('wx') let a process starting at the same moment read it created but still empty (two workers
  // of `npm start -- --workers 2` on a new STATE_DIR: "Unexpected end of JSON input" at boot), and a
  // crash in between left an empty file that failed every later start.
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, JSON.stringify({ secrets_key: key.toString('base64') }) + '\n', { mode: 0o600, flag: 'wx' });
  try {
    chmodSync(tmp, 0o600);
    linkSync(tmp, file);
  } catch (e) {
    if ((e as { code?: string }).code !== 'EEXIST') throw e;
    return new SecretBox(parseSecretsKey((JSON.parse(readFileSync(file, 'utf8')) as { secrets_key: string }).secrets_key));
  } finally {
    rmSync(tmp, { force: true });
  }
  return new SecretBox(key);
}
