// The package version, read once from package.json (dist/cli/version.js → ../../package.json), so
// it is right both in this repository and in an installed copy.
import { readFileSync } from 'node:fs';

function read(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export const VERSION = read();
