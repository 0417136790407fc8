// The CLI's config file: base URL and API key per profile, readable only by its owner.
//
// Location: $ORQUESTA_CONFIG_DIR when set (tests, CI), else the platform's config directory from
// env-paths: $XDG_CONFIG_HOME/orquesta or ~/.config/orquesta on Linux, ~/Library/Preferences/orquesta
// on macOS, %APPDATA%\orquesta\Config on Windows. The file is config.json, mode 0600, in a 0700 dir.
// This is a separate program from the service, so reading process.env here is fine.
import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import envPaths from 'env-paths';
import { CliError, ExitCode } from './exit-codes.js';

export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;
export const DEFAULT_PROFILE = 'default';
const isPosix = process.platform !== 'win32';

export interface Profile {
  base_url: string;
  api_key: string;
  livemode: boolean;
  saved_at: string;
}

export interface ConfigFile {
  version: 1;
  profiles: Record<string, Profile>;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): { dir: string; explicit: boolean } {
  if (env.ORQUESTA_CONFIG_DIR) return { dir: env.ORQUESTA_CONFIG_DIR, explicit: true };
  return { dir: envPaths('orquesta', { suffix: '' }).config, explicit: false };
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env).dir, 'config.json');
}

export function validProfileName(name: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name);
}

/** `sk_test_…wxyz`: the prefix and the last four characters, never the whole key. */
export function maskKey(key: string): string {
  const m = /^(sk_(?:test|live)_)/.exec(key);
  const prefix = m ? m[1] : key.slice(0, 3);
  return `${prefix}…${key.length > prefix.length + 4 ? key.slice(-4) : ''}`;
}

/** Group/other bits on a file holding keys: repaired to 0600 with a warning on stderr. */
function fixMode(path: string): void {
  if (!isPosix) return;
  const mode = statSync(path).mode & 0o777;
  if (mode & 0o077) {
    chmodSync(path, FILE_MODE);
    process.stderr.write(`warning: ${path} was readable by others (mode ${mode.toString(8).padStart(4, '0')}); changed to 0600.\n`);
  }
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): ConfigFile {
  const path = configPath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, profiles: {} };
    throw new CliError(ExitCode.CONFIG, `Cannot read the config file ${path}: ${(e as Error).message}`);
  }
  try {
    fixMode(path);
  } catch (e) {
    throw new CliError(ExitCode.CONFIG, `Cannot fix the mode of ${path}: ${(e as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text) as Partial<ConfigFile>;
    if (!parsed || typeof parsed !== 'object' || typeof parsed.profiles !== 'object' || parsed.profiles === null) throw new Error('no "profiles" object');
    return { version: 1, profiles: parsed.profiles };
  } catch (e) {
    throw new CliError(ExitCode.CONFIG, `The config file ${path} is not valid: ${(e as Error).message}`, 'Run `orquesta login` again to rewrite it.');
  }
}

/**
 * Writes the whole file atomically: a new 0600 file beside it, fsync, rename over the old one, so
 * the keys are never in a file with a wider mode, even for an instant, and a crash leaves the old file.
 */
export function writeConfig(cfg: ConfigFile, env: NodeJS.ProcessEnv = process.env): string {
  const path = configPath(env);
  const { dir, explicit } = configDir(env);
  try {
    mkdirSync(dir, { recursive: true, mode: DIR_MODE });
    // Our own directory is kept 0700; a directory named by ORQUESTA_CONFIG_DIR is the caller's.
    if (isPosix && !explicit && (statSync(dir).mode & 0o077) !== 0) chmodSync(dir, DIR_MODE);
    const tmp = join(dirname(path), `.config.json.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    const fd = openSync(tmp, 'wx', FILE_MODE);
    try {
      writeSync(fd, JSON.stringify(cfg, null, 2) + '\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      if (isPosix) chmodSync(tmp, FILE_MODE); // whatever the umask was
      renameSync(tmp, path);
    } catch (e) {
      try {
        unlinkSync(tmp);
      } catch {
        /* already gone */
      }
      throw e;
    }
    if (isPosix && (statSync(path).mode & 0o777) !== FILE_MODE) chmodSync(path, FILE_MODE);
  } catch (e) {
    throw new CliError(ExitCode.CONFIG, `Cannot write the config file ${path}: ${(e as Error).message}`);
  }
  return path;
}

export function saveProfile(name: string, profile: Profile, env: NodeJS.ProcessEnv = process.env): string {
  const cfg = readConfig(env);
  cfg.profiles[name] = profile;
  return writeConfig(cfg, env);
}

export interface Credentials {
  baseUrl: string;
  apiKey: string;
  livemode: boolean;
  profile: string;
  /** Where the values came from, for messages. */
  source: 'profile' | 'environment';
}

/**
 * The credentials a command uses: ORQUESTA_BASE_URL / ORQUESTA_API_KEY when set (CI), else the
 * profile from the config file. Exit 4 with the fix when there are none.
 */
export function loadCredentials(profile: string, env: NodeJS.ProcessEnv = process.env): Credentials {
  const stored = readConfig(env).profiles[profile];
  const apiKey = env.ORQUESTA_API_KEY || stored?.api_key;
  const baseUrl = env.ORQUESTA_BASE_URL || stored?.base_url;
  if (!apiKey || !baseUrl) {
    throw new CliError(
      ExitCode.CONFIG,
      `Not logged in (profile "${profile}", config ${configPath(env)}).`,
      `Run \`orquesta login${profile === DEFAULT_PROFILE ? '' : ` --profile ${profile}`}\`, or set ORQUESTA_BASE_URL and ORQUESTA_API_KEY.`,
    );
  }
  return {
    baseUrl: normalizeBaseUrl(baseUrl),
    apiKey,
    livemode: apiKey.startsWith('sk_live_'),
    profile,
    source: env.ORQUESTA_API_KEY ? 'environment' : 'profile',
  };
}

/** Base URL for a command that needs no key (status): flag, environment, profile, in that order. */
export function loadBaseUrl(profile: string, flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (flag) return normalizeBaseUrl(flag);
  if (env.ORQUESTA_BASE_URL) return normalizeBaseUrl(env.ORQUESTA_BASE_URL);
  const stored = readConfig(env).profiles[profile];
  if (stored?.base_url) return normalizeBaseUrl(stored.base_url);
  throw new CliError(ExitCode.CONFIG, `No base URL: not logged in (profile "${profile}").`, 'Pass --base-url, or run `orquesta login`.');
}

export function normalizeBaseUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new CliError(ExitCode.USAGE, `Not a URL: ${JSON.stringify(raw)}`, 'The base URL looks like http://127.0.0.1:8080 or https://api.example.mx');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new CliError(ExitCode.USAGE, `The base URL must be http:// or https:// (got ${u.protocol})`);
  if (u.search || u.hash) throw new CliError(ExitCode.USAGE, 'The base URL takes no query string or fragment.');
  return u.origin + u.pathname.replace(/\/+$/, '');
}
