// The browser of the end-to-end tests: a Chromium already on the machine, preferring the small
// headless shell (Debian package chromium-headless-shell) over the full browser (chromium); only
// when neither exists is one installed (Debian's chromium-headless-shell, as root with apt-get),
// and the test says so. playwright-core drives it; it never downloads a browser of its own.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Where Debian's packages put their binaries, best first; CHROMIUM_PATH overrides. */
export const CANDIDATES = ['/usr/bin/chromium-headless-shell', '/usr/lib/chromium/headless_shell', '/usr/bin/chromium', '/usr/bin/chromium-browser'];

export function findChromium(env: NodeJS.ProcessEnv = process.env, exists: (p: string) => boolean = existsSync): string | undefined {
  if (env.CHROMIUM_PATH && exists(env.CHROMIUM_PATH)) return env.CHROMIUM_PATH;
  return CANDIDATES.find((p) => exists(p));
}

/** The browser to use: one that is installed, or Debian's headless shell installed now; else why not. */
export function ensureChromium(log: (s: string) => void = (s) => process.stderr.write(s)): { path: string } | { skip: string } {
  const found = findChromium();
  if (found) return { path: found };
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !existsSync('/usr/bin/apt-get')) return { skip: 'No Chromium is installed and none can be installed here (need root and apt-get). Install one with: sudo apt-get install -y chromium-headless-shell' };
  log('browser tests: no Chromium on this machine; installing Debian chromium-headless-shell (apt-get)…\n');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium-headless-shell'], { stdio: 'ignore', env, timeout: 300_000 });
  try {
    try {
      install();
    } catch {
      execFileSync('apt-get', ['update'], { stdio: 'ignore', env, timeout: 300_000 });
      install();
    }
  } catch (e) {
    return { skip: `apt-get install chromium-headless-shell failed: ${(e as Error).message}` };
  }
  const now = findChromium();
  return now ? { path: now } : { skip: 'apt-get finished but no Chromium binary was found' };
}

/** Headless, no sandbox (root in CI), and none of the background connections a closed network refuses. */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
